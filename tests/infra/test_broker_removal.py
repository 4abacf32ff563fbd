"""Fewer brokers are refused while a broker that goes still holds replicas, or may.

A stand-in `kubectl` on PATH answers as the API server and the brokers' agents would: `get
statefulsets` lists the deployed brokers, `exec` prints a pod's PartitionCount. The cluster
tier (tests/cluster/test_broker_removal.py) shows the refusal through the real engine, before
any object is touched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from infra.broker_removal import check_broker_removal
from infra.errors import ConfigError
from infra.model import labels, metrics
from infra.model.cluster import ClusterModel
from infra.stack_config import StackConfig
from tests.infra.conftest import config_of, stand_in_kubectl

FAKE_KUBECTL = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1] == "get":
    if os.environ.get("FAKE_UNREACHABLE"):
        sys.stderr.write("The connection to the server localhost:8080 was refused\\n")
        sys.exit(1)
    # Every StatefulSet of the stack, as the program lists them once: brokers and controllers.
    names = json.loads(os.environ["FAKE_STATEFULSETS"])
    items = [
        {"metadata": {"name": n, "labels": {"app.kubernetes.io/component": c}}}
        for n, c in names
    ]
    print(json.dumps({"items": items}))
    sys.exit(0)
answers = json.loads(os.environ["FAKE_COUNTS"])
pod = sys.argv[sys.argv.index("-n") + 2]
if pod not in answers:
    sys.exit(1)
print("# TYPE {0} gauge\\n{0} {1}".format(os.environ["FAKE_METRIC"], answers[pod]))
"""


def running(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    deployed: StackConfig,
    counts: dict[int, float],
    unreachable: bool = False,
) -> Path:
    """The cluster as `deployed` left it; each broker id in `counts` answers with its count."""
    model = ClusterModel.from_config(deployed)
    stand_in_kubectl(tmp_path, monkeypatch, FAKE_KUBECTL)
    log = tmp_path / "calls.jsonl"
    answers = {
        model.names.pod(b.workload): counts[b.node_id] for b in model.brokers if b.node_id in counts
    }
    workloads = [(b.workload, labels.BROKER) for b in model.brokers]
    workloads += [(q.workload, labels.CONTROLLER) for q in model.quorum if q not in model.brokers]
    monkeypatch.setenv("FAKE_STATEFULSETS", json.dumps(workloads))
    monkeypatch.setenv("FAKE_COUNTS", json.dumps(answers))
    monkeypatch.setenv("FAKE_METRIC", metrics.PARTITION_COUNT)
    monkeypatch.setenv("FAKE_LOG", str(log))
    if unreachable:
        monkeypatch.setenv("FAKE_UNREACHABLE", "1")
    return log


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def five() -> StackConfig:
    return config_of(brokers=5)


def three(**overrides: Any) -> StackConfig:
    return config_of(brokers=3, **overrides)


def ids(config: StackConfig) -> list[int]:
    return [b.node_id for b in ClusterModel.from_config(config).brokers]


def test_removing_a_broker_that_holds_replicas_is_refused_with_the_drain_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    going = sorted(set(ids(five())) - set(ids(three())))
    assert len(going) == 2
    log = running(tmp_path, monkeypatch, five(), {going[0]: 12, going[1]: 0})
    with pytest.raises(ConfigError) as err:
        check_broker_removal(three(allow_unverified_broker_removal=True))
    message = str(err.value)
    assert message.startswith("kafkastack:brokers: 5 → 3 would remove broker(s)")
    assert f"{going[0]} (12 replicas)" in message and f"{going[1]} (" not in message
    assert f"kafkastack drain --stack staging --brokers {going[0]},{going[1]}" in message
    # Asked each going broker's own agent, on localhost, and no broker that stays.
    execs = [c for c in calls(log) if c[0] == "exec"]
    assert len(execs) == 2
    assert all(f"name[]={metrics.PARTITION_COUNT}" in c[-1] for c in execs)


def test_removing_drained_brokers_goes_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    going = set(ids(five())) - set(ids(three()))
    running(tmp_path, monkeypatch, five(), dict.fromkeys(going, 0.0))
    check_broker_removal(three())


def test_the_same_brokers_ask_no_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = running(tmp_path, monkeypatch, five(), {})
    check_broker_removal(five())
    assert [c[0] for c in calls(log)] == ["get"]


def test_an_unreachable_cluster_is_named_and_refused_unless_overridden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    running(tmp_path, monkeypatch, five(), {}, unreachable=True)
    with pytest.raises(ConfigError) as err:
        check_broker_removal(three())
    message = str(err.value)
    assert message.startswith("kafkastack:brokers: cannot ask the cluster which brokers run")
    assert "connection to the server" in message
    assert "kafkastack:allow_unverified_broker_removal: true" in message
    check_broker_removal(three(allow_unverified_broker_removal=True))


def test_a_going_broker_that_does_not_answer_is_refused_unless_overridden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    going = sorted(set(ids(five())) - set(ids(three())))
    running(tmp_path, monkeypatch, five(), {going[0]: 0})  # the other pod is gone or silent
    with pytest.raises(ConfigError) as err:
        check_broker_removal(three())
    message = str(err.value)
    assert message.startswith(f"kafkastack:brokers: broker(s) {going[1]} (")
    assert "kafkastack drain --stack staging" in message
    check_broker_removal(three(allow_unverified_broker_removal=True))
