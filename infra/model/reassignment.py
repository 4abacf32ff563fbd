"""Where each partition's replicas should live after brokers come or go: a rack-aware,
balanced reassignment plan that moves as little data as it can. Pure Kafka rules, no client.

Used by `kafkastack rebalance` (new brokers take load) and `kafkastack drain` (brokers about to
be removed give theirs away). Kafka itself never moves existing partitions onto new brokers.

The plan keeps every replica that may stay, then moves one replica at a time from the broker
holding the most to one holding at least two fewer, never putting two replicas of a partition
on one rack (when there are as many racks as replicas) nor on one broker: within each topic
first (a topic's load is what should spread), then over all replicas. Each move lowers the
spread, so it ends. Leaders (the first replica, Kafka's preferred leader) are balanced last:
choosing a leader among a partition's replicas moves no data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from infra.errors import ConfigError

Partition = tuple[str, int]  # (topic, partition)


@dataclass(frozen=True)
class Move:
    topic: str
    partition: int
    before: tuple[int, ...]
    after: tuple[int, ...]

    @property
    def added(self) -> tuple[int, ...]:
        """Brokers that must copy the partition's log: where the bytes go."""
        return tuple(b for b in self.after if b not in self.before)


@dataclass(frozen=True)
class Plan:
    moves: tuple[Move, ...]
    replicas: dict[int, int]  # broker → replicas it holds after the plan
    leaders: dict[int, int]  # broker → partitions it is the preferred leader of after the plan

    def bytes_moved(self, sizes: dict[Partition, int]) -> int:
        """Bytes copied: each new replica copies its partition's log (size of the leader's)."""
        return sum(sizes.get((m.topic, m.partition), 0) * len(m.added) for m in self.moves)

    def bytes_per_broker(self, sizes: dict[Partition, int]) -> dict[int, int]:
        """Bytes each broker receives: a per-broker replication throttle bounds each of these."""
        into: dict[int, int] = {}
        for m in self.moves:
            for broker in m.added:
                into[broker] = into.get(broker, 0) + sizes.get((m.topic, m.partition), 0)
        return into

    def reassignment_json(self) -> dict[str, object]:
        """The document Kafka's reassignment tool and API take."""
        return {
            "version": 1,
            "partitions": [
                {"topic": m.topic, "partition": m.partition, "replicas": list(m.after)}
                for m in self.moves
            ],
        }


def _racks_apart(racks: dict[int, str], replication: int) -> bool:
    """Replicas on distinct racks is possible only with as many racks as replicas."""
    return len(set(racks.values())) >= replication


def _fits(
    broker: int, replicas: list[int], racks: dict[int, str], leaving: int | None, apart: bool
) -> bool:
    others = [b for b in replicas if b != leaving]
    if broker in others:
        return False
    return not apart or racks[broker] not in {racks[b] for b in others}


def check_removable(racks: dict[int, str], remove: frozenset[int]) -> None:
    """Refuse to drain a broker that is not among `racks`' brokers."""
    unknown = sorted(remove - racks.keys())
    if unknown:
        raise ConfigError(
            f"--brokers: {', '.join(map(str, unknown))} not in the cluster; "
            f"name brokers among {', '.join(map(str, sorted(racks)))}"
        )


