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

from infra.model import in_sync, labels, probes, stop_gate, workloads
from infra.model.cluster import ClusterModel
from tests.infra.conftest import config_of
from tests.infra.pod_stand_ins import FakeAgent, StandInTool, served, serving

MODEL = ClusterModel.from_config(config_of("staging"))
BROKER = MODEL.brokers[0]  # id 0

SUMMARIES = (
    "Topic: orders\tTopicId: q1\tPartitionCount: 1\tReplicationFactor: 3\t"
    "Configs: min.insync.replicas=2,cleanup.policy=delete\n"
    "Topic: audit\tTopicId: q2\tPartitionCount: 1\tReplicationFactor: 2\t"
    "Configs: segment.bytes=1000,min.insync.replicas=2\n"
    "Topic: pay\tTopicId: q3\tPartitionCount: 8\tReplicationFactor: 3\t"
    "Configs: leader.replication.throttled.replicas=1:0,1:2,min.insync.replicas=2\n"
    "Topic: logs\tTopicId: q4\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n"
)
# None needs broker 0 to stay: its ISR lacks 0; every replica in sync at min ISR (replicas =
# min ISR: no wait helps); the one missing is being added; one above min ISR without it; a
# topic at Kafka's default min ISR (1) in sync on 0 and 10 (not 1: ids are matched whole).
NOT_NEEDED = SUMMARIES + (
    "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,0,2\tIsr: 1,2\tElr: \tLastKnownElr: \n"
    "\tTopic: audit\tPartition: 0\tLeader: 0\tReplicas: 0,1\tIsr: 0,1\tElr: \tLastKnownElr: \n"
    "\tTopic: pay\tPartition: 1\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1\tElr: \tLastKnownElr: "
    "\tAdding Replicas: 2\tRemoving Replicas: \n"
    "\tTopic: pay\tPartition: 2\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1,2\tElr: \tLastKnownElr: \n"
    "\tTopic: logs\tPartition: 0\tLeader: 10\tReplicas: 10,0,1\tIsr: 10,0\tElr: \tLastKnownElr: \n"
)
# In sync on 0 and 2 only, replica 1 away: stopping 0 leaves it on 2 alone.
NEEDED = SUMMARIES + (
    "\tTopic: pay\tPartition: 7\tLeader: 2\tReplicas: 2,0,1\tIsr: 2,0\tElr: \tLastKnownElr: \n"
)
# The quorum leader's table: every broker fetching (within the leader's clock), or broker 1
# 4 s behind (about to be fenced: it counts as away though the ISR still lists it).
TABLE = (
    "NodeId\tDirectoryId\tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus\n"
)
LEADER_CLOCK = 1795964197007


def quorum_table(behind_ms: dict[int, int] | None = None) -> str:
    """The leader's table as `describe --replication` prints it: each node's last fetch 300 ms
    before the leader's clock, or `behind_ms[node]` before it."""
    rows = [(9000, "Leader"), (9001, "Follower"), (0, "Observer"), (1, "Observer")]
    rows += [(2, "Observer"), (10, "Observer")]
    lines = []
    for node, status in rows:
        at = LEADER_CLOCK if status == "Leader" else LEADER_CLOCK - (behind_ms or {}).get(node, 300)
        lines.append(f"{node}\tdir{node}\t188\t0\t{at}\t{at}\t{status}\n")
    return TABLE + "".join(lines)


FETCHING = quorum_table()
ONE_BEHIND = quorum_table({1: 4000})
FULL_ISR = SUMMARIES + (
    "\tTopic: pay\tPartition: 7\tLeader: 2\tReplicas: 2,0,1\tIsr: 2,0,1\tElr: \tLastKnownElr: \n"
)


@pytest.fixture
def agent() -> Iterator[FakeAgent]:
    yield from serving()


@pytest.fixture
def tool(tmp_path: Path, agent: FakeAgent) -> StandInTool:
    agent.body = served(3.0, 0.0)  # RUNNING
    return StandInTool(tmp_path, agent)


def hook(tool: StandInTool, model: ClusterModel = MODEL, **bounds: Any) -> str:
    return tool.in_pod(model, stop_gate.pre_stop_command(model, model.brokers[0], **bounds))


def test_a_broker_no_partition_needs_stops_after_one_look(tool: StandInTool) -> None:
    tool.answer(NOT_NEEDED, quorum=FETCHING)
    stopped = tool.run(hook(tool))
    assert stopped.returncode == 0, stopped.stdout
    assert f"{stop_gate.FREE} 0 to stay" in stopped.stdout
    assert "5 partition(s) read" in stopped.stdout  # every partition line, none skipped unread
    described, asked = tool.calls()
    assert f"{in_sync.TOPIC_COMMAND} --bootstrap-server kafka-broker-0-0." in described
    assert described.split(" KAFKA_OPTS=")[0].endswith("--describe")  # every partition
    assert f"{in_sync.QUORUM_COMMAND} --bootstrap-server kafka-broker-0-0." in asked
    assert "describe --replication" in asked
    assert all("KAFKA_OPTS= " in call for call in tool.calls())  # tools, not the broker's agent


