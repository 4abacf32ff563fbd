"""Kafka 3.9 with a ZooKeeper ensemble, started from the rendered configs (tests 1-3 again)."""

from __future__ import annotations

import pytest

from infra.verify.processes import ProcessCluster
from tests.kafka.checks import (
    FAILOVER_TRIALS,
    check_leader_sigkill,
    check_min_isr_two,
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
