"""`kafkastack drain` on real brokers: a broker's replicas move to the others, racks apart,
throttled, and Kafka lifts the throttle at the end, without losing an acknowledged record.

(Growth, 3 → 5 brokers and `kafkastack rebalance` under load, is the real nodes' proof:
tests/nodes/test_broker_growth.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.verify.growth import drain, stack_file, throttles
from infra.verify.processes import ProcessCluster
from tests.infra.conftest import base_values
from tests.kafka.checks import create
from tests.kafka.conftest import stack_values

pytestmark = pytest.mark.kafka
DRAINED = 4


@pytest.fixture
def stacks(tmp_path: Path) -> Path:
    """The stack file the package's 5-broker cluster was rendered from."""
    stack_file(tmp_path / "stacks", "local", base_values(**stack_values(brokers=5)))
    return tmp_path / "stacks"


def test_drain_empties_a_broker_keeping_racks_apart(kraft: ProcessCluster, stacks: Path) -> None:
    # Ten partitions of three replicas on five brokers: Kafka places some on every broker.
    before = create(kraft, "drain", partitions=10)["partitions"]
    assert any(DRAINED in p["replicas"] for p in before.values()), before
    acked = kraft.client("produce", topic="drain", count=500)["acked"]
    output = drain(kraft, stacks, "local", [DRAINED], throttle_mb_s=5)
    assert "bytes copied per receiving broker" in output, output
    assert "throttled at 5000000 B/s" in output, output
    after = kraft.client("describe", topic="drain")["partitions"]
    racks = {b["node_id"]: b["zone"] for b in kraft.topology["brokers"]}
    for partition in after.values():
        assert DRAINED not in partition["replicas"] and DRAINED not in partition["isrs"], after
        assert len({racks[b] for b in partition["replicas"]}) == 3, after
    assert throttles(kraft, sorted(racks)) == {str(b): {} for b in racks}
    records = kraft.client("consume", topic="drain", expect=len(acked), timeout_s=120)["records"]
    assert {a[1] for a in acked} <= {r[1] for r in records}
