"""A broker's preStop hook: it holds the stop while the broker is all that keeps a partition at
min.insync.replicas, for a bounded time (infra/model/stop_gate.py).

The rendered hook runs here for real (sh, busybox wget, awk, date and sleep, as in the image)
against stand-ins for the broker's agent and `kafka-topics`; the kafka tier runs it against real
brokers (tests/kafka/test_stop_gate.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.model import labels, probes, stop_gate, workloads
from infra.model.cluster import ClusterModel
from tests.infra.conftest import config_of
from tests.infra.pod_stand_ins import FakeAgent, StandInTool, served, serving

MODEL = ClusterModel.from_config(config_of("staging"))
BROKER = MODEL.brokers[0]  # id 0

# At or under min ISR, as `kafka-topics --describe --at-min-isr-partitions
# --under-min-isr-partitions` prints them, and none needs broker 0 to stay: its ISR lacks 0;
# every replica in sync (replicas = min ISR: no wait helps); the one missing is being added.
NOT_NEEDED = (
    "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,0,2\tIsr: 1,2\tElr: \tLastKnownElr: \n"
    "\tTopic: audit\tPartition: 3\tLeader: 0\tReplicas: 0,1\tIsr: 0,1\tElr: \tLastKnownElr: \n"
    "\tTopic: pay\tPartition: 1\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1\tElr: \tLastKnownElr: "
    "\tAdding Replicas: 2\tRemoving Replicas: \n"
)
# In sync on 0 and 2 only, replica 1 away: stopping 0 leaves it on 2 alone.
NEEDED = "\tTopic: pay\tPartition: 7\tLeader: 2\tReplicas: 2,0,1\tIsr: 2,0\tElr: \tLastKnownElr: \n"


@pytest.fixture
def agent() -> Iterator[FakeAgent]:
    yield from serving()


@pytest.fixture
def tool(tmp_path: Path, agent: FakeAgent) -> StandInTool:
    agent.body = served(3.0, 0.0)  # RUNNING
    return StandInTool(tmp_path, agent)


def hook(tool: StandInTool, **bounds: Any) -> str:
    return tool.in_pod(MODEL, stop_gate.pre_stop_command(MODEL, BROKER, **bounds))


def test_a_broker_no_partition_needs_stops_after_one_look(tool: StandInTool) -> None:
    tool.answer(NOT_NEEDED)
    stopped = tool.run(hook(tool))
    assert stopped.returncode == 0, stopped.stdout
    assert f"{stop_gate.FREE} 0 to stay" in stopped.stdout
    (call,) = tool.calls()
    assert f"--describe {stop_gate.REPORT} " in call
    assert "--bootstrap-server kafka-broker-0-0." in call  # its own REPLICATION listener
    assert "KAFKA_OPTS= " in call  # started as a tool, not with the broker's agent


def test_a_broker_a_partition_needs_waits_until_it_is_not_needed(tool: StandInTool) -> None:
    tool.answer(NEEDED)
    waiting = tool.start(hook(tool, seconds=60, poll_seconds=1))
    try:
        deadline = time.monotonic() + 20
        while len(tool.calls()) < 2 and time.monotonic() < deadline:
            assert waiting.poll() is None, "stopped while a partition needed it"
            time.sleep(0.1)
        assert len(tool.calls()) >= 2, "it did not look again"
        tool.answer(NOT_NEEDED)  # the missing replica is back in the ISR
        output, _ = waiting.communicate(timeout=20)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, output
    assert "pay-7: in sync on 2,0 only, replica(s) 1 away" in output
    assert "1 partition(s) would fall below min.insync.replicas without broker 0" in output
    assert f"{stop_gate.WAITING} 1 s" in output
    assert output.rstrip().endswith(f"{stop_gate.FREE} 0 to stay")


def test_the_stop_goes_on_at_the_bound_saying_which_partitions_held_it(tool: StandInTool) -> None:
    tool.answer(NEEDED)
    held = tool.run(hook(tool, seconds=2, poll_seconds=1))
    # Non-zero: the kubelet records a FailedPreStopHook event with this text, then stops it.
    assert held.returncode != 0
    assert "pay-7: in sync on 2,0 only" in held.stdout
    assert f"{stop_gate.GIVING_UP} after 2 s" in held.stdout


@pytest.mark.parametrize(
    ("described", "status", "said"),
    [
        (NOT_NEEDED, 1, "kafka-topics --describe failed"),
        ("\tTopic: pay\tPartition: 7\tLeader: 2\tReplica list: 2,0,1\n", 0, "cannot read: "),
    ],
)
def test_what_it_cannot_read_holds_the_stop_as_a_needed_partition_does(
    tool: StandInTool, described: str, status: int, said: str
) -> None:
    tool.answer(described, status)
    held = tool.run(hook(tool, seconds=1, poll_seconds=1))
    assert held.returncode != 0 and said in held.stdout, held.stdout
    assert stop_gate.GIVING_UP in held.stdout


@pytest.mark.parametrize("state", [1.0, 7.0, None])  # starting, shutting down, no figure
def test_a_broker_not_serving_stops_at_once(
    tool: StandInTool, agent: FakeAgent, state: float | None
) -> None:
    agent.body = served(state, 0.0)
    tool.answer(NEEDED)
    stopped = tool.run(hook(tool))
    assert stopped.returncode == 0 and "is not serving" in stopped.stdout
    assert tool.calls() == []


def test_a_broker_whose_agent_does_not_answer_stops_at_once(tmp_path: Path) -> None:
    silent = FakeAgent()  # bound, never serving: the connection is refused
    silent.server.server_close()
    tool = StandInTool(tmp_path, silent)
    tool.answer(NEEDED)
    stopped = tool.run(hook(tool))
    assert stopped.returncode == 0 and "is not serving" in stopped.stdout


def containers(environment: str, **overrides: Any) -> dict[str, dict[str, Any]]:
    """Each Kafka or ZooKeeper StatefulSet's main container by workload, and its grace."""
    model = ClusterModel.from_config(config_of(environment, **overrides))
    found = {}
    for node in [*model.brokers, *model.quorum]:
        if node.role == labels.ZOOKEEPER:
            sts = workloads.zookeeper_statefulset(model, node, "fast")
        else:
            sts = workloads.kafka_statefulset(model, node, "fast")
        spec = sts["spec"]["template"]["spec"]
        assert spec["terminationGracePeriodSeconds"] >= (
            stop_gate.LONGEST_SECONDS + probes.SHUTDOWN_SECONDS
        )
        found[node.workload] = {**spec["containers"][0], "role": node.role, "node": node}
    return found


@pytest.mark.parametrize(
    "overrides",
    [{}, {"quorum": {"kind": "zookeeper", "nodes": 3}, "kafka_version": "3.9.1"}],
    ids=["kraft", "zookeeper"],
)
def test_every_broker_container_carries_the_hook_and_no_other(overrides: dict[str, Any]) -> None:
    model = ClusterModel.from_config(config_of("prod", **overrides))
    rendered = containers("prod", **overrides)
    brokers = [c for c in rendered.values() if c["role"] == labels.BROKER]
    assert len(brokers) == len(model.brokers)
    for container in rendered.values():
        if container["role"] == labels.BROKER:
            command = stop_gate.pre_stop_command(model, container["node"])
            assert container["lifecycle"] == {"preStop": {"exec": {"command": command}}}
        else:
            assert "lifecycle" not in container, container["role"]
