"""The pure cluster model built from a validated `StackConfig` (Strimzi's `fromCrd()`).

Components and templates read this; none of them decides anything on their own.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from infra.model import labels
from infra.model.addresses import AddressPlan
from infra.model.naming import Names
from infra.model.nodes import Node
from infra.model.paths import data_dir
from infra.model.ports import Ports
from infra.model.quorum import QUORUMS, MetadataQuorum
from infra.model.racks import assign_zones
from infra.model.resources import Resources, broker_request
from infra.network_rules import address_plan

if TYPE_CHECKING:
    from infra.stack_config import StackConfig


def derived_cluster_id(c: StackConfig) -> str:
    """A stable KRaft cluster id (22-char base64 UUID): formatting storage needs the same id
    on every run, so it is derived from the cluster's identity instead of generated."""
    if c.cluster_id:
        return c.cluster_id
    u = uuid.uuid5(uuid.NAMESPACE_DNS, f"{c.cluster_name}.{c.namespace}.{c.environment}.kafkastack")
    derived = base64.urlsafe_b64encode(u.bytes).decode("ascii").rstrip("=")
    # One name in 64 gives an id starting with '-', which `kafka-storage.sh format -t` reads as
    # an option: such a cluster never formatted, so its id may change. Kafka's random ids skip
    # it the same way. 'A' keeps the other 126 bits.
    return "A" + derived[1:] if derived.startswith("-") else derived


@dataclass(frozen=True)
class ClusterModel:
    config: StackConfig
    names: Names
    ports: Ports = field(default_factory=Ports)
    # The KRaft controller leading the quorum when the program could ask the running cluster
    # (infra/active_controller.py): a roll restarts it last. None: node order.
    active_controller: int | None = None
    # Every existing KRaft voter's pod answered, a leader among them when more are to be created
    # (infra/active_controller.py): the quorum already runs, so even combined brokers, which
    # cannot be created one by one, are changed (and added) one at a time.
    quorum_running: bool = False
    # The names of the stack's StatefulSets the cluster holds (infra/stack_workloads.py); None
    # when it could not be asked.
    existing_workloads: frozenset[str] | None = None
    # Workload → the value on the pod template of a node that cannot reload a renewed
    # certificate: a new value restarts it (infra/certificate_restarts.py). None: the cluster
    # could not be asked, and the deployed value stays.
    certificate_restarts: dict[str, str] | None = None

    @classmethod
    def from_config(
        cls,
        config: StackConfig,
        active_controller: int | None = None,
        quorum_running: bool = False,
        existing_workloads: frozenset[str] | None = None,
        certificate_restarts: dict[str, str] | None = None,
    ) -> ClusterModel:
        names = Names(
            config.cluster_name,
            config.namespace,
            config.network.cluster_domain,
            config.external.domain,
        )
        return cls(
            config=config,
            names=names,
            active_controller=active_controller,
            quorum_running=quorum_running,
            existing_workloads=existing_workloads,
            certificate_restarts=certificate_restarts,
        )

    @property
    def first_creation(self) -> bool:
        """The cluster answered that none of the stack's StatefulSets exists yet: every node is
        created at once, none waits for another."""
        return self.existing_workloads == frozenset()

    @property
    def zones(self) -> list[str]:
        return list(self.config.zones)

    @property
    def dual_network(self) -> bool:
        return self.config.network.mode == "dual"

    @property
    def metadata(self) -> MetadataQuorum:
        """The metadata quorum's implementation: KRaft controllers or a ZooKeeper ensemble."""
        return QUORUMS[self.config.quorum.kind]

    @property
    def cluster_id(self) -> str:
        return derived_cluster_id(self.config)

    @cached_property
    def address_plan(self) -> AddressPlan | None:
        """Static addresses on the second network (docs/networks.md); None in single mode."""
        return address_plan(self.config)

    def _replication_ips(self, node_zones: list[str], quorum: bool) -> list[str | None]:
        if self.address_plan is None:
            return [None] * len(node_zones)
        return list(self.address_plan.addresses(node_zones, quorum))

    @cached_property
    def brokers(self) -> list[Node]:
        zones = assign_zones(self.config.broker_count, self.zones)
        addresses = self._replication_ips(zones, quorum=False)
        nodes = []
        for node_id, zone in enumerate(zones):
            workload = self.names.broker(node_id)
            nodes.append(
                Node(
                    role=labels.BROKER,
                    node_id=node_id,
                    workload=workload,
                    zone=zone,
                    client_host=self.names.pod_dns(workload, self.names.brokers_service),
                    replication_ip=addresses[node_id],
                    external_host=self.names.external_broker(node_id),
                )
            )
        return nodes

    @cached_property
    def quorum(self) -> list[Node]:
        """Dedicated controllers or ZooKeeper servers; empty in combined mode."""
        if self.config.quorum.combined:
            return []
        metadata = self.metadata
        nodes = []
        # The same round-robin over zones as the brokers; hard anti-affinity keeps quorum pods
        # off broker nodes, so a zone's brokers and controllers never share a node.
        zones = assign_zones(self.config.quorum_nodes, self.zones)
        addresses = self._replication_ips(zones, quorum=True)
        for index, zone in enumerate(zones):
            node_id = metadata.node_id(index)
            workload = metadata.workload(self.names, index)
            nodes.append(
                Node(
                    role=metadata.role,
                    node_id=node_id,
                    workload=workload,
                    zone=zone,
                    client_host=self.names.pod_dns(workload, self.names.quorum_service),
                    replication_ip=addresses[index],
                )
            )
        return nodes

    @property
    def voters(self) -> list[Node]:
        """KRaft voters: the controllers, or the brokers themselves in combined mode."""
        return self.brokers if self.config.quorum.combined else self.quorum

    def voter_directory_id(self, node: Node) -> str:
        """Each voter's metadata directory id, fixed up front so the initial voter set can be
        written into every voter's format command (and rendered, and diffed)."""
        u = uuid.uuid5(uuid.NAMESPACE_DNS, f"{self.cluster_id}.{node.workload}.directory")
        return base64.urlsafe_b64encode(u.bytes).decode("ascii").rstrip("=")

    @property
    def initial_controllers(self) -> str:
        """`kafka-storage format --initial-controllers` value: id@host:port:directory-id,..."""
        return ",".join(
            f"{v.node_id}@{v.replication_host}:{self.ports.controller}:{self.voter_directory_id(v)}"
            for v in self.voters
        )

    @property
    def broker_resources(self) -> Resources:
        return broker_request(self.config)

    @property
    def data_volumes(self) -> int:
        return self.config.data_volumes

    @property
    def data_volume_gib(self) -> float:
        return self.config.data_volume_gib

    @property
    def log_dirs(self) -> list[str]:
        return [data_dir(i) for i in range(self.data_volumes)]

    @property
    def pod_count(self) -> int:
        """Every pod the stack runs: brokers, quorum nodes and HAProxy replicas."""
        external = self.haproxy_replicas if self.config.external.mode == "haproxy" else 0
        return len(self.brokers) + len(self.quorum) + external

    @property
    def haproxy_replicas(self) -> int:
        return self.config.external.replicas or self.config.sizing.cluster.router.replicas
