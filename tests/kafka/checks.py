"""Assertions shared by the real-Kafka tests."""

from __future__ import annotations

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
