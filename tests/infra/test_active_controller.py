"""The program asks the controller pods which one is active, through `kubectl exec`.

Here a stand-in `kubectl` on PATH answers as each pod's agent would (the real exec needs
controller pods, which no tier here runs apart from brokers); it records the command it was
given, which is checked to be the pod's own metrics on localhost.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from infra.active_controller import RunningQuorum, read_running_quorum
from infra.model import metrics
from infra.model.cluster import ClusterModel
from tests.infra.conftest import config_of, stand_in_kubectl

FAKE_KUBECTL = """#!/usr/bin/env python3
import json, os, sys
answers = json.loads(os.environ["FAKE_ANSWERS"])
pod = sys.argv[sys.argv.index("-n") + 2]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
answer = answers.get(pod)
if answer is None:
    sys.exit(1)
print("# TYPE " + answer[0] + " gauge")
print(answer[0] + " " + answer[1])
"""


def fake_kubectl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[str]]
) -> Path:
    stand_in_kubectl(tmp_path, monkeypatch, FAKE_KUBECTL)
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_ANSWERS", json.dumps(answers))
    monkeypatch.setenv("FAKE_LOG", str(log))
    return log


def pods(config: Any) -> list[tuple[int, str]]:
    model = ClusterModel.from_config(config)
    return [(n.node_id, model.names.pod(n.workload)) for n in model.quorum]


def test_reads_the_one_controller_whose_agent_says_active(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_of()
    controllers = pods(config)
    active_id, active_pod = controllers[1]
    answers = {
        pod: [metrics.ACTIVE_CONTROLLER, "1.0" if pod == active_pod else "0.0"]
        for _, pod in controllers
    }
    log = fake_kubectl(tmp_path, monkeypatch, answers)
    assert read_running_quorum(config).active == active_id
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    first = calls[0]
    assert first[:6] == ["exec", "-n", config.namespace, controllers[0][1], "-c", "kafka"]
    assert "http://127.0.0.1:9404/metrics?name[]=" + metrics.ACTIVE_CONTROLLER in first[-1]


def test_falls_back_to_node_order_when_a_controller_does_not_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_of()
    controllers = pods(config)
    answers = {controllers[0][1]: [metrics.ACTIVE_CONTROLLER, "0.0"]}  # the others fail
    fake_kubectl(tmp_path, monkeypatch, answers)
    assert read_running_quorum(config) == RunningQuorum()


def test_combined_voters_that_all_answer_make_a_running_quorum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_of("dev", quorum={"combined": True})
    model = ClusterModel.from_config(config)
    voters = [model.names.pod(n.workload) for n in model.voters]
    answers = {
        pod: [metrics.ACTIVE_CONTROLLER, "1.0" if i == 0 else "0.0"] for i, pod in enumerate(voters)
    }
    fake_kubectl(tmp_path, monkeypatch, answers)
    # Running, led by the first: it rolls last of the brokers (the voters here).
    active = model.voters[0].node_id
    assert read_running_quorum(config) == RunningQuorum(running=True, active=active)
    # A first `pulumi up`: no voter answers yet.
    fake_kubectl(tmp_path / "first-up", monkeypatch, {voters[0]: answers[voters[0]]})
    assert read_running_quorum(config) == RunningQuorum()


def test_a_growing_quorum_asks_the_voters_that_exist_and_finds_the_active_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3 → 5 controllers: the two new ones have no pod yet. Asking them too made the quorum
    look unknown, so the roll restarted the active controller in node order (real nodes)."""
    config = config_of(quorum={"kind": "kraft", "nodes": 5})
    model = ClusterModel.from_config(config)
    controllers = pods(config)
    running = controllers[:3]
    active_id, active_pod = running[2]
    answers = {
        pod: [metrics.ACTIVE_CONTROLLER, "1.0" if pod == active_pod else "0.0"]
        for _, pod in running
    }
    log = fake_kubectl(tmp_path, monkeypatch, answers)
    existing = frozenset(
        [*(n.workload for n in model.quorum[:3]), *(n.workload for n in model.brokers)]
    )
    assert read_running_quorum(config, existing) == RunningQuorum(running=True, active=active_id)
    asked = {json.loads(line)[3] for line in log.read_text().splitlines()}
    assert asked == {pod for _, pod in running}


def test_combined_brokers_added_to_a_running_quorum_find_it_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3 → 5 combined brokers (each a voter): the three that run, one leading, make a running
    quorum, so the change restarts them and adds the two new ones one at a time (before, the
    two without pods made it unknown, and every voter restarted at once)."""
    config = config_of("dev", quorum={"combined": True}, brokers=5)
    model = ClusterModel.from_config(config)
    running = model.voters[:3]
    answers = {
        model.names.pod(n.workload): [metrics.ACTIVE_CONTROLLER, "1.0" if i == 0 else "0.0"]
        for i, n in enumerate(running)
    }
    fake_kubectl(tmp_path, monkeypatch, answers)
    existing = frozenset(n.workload for n in running)
    expected = RunningQuorum(running=True, active=running[0].node_id)
    assert read_running_quorum(config, existing) == expected


def test_voters_left_half_created_without_a_leader_are_not_a_running_quorum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first `pulumi up` that stopped after one combined voter: chaining the others behind it
    would wait forever for a majority; none exists, none is known to lead."""
    config = config_of("dev", quorum={"combined": True})
    model = ClusterModel.from_config(config)
    first = model.voters[0]
    fake_kubectl(
        tmp_path, monkeypatch, {model.names.pod(first.workload): [metrics.ACTIVE_CONTROLLER, "0.0"]}
    )
    assert read_running_quorum(config, frozenset([first.workload])) == RunningQuorum()
    # Nothing created yet: nobody to ask.
    log = fake_kubectl(tmp_path / "none", monkeypatch, {})
    assert read_running_quorum(config, frozenset()) == RunningQuorum()
    assert not log.exists()


def test_not_asked_on_kwok_or_for_zookeeper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = fake_kubectl(tmp_path, monkeypatch, {})
    kwok = config_of("local", platform="local", skip_await=True)  # a KRaft stack skips on kwok only
    assert read_running_quorum(kwok) == RunningQuorum()
    zookeeper = config_of("dev", kafka_version="3.9.1", quorum={"kind": "zookeeper", "nodes": 3})
    assert read_running_quorum(zookeeper) == RunningQuorum()
    assert not log.exists()
