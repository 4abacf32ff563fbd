"""Kafka pods' probes: a broker is ready once caught up, not once its port answers.

The readiness command runs here for real (busybox `wget` and `awk`, as in the image) against a
local server that serves what the JMX agent would; the kafka tier runs it against real brokers.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.model import in_sync, labels, metrics, probes, templating, workloads
from infra.model.cluster import ClusterModel
from infra.model.resources import SIDECAR_TOOL_HEAP
from tests.infra.conftest import config_of
from tests.infra.pod_stand_ins import FakeAgent, StandInTool, served, serving


@pytest.fixture
def agent() -> Iterator[FakeAgent]:
    yield from serving()


def test_ready_only_when_running_and_caught_up(agent: FakeAgent) -> None:
    agent.body = served(3.0, 0.0)
    assert agent.caught_up()
    assert all(metrics.BROKER_STATE in p and metrics.REPLICA_MAX_LAG in p for p in agent.paths)
    for state, lag in [
        (3.0, 12.0),  # running, still fetching what it missed
        (1.0, 0.0),  # starting
        (6.0, 0.0),  # pending controlled shutdown
        (None, 0.0),
        (3.0, None),
    ]:
        agent.body = served(state, lag)
        assert not agent.caught_up(), (state, lag)
    agent.body = served(3.0, 0.0, started=None)  # no start time: the mark could not be kept
    assert not agent.caught_up()


def test_not_ready_when_the_agent_does_not_answer() -> None:
    fake = FakeAgent()
    fake.server.server_close()  # the port is free again: nothing listens there
    assert not fake.caught_up()


def test_the_agent_exports_what_the_probe_reads() -> None:
    model = ClusterModel.from_config(config_of())
    rendered = templating.jmx_exporter_config(model)
    for name in (metrics.BROKER_STATE, metrics.REPLICA_MAX_LAG):
        assert f"name: {name}\n" in rendered


def test_every_rule_keeps_its_matches_and_none_matches_a_value() -> None:
    """`cache: true` is safe only for rules whose pattern stops at the attribute's name: the
    agent matches `<bean><attribute>: <value>` and keeps the first answer per bean and
    attribute, whatever value comes later."""
    model = ClusterModel.from_config(config_of())
    rules = yaml.safe_load(templating.jmx_exporter_config(model))["rules"]
    assert len(rules) == len(templating.JMX_RULES)
    for rule in rules:
        assert rule["cache"] is True, rule
        assert ": " not in rule["pattern"], rule["pattern"]


def test_the_agent_reads_the_mbeans_every_rule_can_match_and_no_others() -> None:
    model = ClusterModel.from_config(config_of())
    listed = yaml.safe_load(templating.jmx_exporter_config(model))["includeObjectNames"]
    named = set()
    for rule in templating.JMX_RULES:
        domain = rule["pattern"].split("<", 1)[0]
        assert rule["objects"], rule["pattern"]
        assert all(name.startswith(f"{domain}:") for name in rule["objects"]), rule["objects"]
        assert set(rule["objects"]) <= set(listed), rule["pattern"]
        named |= set(rule["objects"])
    assert set(listed) == named  # nothing read that no rule can match


def kafka_container(environment: str, role: str, **overrides: Any) -> dict[str, Any]:
    model = ClusterModel.from_config(config_of(environment, **overrides))
    node = next(n for n in [*model.brokers, *model.quorum] if n.role == role)
    sts = workloads.kafka_statefulset(model, node, "fast")
    container: dict[str, Any] = sts["spec"]["template"]["spec"]["containers"][0]
    assert sts["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == (
        probes.TERMINATION_GRACE_SECONDS
    )
    return container


def test_brokers_ready_when_caught_up_and_alive_while_their_listener_answers() -> None:
    broker = kafka_container("staging", labels.BROKER)
    model = ClusterModel.from_config(config_of("staging"))
    expected = in_sync.readiness_command(model, model.brokers[0])
    assert broker["readinessProbe"]["exec"]["command"] == expected
    assert broker["readinessProbe"]["successThreshold"] == 2
    for probe in ("startupProbe", "livenessProbe"):
        assert broker[probe]["tcpSocket"] == {"port": 9092}
    # A long log recovery at start-up is not cut short by liveness.
    startup = broker["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 600
    # ...yet a started broker is seen within 2 s: each step of a roll waits for it.
    assert startup["periodSeconds"] <= 2


def test_controllers_probe_their_listener_wherever_it_listens() -> None:
    single = kafka_container("staging", labels.CONTROLLER)
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert single[probe]["tcpSocket"] == {"port": 9093}
    dual = kafka_container(
        "staging",
        labels.CONTROLLER,
        platform="local",
        network={"mode": "dual", "replication": {"cidr": "10.20.0.0/24"}},
    )
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert dual[probe]["exec"]["command"][:2] == ["sh", "-c"]
        assert "/proc/net/tcp" in dual[probe]["exec"]["command"][2]


DESCRIBED = (
    "Topic: orders\tTopicId: q1\tPartitionCount: 4\tReplicationFactor: 3\tConfigs: x=1\n"
    "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,0,2\tIsr: 1,0,2\tElr: \tLastKnownElr: \n"
    "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,10,1\tIsr: 2,1\tElr: \tLastKnownElr: \n"
    "\tTopic: orders\tPartition: 2\tLeader: none\tReplicas: 0,1,2\tIsr: 1\tElr: \tLastKnownElr: \n"
    "\tTopic: orders\tPartition: 3\tLeader: 1\tReplicas: 1,2,0\tIsr: 1,2\tElr: \tLastKnownElr: "
    "\tAdding Replicas: 0\tRemoving Replicas: \n"
)
LAGGING = (
    "\tTopic: pay\tPartition: 7\tLeader: 2\tReplicas: 2,0,1\tIsr: 2,1\tElr: \tLastKnownElr: \n"
)


class FakeBroker:
    """The broker readiness probe's command, run for real (sh, busybox wget and awk) with its
    in-pod folders moved under `tmp`: `agent` serves the figures and a stand-in
    `kafka-run-class.sh` prints `described`, recording each call with its environment."""

    def __init__(self, tmp: Path, agent: FakeAgent) -> None:
        self.tool = StandInTool(tmp, agent)
        self.described, self.tool_exit = DESCRIBED, 0
        model = ClusterModel.from_config(config_of("staging"))
        self.script = self.tool.in_pod(model, in_sync.readiness_command(model, model.brokers[0]))

    def probe(self) -> subprocess.CompletedProcess[str]:
        self.tool.answer(self.described, self.tool_exit)
        return self.tool.run(self.script)

    def tool_calls(self) -> list[str]:
        return self.tool.calls()


def test_ready_only_once_in_the_isr_of_every_partition_it_hosts(
    agent: FakeAgent, tmp_path: Path
) -> None:
    broker = FakeBroker(tmp_path, agent)  # broker 0
    agent.body = served(3.0, 0.0, started="1.7958E9")
    # In the ISR wherever it is a replica, but for a leaderless partition and one it is being
    # added to; partition 1 lists broker 10, not 0.
    assert broker.probe().returncode == 0
    (call,) = broker.tool_calls()
    assert call.startswith(f"{in_sync.TOPIC_COMMAND} --bootstrap-server ")
    assert "--describe" in call
    assert "KAFKA_OPTS= " in call and f"KAFKA_HEAP_OPTS={SIDECAR_TOOL_HEAP}" in call
    # Found in sync once: later probes of the same process read only the figures.
    broker.described = DESCRIBED + LAGGING
    assert broker.probe().returncode == 0
    assert len(broker.tool_calls()) == 1
    agent.body = served(3.0, 4.0, started="1.7958E9")
    assert broker.probe().returncode != 0  # lagging again: not ready, whatever the mark says

    # A new process (the container restarted) is asked about anew.
    agent.body = served(3.0, 0.0, started="1.7959E9")
    answer = broker.probe()
    assert answer.returncode != 0
    assert "not in the ISR of pay-7" in answer.stdout
    assert "1 partition(s) wait for this broker" in answer.stdout
    assert len(broker.tool_calls()) == 2
    broker.described = DESCRIBED
    assert broker.probe().returncode == 0


def test_not_ready_when_the_isr_cannot_be_read(agent: FakeAgent, tmp_path: Path) -> None:
    broker = FakeBroker(tmp_path, agent)
    agent.body = served(3.0, 0.0)
    broker.tool_exit = 1
    assert broker.probe().returncode != 0
    # A partition's line in a format the probe does not know: not ready, and it says why
    # (rather than ready because no line it understood said otherwise).
    broker.tool_exit = 0
    broker.described = "\tTopic: pay\tPartition: 7\tLeader: 2\tReplica list: 2,0,1\n"
    answer = broker.probe()
    assert answer.returncode != 0 and "cannot read: " in answer.stdout
    # A partition's line without its ISR field: not read as "not a member".
    broker.described = "\tTopic: pay\tPartition: 7\tLeader: 2\tReplicas: 2,0,1\tIn Sync: 2\n"
    answer = broker.probe()
    assert answer.returncode != 0 and "cannot read: " in answer.stdout
    broker.described = ""  # no topic at all: nothing to wait for
    assert broker.probe().returncode == 0
