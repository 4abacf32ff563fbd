"""Growth on real brokers (3 → 5): `kafkastack rebalance` spreads a topic that lived on three
brokers over all five, racks apart, throttled, without losing an acknowledged record."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.verify.growth import drain, dry_run, grow, stack_file, throttles
from infra.verify.processes import ProcessCluster
from tests.infra.conftest import base_values
from tests.kafka.checks import assert_exactly_once_in_order
from tests.kafka.conftest import stack_values

pytestmark = pytest.mark.kafka


@pytest.fixture
def stacks(tmp_path: Path) -> Path:
    """The stack file the module's 5-broker cluster was rendered from."""
    stack_file(tmp_path / "stacks", "local", base_values(**stack_values(brokers=5)))
    return tmp_path / "stacks"


def test_rebalance_spreads_replicas_over_new_brokers_throttled_losing_nothing(
    kraft: ProcessCluster, stacks: Path
) -> None:
    run = grow(kraft, stacks, "local", "growth", throttle_mb_s=1, records=6000)
    assert "throttled at 1000000 B/s" in run.output, run.output
    replicas = [p["replicas"] for p in run.partitions.values()]
    for partition in replicas:
        assert len({run.racks[b] for b in partition}) == 3, replicas  # one replica per zone
    holders = {b for partition in replicas for b in partition}
    assert holders == set(run.racks), replicas  # the two new brokers took load
    leaders = [p["leader"] for p in run.partitions.values()]
    assert len(set(leaders)) >= 4, leaders  # leadership spread beyond the three old brokers
    assert all(len(p["isrs"]) == 3 for p in run.partitions.values())
    # The brokers carried the throttle while replicas moved, and Kafka lifted it at the end.
    assert run.throttle_seen and all(
        "1000000" in rates.values() for rates in run.throttle_seen.values()
    ), run.throttle_seen
    assert run.throttle_left == {}, run.throttle_left
    assert run.bytes_moved > 0
    assert_exactly_once_in_order(run.acked, run.consumed)
    # Balanced now: a second rebalance moves nothing of this topic (the consumer above made
    # __consumer_offsets afterwards, placed by Kafka alone: that one may still move).
    again = dry_run(kraft, stacks, "local")
    assert "partition(s) to move" in again and "  growth-" not in again, again


def test_drain_empties_a_broker_keeping_racks_apart(kraft: ProcessCluster, stacks: Path) -> None:
    # Runs after the rebalance above: broker 4 holds replicas of the growth topic now.
    before = kraft.client("describe", topic="growth")["partitions"]
    assert any(4 in p["replicas"] for p in before.values()), before
    acked = kraft.client("produce", topic="growth", count=500)["acked"]
    output = drain(kraft, stacks, "local", [4], throttle_mb_s=5)
    assert "bytes copied per receiving broker" in output, output
    after = kraft.client("describe", topic="growth")["partitions"]
    racks = {b["node_id"]: b["zone"] for b in kraft.topology["brokers"]}
    for partition in after.values():
        assert 4 not in partition["replicas"] and 4 not in partition["isrs"], after
        assert len({racks[b] for b in partition["replicas"]}) == 3, after
    assert throttles(kraft, sorted(racks)) == {str(b): {} for b in racks}
    records = kraft.client("consume", topic="growth", expect=len(acked), timeout_s=120)["records"]
    assert {a[1] for a in acked} <= {r[1] for r in records}
