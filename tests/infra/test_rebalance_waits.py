"""`kafkastack rebalance` plans only while every broker the stack declares is live: one that is
restarting or fenced would otherwise lose all its replicas to the others (a drain nobody asked
for). Against a stand-in for the cluster whose live brokers change from one read to the next;
the real brokers and Kafka's tools show the same in tests/kafka/test_growth.py."""

from __future__ import annotations

from typing import Any, cast

import pytest

from infra.errors import ConfigError
from infra.growth import rebalance as growth
from infra.growth.tools import BrokersAbsent
from infra.model.reassignment import Partition, plan
from tests.infra.conftest import config_of

FIVE = config_of(brokers=5)
EVERY = set(growth.stack_racks(FIVE))
WITHOUT_4 = EVERY - {4}


def on_the_first_three() -> dict[Partition, list[int]]:
    """A topic as Kafka left it before the stack grew: every replica on brokers 0, 1 and 2."""
    return {("orders", p): [p % 3, (p + 1) % 3, (p + 2) % 3] for p in range(12)}


def balanced() -> dict[Partition, list[int]]:
    """The same topic once rebalanced over all five brokers."""
    done = on_the_first_three()
    for move in plan(done, growth.stack_racks(FIVE)).moves:
        done[(move.topic, move.partition)] = list(move.after)
    return done


ABSENT_4 = (
    "LogDirsCommand: ERROR: The given brokers do not exist from --broker-list: 4. "
    "Current existent brokers: 0,1,2,3"
)


class ClusterStandIn:
    """Answers as the cluster would: `lives` are the live brokers of successive reads (the
    last repeats); the log-dirs tool and the reassignment tool each find broker 4 gone the
    first `absent_sizes` / `absent_reassign` times they are asked."""

    def __init__(
        self,
        lives: list[set[int]],
        replicas: dict[Partition, list[int]] | None = None,
        absent_sizes: int = 0,
        absent_reassign: int = 0,
    ) -> None:
        self.lives = lives
        self.replicas = balanced() if replicas is None else replicas
        self.absent_sizes, self.absent_reassign = absent_sizes, absent_reassign
        self.reads: list[set[int]] = []
        self.handed: list[dict[str, object]] = []

    def assignment(self) -> tuple[dict[Partition, list[int]], set[int]]:
        live = self.lives.pop(0) if len(self.lives) > 1 else self.lives[0]
        self.reads.append(live)
        return {p: list(r) for p, r in self.replicas.items()}, live

    def partition_sizes(self, brokers: list[int]) -> dict[Partition, int]:
        if self.absent_sizes:
            self.absent_sizes -= 1
            raise BrokersAbsent(ABSENT_4)
        return {p: 1000 for p in self.replicas}

    def reassign(self, document: dict[str, object], throttle_bytes: int | None) -> None:
        if self.absent_reassign:
            self.absent_reassign -= 1
            raise BrokersAbsent("ReassignPartitionsCommand: Error: Unknown broker id 4")
        self.handed.append(document)
        for move in cast(list[dict[str, Any]], document["partitions"]):  # done at once
            self.replicas[(move["topic"], move["partition"])] = list(move["replicas"])

    def verify(self, document: dict[str, object]) -> tuple[int, int]:
        moved = len(cast(list[object], document["partitions"]))
        return moved, moved


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(growth, "POLL_SECONDS", 0.0)


def test_a_broker_not_yet_live_is_waited_for_and_keeps_its_replicas() -> None:
    cluster = ClusterStandIn([WITHOUT_4, WITHOUT_4, EVERY])
    said: list[str] = []
    result = growth.rebalance(FIVE, cluster, None, 60, dry_run=True, progress=said.append)
    assert cluster.reads == [WITHOUT_4, WITHOUT_4, EVERY]
    assert said == ["waiting for broker(s) 4: the stack declares them, not yet live"]
    # Balanced with broker 4 in it: nothing moves. Planned while 4 was missing, each of its
    # replicas would have gone to the other four.
    assert result.plan.moves == ()
    assert result.plan.replicas[4] == sum(4 in r for r in balanced().values()) > 0