def plan(
    assignment: dict[Partition, list[int]],
    racks: dict[int, str],
    remove: frozenset[int] = frozenset(),
) -> Plan:
    """The reassignment of `assignment` (partition → replicas, leader first) over the brokers
    of `racks` (broker id → rack) minus `remove`."""
    check_removable(racks, remove)
    targets = sorted(b for b in racks if b not in remove)
    target_racks = {b: racks[b] for b in targets}
    widest = max((len(r) for r in assignment.values()), default=0)
    if widest > len(targets):
        raise ConfigError(
            f"--brokers: {len(targets)} broker(s) would remain for partitions of {widest} "
            "replicas; drain fewer brokers or lower the topics' replication factor first"
        )
    new = {p: [b for b in r if b in target_racks] for p, r in sorted(assignment.items())}
    count = _held(new.values(), targets)
    # Replicas on brokers being removed go to the least loaded broker that fits.
    for p, replicas in new.items():
        wanted = len(assignment[p])
        apart = _racks_apart(target_racks, wanted)
        while len(replicas) < wanted:
            fits = [b for b in targets if _fits(b, replicas, target_racks, None, apart)]
            if not fits:
                fits = [b for b in targets if b not in replicas]
            chosen = min(fits, key=lambda b: (count[b], b))
            replicas.append(chosen)
            count[chosen] += 1
    # Each topic over every broker first: balancing only the totals could move the replicas
    # of a small topic (the empty __consumer_offsets) and leave a busy one on the old brokers,
    # where its load stays. Then the totals, which the topics' spreads leave nearly even.
    for topic in sorted({t for t, _ in new}):
        of_topic = {p: r for p, r in new.items() if p[0] == topic}  # the same lists as `new`
        _spread(of_topic, target_racks, _held(of_topic.values(), targets))
    count = _held(new.values(), targets)
    _spread(new, target_racks, count)
    leaders = _balance_leaders(new, assignment)
    moves = tuple(
        Move(p[0], p[1], tuple(assignment[p]), tuple(r))
        for p, r in new.items()
        if tuple(r) != tuple(assignment[p])
    )
    return Plan(moves, dict(count), leaders)


def _held(assignments: Iterable[list[int]], brokers: list[int]) -> Counter[int]:
    """Broker → the replicas it holds in `assignments` (every one of `brokers`, even at 0)."""
    count = Counter({b: 0 for b in brokers})
    for replicas in assignments:
        count.update(replicas)
    return count


def _spread(new: dict[Partition, list[int]], racks: dict[int, str], count: Counter[int]) -> None:
    """Move single replicas from fuller to emptier brokers while the gap is two or more.

    A broker found with no move it may make (the only one of its rack, say) is skipped until
    no other broker can move either; then every broker is tried once more, so the plan ends
    only when no move is left at all."""
    stuck: set[int] = set()
    while True:
        move = _best_move(new, racks, count, stuck)
        if move is None and stuck:
            stuck.clear()
            move = _best_move(new, racks, count, stuck)
        if move is None:
            return
        p, donor, taker = move
        replicas = new[p]
        replicas[replicas.index(donor)] = taker
        count[donor] -= 1
        count[taker] += 1


def _best_move(
    new: dict[Partition, list[int]], racks: dict[int, str], count: Counter[int], stuck: set[int]
) -> tuple[Partition, int, int] | None:
    for donor in sorted(count, key=lambda b: (-count[b], b)):
        if donor in stuck:
            continue
        takers = sorted((b for b in count if count[donor] - count[b] >= 2), key=lambda b: count[b])
        if not takers:
            continue
        for p, replicas in new.items():
            if donor not in replicas:
                continue
            apart = _racks_apart(racks, len(replicas))
            for taker in takers:
                if _fits(taker, replicas, racks, donor, apart):
                    return p, donor, taker
        stuck.add(donor)
    return None


def _balance_leaders(
    new: dict[Partition, list[int]], before: dict[Partition, list[int]]
) -> dict[int, int]:
    """Each partition's leader among its replicas so leaderships spread evenly; a partition
    keeps its current leader unless that one leads two more than another replica would."""
    leads = Counter({b: 0 for r in new.values() for b in r})
    for p, replicas in new.items():
        current = before[p][0] if before[p] else None
        leader = current if current in replicas else min(replicas, key=lambda b: (leads[b], b))
        replicas.remove(leader)
        replicas.insert(0, leader)
        leads[leader] += 1
    changed = True
    while changed:
        changed = False
        for replicas in new.values():
            leader = replicas[0]
            other = min(replicas[1:], key=lambda b: (leads[b], b), default=None)
            if other is not None and leads[leader] - leads[other] >= 2:
                replicas.remove(other)
                replicas.insert(0, other)
                leads[leader] -= 1
                leads[other] += 1
                changed = True
    return dict(leads)
