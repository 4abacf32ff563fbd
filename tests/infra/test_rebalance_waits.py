"""`kafkastack rebalance` plans only while every broker the stack declares is live: one that is
restarting or fenced would otherwise lose all its replicas to the others (a drain nobody asked
for). Against a stand-in for the cluster whose live brokers change from one read to the next;
the real brokers and Kafka's tools show the same in tests/kafka/test_growth.py."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from infra.errors import ConfigError
from infra.growth import rebalance as growth
from infra.growth.tools import BrokersAbsent, KafkaTools
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


@dataclass(frozen=True)
class ClusterStandIn(KafkaTools):
    """Answers as the cluster would: `lives` are the live brokers of successive reads (the
    last repeats); `absent_sizes` makes the log-dirs tool find a broker gone that many times."""

    replicas: dict[Partition, list[int]] = field(default_factory=balanced)
    lives: list[set[int]] = field(default_factory=list)
    absent_sizes: list[int] = field(default_factory=lambda: [0])
    reads: list[set[int]] = field(default_factory=list)
    handed: list[dict[str, object]] = field(default_factory=list)

    def assignment(self) -> tuple[dict[Partition, list[int]], set[int]]:
        live = self.lives.pop(0) if len(self.lives) > 1 else self.lives[0]
        self.reads.append(live)
        return {p: list(r) for p, r in self.replicas.items()}, live

    def partition_sizes(self, brokers: list[int]) -> dict[Partition, int]:
        if self.absent_sizes[0]:
            self.absent_sizes[0] -= 1
            raise BrokersAbsent(
                "LogDirsCommand: ERROR: The given brokers do not exist from --broker-list: 4. "
                "Current existent brokers: 0,1,2,3"
            )
        return {p: 1000 for p in self.replicas}

    def reassign(self, document: dict[str, object], throttle_bytes: int | None) -> None:
        self.handed.append(document)

    def verify(self, document: dict[str, object]) -> tuple[int, int]:
        moved = len(document["partitions"])  # type: ignore[arg-type]
        return moved, moved


def stand_in(**fields: object) -> ClusterStandIn:
    return ClusterStandIn("b:9092", {}, FIVE.kafka_version, **fields)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(growth, "POLL_SECONDS", 0.0)


def test_a_broker_not_yet_live_is_waited_for_and_keeps_its_replicas() -> None:
    cluster = stand_in(lives=[WITHOUT_4, WITHOUT_4, EVERY])
    said: list[str] = []
    result = growth.rebalance(FIVE, cluster, None, dry_run=True, progress=said.append, wait=60)
    assert cluster.reads == [WITHOUT_4, WITHOUT_4, EVERY]
    assert said == ["waiting for broker(s) 4: the stack declares them, not yet live"]
    # Balanced with broker 4 in it: nothing moves. Planned while 4 was missing, each of its
    # replicas would have gone to the other four.
    assert result.plan.moves == ()
    assert result.plan.replicas[4] == sum(4 in r for r in balanced().values()) > 0


def test_a_broker_still_missing_when_wait_passes_is_refused_and_nothing_moves() -> None:
    cluster = stand_in(replicas=on_the_first_three(), lives=[WITHOUT_4])
    with pytest.raises(ConfigError) as refused:
        growth.rebalance(FIVE, cluster, 1.0, progress=lambda _: None, wait=0)
    assert str(refused.value).startswith(
        "--wait: broker(s) 4 that stack staging declares are still not live in the cluster"
    )
    assert "run `pulumi up` or wait until their pods are ready" in str(refused.value).lower()
    assert cluster.handed == []


def test_a_broker_gone_between_the_reads_is_waited_for_and_the_plan_made_anew() -> None:
    cluster = stand_in(
        replicas=on_the_first_three(), lives=[EVERY, WITHOUT_4, EVERY], absent_sizes=[1]
    )
    said: list[str] = []
    result = growth.rebalance(FIVE, cluster, 1.0, progress=said.append, wait=60)
    assert cluster.reads == [EVERY, WITHOUT_4, EVERY]
    assert said[:2] == [
        "LogDirsCommand: ERROR: The given brokers do not exist from --broker-list: 4. "
        "Current existent brokers: 0,1,2,3; reading the cluster again",
        "waiting for broker(s) 4: the stack declares them, not yet live",
    ]
    assert len(cluster.handed) == 1  # handed to Kafka once, after broker 4 was back
    assert {b for m in result.plan.moves for b in m.added} == {3, 4}


def test_a_broker_the_stack_does_not_declare_is_refused() -> None:
    cluster = stand_in(lives=[EVERY | {7}])
    with pytest.raises(ConfigError, match=r"kafkastack:brokers: the cluster has broker\(s\) 7"):
        growth.rebalance(FIVE, cluster, None, dry_run=True, progress=lambda _: None)
    assert cluster.handed == []
