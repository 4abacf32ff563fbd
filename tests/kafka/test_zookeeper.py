"""Kafka 3.9 with a ZooKeeper ensemble, started from the rendered configs (tests 1-3 again)."""

from __future__ import annotations

import pytest

from infra.verify.cluster import LocalCluster
from tests.kafka.checks import (
    check_leader_sigkill,
    check_min_isr_two,
    create,
)

pytestmark = pytest.mark.kafka


def test_replicas_on_three_racks(zookeeper_cluster: LocalCluster) -> None:
    described = create(zookeeper_cluster, "zk-racks", partitions=6)
    assert described["brokers"] == [0, 1, 2]
    racks = described["racks"]
    for partition in described["partitions"].values():
        assert len({racks[str(b)] for b in partition["replicas"]}) == 3


def test_min_isr_and_nothing_acknowledged_lost(zookeeper_cluster: LocalCluster) -> None:
    check_min_isr_two(zookeeper_cluster, "zk-durable")


def test_leader_sigkill_loses_nothing(zookeeper_cluster: LocalCluster) -> None:
    elapsed = check_leader_sigkill(zookeeper_cluster, "zk-failover", count=2000)
    print(f"\nZooKeeper mode: a new leader served {elapsed:.2f}s after SIGKILL of the old one")
