"""The keystore reloader: every Kafka node serves the certificate cert-manager last renewed.

cert-manager renews a node's certificate `renew_before` its expiry and rewrites the node's
Secret; the kubelet swaps the mounted files (the Secret is mounted whole, `workloads.py`). Kafka
reads its PEM keystore only when a listener is (re)configured, so a running node would go on
serving the old certificate until it expires: an outage with nothing restarted.

Kafka reloads a keystore file that changed when its node receives a per-node AlterConfigs that
sets a listener's keystore location again, even to the same value (KRaft writes the record
anyway, KAFKA-14136, and the node named reloads every listener whose file changed; ZooKeeper
mode reloads on the broker the request reaches). So each Kafka pod has a `keystore-reloader`
container: when the mounted keystore's checksum changes, it asks its own node, over its own
REPLICATION (broker) or CONTROLLER (dedicated controller) listener and with its own
certificate, to set each TLS listener's keystore location to the path it already has, then
deletes those per-node values again so server.properties stays what counts.

Kafka reconfigures every client channel of a node with its listener's keystore on such a
request (the replica fetchers with REPLICATION's) except one: the raft client, a KRaft node's
own connections to the controllers, keeps what its process started with. So the CONTROLLER
listener asks for no client certificate at all: KRaft nodes log in there with SASL/PLAIN over
TLS (controller_login.py), and no node needs a restart for a renewal.

Why in the pod: dedicated controllers listen only to Kafka pods (NetworkPolicy) and, in dual
mode, only on the second network; the node's own certificate is a super user (the nodes'
principal) and needs no admin password. Why not a roll: Pulumi never sees a renewal
(cert-manager makes it), and restarting nodes for a file Kafka can reload is a roll without need.
"""

from __future__ import annotations

from typing import Any

from infra.model import controller_login, zookeeper_tls
from infra.model.broker_config import tls_listeners
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node
from infra.model.own_listener import client_properties, logs_in, own_listener
from infra.model.paths import KAFKA_BIN, KEYSTORE_FILE
from infra.model.resources import sidecar

CONTAINER = "keystore-reloader"
STATE_VOLUME = "keystore-reloader"
STATE_DIR = "/var/lib/kafka/keystore-reloader"  # what it last loaded, its client config, logs
# How often the mounted file is compared: the kubelet itself takes up to a minute or so to swap
# a renewed Secret in, and renewal comes days (`renew_before`) before expiry.
CHECK_SECONDS = 30
# Failed reloads in a row (about five minutes) after which the container exits: its restarts
# show in the pod's status and alerts, where a log line alone would go unseen.
FAILURES_BEFORE_EXIT = 10


# The first release whose dedicated controllers take a per-node AlterConfigs through
# --bootstrap-controller on a dynamic quorum (KAFKA-18928): 3.9.1's answer is
# BrokerIdNotRegisteredException (shown on the kafka tier's harness), 4.3.1 reloads.
CONTROLLER_RELOAD_SINCE = (4, 3, 0)


def reloads(model: ClusterModel, node: Node) -> bool:
    """Whether the node serves its certificate on any listener (ZooKeeper servers serve none)
    and Kafka can reload it there: a dedicated controller before CONTROLLER_RELOAD_SINCE cannot,
    so it serves the certificate it started with until it restarts, which must then happen
    within `renew_before` of a renewal (`restarts_on_renewal`)."""
    if node.role == "controller" and model.config.kafka_release < CONTROLLER_RELOAD_SINCE:
        return False
    return node.role != "zookeeper" and bool(tls_listeners(model, node))


def restarts_on_renewal(model: ClusterModel, node: Node) -> bool:
    """Whether the node serves its certificate but cannot reload it (a ZooKeeper server with
    TLS, a dedicated controller before CONTROLLER_RELOAD_SINCE): a restart after each renewal
    makes it serve the renewed one (infra/certificate_restarts.py)."""
    if node.role == "zookeeper":
        return zookeeper_tls.applies(model.config)
    return bool(tls_listeners(model, node)) and not reloads(model, node)


def reload_script(model: ClusterModel, node: Node) -> str:
    listener = own_listener(model, node)
    keys = [
        f"listener.name.{name.lower()}.ssl.keystore.location" for name in tls_listeners(model, node)
    ]
    set_again = ",".join(f"{key}={KEYSTORE_FILE}" for key in keys)
    unset = ",".join(keys)
    client = f"{STATE_DIR}/client.properties"
    loaded = f"{STATE_DIR}/loaded"
    lines = [
        "trap 'exit 0' TERM",
        f"cat > {client} <<'EOF'",
        *client_properties(model, node),
        "EOF",
        f"checksum() {{ sha256sum {KEYSTORE_FILE} | cut -c1-64; }}",
        # The node reads its keystore seconds after its container starts, and this one starts
        # right after it: the file now is the one the node loads. Kept across a restart of this
        # container alone (emptyDir), gone with the pod (whose node then reads the file anew).
        f"[ -f {loaded} ] || checksum > {loaded}",
        f"configs() {{ {KAFKA_BIN}/kafka-configs.sh {listener.flag} {listener.address} "
        f"--command-config {client} "
        f'--entity-type brokers --entity-name {node.node_id} --alter "$@"; }}',
        "failures=0",
        "while :; do",
        "  now=$(checksum)",
        f'  if [ "$now" != "$(cat {loaded})" ]; then',
        f"    if configs --add-config {set_again} && configs --delete-config {unset}; then",
        f'      echo "$now" > {loaded}',
        f'      echo "node {node.node_id} reloaded its keystore (sha256 $now)"',
        "      failures=0",
        "    else",
        "      failures=$((failures + 1))",
        f'      echo "node {node.node_id} did not reload its keystore ($failures in a row)"',
        f'      [ "$failures" -lt {FAILURES_BEFORE_EXIT} ] || exit 1',
        "    fi",
        "  fi",
        f"  sleep {CHECK_SECONDS} & wait $!",
        "done",
    ]
    return "\n".join(lines) + "\n"


def reloader(
    model: ClusterModel, node: Node, image: str, pod_mounts: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The container and its emptyDir volume; of `pod_mounts` it takes the TLS Secret and,
    when it reaches the CONTROLLER listener, the nodes' login."""
    wanted = {"tls", *([controller_login.VOLUME] if logs_in(model, node) else [])}
    mounts = [m for m in pod_mounts if m["name"] in wanted]
    mounts.append({"name": STATE_VOLUME, "mountPath": STATE_DIR})
    container = sidecar(CONTAINER, image, reload_script(model, node), mounts, STATE_DIR)
    if logs_in(model, node):
        container["env"].append(controller_login.tool_env())
    return container, {"name": STATE_VOLUME, "emptyDir": {"medium": "Memory"}}
