"""Kafka 3.9 with a ZooKeeper ensemble, started from the rendered configs (tests 1-3 again)."""

from __future__ import annotations

import json
import signal
import time

import pytest

from infra.verify.cluster import LocalCluster
from tests.kafka.checks import assert_exactly_once_in_order, create, wait_full_isr

pytestmark = pytest.mark.kafka


def test_replicas_on_three_racks(zookeeper_cluster: LocalCluster) -> None:
    described = create(zookeeper_cluster, "zk-racks", partitions=6)
    assert described["brokers"] == [0, 1, 2]
    racks = described["racks"]
    for partition in described["partitions"].values():
        assert len({racks[str(b)] for b in partition["replicas"]}) == 3


def test_min_isr_and_nothing_acknowledged_lost(zookeeper_cluster: LocalCluster) -> None:
    cluster = zookeeper_cluster
    described = create(cluster, "zk-durable", partitions=1)
    leader = described["partitions"]["0"]["leader"]
    followers = [b for b in described["partitions"]["0"]["replicas"] if b != leader]
    cluster.stop_node(cluster.broker_by_id(followers[0]).name)
    one_down = cluster.client("produce", topic="zk-durable", count=50)
    assert len(one_down["acked"]) == 50 and not one_down["errors"]
    cluster.stop_node(cluster.broker_by_id(followers[1]).name)
    time.sleep(2)
    two_down = cluster.client(
        "produce", topic="zk-durable", count=5, no_retries=True, message_timeout_ms=10000
    )
    assert not two_down["acked"]
    assert {"NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"} & set(two_down["errors"])
    for follower in followers:
        cluster.start_node(cluster.broker_by_id(follower).name)
    wait_full_isr(cluster, "zk-durable", 1)
    records = cluster.client("consume", topic="zk-durable", expect=50)["records"]
    assert_exactly_once_in_order(one_down["acked"], records)


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
