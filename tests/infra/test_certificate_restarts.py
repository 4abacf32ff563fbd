"""The program asks the cluster whether a node that cannot reload its certificate still serves
an older one than its Secret holds (infra/certificate_restarts.py). A stand-in `kubectl` on PATH
answers as the API server would: the Secrets (certificates signed here), the pods' start times."""

from __future__ import annotations

import base64
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes

from infra import pki
from infra.certificate_restarts import FINGERPRINT_CHARS, certificate_restarts
from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.stack_config import StackConfig
from tests.infra.conftest import config_of, stand_in_kubectl

# `kubectl get KIND NAME -n NS -o json` answered from FAKE_OBJECTS ("kind/name" → object).
FAKE_KUBECTL = """#!/usr/bin/env python3
import json, os, sys
objects = json.loads(os.environ["FAKE_OBJECTS"])
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
found = objects.get(sys.argv[2] + "/" + sys.argv[3])
if found is None:
    sys.exit("Error from server (NotFound)")
print(json.dumps(found))
"""

NOW = datetime.datetime.now(datetime.UTC)
ZOOKEEPER_MODE = {"kafka_version": "3.9.1", "quorum": {"kind": "zookeeper", "nodes": 3}}


def certificate() -> bytes:
    authority = pki.new_authority("ca", datetime.timedelta(days=1))
    return pki.sign(authority, "node", ["node"], [], datetime.timedelta(hours=1))[1]


def fingerprint(pem: bytes) -> str:
    cert = x509.load_pem_x509_certificate(pem)
    return cert.fingerprint(hashes.SHA256()).hex()[:FINGERPRINT_CHARS]


def pod(container: str, started: datetime.datetime) -> dict[str, Any]:
    stamp = started.strftime("%Y-%m-%dT%H:%M:%SZ")
    status = {"name": container, "state": {"running": {"startedAt": stamp}}}
    return {"status": {"containerStatuses": [status]}}


def workload(value: str | None = None) -> dict[str, Any]:
    annotations = {labels.CERTIFICATE_RESTART: value} if value else {}
    return {"spec": {"template": {"metadata": {"annotations": annotations}}}}


def ask(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    config: StackConfig,
    objects: dict[str, Any],
    workloads: dict[str, dict[str, Any]] | None,
) -> tuple[dict[str, str] | None, list[list[str]]]:
    stand_in_kubectl(tmp_path, monkeypatch, FAKE_KUBECTL)
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.setenv("FAKE_OBJECTS", json.dumps(objects))
    values = certificate_restarts(config, workloads)
    calls = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    return values, calls


def test_a_server_started_before_its_renewal_gets_the_new_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_of("dev", **ZOOKEEPER_MODE)
    model = ClusterModel.from_config(config)
    renewed, fresh, kept = (n.workload for n in model.quorum)
    pems = {w: certificate() for w in (renewed, fresh, kept)}
    objects: dict[str, Any] = {}
    for w, pem in pems.items():
        objects[f"secret/{model.names.tls_secret(w)}"] = {
            "data": {"tls.crt": base64.b64encode(pem).decode()}
        }
    hour = datetime.timedelta(hours=1)
    objects[f"pod/{model.names.pod(renewed)}"] = pod("zookeeper", NOW - hour)  # before renewal
    objects[f"pod/{model.names.pod(fresh)}"] = pod("zookeeper", NOW)  # restarted since
    objects[f"pod/{model.names.pod(kept)}"] = pod("zookeeper", NOW)
    workloads = {renewed: workload(), fresh: workload(), kept: workload("earlier0renewal")}
    values, calls = ask(tmp_path, monkeypatch, config, objects, workloads)
    # The first still serves what it started with: a new value rolls it. The second serves its
    # Secret's: nothing. The third keeps the value of its last renewal's roll: nothing either.
    assert values == {renewed: fingerprint(pems[renewed]), kept: "earlier0renewal"}
    # Only ZooKeeper servers are asked: the 3.9 brokers reload theirs.
    asked = {c[2] for c in calls}
    assert asked == {model.names.tls_secret(w) for w in pems} | {model.names.pod(w) for w in pems}


def test_a_39_dedicated_controller_restarts_and_a_43_one_reloads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_of(kafka_version="3.9.1")
    model = ClusterModel.from_config(config)
    controller = model.quorum[0].workload
    pem = certificate()
    objects = {
        f"secret/{model.names.tls_secret(controller)}": {
            "data": {"tls.crt": base64.b64encode(pem).decode()}
        },
        f"pod/{model.names.pod(controller)}": pod("kafka", NOW - datetime.timedelta(days=3)),
    }
    workloads = {n.workload: workload() for n in (*model.brokers, *model.quorum)}
    values, _ = ask(tmp_path, monkeypatch, config, objects, workloads)
    assert values == {controller: fingerprint(pem)}
    current = config_of()  # Kafka 4.3: every node reloads; nothing to ask
    values, calls = ask(tmp_path / "4.3", monkeypatch, current, objects, workloads)
    assert values == {} and calls == []


def test_nothing_known_keeps_what_is_deployed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_of("dev", **ZOOKEEPER_MODE)
    model = ClusterModel.from_config(config)
    server = model.quorum[0].workload
    # No cluster: None, so the engine keeps the deployed value (ignoreChanges, test_rolls.py).
    assert ask(tmp_path, monkeypatch, config, {}, None)[0] is None
    # A Secret or pod that cannot be read: the deployed value; a new server: nothing to roll.
    values, _ = ask(tmp_path / "silent", monkeypatch, config, {}, {server: workload("abc")})
    assert values == {server: "abc"}
