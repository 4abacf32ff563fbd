"""Renewed certificates reach running Kafka through each pod's rendered keystore reloader
(`checks.check_renewal_reaches_every_listener`), on the cloud shape with every in-cluster
listener encrypted, as prod and staging render it; and no KRaft node depends on the certificate
it started with once that one has expired (the raft client is built once, at start).

The nodes start with certificates valid `START_VALIDITY` only: the harness issues them, as
cert-manager would at any lifetime (which the stack never asks under 1h), so that the start
certificates expire while the test waits and not after days.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography import x509

from infra.verify.processes import ProcessCluster
from tests.kafka.checks import RELOAD_REPORTS, check_renewal_reaches_every_listener, create
from tests.kafka.conftest import start_cluster

pytestmark = pytest.mark.kafka

SHAPE: dict[str, Any] = {"network": {"mode": "single"}, "security": {"client_tls": True}}
# Long enough for the cluster to start and serve the renewal before it expires (a listener
# serving an expired certificate cannot be asked to reload: its reloader's handshake fails,
# which is why cert-manager renews `renew_before` the expiry); short enough to wait for. Start
# and renewal took 63 s on a quiet machine and up to 159 s at a load average of 18 (2 cores):
# 3 minutes leave the suite (which runs one test at a time) a margin of two minutes.
START_VALIDITY = datetime.timedelta(minutes=3)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    started = start_cluster(
        tmp_path_factory.mktemp("rotation"),
        brokers=3,
        certificate_validity=START_VALIDITY,
        **SHAPE,
    )
    yield started
    started.close()


@pytest.fixture(scope="module")
def start_expiry(cluster: ProcessCluster) -> datetime.datetime:
    """When the last of the certificates the nodes started with expires."""
    return max(
        x509.load_pem_x509_certificate(
            (n.workdir / "tls" / "tls.crt").read_bytes()
        ).not_valid_after_utc
        for n in cluster.nodes
        if n.role != "zookeeper"
    )


@pytest.fixture(scope="module")
def renewed(cluster: ProcessCluster, start_expiry: datetime.datetime) -> dict[str, str]:
    """Every node's Secret renewed once (before the start certificates expire), and served."""
    renewed = check_renewal_reaches_every_listener(cluster)
    left = (start_expiry - datetime.datetime.now(datetime.UTC)).total_seconds()
    # Served after the start certificates expired, the reloaders could not have reached their
    # nodes: this machine is too slow for START_VALIDITY.
    assert left > 0, f"the renewal was served {-left:.0f} s after START_VALIDITY ran out"
    return renewed


def test_renewed_certificates_reach_every_listener_without_a_restart(
    cluster: ProcessCluster, renewed: dict[str, str]
) -> None:
    assert {"kafka-broker-0 via haproxy", "kafka-controller-9000 controller"} <= set(renewed)
    # New connections, clients and followers alike, work on the renewed certificates.
    create(cluster, "after-renewal", partitions=3)
    produced = cluster.client("produce", topic="after-renewal", count=300, keys=30)
    assert len(produced["acked"]) == 300 and not produced["errors"], produced["errors"][:3]
    consumed = cluster.client("consume", external=True, topic="after-renewal", expect=300)
    assert len(consumed["records"]) == 300


def raft_view(cluster: ProcessCluster) -> dict[str, tuple[int, int]]:
    """Each node's (metadata quorum leader, high watermark) as its metrics serve them."""
    view = {}
    for node in cluster.nodes:
        text = cluster.metrics(node.entry["client_host"])
        values = {
            line.split(" ")[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("kafka_server_raft_metrics_")
        }
        view[node.name] = (
            int(values["kafka_server_raft_metrics_current_leader"]),
            int(values["kafka_server_raft_metrics_high_watermark"]),
        )
    return view


def wait_until_every_node_follows_the_leader(cluster: ProcessCluster, timeout: float) -> int:
    """Poll until every node names one controller as leader and has fetched the metadata log up
    to what that leader had committed when first seen (after an election, only a raft client
    that connected to the new leader gets there). Returns the leader's node id."""
    controllers = {int(n.entry["node_id"]) for n in cluster.quorum}
    deadline = time.monotonic() + timeout
    target: tuple[int, int] | None = None
    while True:
        view = raft_view(cluster)
        leaders = {leader for leader, _ in view.values()}
        if len(leaders) == 1 and leaders <= controllers:
            leader = leaders.pop()
            leader_name = next(n.name for n in cluster.quorum if n.entry["node_id"] == leader)
            if target is None or target[0] != leader:
                target = (leader, view[leader_name][1])
            behind = sorted(name for name, (_, hw) in view.items() if hw < target[1])
            if not behind:
                return leader
        assert time.monotonic() < deadline, f"nodes not following one leader: {view}"
        time.sleep(1)


def test_nodes_restarted_after_their_start_certificates_expired_rejoin_the_quorum(
    cluster: ProcessCluster, renewed: dict[str, str], start_expiry: datetime.datetime
) -> None:
    """The old, mTLS CONTROLLER listener fails here: every node that was not restarted still
    offers its expired start certificate on the raft client's new connections, which its
    peers refuse, so it never follows the new leader (or a restarted broker never hears that
    it caught up). With SASL/PLAIN over TLS the raft client presents no certificate and only
    checks the server's against the CA."""
    # A deadline, not a condition: the start certificates' expiry (plus the clock's second).
    left = (start_expiry - datetime.datetime.now(datetime.UTC)).total_seconds()
    time.sleep(max(0.0, left + 1))
    leader = wait_until_every_node_follows_the_leader(cluster, timeout=30)
    # Every controller, one at a time and the active one last (as a roll does), then a broker:
    # whichever controller leads then is a new process, which every node not restarted must
    # dial anew. Restarting the leader alone left the outcome to the connections that happened
    # to be open before the expiry: a peer still connected could elect an old voter.
    followers = [n.name for n in cluster.quorum if n.entry["node_id"] != leader]
    active = next(n.name for n in cluster.quorum if n.entry["node_id"] == leader)
    restarted = [*followers, active, cluster.brokers[-1].name]
    started = time.monotonic()
    for name in restarted:
        cluster.stop_node(name)
        cluster.start_node(name)
    wait_until_every_node_follows_the_leader(cluster, timeout=60)
    RELOAD_REPORTS.append(
        f"start certificates expired: every controller (the leader last) and a broker "
        f"restarted, every node followed the new leader {time.monotonic() - started:.0f} s "
        "after the first stop"
    )
    # Metadata changes commit and reach every broker; acks=all writes and reads work.
    create(cluster, "after-expiry", partitions=3)
    produced = cluster.client("produce", topic="after-expiry", count=300, keys=30)
    assert len(produced["acked"]) == 300 and not produced["errors"], produced["errors"][:3]
    consumed = cluster.client("consume", topic="after-expiry", expect=300)
    assert len(consumed["records"]) == 300
