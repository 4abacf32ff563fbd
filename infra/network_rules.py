"""The network rules that need the whole stack config: which platform is a cloud, the second
network's plugin and address plan, and the refusals of a network that cannot work there
(docs/networks.md). The section's own fields are in `infra/network_config.py`."""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Mapping
from typing import TYPE_CHECKING

from infra.config_base import refuse
from infra.model.addresses import AddressPlan
from infra.model.racks import assign_zones
from infra.network_config import (
    CLOUD_PLATFORMS,
    CLOUD_STORAGE_DRIVERS,
    DEFAULT_MONITORING_NAMESPACE,
    MONITORING_NAMESPACES,
)

if TYPE_CHECKING:
    from infra.stack_config import StackConfig


def on_cloud(c: StackConfig) -> bool:
    if c.platform in CLOUD_PLATFORMS:
        return True
    return c.platform == "openshift" and c.storage.provisioner in CLOUD_STORAGE_DRIVERS


def attachment_plugin(c: StackConfig) -> str:
    """macvlan gives each pod a MAC of its own, which a cloud network drops; ipvlan shares the
    node's MAC."""
    replication = c.network.replication
    chosen = replication.plugin if replication else None
    return chosen or ("ipvlan" if on_cloud(c) else "macvlan")


def monitoring_namespace(c: StackConfig) -> str:
    return c.network.monitoring_namespace or MONITORING_NAMESPACES.get(
        c.platform, DEFAULT_MONITORING_NAMESPACE
    )


def address_plan(c: StackConfig) -> AddressPlan | None:
    """The second network's address plan; None in single mode."""
    replication = c.network.replication
    if c.network.mode != "dual" or replication is None:
        return None
    if replication.subnets:
        return AddressPlan.per_zone(replication.subnets)
    assert replication.cidr is not None  # check_network refused a dual network without one
    return AddressPlan.stretched(replication.cidr, list(c.zones))


def check_network(c: StackConfig) -> None:
    network, replication = c.network, c.network.replication
    if network.mode == "single":
        if replication is not None:
            raise refuse(
                "network.replication",
                "only used with network.mode dual; remove it, or set network.mode: dual",
            )
        return
    cloud = on_cloud(c)
    if replication is None or (replication.cidr is None and not replication.subnets):
        wanted = "subnets (zone: cidr, one per zone)" if cloud else "cidr (or subnets per zone)"
        raise refuse(
            "network.replication",
            f"dual mode needs the second network's addresses: set network.replication.{wanted}, "
            "reserved for this stack alone, or use network.mode: single",
        )
    if replication.cidr and replication.subnets:
        raise refuse(
            "network.replication",
            "set cidr (one segment over every zone) or subnets (one per zone), not both",
        )
    if cloud and not replication.subnets:
        raise refuse(
            "network.replication.cidr",
            f"on {c.platform} one range cannot span zones (a subnet lives in one zone, and the "
            "network drops frames from MACs it did not assign); set network.replication.subnets "
            "with one subnet per zone, or use network.mode: single (separate listeners on the "
            "pod network)",
        )
    if cloud and attachment_plugin(c) in ("macvlan", "bridge"):
        raise refuse(
            "network.replication.plugin",
            f"{attachment_plugin(c)} gives each pod a MAC of its own, which a cloud network "
            "drops; use ipvlan",
        )
    if replication.subnets:
        _check_subnets(list(c.zones), replication.subnets)
    _check_room(c)


def _check_room(c: StackConfig) -> None:
    """Every node's static address lies inside its range, below the reserved tail."""
    plan = address_plan(c)
    assert plan is not None
    zones = list(c.zones)
    groups = [(assign_zones(c.broker_count, zones), False)]
    if not c.quorum.combined:
        groups.append((assign_zones(c.quorum_nodes, zones), True))
    highest: dict[str, int] = {}  # per zone's range; a stretched plan has one range for all
    for node_zones, quorum in groups:
        for zone, offset in zip(node_zones, plan.offsets(node_zones, quorum), strict=True):
            key = zone if plan.zoned else zones[0]
            highest[key] = max(highest.get(key, 0), offset)
    for zone, offset in highest.items():
        if offset <= plan.usable(zone):
            continue
        network = plan.ranges[zone]
        prefix = network.prefixlen
        while prefix > 0 and 2 ** (network.max_prefixlen - prefix) - 1 - plan.tail < offset:
            prefix -= 1
        key = f"network.replication.subnets.{zone}" if plan.zoned else "network.replication.cidr"
        raise refuse(
            key,
            f"{network} is too small for {c.broker_count} brokers and the quorum: the address "
            f"plan needs offset {offset} (quorum from .{plan.first}, brokers after a block of "
            f"7), the range ends at {plan.usable(zone)}; use /{prefix} or larger",
        )


def _check_subnets(zones: list[str], subnets: Mapping[str, str]) -> None:
    missing = [z for z in zones if z not in subnets]
    unknown = [z for z in subnets if z not in zones]
    if missing or unknown:
        raise refuse(
            "network.replication.subnets",
            f"zones {missing} have no subnet and {unknown} are not in kafkastack:zones; "
            "list exactly one subnet per zone",
        )
    ranges = {z: ipaddress.ip_network(subnets[z]) for z in zones}
    for (a, first), (b, second) in itertools.combinations(ranges.items(), 2):
        if first.overlaps(second):
            raise refuse(
                f"network.replication.subnets.{b}",
                f"{second} overlaps {a}'s {first}; give each zone its own subnet",
            )
