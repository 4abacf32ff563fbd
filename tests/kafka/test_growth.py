"""`kafkastack drain` on real brokers: a broker's replicas move to the others, racks apart,
throttled, and Kafka lifts the throttle at the end, without losing an acknowledged record. And
`kafkastack rebalance` leaves a broker that is down its replicas: it waits for it.

(Growth, 3 → 5 brokers and `kafkastack rebalance` under load, is the real nodes' proof:
tests/nodes/test_broker_growth.py.)"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from infra.verify.growth import drain, stack_file, start_dry_run, throttles
from infra.verify.processes import ProcessCluster
from tests.infra.conftest import base_values
from tests.kafka.checks import create
from tests.kafka.conftest import stack_values

pytestmark = pytest.mark.kafka
DRAINED = 4
MOVE = re.compile(r"^  (.+)-(\d+): \[[\d,]+\] -> \[([\d,]+)\]$", re.MULTILINE)  # a plan's line
HELD = re.compile(r"replicas per broker after: (.*)")


def wait_until_gone(cluster: ProcessCluster, broker: int, timeout: float = 60) -> float:
    """Seconds until no other broker's metadata lists the stopped `broker`: each applies the
    fencing on its own, and the CLI may ask any of them."""
    started = time.monotonic()
    port = cluster.topology["ports"]["client"]
    others = [b["client_host"] for b in cluster.topology["brokers"] if b["node_id"] != broker]
    for host in (f"{name}:{port}" for name in others):
        while broker in cluster.client("describe", topic="__none__", bootstrap=host)["brokers"]:
            assert time.monotonic() - started < timeout, f"broker {broker} still listed by {host}"
            time.sleep(0.5)
    return time.monotonic() - started


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


def test_rebalance_plans_only_once_a_declared_broker_is_live_again(
    restore: ProcessCluster, stacks: Path
) -> None:
    """A broker that is down (restarting, fenced) keeps its replicas: `kafkastack rebalance`
    refuses once `--wait` passes, and within it plans only after the broker is back. Planned
    while it was down, every replica it holds went to the others: a drain nobody asked for."""
    cluster = restore
    before = create(cluster, "waiting", partitions=10)["partitions"]
    assert any(DRAINED in p["replicas"] for p in before.values()), before
    cluster.stop_node(cluster.broker_by_id(DRAINED).name)
    gone = wait_until_gone(cluster, DRAINED)  # as a fenced broker: out of the metadata
    refused = start_dry_run(cluster, stacks, "local", "--wait", "0")
    output = refused.communicate(timeout=300)[0]
    assert refused.returncode == 2, output
    assert f"--wait: broker(s) {DRAINED} that stack local declares are still not live" in output, (
        output
    )

    waiting = start_dry_run(cluster, stacks, "local", "--wait", "300")
    assert waiting.stdout is not None
    said: list[str] = []
    try:
        for line in waiting.stdout:  # the CLI's own progress: it has read the cluster without 4
            said.append(line)
            if line.startswith(f"waiting for broker(s) {DRAINED}:"):
                break
        cluster.start_node(cluster.broker_by_id(DRAINED).name)
        output = "".join(said) + waiting.communicate(timeout=300)[0]
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert waiting.returncode == 0, output
    assert said[-1].startswith(f"waiting for broker(s) {DRAINED}:"), output
    # Balancing may still move some of its replicas to its rack-mate (Kafka's placement need not
    # be even within a rack): another broker of its rack takes each; planned while it was
    # down, it would hold none of the topic's.
    racks = {b["node_id"]: b["zone"] for b in cluster.topology["brokers"]}
    after = {partition: p["replicas"] for partition, p in before.items()}
    for topic, partition, now in MOVE.findall(output):
        if topic != "waiting":
            continue
        after[partition] = [int(b) for b in now.split(",")]
        if DRAINED in before[partition]["replicas"] and DRAINED not in after[partition]:
            taken = set(after[partition]) - set(before[partition]["replicas"])
            assert any(racks[b] == racks[DRAINED] for b in taken), output
    assert sum(DRAINED in replicas for replicas in after.values()) > 0, output
    held = HELD.search(output)
    assert held, output
    counts = dict(pair.split(":") for pair in held.group(1).split(", "))
    assert int(counts.get(str(DRAINED), 0)) > 0, output
    print(f"\nbroker {DRAINED} unlisted {gone:.1f} s after its stop; rebalance waited for it")


# Run on the client host, as `kafkastack rebalance` runs its tools: broker 99 is not live.
ASK_ABOUT_99 = """
import json, sys
from infra.growth.tools import BrokersAbsent, KafkaTools
tools = KafkaTools(*json.loads(sys.argv[1]))
plan = {"version": 1, "partitions": [{"topic": "absent", "partition": 0, "replicas": [0, 99]}]}
for ask in (lambda: tools.partition_sizes([0, 99]), lambda: tools.reassign(plan, None)):
    try:
        ask()
    except BrokersAbsent as err:
        print("absent:", err)
"""


def test_kafkas_tools_refusing_a_broker_that_is_not_live_are_told_apart(
    kraft: ProcessCluster,
) -> None:
    """The tools' own words for a broker that is not live, which `kafkastack rebalance` waits
    out (BrokersAbsent) rather than failing: pinned here against the jars the stack runs."""
    login = [kraft.bootstrap, kraft.internal_security(), kraft.topology["kafka_version"]]
    done = kraft.python_on_client_host("-c", ASK_ABOUT_99, json.dumps(login), timeout=300)
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()
    # Every broker is live: `kraft`'s tests leave it whole (the `restore` fixture).
    assert said == [
        "absent: LogDirsCommand: ERROR: The given brokers do not exist from --broker-list: 99. "
        "Current existent brokers: 0,1,2,3,4",
        "absent: ReassignPartitionsCommand: Error: Unknown broker id 99",
    ], done.stdout