def test_a_broker_a_partition_needs_waits_until_it_is_not_needed(tool: StandInTool) -> None:
    tool.answer(NEEDED, quorum=FETCHING)
    waiting = tool.start(hook(tool, seconds=60, poll_seconds=1))
    try:
        deadline = time.monotonic() + 20
        while len(tool.calls()) < 4 and time.monotonic() < deadline:
            assert waiting.poll() is None, "stopped while a partition needed it"
            time.sleep(0.1)
        assert len(tool.calls()) >= 4, "it did not look again"
        tool.answer(FULL_ISR, quorum=FETCHING)  # the missing replica is back in the ISR
        output, _ = waiting.communicate(timeout=20)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, output
    assert "pay-7: min.insync.replicas 2, in sync on 2,0, away: 1" in output
    assert "1 partition(s) would fall below min.insync.replicas without broker 0" in output
    assert f"{stop_gate.WAITING} 1 s" in output
    assert output.rstrip().endswith(f"{stop_gate.FREE} 0 to stay")


def test_a_replica_in_sync_but_not_fetching_counts_as_away(tool: StandInTool) -> None:
    """The finding's moment: broker 1 is still in the ISR, 4 s behind the quorum leader (to be
    fenced at 9 s); stopping 0 now would leave the partition on 2 alone once it is."""
    tool.answer(FULL_ISR, quorum=ONE_BEHIND)
    held = tool.run(hook(tool, seconds=1, poll_seconds=1))
    assert held.returncode != 0
    assert (
        f"pay-7: min.insync.replicas 2, in sync on 2,0,1, away: 1 ({stop_gate.NOT_FETCHING})"
        in held.stdout
    )
    tool.answer(FULL_ISR, quorum=FETCHING)
    assert tool.run(hook(tool)).returncode == 0


def test_the_stop_goes_on_at_the_bound_saying_which_partitions_held_it(tool: StandInTool) -> None:
    tool.answer(NEEDED, quorum=FETCHING)
    held = tool.run(hook(tool, seconds=2, poll_seconds=1))
    # Non-zero: the kubelet records a FailedPreStopHook event with this text, then stops it.
    assert held.returncode != 0
    assert "pay-7: min.insync.replicas 2, in sync on 2,0, away: 1" in held.stdout
    assert f"{stop_gate.GIVING_UP} after 2 s" in held.stdout


@pytest.mark.parametrize(
    ("described", "quorum", "status", "said"),
    [
        (NOT_NEEDED, FETCHING, 1, "kafka-topics --describe failed"),
        (
            SUMMARIES + "\tTopic: pay\tPartition: 7\tLeader: 2\tReplica list: 2,0,1\n",
            FETCHING,
            0,
            "cannot read: ",
        ),
        (
            "Topic: pay\tTopicId: q3\tPartitionCount: 8\tReplicationFactor: 3\n",
            FETCHING,
            0,
            "cannot read: ",
        ),
        (
            "\tTopic: new\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0\n",
            FETCHING,
            0,
            "no summary read for new",
        ),
        (NOT_NEEDED, FETCHING.replace("Leader", "Follower"), 0, "the quorum has no leader"),
        (
            NOT_NEEDED,
            FETCHING.replace("LastFetchTimestamp", "LastFetch"),
            0,
            "cannot read the quorum table",
        ),
        (NOT_NEEDED, "", 0, "no quorum table"),
        (
            SUMMARIES + "\tTopic: pay\tPartition: 7\tLeader: 2\tReplicas: 2,0,1\tIn Sync: 2,0\n",
            FETCHING,
            0,
            "cannot read: ",
        ),
    ],
    ids=[
        *("tool-fails", "replicas", "configs", "no-summary", "no-leader", "columns", "no-table"),
        "no-isr",
    ],
)
def test_what_it_cannot_read_holds_the_stop_as_a_needed_partition_does(
    tool: StandInTool, described: str, quorum: str, status: int, said: str
) -> None:
    tool.answer(described, status, quorum=quorum)
    held = tool.run(hook(tool, seconds=1, poll_seconds=1))
    assert held.returncode != 0 and said in held.stdout, held.stdout
    assert stop_gate.GIVING_UP in held.stdout


def test_zookeeper_mode_judges_by_the_isr_alone(tool: StandInTool) -> None:
    zookeeper = ClusterModel.from_config(
        config_of("staging", quorum={"kind": "zookeeper", "nodes": 3}, kafka_version="3.9.1")
    )
    tool.answer(NOT_NEEDED, quorum="")
    stopped = tool.run(hook(tool, zookeeper))
    assert stopped.returncode == 0 and f"{stop_gate.FREE} 0 to stay" in stopped.stdout
    assert not any(in_sync.QUORUM_COMMAND in call for call in tool.calls())
    tool.answer(NEEDED)
    assert tool.run(hook(tool, zookeeper, seconds=1, poll_seconds=1)).returncode != 0


@pytest.mark.parametrize("state", [1.0, 7.0, None])  # starting, shutting down, no figure
def test_a_broker_not_serving_stops_at_once(
    tool: StandInTool, agent: FakeAgent, state: float | None
) -> None:
    agent.body = served(state, 0.0)
    tool.answer(NEEDED, quorum=FETCHING)
    stopped = tool.run(hook(tool))
    assert stopped.returncode == 0 and stop_gate.AT_ONCE in stopped.stdout
    assert tool.calls() == []


def test_a_broker_whose_agent_does_not_answer_stops_at_once(tmp_path: Path) -> None:
    silent = FakeAgent()  # bound, never serving: the connection is refused
    silent.server.server_close()
    tool = StandInTool(tmp_path, silent)
    tool.answer(NEEDED, quorum=FETCHING)
    stopped = tool.run(hook(tool))
    assert stopped.returncode == 0 and stop_gate.AT_ONCE in stopped.stdout


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
