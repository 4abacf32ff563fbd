"""Kafka 3.9 with a ZooKeeper ensemble, started from the rendered configs (tests 1-3 again)."""

from __future__ import annotations

import time

import pytest

from infra.engine import PLACEHOLDER_SECRET
from infra.verify.processes import Node, ProcessCluster
from tests.kafka.checks import (
    FAILOVER_TRIALS,
    check_leader_sigkill,
    check_min_isr_two,
    check_renewal_reaches_every_listener,
    create,
    report_failover,
)

pytestmark = pytest.mark.kafka


def test_replicas_on_three_racks(zookeeper_cluster: ProcessCluster) -> None:
    described = create(zookeeper_cluster, "zk-racks", partitions=6)
    assert described["brokers"] == [0, 1, 2]
    racks = described["racks"]
    for partition in described["partitions"].values():
        assert len({racks[str(b)] for b in partition["replicas"]}) == 3


def test_min_isr_and_nothing_acknowledged_lost(zookeeper_cluster: ProcessCluster) -> None:
    check_min_isr_two(zookeeper_cluster, "zk-durable")


def test_leader_sigkill_loses_nothing(zookeeper_cluster: ProcessCluster) -> None:
    elapsed = check_leader_sigkill(zookeeper_cluster, "zk-failover", trials=FAILOVER_TRIALS)
    assert len(elapsed) == FAILOVER_TRIALS
    report_failover("ZooKeeper mode", elapsed)


REFUSED = ("Failed to authenticate using SASL", "Authentication failed against server addr")


def log_since_start(node: Node) -> str:
    return node.log.read_text(errors="replace")[getattr(node, "started_at", 0) :]


def test_a_server_without_the_quorum_password_cannot_join(
    zookeeper_cluster: ProcessCluster,
) -> None:
    """Quorum SASL as rendered: the last server restarted with a wrong quorum password (its
    client login unchanged) is refused by its peers and never follows; the other two keep
    serving; back with the rendered credentials, it rejoins."""
    cluster = zookeeper_cluster
    jaas = (f"{cluster.topology['cluster_name']}-zookeeper-jaas", "server.conf")
    rendered = cluster.secrets[jaas]
    # Only the quorum logins (from QuorumServer on) change; with none rendered, nothing does.
    clients, section, peers = rendered.partition("QuorumServer")
    rogue = cluster.quorum[-1]
    cluster.stop_node(rogue.name)
    cluster.secrets[jaas] = clients + section + peers.replace(PLACEHOLDER_SECRET, "wrong")
    try:
        cluster.start_node(rogue.name, wait=False)
        deadline = time.monotonic() + 90
        while not any(m in log_since_start(rogue) for m in REFUSED):
            assert time.monotonic() < deadline, f"no SASL refusal logged; see {rogue.log}"
            assert rogue.process is not None and rogue.process.poll() is None
            time.sleep(0.5)
        assert not any(m in log_since_start(rogue) for m in ("FOLLOWING", "LEADING"))
        created = cluster.client("create_topic", topic="zk-quorum-auth", partitions=3, rf=3)
        assert created["ok"], created  # the two servers with the password still serve
        assert not any(m in log_since_start(rogue) for m in ("FOLLOWING", "LEADING"))
    finally:
        cluster.stop_node(rogue.name)
        cluster.secrets[jaas] = rendered
    cluster.start_node(rogue.name)  # waits for FOLLOWING or LEADING: it joins


def test_renewed_certificates_reach_the_brokers_without_a_restart(
    zookeeper_cluster: ProcessCluster,
) -> None:
    # In ZooKeeper mode the broker a per-node AlterConfigs reaches reloads its files itself.
    renewed = check_renewal_reaches_every_listener(zookeeper_cluster)
    assert {f"{b.name} replication" for b in zookeeper_cluster.brokers} <= set(renewed)
