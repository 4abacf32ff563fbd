"""Kafka 3.9 with a ZooKeeper ensemble, started from the rendered configs (tests 1-3 again)."""

from __future__ import annotations

import json
import signal
import time

import pytest

from infra.verify.cluster import LocalCluster
from tests.kafka.checks import (
    assert_exactly_once_in_order,
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
    cluster = zookeeper_cluster
    create(cluster, "zk-failover", partitions=1)
    producer = cluster.spawn_client(
        {"op": "produce", "topic": "zk-failover", "count": 2000, "keys": 16, "interval_s": 0.004}
    )
    time.sleep(3)
    leader = cluster.client("leader_of", topic="zk-failover")["leader"]
    killed_at = time.monotonic()
    cluster.stop_node(cluster.broker_by_id(leader).name, signal.SIGKILL)
    new_leader = cluster.client("leader_of", topic="zk-failover", **{"not": leader})["leader"]
    print(f"\nZooKeeper mode: new leader {new_leader} after {time.monotonic() - killed_at:.2f}s")
    assert new_leader not in (-1, leader)
    out, _ = producer.communicate(timeout=240)
    produced = json.loads(out.decode().strip().splitlines()[-1])
    records = cluster.client("consume", topic="zk-failover", expect=len(produced["acked"]))[
        "records"
    ]
    assert_exactly_once_in_order(produced["acked"], records)
    cluster.start_node(cluster.broker_by_id(leader).name)
