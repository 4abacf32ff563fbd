"""`kafkastack rebalance` and `kafkastack drain`: read where the replicas are, plan where they
should be (infra/model/reassignment.py), and move them under a replication throttle, reporting
progress until Kafka says every move is done (and has lifted the throttle).

Racks come from the stack: the model places every broker in its zone, which is its broker.rack.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from infra.errors import ConfigError
from infra.growth.tools import BrokersAbsent
from infra.model.cluster import ClusterModel
from infra.model.reassignment import Partition, Plan, check_removable, plan
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


# How often a broker the stack declares is looked for again while it is not live: a broker's
# restart or a fenced broker's return takes seconds to tens of seconds.
POLL_SECONDS = 2.0


class Cluster(Protocol):
    """What a rebalance reads from and hands to the cluster (KafkaTools)."""

    def assignment(self) -> tuple[dict[Partition, list[int]], set[int]]: ...
    def partition_sizes(self, brokers: list[int]) -> dict[Partition, int]: ...
    def reassign(self, document: dict[str, object], throttle_bytes: int | None) -> None: ...
    def verify(self, document: dict[str, object]) -> tuple[int, int]: ...


def stack_racks(config: StackConfig) -> dict[int, str]:
    """Broker id → rack (its zone) of every broker the stack declares."""
    return {b.node_id: b.zone for b in ClusterModel.from_config(config).brokers}


def await_declared(
    config: StackConfig,
    racks: dict[int, str],
    cluster: Cluster,
    remove: frozenset[int],
    deadline: float,
    progress: Progress,
) -> tuple[dict[Partition, list[int]], set[int]]:
    """Where the replicas are, and the live brokers, once every broker the stack declares
    (`racks`, from `stack_racks`) is live, but those being drained (`remove`): their replicas
    go elsewhere, live or not.

    A broker that restarts, or was fenced for a late heartbeat, is missing from the metadata
    for a while. A plan made then would move every replica it holds to the others, a drain
    nobody asked for (a CI run caught broker 3 missing moments after it had joined), so the
    plan waits for it, and refuses once `deadline` passes."""
    told = ""
    while True:
        assignment, live = cluster.assignment()
        strangers = sorted(live - racks.keys())
        if strangers:
            raise ConfigError(
                f"kafkastack:brokers: the cluster has broker(s) {', '.join(map(str, strangers))} "
                f"that stack {config.environment} does not declare; rebalance with the stack "
                "file the cluster was deployed from"
            )
        missing = ", ".join(map(str, sorted(racks.keys() - live - remove)))
        if not missing:
            return assignment, live
        if time.monotonic() >= deadline:
            raise ConfigError(
                f"--wait: broker(s) {missing} that stack {config.environment} declares are "
                "still not live in the cluster (stopped, restarting, fenced, or not created "
                "yet); nothing was moved. Run `pulumi up` or wait until their pods are Ready, "
                "then run again (or give --wait more seconds)"
            )
        if missing != told:
            progress(f"waiting for broker(s) {missing}: the stack declares them, not yet live")
            told = missing
        time.sleep(POLL_SECONDS)


def rebalance(
    config: StackConfig,
    cluster: Cluster,
    throttle_mb_s: float | None,
    wait: float,
    dry_run: bool = False,
    remove: frozenset[int] = frozenset(),
    progress: Progress = print,
    timeout: float = 3600,
) -> Rebalance:
    """Plan and (unless `dry_run`) carry out the reassignment; raises ConfigError on failure.

    Every broker the stack declares (but those drained) must be live while the plan is made
    and handed to Kafka (`await_declared`, for up to `wait` seconds). One that drops out in
    between is refused by Kafka's tools before they change anything (BrokersAbsent); it is
    then waited for again and the plan made anew."""
    racks = stack_racks(config)
    check_removable(racks, remove)  # before any wait: a wrong id is the answer at once
    throttle = round(throttle_mb_s * BYTES_PER_MB) if throttle_mb_s else None
    deadline = time.monotonic() + wait
    while True:
        assignment, live = await_declared(config, racks, cluster, remove, deadline, progress)
        chosen = plan(assignment, racks, remove)
        document = chosen.reassignment_json()
        try:
            sizes = cluster.partition_sizes(sorted(live)) if chosen.moves else {}
            if not dry_run and chosen.moves:
                cluster.reassign(document, throttle)
            break
        except BrokersAbsent as gone:
            if time.monotonic() >= deadline:
                raise ConfigError(
                    f"--wait {wait:g}: {gone}; nothing was moved. Wait until the broker is "
                    "live again, then run again (or give --wait more seconds)"
                ) from None
            progress(f"{gone}; reading the cluster again")
            time.sleep(POLL_SECONDS)
    moved = chosen.bytes_moved(sizes)
    into = chosen.bytes_per_broker(sizes)
    if dry_run or not chosen.moves:
        return Rebalance(chosen, moved, into, 0.0, throttle)
    started = time.monotonic()
    progress(f"started: {len(chosen.moves)} partition(s), {moved} bytes to copy")
    done, total = 0, len(chosen.moves)
    while True:
        done, total = cluster.verify(document)
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
        check_drained(cluster.assignment()[0], remove)
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
