"""Kafka server.properties as a builder with one method per concern (Strimzi's style).

The builder produces ordered sections of key → value; templates/kafka/*.properties.j2 only
prints them. Every safety default is here, with why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from infra.model import controller_login, labels
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node
from infra.model.paths import KEYSTORE_FILE, METADATA_DIR, TRUSTSTORE_FILE

RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
POLLING_SECTION = "idle polling (the stack's polling)"


@dataclass
class PropertiesBuilder:
    sections: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def section(self, title: str, values: dict[str, object]) -> PropertiesBuilder:
        rendered = {k: _text(v) for k, v in values.items()}
        self.sections.append((title, rendered))
        return self

    def flat(self) -> dict[str, str]:
        return {k: v for _, values in self.sections for k, v in values.items()}


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def client_protocol(model: ClusterModel) -> str:
    """The in-cluster CLIENT listener's protocol."""
    c = model.config
    if c.security.client_auth == "mtls":
        return "SSL"
    return "SASL_SSL" if c.client_tls else "SASL_PLAINTEXT"


def _security_protocols(model: ClusterModel) -> dict[str, str]:
    c = model.config
    between_nodes = "SSL" if c.security.replication_tls else "PLAINTEXT"
    protocols = {
        "CLIENT": client_protocol(model),
        "REPLICATION": between_nodes,
        # KRaft: a login over TLS, not a client certificate (controller_login.py says why).
        "CONTROLLER": "SASL_SSL" if controller_login.applies(model) else between_nodes,
    }
    if c.external.mode != "none":
        protocols["EXTERNAL"] = "SASL_SSL" if c.security.client_auth == "scram-sha-512" else "SSL"
    return protocols


def listener_protocols(model: ClusterModel, node: Node) -> dict[str, str]:
    """The listeners `node` serves and the security protocol of each."""
    protocols = _security_protocols(model)
    if node.role == labels.CONTROLLER:
        return {"CONTROLLER": protocols["CONTROLLER"]}
    served = [*protocols.keys()]
    if not (model.config.quorum.combined and model.config.quorum.kind == "kraft"):
        served.remove("CONTROLLER")
    return {name: protocols[name] for name in served}


def tls_listeners(model: ClusterModel, node: Node) -> list[str]:
    """The listeners of `node` that serve its certificate."""
    return [name for name, protocol in listener_protocols(model, node).items() if "SSL" in protocol]


