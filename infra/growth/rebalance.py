"""`kafkastack rebalance` and `kafkastack drain`: read where the replicas are, plan where they
should be (infra/model/reassignment.py), and move them under a replication throttle, reporting
progress until Kafka says every move is done (and has lifted the throttle).

Racks come from the stack: the model places every broker in its zone, which is its broker.rack.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from infra.errors import ConfigError
from infra.growth.tools import KafkaTools
from infra.model.cluster import ClusterModel
from infra.model.reassignment import Partition, Plan, plan
from infra.stack_config import StackConfig
from spark_sizing.units import BYTES_PER_MB

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Rebalance:
    plan: Plan
    bytes_moved: int
    bytes_per_broker: dict[int, int]  # what each receiving broker copies
    seconds: float  # 0 for a dry run
    throttle_bytes: int | None


def read_assignment(tools: KafkaTools) -> tuple[dict[Partition, list[int]], list[int]]:
    """Every partition's replicas (preferred leader first) and the registered brokers."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": tools.bootstrap, **tools.client})
    metadata = admin.list_topics(timeout=30)
    assignment = {
        (name, pid): list(part.replicas)
        for name, topic in metadata.topics.items()
        for pid, part in topic.partitions.items()
    }
    return assignment, sorted(metadata.brokers)


def stack_racks(config: StackConfig, live: list[int]) -> dict[int, str]:
    """Broker id → rack for the live brokers, from the stack's model."""
    racks = {b.node_id: b.zone for b in ClusterModel.from_config(config).brokers}
    strangers = sorted(set(live) - racks.keys())
    if strangers:
        raise ConfigError(
            f"kafkastack:brokers: the cluster has broker(s) {', '.join(map(str, strangers))} "
            f"that stack {config.environment} does not declare; rebalance with the stack file "
            "the cluster was deployed from"
        )
    return {b: racks[b] for b in live}


def rebalance(
    config: StackConfig,
    tools: KafkaTools,
    throttle_mb_s: float | None,
    dry_run: bool = False,
    remove: frozenset[int] = frozenset(),
    progress: Progress = print,
    timeout: float = 3600,
) -> Rebalance:
    """Plan and (unless `dry_run`) carry out the reassignment; raises ConfigError on failure."""
    assignment, live = read_assignment(tools)
    racks = stack_racks(config, live)
    chosen = plan(assignment, racks, remove)
    sizes = tools.partition_sizes(live) if chosen.moves else {}
    moved = chosen.bytes_moved(sizes)
    throttle = round(throttle_mb_s * BYTES_PER_MB) if throttle_mb_s else None
    into = chosen.bytes_per_broker(sizes)
    result = Rebalance(chosen, moved, into, 0.0, throttle)
    if dry_run or not chosen.moves:
        return result
    document = chosen.reassignment_json()
    started = time.monotonic()
    tools.reassign(document, throttle)
    progress(f"started: {len(chosen.moves)} partition(s), {moved} bytes to copy")
    done, total = 0, len(chosen.moves)
    while True:
        done, total = tools.verify(document)
        progress(f"{done}/{total} partition(s) moved, {time.monotonic() - started:.1f} s")
        if done == total:
            break
        if time.monotonic() - started > timeout:
            raise ConfigError(
                f"--timeout {timeout:g}: {total - done} of {total} partition(s) still moving; "
                "they keep moving: run `kafkastack rebalance` again to follow them, or raise "
                "--throttle"
            )
        time.sleep(1)  # the tool answers from the brokers' state; poll it once a second
    if remove:
        check_drained(read_assignment(tools)[0], remove)
    return Rebalance(chosen, moved, into, time.monotonic() - started, throttle)


def check_drained(assignment: dict[Partition, list[int]], remove: frozenset[int]) -> None:
    """Refuse when a drained broker still holds a replica (a partition created meanwhile)."""
    held = sorted({b for replicas in assignment.values() for b in replicas} & remove)
    if held:
        where = sorted(f"{t}-{p}" for (t, p), r in assignment.items() if set(r) & remove)
        raise ConfigError(
            f"--brokers: broker(s) {', '.join(map(str, held))} still hold replicas of "
            f"{', '.join(where[:5])}{' …' if len(where) > 5 else ''} (created while draining); "
            "run `kafkastack drain` again before removing them"
        )


def plan_table(result: Rebalance) -> list[str]:
    """The plan as text lines: one per partition that moves."""
    lines = [
        f"{len(result.plan.moves)} partition(s) to move, {result.bytes_moved} bytes to copy"
        + (f", throttled at {result.throttle_bytes} B/s" if result.throttle_bytes else "")
    ]
    for move in result.plan.moves:
        before = ",".join(map(str, move.before))
        after = ",".join(map(str, move.after))
        lines.append(f"  {move.topic}-{move.partition}: [{before}] -> [{after}]")
    if result.bytes_per_broker:
        copied = ", ".join(f"{b}:{n}" for b, n in sorted(result.bytes_per_broker.items()))
        lines.append(f"bytes copied per receiving broker: {copied}")
    held = ", ".join(f"{b}:{n}" for b, n in sorted(result.plan.replicas.items()))
    leads = ", ".join(f"{b}:{n}" for b, n in sorted(result.plan.leaders.items()))
    lines += [f"replicas per broker after: {held}", f"leaders per broker after: {leads}"]
    return lines
