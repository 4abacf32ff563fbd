"""Assertions shared by the real-Kafka tests."""

from __future__ import annotations

import json
import signal
import time
from collections import defaultdict
from typing import Any

from infra.verify.cluster import LocalCluster


def create(cluster: LocalCluster, topic: str, partitions: int, **config: Any) -> dict[str, Any]:
    reply = cluster.client(
        "create_topic",
        topic=topic,
        partitions=partitions,
        rf=3,
        config={"min.insync.replicas": 2, **config},
    )
    assert reply["ok"], reply
    return wait_full_isr(cluster, topic, partitions)


def wait_full_isr(
    cluster: LocalCluster, topic: str, partitions: int, timeout: float = 90
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        described = cluster.client("describe", topic=topic)
        parts = described["partitions"]
        if len(parts) == partitions and all(len(p["isrs"]) == 3 for p in parts.values()):
            return described
        if time.monotonic() > deadline:
            raise AssertionError(f"{topic}: ISR did not recover: {parts}")
        time.sleep(1)


def assert_exactly_once_in_order(acked: list[list[Any]], records: list[list[Any]]) -> None:
    consumed = [r[1] for r in records]
    assert len(consumed) == len(set(consumed)), "a record was read twice"
    missing = {a[1] for a in acked} - set(consumed)
    assert not missing, f"{len(missing)} acknowledged records lost, e.g. {sorted(missing)[:5]}"
    per_key: dict[tuple[str, str], list[int]] = defaultdict(list)
    for key, value, _partition, _offset in records:
        _, sequence, run, _ = value.split(":", 3)
        per_key[(key, run)].append(int(sequence))
    for key, sequence in per_key.items():
        assert sequence == sorted(sequence), f"key {key} out of order"


def check_min_isr_two(cluster: LocalCluster, topic: str) -> None:
    """acks=all with min ISR 2: one replica down still writes, two down refuses with
    NOT_ENOUGH_REPLICAS, and after recovery every acknowledged record is there exactly once."""
    described = create(cluster, topic, partitions=1)
    leader = described["partitions"]["0"]["leader"]
    followers = [b for b in described["partitions"]["0"]["replicas"] if b != leader]
    all_up = cluster.client("produce", topic=topic, count=50)
    assert len(all_up["acked"]) == 50 and not all_up["errors"]
    cluster.stop_node(cluster.broker_by_id(followers[0]).name)
    one_down = cluster.client("produce", topic=topic, count=50)
    assert len(one_down["acked"]) == 50 and not one_down["errors"]
    cluster.stop_node(cluster.broker_by_id(followers[1]).name)
    time.sleep(2)  # let the leader shrink the ISR to itself
    two_down = cluster.client(
        "produce", topic=topic, count=5, no_retries=True, message_timeout_ms=10000
    )
    assert not two_down["acked"]
    assert {"NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"} & set(two_down["errors"])
    for follower in followers:
        cluster.start_node(cluster.broker_by_id(follower).name)
    wait_full_isr(cluster, topic, 1)
    records = cluster.client("consume", topic=topic, expect=100)["records"]
    assert_exactly_once_in_order(all_up["acked"] + one_down["acked"], records)


def check_leader_sigkill(cluster: LocalCluster, topic: str, count: int) -> float:
    """SIGKILL the leader during an idempotent keyed produce: every acknowledged record is read
    exactly once and in order per key. Returns the seconds until a new leader served."""
    create(cluster, topic, partitions=1)
    producer = cluster.spawn_client(
        {"op": "produce", "topic": topic, "count": count, "keys": 16, "interval_s": 0.004}
    )
    time.sleep(3)
    leader = cluster.client("leader_of", topic=topic)["leader"]
    killed_at = time.monotonic()
    cluster.stop_node(cluster.broker_by_id(leader).name, signal.SIGKILL)
    new_leader = cluster.client("leader_of", topic=topic, **{"not": leader})["leader"]
    elapsed = time.monotonic() - killed_at
    assert new_leader not in (-1, leader)
    out, _ = producer.communicate(timeout=240)
    produced = json.loads(out.decode().strip().splitlines()[-1])
    assert produced["acked"], produced["errors"][:5]
    records = cluster.client("consume", topic=topic, expect=len(produced["acked"]))["records"]
    assert_exactly_once_in_order(produced["acked"], records)
    return elapsed
