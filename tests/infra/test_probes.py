"""Kafka pods' probes: a broker is ready once caught up, not once its port answers.

The readiness command runs here for real (busybox `wget` and `awk`, as in the image) against a
local server that serves what the JMX agent would; the kafka tier runs it against real brokers.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import yaml

from infra.model import labels, metrics, probes, templating, workloads
from infra.model.cluster import ClusterModel
from tests.infra.conftest import config_of


class FakeAgent:
    """Serves `body` on 127.0.0.1 as the agent's /metrics, remembering the paths asked for."""

    def __init__(self) -> None:
        self.body = ""
        self.paths: list[str] = []
        agent = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the name http.server calls
                agent.paths.append(self.path)
                payload = agent.body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]

    def ready(self) -> bool:
        command = probes.caught_up_command(self.port)
        return subprocess.run(command, check=False, timeout=10).returncode == 0


@pytest.fixture
def agent() -> Iterator[FakeAgent]:
    fake = FakeAgent()
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def served(state: float | None, lag: float | None) -> str:
    lines = ["# HELP other a figure the probe ignores", "other 3.0"]
    if state is not None:
        lines += [f"# TYPE {metrics.BROKER_STATE} gauge", f"{metrics.BROKER_STATE} {state}"]
    if lag is not None:
        lines.append(f"{metrics.REPLICA_MAX_LAG} {lag}")
    return "\n".join(lines) + "\n"


def test_ready_only_when_running_and_caught_up(agent: FakeAgent) -> None:
    agent.body = served(3.0, 0.0)
    assert agent.ready()
    assert all(metrics.BROKER_STATE in p and metrics.REPLICA_MAX_LAG in p for p in agent.paths)
    for state, lag in [
        (3.0, 12.0),  # running, still fetching what it missed
        (1.0, 0.0),  # starting
        (6.0, 0.0),  # pending controlled shutdown
        (None, 0.0),
        (3.0, None),
    ]:
        agent.body = served(state, lag)
        assert not agent.ready(), (state, lag)


def test_not_ready_when_the_agent_does_not_answer() -> None:
    fake = FakeAgent()
    fake.server.server_close()  # the port is free again: nothing listens there
    assert not fake.ready()


def test_the_agent_exports_what_the_probe_reads() -> None:
    model = ClusterModel.from_config(config_of())
    rendered = templating.jmx_exporter_config(model)
    for name in (metrics.BROKER_STATE, metrics.REPLICA_MAX_LAG):
        assert f"name: {name}\n" in rendered


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
    assert broker["readinessProbe"]["exec"]["command"] == probes.caught_up_command(9404)
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
