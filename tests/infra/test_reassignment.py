"""The reassignment planner: rack-aware, balanced, and moving only what it must."""

from __future__ import annotations

import pytest

from infra.errors import ConfigError
from infra.model.reassignment import Partition, plan

# 3 → 5 brokers over three zones (2, 2, 1 brokers per zone), as apply-sizing grows a stack.
RACKS = {0: "a", 1: "b", 2: "c", 3: "a", 4: "b"}


def three_broker_topic(partitions: int = 12) -> dict[Partition, list[int]]:
    """What Kafka created while there were three brokers: every replica on 0, 1 and 2."""
    return {("orders", p): [p % 3, (p + 1) % 3, (p + 2) % 3] for p in range(partitions)}


def after(
    assignment: dict[Partition, list[int]], **kwargs: frozenset[int]
) -> dict[Partition, list[int]]:
    done = dict(assignment)
    for move in plan(assignment, RACKS, **kwargs).moves:
        done[(move.topic, move.partition)] = list(move.after)
    return done


def test_new_brokers_take_replicas_on_distinct_racks_with_leaders_balanced() -> None:
    grown = after(three_broker_topic())
    for replicas in grown.values():
        assert len({RACKS[b] for b in replicas}) == 3  # one replica per zone
    held = {b: sum(b in r for r in grown.values()) for b in RACKS}
    # Zone c has one broker: it keeps a replica of everything; zones a and b share evenly.
    assert held == {0: 6, 1: 6, 2: 12, 3: 6, 4: 6}
    leaders = {b: sum(r[0] == b for r in grown.values()) for b in RACKS}
    assert max(leaders.values()) - min(leaders.values()) <= 1, leaders


def test_only_the_replicas_the_new_brokers_need_move() -> None:
    growth = plan(three_broker_topic(), RACKS)
    copied = [b for move in growth.moves for b in move.added]
    assert sorted(copied) == [3] * 6 + [4] * 6
    sizes = {("orders", p): 1000 for p in range(12)}
    assert growth.bytes_moved(sizes) == 12 * 1000
    document = growth.reassignment_json()
    assert document["version"] == 1 and len(growth.moves) == len(document["partitions"])


def test_a_busy_topic_spreads_even_where_an_internal_one_could_even_the_totals() -> None:
    """Seen on real nodes after 3 → 5: __consumer_offsets, created once the new brokers ran,
    already held replicas on them; balancing only the brokers' totals moved offsets
    partitions and left the topic with the data on the three old brokers."""
    offsets = {
        ("__consumer_offsets", p): [p % 5, (p + 1) % 5, (p + 2) % 5]
        for p in range(50)
        if len({RACKS[p % 5], RACKS[(p + 1) % 5], RACKS[(p + 2) % 5]}) == 3
    }
    grown = after({**three_broker_topic(6), **offsets})
    orders = [r for (topic, _), r in grown.items() if topic == "orders"]
    held = {b: sum(b in r for r in orders) for b in RACKS}
    assert held == {0: 3, 1: 3, 2: 6, 3: 3, 4: 3}, held
    for replicas in grown.values():
        assert len({RACKS[b] for b in replicas}) == 3


def test_a_balanced_cluster_needs_no_moves() -> None:
    balanced = after(three_broker_topic())
    assert plan(balanced, RACKS).moves == ()


def test_draining_a_broker_moves_its_replicas_within_the_rack_rules() -> None:
    drained = after(after(three_broker_topic()), remove=frozenset({4}))
    assert all(4 not in r for r in drained.values())
    for replicas in drained.values():
        assert len({RACKS[b] for b in replicas}) == 3


def test_draining_more_brokers_than_the_replicas_allow_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"--brokers: 2 broker\(s\) would remain"):
        plan(three_broker_topic(), RACKS, remove=frozenset({3, 4, 2}))
    with pytest.raises(ConfigError, match="--brokers: 9 not in the cluster"):
        plan(three_broker_topic(), RACKS, remove=frozenset({9}))


def test_a_broker_still_holding_replicas_after_a_drain_is_named() -> None:
    from infra.growth.rebalance import check_drained

    drained = after(after(three_broker_topic()), remove=frozenset({4}))
    check_drained(drained, frozenset({4}))  # nothing left on it: no complaint
    drained[("late", 0)] = [4, 0, 2]
    with pytest.raises(
        ConfigError, match=r"--brokers: broker\(s\) 4 still hold replicas of late-0"
    ):
        check_drained(drained, frozenset({4}))
