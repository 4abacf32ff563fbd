"""`kafkastack:network`: which network carries replication and quorum traffic, and the checks that
refuse a network that cannot work (docs/networks.md explains the design).

- `single` (default): every listener on the pod network, kept apart by port and NetworkPolicy.
  The only mode on a cloud unless the second network has one subnet per zone.
- `dual`: REPLICATION and CONTROLLER (ZooKeeper's ports too) on a Multus second network with a
  static address per pod: one range stretched over the zones (an on-prem L2 segment) or one
  routed subnet per zone.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Literal

from pydantic import Field, field_validator

from infra.config_base import DnsLabel, DnsName, StrictModel, refuse
from infra.model.addresses import Network

CLOUD_PLATFORMS = frozenset({"aws", "gcp", "azure"})
# OpenShift runs on clouds and on-prem alike; its storage driver says which.
CLOUD_STORAGE_DRIVERS = frozenset(
    {"ebs.csi.aws.com", "pd.csi.storage.gke.io", "disk.csi.azure.com"}
)
# Where Prometheus scrapes from: OpenShift's monitoring of user workloads, elsewhere the usual
# kube-prometheus namespace.
MONITORING_NAMESPACES = {"openshift": "openshift-user-workload-monitoring"}
DEFAULT_MONITORING_NAMESPACE = "monitoring"


def _network(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as err:
        raise ValueError(
            f"{value!r}: {err}; write the range's network address, e.g. 10.20.0.0/24"
        ) from None
    return value


class ReplicationNetworkConfig(StrictModel):
    cidr: str | None = Field(
        default=None, description="one L2 segment stretched over every zone (on-prem)"
    )
    subnets: dict[str, str] | None = Field(
        default=None, description="zone → subnet, routed between zones (required on clouds)"
    )
    master_interface: str = Field(
        default="eth1",
        description="host NIC macvlan/ipvlan attach to, or the host bridge of plugin: bridge",
    )
    plugin: Literal["macvlan", "ipvlan", "bridge"] | None = Field(
        default=None,
        description="default: macvlan on-prem, ipvlan on clouds; bridge where nodes share one "
        "network stack (the local cluster's real nodes)",
    )

    @field_validator("cidr")
    @classmethod
    def _valid_cidr(cls, value: str | None) -> str | None:
        return None if value is None else _network(value)

    @field_validator("master_interface")
    @classmethod
    def _valid_interface(cls, value: str) -> str:
        # The kernel's limit (IFNAMSIZ - 1); names are a single path component.
        if not 0 < len(value) <= 15 or "/" in value or value.strip() != value or " " in value:
            raise ValueError(
                f"{value!r} is not a network interface name: 1 to 15 characters, no '/' or "
                "spaces (e.g. eth1)"
            )
        return value

    @field_validator("subnets")
    @classmethod
    def _valid_subnets(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return None if value is None else {zone: _network(c) for zone, c in value.items()}


class NetworkConfig(StrictModel):
    mode: Literal["dual", "single"] = "single"
    replication: ReplicationNetworkConfig | None = None
    cluster_domain: DnsName = "cluster.local"
    client_namespaces: list[DnsLabel] | None = Field(
        default=None, description="namespaces whose pods may reach CLIENT; default: every one"
    )
    monitoring_namespace: DnsLabel | None = Field(
        default=None, description="where Prometheus scrapes from; default per platform"
    )


def replication_ranges(network: NetworkConfig) -> list[Network]:
    """Every range a stack's second network uses (none in single mode)."""
    replication = network.replication
    if network.mode != "dual" or replication is None:
        return []
    cidrs = list((replication.subnets or {}).values()) or [replication.cidr or ""]
    return [ipaddress.ip_network(c) for c in cidrs if c]


def check_unshared_ranges(
    environment: str, network: NetworkConfig, others: Mapping[str, NetworkConfig]
) -> None:
    """A second network's range belongs to one environment: two stacks handing out the same
    static addresses would hijack each other's brokers."""
    mine = replication_ranges(network)
    for other, other_network in sorted(others.items()):
        for theirs in replication_ranges(other_network):
            for range_ in mine:
                if range_.overlaps(theirs):
                    raise refuse(
                        "network.replication",
                        f"{range_} overlaps {theirs} of stack {other!r}; give every "
                        f"environment its own range ({environment} and {other} would hand "
                        "out the same static addresses)",
                    )
