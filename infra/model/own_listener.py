"""How a Kafka node's own tools reach the node itself, with the node's own identity.

A pod's sidecars and probes that ask their own node something (the keystore reloader's
AlterConfigs, the broker readiness probe's look at the in-sync sets) go to the node's
REPLICATION listener (a broker) or CONTROLLER listener (a dedicated controller), never the
CLIENT one: the node's own certificate is a super user there (the nodes' principal) and needs
no admin password, and dedicated controllers listen only there (in dual mode, only on the
second network).
"""

from __future__ import annotations

from dataclasses import dataclass

from infra.model import controller_login
from infra.model.broker_config import tls_listeners
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node
from infra.model.paths import KEYSTORE_FILE, TRUSTSTORE_FILE


@dataclass(frozen=True)
class OwnListener:
    flag: str  # the Kafka tools' option naming it: --bootstrap-server or --bootstrap-controller
    address: str  # host:port
    name: str  # the listener's name: REPLICATION or CONTROLLER


def own_listener(model: ClusterModel, node: Node) -> OwnListener:
    p = model.ports
    if node.role == "controller":
        return OwnListener(
            "--bootstrap-controller", f"{node.replication_host}:{p.controller}", "CONTROLLER"
        )
    return OwnListener(
        "--bootstrap-server", f"{node.replication_host}:{p.replication}", "REPLICATION"
    )


def logs_in(model: ClusterModel, node: Node) -> bool:
    """The node's tools reach the CONTROLLER listener, where KRaft nodes log in."""
    return own_listener(model, node).name == "CONTROLLER" and controller_login.applies(model)


def client_properties(
    model: ClusterModel, node: Node, request_ms: int = 15000, api_ms: int = 30000
) -> list[str]:
    """A node tool's client config: the node's own listener, with the node's own certificate
    (REPLICATION) or the nodes' login (CONTROLLER); `request_ms`, `api_ms`: how long one
    request, and one admin call with its retries, may take."""
    lines = [f"request.timeout.ms={request_ms}", f"default.api.timeout.ms={api_ms}"]
    if logs_in(model, node):
        return [*controller_login.client_properties(), *lines]
    if own_listener(model, node).name in tls_listeners(model, node):
        return [
            "security.protocol=SSL",
            "ssl.keystore.type=PEM",
            f"ssl.keystore.location={KEYSTORE_FILE}",
            "ssl.truststore.type=PEM",
            f"ssl.truststore.location={TRUSTSTORE_FILE}",
            *lines,
        ]
    # Without TLS between nodes there is no authorizer (security_rules.py), so no login either:
    # the node's own identity is then only its address.
    return ["security.protocol=PLAINTEXT", *lines]