def test_a_broker_still_missing_when_wait_passes_is_refused_and_nothing_moves() -> None:
    cluster = ClusterStandIn([WITHOUT_4], on_the_first_three())
    with pytest.raises(ConfigError) as refused:
        growth.rebalance(FIVE, cluster, 1.0, 0, progress=lambda _: None)
    assert str(refused.value).startswith(
        "--wait: broker(s) 4 that stack staging declares are still not live in the cluster"
    )
    assert "run `pulumi up` or wait until their pods are ready" in str(refused.value).lower()
    assert cluster.handed == []


def test_a_broker_gone_between_the_reads_is_waited_for_and_the_plan_made_anew() -> None:
    cluster = ClusterStandIn([EVERY, WITHOUT_4, EVERY], on_the_first_three(), absent_sizes=1)
    said: list[str] = []
    result = growth.rebalance(FIVE, cluster, 1.0, 60, progress=said.append)
    assert cluster.reads == [EVERY, WITHOUT_4, EVERY]
    assert said[:2] == [
        f"{ABSENT_4}; reading the cluster again",
        "waiting for broker(s) 4: the stack declares them, not yet live",
    ]
    assert len(cluster.handed) == 1  # handed to Kafka once, after broker 4 was back
    assert {b for m in result.plan.moves for b in m.added} == {3, 4}


def test_a_broker_the_stack_does_not_declare_is_refused() -> None:
    cluster = ClusterStandIn([EVERY | {7}])
    with pytest.raises(ConfigError, match=r"kafkastack:brokers: the cluster has broker\(s\) 7"):
        growth.rebalance(FIVE, cluster, None, 60, dry_run=True, progress=lambda _: None)
    assert cluster.handed == []


def test_a_plan_kafka_refused_for_a_broker_gone_is_handed_again_once_it_is_back() -> None:
    # ReassignPartitionsCommand checks the plan's brokers before it sets a throttle or moves a
    # replica: its refusal changed nothing, so handing the plan again is safe.
    cluster = ClusterStandIn([EVERY, WITHOUT_4, EVERY], on_the_first_three(), absent_reassign=1)
    said: list[str] = []
    growth.rebalance(FIVE, cluster, 1.0, 60, progress=said.append)
    assert said[0] == (
        "ReassignPartitionsCommand: Error: Unknown broker id 4; reading the cluster again"
    )
    assert cluster.reads == [EVERY, WITHOUT_4, EVERY]
    assert len(cluster.handed) == 1


def test_a_broker_gone_again_and_again_until_wait_passes_is_refused_naming_wait() -> None:
    cluster = ClusterStandIn([EVERY], on_the_first_three(), absent_sizes=99)
    with pytest.raises(ConfigError) as refused:
        growth.rebalance(FIVE, cluster, 1.0, 0, progress=lambda _: None)
    assert str(refused.value) == (
        f"--wait 0: {ABSENT_4}; nothing was moved. Wait until the broker is live again, then "
        "run again (or give --wait more seconds)"
    )
    assert cluster.handed == []


def test_a_drained_broker_that_is_down_is_not_waited_for() -> None:
    # A broker lost for good is drained: its replicas go to the others, from their leaders.
    cluster = ClusterStandIn([WITHOUT_4])
    said: list[str] = []
    result = growth.rebalance(FIVE, cluster, 1.0, 60, remove=frozenset({4}), progress=said.append)
    assert not any(line.startswith("waiting") for line in said), said
    assert cluster.reads == [WITHOUT_4, WITHOUT_4]  # the plan's read, then the drained check
    assert result.plan.replicas.get(4, 0) == 0 and len(cluster.handed) == 1


def test_draining_a_broker_the_stack_does_not_declare_is_refused_before_any_read() -> None:
    cluster = ClusterStandIn([WITHOUT_4])
    with pytest.raises(ConfigError, match=r"--brokers: 9 not in the cluster"):
        growth.rebalance(FIVE, cluster, 1.0, 60, remove=frozenset({9}), progress=print)
    assert cluster.reads == []
