"""The program asks the cluster for the stack's StatefulSets: none (the first creation), some,
or no answer, which is never taken for "none". A stand-in `kubectl` on PATH answers as the API
server would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from infra.model import labels
from infra.stack_workloads import stack_workloads
from tests.infra.conftest import config_of, stand_in_kubectl

# Prints the objects of FAKE_ITEMS as `kubectl get -o json` does, or fails when it is unset.
FAKE_KUBECTL = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if "FAKE_ITEMS" not in os.environ:
    sys.exit("The connection to the server localhost:8080 was refused")
print(json.dumps({"items": json.loads(os.environ["FAKE_ITEMS"])}))
"""


def ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, items: list[Any] | None
) -> tuple[dict[str, Any] | str, list[str]]:
    stand_in_kubectl(tmp_path, monkeypatch, FAKE_KUBECTL)
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_LOG", str(log))
    if items is not None:
        monkeypatch.setenv("FAKE_ITEMS", json.dumps(items))
    else:
        monkeypatch.delenv("FAKE_ITEMS", raising=False)
    answer = stack_workloads(config_of())
    return answer, json.loads(log.read_text().splitlines()[0])


def test_the_stacks_statefulsets_are_asked_by_its_labels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_of()
    none, call = ask(tmp_path, monkeypatch, [])
    assert none == {}  # the first creation: known to be empty
    assert call[:4] == ["get", "statefulsets", "-n", config.namespace]
    selector = call[call.index("-l") + 1]
    assert f"{labels.INSTANCE}={config.cluster_name}" in selector.split(",")
    existing = [{"metadata": {"name": "kafka-broker-0"}}]
    found, _ = ask(tmp_path / "one", monkeypatch, existing)
    assert found == {"kafka-broker-0": existing[0]}


def test_no_answer_is_not_an_empty_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answer = ask(tmp_path, monkeypatch, None)[0]
    assert isinstance(answer, str) and "connection to the server" in answer
