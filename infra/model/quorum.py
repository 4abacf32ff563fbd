"""The metadata quorum: one concept, two implementations (Strimzi's idea).

KRaft controllers (Kafka 4, and 3.9 in KRaft mode) or a ZooKeeper ensemble (3.9 only). Every
place that differs by quorum asks the cluster's `metadata` for its part instead of testing a
flag: who its nodes are, the ports they serve, what a broker's config says about the quorum, and
whether brokers format their own metadata storage. Which sizes are allowed is validation and
stays in infra/config.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from infra.model import labels, zookeeper_tls
from infra.model.naming import Names
from infra.model.nodes import Node
from infra.model.paths import METADATA_DIR
from infra.model.ports import Ports

if TYPE_CHECKING:
    from infra.stack_config import StackConfig


class Cluster(Protocol):
    """What a quorum reads of the cluster model (which itself picks the quorum)."""

    @property
    def config(self) -> StackConfig: ...
    @property
    def ports(self) -> Ports: ...
    @property
    def quorum(self) -> list[Node]: ...
    @property
    def voters(self) -> list[Node]: ...
    @property
    def initial_controllers(self) -> str: ...


CONTROLLER_ID_BASE = 9000

# Where a node finds the quorum, not what it is: the voter set itself lives in the metadata log
# (KIP-853), so a running node whose list is older than the ConfigMap's still finds the leader
# (any listed voter that answers names it). Left out of the restart hash (templating.py), a
# change of `quorum.nodes` creates or deletes controllers without restarting every Kafka pod;
# a node reads the new list at its next start.
BOOTSTRAP_SETTING = "controller.quorum.bootstrap.servers"
DISCOVERY_SETTINGS = frozenset({BOOTSTRAP_SETTING})


@dataclass(frozen=True)
class KRaftQuorum:
    kind = "kraft"
    role = labels.CONTROLLER
    # Brokers keep a metadata log of their own, formatted once per volume set.
    brokers_format_storage = True
    # ACLs live in the metadata log; brokers and controllers both run this authorizer.
    authorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

    def node_id(self, index: int) -> int:
        # Controllers' ids sit apart from brokers' (0, 1, …) so both can grow.
        return CONTROLLER_ID_BASE + index

    def workload(self, names: Names, index: int) -> str:
        return names.controller(self.node_id(index))

    def ports(self, p: Ports) -> dict[str, int]:
        return {"controller": p.controller}

    def broker_identity(self, model: Cluster, node_id: int) -> dict[str, object]:
        roles = "broker,controller" if model.config.quorum.combined else "broker"
        return {"process.roles": roles, "node.id": node_id}

    def quorum_settings(self, model: Cluster) -> dict[str, object]:
        return {
            "controller.listener.names": "CONTROLLER",
            # Dynamic quorum (KIP-853): voters are discovered, so the set can change later.
            BOOTSTRAP_SETTING: voter_addresses(model),
            "metadata.log.dir": METADATA_DIR,
        }

    def initial_voters(self, model: Cluster) -> str | None:
        return model.initial_controllers


def voter_address(model: Cluster, voter: Node) -> str:
    """A voter's controller listener, `host:port`, as the other nodes list it."""
    return f"{voter.replication_host}:{model.ports.controller}"


def voter_addresses(model: Cluster) -> str:
    """The voters' controller listeners, `host:port,...`: where a node finds the quorum."""
    return ",".join(voter_address(model, v) for v in model.voters)


@dataclass(frozen=True)
class ZooKeeperQuorum:
    kind = "zookeeper"
    role = labels.ZOOKEEPER
    # Brokers keep metadata in ZooKeeper: there is no storage of theirs to format.
    brokers_format_storage = False
    # ACLs live in ZooKeeper (Kafka 3.9's last ZooKeeper-mode authorizer).
    authorizer = "kafka.security.authorizer.AclAuthorizer"

    def node_id(self, index: int) -> int:
        return index + 1  # ZooKeeper's myid starts at 1

    def workload(self, names: Names, index: int) -> str:
        return names.zookeeper(self.node_id(index))

    def ports(self, p: Ports) -> dict[str, int]:
        return {
            "client": p.zookeeper_client,
            "peer": p.zookeeper_peer,
            "election": p.zookeeper_election,
        }

    def broker_identity(self, model: Cluster, node_id: int) -> dict[str, object]:
        return {"broker.id": node_id}

    def quorum_settings(self, model: Cluster) -> dict[str, object]:
        port = model.ports.zookeeper_client
        servers = ",".join(f"{z.replication_host}:{port}" for z in model.quorum)
        return {
            # A chroot per cluster: one ensemble may serve several clusters' metadata apart.
            "zookeeper.connect": f"{servers}/{model.config.cluster_name}",
            "zookeeper.connection.timeout.ms": 18000,
            # Brokers log in (SASL/DIGEST) and ACL their znodes so only that login may change them.
            "zookeeper.set.acl": True,
            **(zookeeper_tls.broker_settings() if zookeeper_tls.applies(model.config) else {}),
        }

    def initial_voters(self, model: Cluster) -> str | None:
        return None  # the ensemble's membership is zoo.cfg's server list


MetadataQuorum = KRaftQuorum | ZooKeeperQuorum
QUORUMS: dict[str, MetadataQuorum] = {"kraft": KRaftQuorum(), "zookeeper": ZooKeeperQuorum()}
