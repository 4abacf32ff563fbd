"""The program asks the cluster whether any StatefulSet of the stack exists; only a clear "none"
makes it the first creation. A stand-in `kubectl` on PATH answers as the API server would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.first_creation import is_first_creation
from infra.model import labels
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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, items: list[object] | None
) -> tuple[bool, list[str]]:
    stand_in_kubectl(tmp_path, monkeypatch, FAKE_KUBECTL)
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_LOG", str(log))
    if items is not None:
        monkeypatch.setenv("FAKE_ITEMS", json.dumps(items))
    else:
        monkeypatch.delenv("FAKE_ITEMS", raising=False)
    answer = is_first_creation(config_of())
    return answer, json.loads(log.read_text().splitlines()[0])


def test_no_statefulset_of_the_stack_is_the_first_creation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_of()
    first, call = ask(tmp_path, monkeypatch, [])
    assert first
    assert call[:4] == ["get", "statefulsets", "-n", config.namespace]
    selector = call[call.index("-l") + 1]
    assert f"{labels.INSTANCE}={config.cluster_name}" in selector.split(",")


def test_an_existing_node_or_no_answer_keeps_the_chain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    existing = [{"metadata": {"name": "kafka-broker-0"}}]
    assert not ask(tmp_path / "one", monkeypatch, existing)[0]
    # An unreachable API server is not an empty cluster: the safe order stays.
    assert not ask(tmp_path / "down", monkeypatch, None)[0]