class BrokerConfig:
    """server.properties of one broker."""

    def __init__(self, model: ClusterModel, node: Node) -> None:
        self.model = model
        self.node = node
        self.builder = PropertiesBuilder()

    def with_identity(self) -> BrokerConfig:
        values = self.model.metadata.broker_identity(self.model, self.node.node_id)
        self.builder.section("identity", values)
        return self

    def with_rack(self) -> BrokerConfig:
        # Static per broker: the zone is known when the config is rendered, so brokers need no
        # RBAC to read their Node object (the usual init-container trick).
        self.builder.section(
            "rack awareness",
            {
                "broker.rack": self.node.zone,
                # Consumers fetch from a replica in their own zone (KIP-392).
                "replica.selector.class": RACK_AWARE_SELECTOR,
            },
        )
        return self

    def with_listeners(self) -> BrokerConfig:
        m, n, p = self.model, self.node, self.model.ports
        protocols = _security_protocols(m)
        listeners = [
            f"CLIENT://0.0.0.0:{p.client}",
            f"REPLICATION://{n.replication_bind}:{p.replication}",
        ]
        advertised = [
            f"CLIENT://{n.client_host}:{p.client}",
            f"REPLICATION://{n.replication_host}:{p.replication}",
        ]
        if "EXTERNAL" in protocols:
            listeners.append(f"EXTERNAL://0.0.0.0:{p.external}")
            advertised.append(f"EXTERNAL://{n.external_host}:{p.route}")
        if m.config.quorum.combined:
            listeners.append(f"CONTROLLER://{n.replication_bind}:{p.controller}")
            # What `add-controller` tells the leader to dial (KIP-853; clients never see it):
            # without it, the bind address, and a combined broker that joins the voter set
            # (a new one, or one that lost its disk) had the leader dial 0.0.0.0, itself.
            advertised.append(f"CONTROLLER://{n.replication_host}:{p.controller}")
        values: dict[str, object] = {
            "listeners": ",".join(listeners),
            "advertised.listeners": ",".join(advertised),
            "listener.security.protocol.map": ",".join(f"{k}:{v}" for k, v in protocols.items()),
            "inter.broker.listener.name": "REPLICATION",
        }
        # Separate listeners either way: in dual mode REPLICATION binds only the second network;
        # on the pod network it is its own port, admitted only from brokers (docs/networks.md).
        self.builder.section("listeners (replication and client traffic apart)", values)
        return self

    def with_metadata_quorum(self) -> BrokerConfig:
        self.builder.section("metadata quorum", self.model.metadata.quorum_settings(self.model))
        return self

    def with_log_dirs(self) -> BrokerConfig:
        self.builder.section(
            "storage (JBOD: one directory per volume)", {"log.dirs": ",".join(self.model.log_dirs)}
        )
        return self

    def with_safe_defaults(self) -> BrokerConfig:
        c = self.model.config
        rf = c.replication_factor
        isr = c.min_insync_replicas
        self.builder.section(
            "durability defaults",
            {
                "default.replication.factor": rf,
                "min.insync.replicas": isr,
                # A lagging replica must never become leader: that silently drops acked writes.
                "unclean.leader.election.enable": False,
                # Topics are declared on purpose (partitions, RF), never created by a typo.
                "auto.create.topics.enable": False,
                "offsets.topic.replication.factor": rf,
                "transaction.state.log.replication.factor": rf,
                "transaction.state.log.min.isr": isr,
                # Let a rolling restart's group members rejoin before the first rebalance.
                "group.initial.rebalance.delay.ms": 3000,
                "num.partitions": max(3, len(c.zones)),
            },
        )
        return self

    def with_threads(self) -> BrokerConfig:
        sized = self.model.config.sizing.cluster.broker
        self.builder.section(
            "threads (from sizing)",
            {
                "num.network.threads": sized.num_network_threads,
                "num.io.threads": sized.num_io_threads,
                "num.replica.fetchers": max(1, min(8, sized.num_network_threads // 2)),
                "num.recovery.threads.per.data.dir": 2,
            },
        )
        return self

    def with_security(self) -> BrokerConfig:
        c = self.model.config
        values: dict[str, object] = {}
        if c.security.client_auth == "scram-sha-512":
            values["sasl.enabled.mechanisms"] = "SCRAM-SHA-512"
            for listener in ("client", "external"):
                values[f"listener.name.{listener}.scram-sha-512.sasl.jaas.config"] = (
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;"
                )
        # PEM files of the node's cert-manager Secret (tls-combined.pem, ca.crt): any
        # certificate source that writes those two keys works.
        values.update({**pem_files(), "ssl.endpoint.identification.algorithm": "https"})
        if c.security.replication_tls:
            # Brokers authenticate each other with certificates (mTLS); Kafka reloads the
            # replica fetchers' keystore with the listener's.
            values["listener.name.replication.ssl.client.auth"] = "required"
        if controller_login.applies(self.model):
            # Every KRaft node logs in to the controllers (controller_login.py).
            values.update(controller_login.server_settings(self._serves_controller()))
        elif c.security.replication_tls:
            values["listener.name.controller.ssl.client.auth"] = "required"
        if c.security.client_auth == "mtls":
            values["ssl.client.auth"] = "required"
        self.builder.section("security", values)
        return self

    def _serves_controller(self) -> bool:
        return "CONTROLLER" in listener_protocols(self.model, self.node)

    def with_authorization(self) -> BrokerConfig:
        if self.model.config.authorization:
            self.builder.section(
                "authorization (deny unless an ACL allows)", authorization(self.model)
            )
        return self

    def with_polling(self) -> BrokerConfig:
        values = replica_polling(self.model)
        if self._serves_controller():
            values.update(metadata_polling(self.model))
        if values:
            self.builder.section(POLLING_SECTION, values)
        return self

    def build(self) -> PropertiesBuilder:
        return self.builder


def replica_polling(model: ClusterModel) -> dict[str, object]:
    """A broker's follower fetch wait, when the stack sets one (`polling`)."""
    wait = model.config.polling.replica_fetch_wait_ms
    return {} if wait is None else {"replica.fetch.wait.max.ms": wait}


def metadata_polling(model: ClusterModel) -> dict[str, object]:
    """A KRaft controller's no-op interval, when the stack sets one (`polling`)."""
    idle = model.config.polling.metadata_idle_interval_ms
    return {} if idle is None else {"metadata.max.idle.interval.ms": idle}


def pem_files() -> dict[str, object]:
    """The node's keystore and truststore: PEM files of its cert-manager Secret, as mounted."""
    return {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": KEYSTORE_FILE,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": TRUSTSTORE_FILE,
    }


# A certificate's subject `CN=<name>` becomes the principal `User:<name>`.
PRINCIPAL_FROM_CN = "RULE:^CN=([^,]+)$/$1/,DEFAULT"


def authorization(model: ClusterModel) -> dict[str, object]:
    """The same on every broker and controller: the nodes (their shared certificate CN, which
    is also their controller login's user) and the admin are super users; everyone else gets
    only what an ACL grants."""
    return {
        "authorizer.class.name": model.metadata.authorizer,
        "super.users": ";".join(super_users(model)),
        "allow.everyone.if.no.acl.found": False,
        "ssl.principal.mapping.rules": PRINCIPAL_FROM_CN,
    }


def super_users(model: ClusterModel) -> list[str]:
    return [f"User:{model.names.node_principal}", f"User:{model.config.security.admin_user}"]


def broker_properties(model: ClusterModel, node: Node) -> PropertiesBuilder:
    return (
        BrokerConfig(model, node)
        .with_identity()
        .with_rack()
        .with_listeners()
        .with_metadata_quorum()
        .with_log_dirs()
        .with_safe_defaults()
        .with_threads()
        .with_security()
        .with_authorization()
        .with_polling()
        .build()
    )


def controller_properties(model: ClusterModel, node: Node) -> PropertiesBuilder:
    """A dedicated KRaft controller: binds and advertises only the replication network."""
    p = model.ports
    builder = PropertiesBuilder()
    protocol = listener_protocols(model, node)["CONTROLLER"]
    replication = _security_protocols(model)["REPLICATION"]
    builder.section("identity", {"process.roles": "controller", "node.id": node.node_id})
    builder.section("rack awareness", {"broker.rack": node.zone})
    builder.section(
        "listeners (controllers serve the quorum only, on the second network when there is one)",
        {
            "listeners": f"CONTROLLER://{node.replication_bind}:{p.controller}",
            "advertised.listeners": f"CONTROLLER://{node.replication_host}:{p.controller}",
            "listener.security.protocol.map": f"CONTROLLER:{protocol},REPLICATION:{replication}",
            **model.metadata.quorum_settings(model),
            "log.dirs": METADATA_DIR,
        },
    )
    if model.config.security.replication_tls:
        builder.section(
            "security",
            {
                **pem_files(),
                "ssl.endpoint.identification.algorithm": "https",
                # Peers log in; they present no certificate (controller_login.py).
                **controller_login.server_settings(serves_listener=True),
            },
        )
    if model.config.authorization:
        builder.section("authorization (deny unless an ACL allows)", authorization(model))
    if polling := metadata_polling(model):
        builder.section(POLLING_SECTION, polling)
    return builder
