"""Assertions shared by the real-Kafka tests."""

from __future__ import annotations

import json
import signal
import statistics
import time
from collections import defaultdict
from typing import Any

from infra.verify.processes import ProcessCluster

FAILOVER_TRIALS = 10
# Failover figures of this session, printed in pytest's terminal summary (tests/kafka/conftest.py).
FAILOVER_REPORTS: list[str] = []


def create(cluster: ProcessCluster, topic: str, partitions: int, **config: Any) -> dict[str, Any]:
    reply = cluster.client(
        "create_topic",
        topic=topic,
        partitions=partitions,
        rf=3,
        config={"min.insync.replicas": 2, **config},
    )
    assert reply["ok"], reply
    return wait_full_isr(cluster, topic, partitions)


def wait_for_isr(
    cluster: ProcessCluster, topic: str, partitions: int, size: int, timeout: float = 90
) -> dict[str, Any]:
    """Poll until every partition's in-sync set has exactly `size` replicas."""
    deadline = time.monotonic() + timeout
    while True:
        described = cluster.client("describe", topic=topic)
        parts = described["partitions"]
        if len(parts) == partitions and all(len(p["isrs"]) == size for p in parts.values()):
            return described
        if time.monotonic() > deadline:
            raise AssertionError(f"{topic}: ISR never reached {size} replicas: {parts}")
        time.sleep(1)


def wait_full_isr(
    cluster: ProcessCluster, topic: str, partitions: int, timeout: float = 90
) -> dict[str, Any]:
    return wait_for_isr(cluster, topic, partitions, 3, timeout)


def create_led_by_every_broker(
    cluster: ProcessCluster, topic: str, partitions: int, timeout: float = 90
) -> dict[str, Any]:
    """A topic whose partitions are led by every broker in turn, each with replicas on three racks.

    Left to the controller, placement skips a broker that is fenced at that moment (for a few
    seconds after a quorum outage), and leadership stays where failovers put it; both are normal
    Kafka, so the preferred leaders are given explicitly and elected before the test goes on."""
    cluster.wait_for_brokers(len(cluster.brokers))
    racks = {int(b): rack for b, rack in cluster.client("describe", topic=topic)["racks"].items()}
    assignment = rack_spread_assignment(racks, partitions)
    reply = cluster.client(
        "create_topic", topic=topic, assignment=assignment, config={"min.insync.replicas": 2}
    )
    assert reply["ok"], reply
    wait_full_isr(cluster, topic, partitions)
    deadline = time.monotonic() + timeout
    while True:
        described = cluster.client("describe", topic=topic)
        parts = described["partitions"]
        if all(p["leader"] == p["replicas"][0] for p in parts.values()):
            return described
        assert time.monotonic() < deadline, f"{topic}: preferred leaders not elected: {parts}"
        cluster.client("elect_preferred", topic=topic, partitions=partitions)
        time.sleep(1)


def rack_spread_assignment(racks: dict[int, str], partitions: int, rf: int = 3) -> list[list[int]]:
    """Replica lists whose first (preferred leader) broker rotates over all brokers and whose
    replicas sit on `rf` distinct racks."""
    brokers = sorted(racks)
    assignment = []
    for p in range(partitions):
        rotated = brokers[p % len(brokers) :] + brokers[: p % len(brokers)]
        replicas: list[int] = []
        for broker in rotated:
            if racks[broker] not in {racks[r] for r in replicas}:
                replicas.append(broker)
        assert len(replicas) >= rf, f"fewer than {rf} racks in {racks}"
        assignment.append(replicas[:rf])
    return assignment


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


def check_min_isr_two(cluster: ProcessCluster, topic: str) -> None:
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
    wait_for_isr(cluster, topic, 1, 1)  # the leader has shrunk the ISR to itself
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


def check_leader_sigkill(cluster: ProcessCluster, topic: str, trials: int) -> list[float]:
    """SIGKILL the partition leader `trials` times during one continuous idempotent, keyed
    produce (the killed broker rejoins the ISR before the next kill): every acknowledged record is
    read exactly once and in order per key. Returns, per trial, the seconds until a new leader
    served."""
    create(cluster, topic, partitions=1)
    stop = cluster.workdir / f"{topic}.stop"
    started = cluster.workdir / f"{topic}.started"
    producer = cluster.spawn_client(
        {
            "op": "produce",
            "topic": topic,
            "count": 10_000_000,
            "keys": 16,
            "interval_s": 0.005,
            "stop_file": str(stop),
            "started_file": str(started),
            "message_timeout_ms": 120000,
        }
    )
    elapsed = []
    try:
        deadline = time.monotonic() + 60
        while not started.exists():  # the first record is acknowledged: the load is on
            assert producer.poll() is None, "the producer exited before any acknowledgement"
            assert time.monotonic() < deadline, "no record acknowledged within 60 s"
            time.sleep(0.1)
        for _ in range(trials):
            elapsed.append(_kill_leader_and_rejoin(cluster, topic))
    finally:
        stop.touch()
    out, _ = producer.communicate(timeout=240)
    produced = json.loads(out.decode().strip().splitlines()[-1])
    assert produced["acked"], produced["errors"][:5]
    records = cluster.client("consume", topic=topic, expect=len(produced["acked"]), timeout_s=120)[
        "records"
    ]
    assert_exactly_once_in_order(produced["acked"], records)
    return elapsed


def _kill_leader_and_rejoin(cluster: ProcessCluster, topic: str) -> float:
    leader = cluster.client("leader_of", topic=topic)["leader"]
    killed_at = time.monotonic()
    cluster.stop_node(cluster.broker_by_id(leader).name, signal.SIGKILL)
    new_leader = cluster.client("leader_of", topic=topic, **{"not": leader})["leader"]
    elapsed = time.monotonic() - killed_at
    assert new_leader not in (-1, leader)
    cluster.start_node(cluster.broker_by_id(leader).name)
    wait_full_isr(cluster, topic, 1)
    return elapsed


def report_failover(mode: str, elapsed: list[float]) -> str:
    ordered = sorted(elapsed)
    median = statistics.median(ordered)
    summary = (
        f"{mode}: new leader served after SIGKILL over {len(ordered)} trials: "
        f"min {ordered[0]:.1f}s, median {median:.1f}s, max {ordered[-1]:.1f}s"
    )
    FAILOVER_REPORTS.append(summary)
    return summary
