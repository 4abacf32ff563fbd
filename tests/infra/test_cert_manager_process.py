"""The local cluster's cert-manager (infra/localcluster/cert_manager.py) without a cluster:
`stop` signals only the controller it started for that cluster, never a process that merely
reuses the recorded pid; a Certificate counts as Ready only for its current generation; and a
renewal is asked as cmctl asks it (a stand-in `kubectl` answers as the API server would)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infra.localcluster import cert_manager
from infra.localcluster.control_plane import LocalKubernetes
from tests.infra.conftest import stand_in_kubectl


@pytest.fixture
def cluster_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalKubernetes:
    """A cluster that is only its folder (in a cache of the test's own): no control plane."""
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path / "cache"))
    cluster = LocalKubernetes("cm-process-test")
    cluster.workdir.mkdir(parents=True)
    return cluster


def test_stop_leaves_alone_a_process_that_reuses_the_recorded_pid(
    cluster_folder: LocalKubernetes,
) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (cluster_folder.workdir / "cert-manager.pid").write_text(str(other.pid))
        cert_manager.stop(cluster_folder, grace=1)
        assert other.poll() is None
        assert not (cluster_folder.workdir / "cert-manager.pid").exists()
    finally:
        other.kill()
        other.wait()


def test_stop_ends_the_controller_of_this_cluster(cluster_folder: LocalKubernetes) -> None:
    # A stand-in process whose command line names the cluster's kubeconfig, as the real one's does.
    argv = [
        sys.executable,
        "-c",
        "import time; time.sleep(60)",
        f"--kubeconfig={cluster_folder.kubeconfig}",
    ]
    controller = subprocess.Popen(argv)
    cmdline = Path(f"/proc/{controller.pid}/cmdline")
    while argv[-1].encode() not in cmdline.read_bytes():  # until the child has exec'd
        time.sleep(0.01)
    try:
        (cluster_folder.workdir / "cert-manager.pid").write_text(str(controller.pid))
        cert_manager.stop(cluster_folder, grace=5)
        assert controller.wait(timeout=10) != 0
    finally:
        controller.kill()


def test_ready_means_ready_for_the_current_generation() -> None:
    ready = {"type": "Ready", "status": "True", "observedGeneration": 1}
    certificate = {"metadata": {"generation": 2}, "status": {"conditions": [ready]}}
    assert not cert_manager.ready(certificate)
    certificate["metadata"]["generation"] = 1
    assert cert_manager.ready(certificate)


# Answers `get` with FAKE_CERTIFICATE; logs each `patch` and refuses the first FAKE_CONFLICTS of
# them as the API server refuses a stale resourceVersion.
FAKE_KUBECTL = """#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
if "get" in args:
    print(os.environ["FAKE_CERTIFICATE"])
    sys.exit(0)
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
with open(os.environ["FAKE_LOG"]) as log:
    if len(log.readlines()) <= int(os.environ["FAKE_CONFLICTS"]):
        sys.exit("Operation cannot be fulfilled: the object has been modified; please apply "
                 "your changes to the latest version and try again")
"""


def _ask(
    cluster_folder: LocalKubernetes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    conditions: list[dict[str, object]], conflicts: int = 0,
) -> list[dict[str, object]]:  # fmt: skip
    stand_in_kubectl(tmp_path, monkeypatch, FAKE_KUBECTL)
    certificate = {
        "metadata": {"name": "node-tls", "generation": 3, "resourceVersion": "41"},
        "status": {"conditions": conditions},
    }
    log = tmp_path / "patches.jsonl"
    monkeypatch.setenv("FAKE_CERTIFICATE", json.dumps(certificate))
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.setenv("FAKE_CONFLICTS", str(conflicts))
    cert_manager._ask_renewal(cluster_folder, "ns", "node-tls")
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [json.loads(call[call.index("-p") + 1]) for call in calls]


def test_a_renewal_replaces_an_issuing_condition_and_names_the_version_it_read(
    cluster_folder: LocalKubernetes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready = {"type": "Ready", "status": "True", "observedGeneration": 3}
    failed = {"type": "Issuing", "status": "False", "reason": "Failed"}
    (patch,) = _ask(cluster_folder, tmp_path, monkeypatch, [ready, failed])
    # The API server keeps conditions keyed by type: a second `Issuing` would be refused.
    conditions = patch["status"]["conditions"]
    assert [c["type"] for c in conditions] == ["Ready", "Issuing"]
    assert conditions[1]["status"] == "True" and conditions[1]["reason"] == "ManuallyTriggered"
    assert patch["metadata"] == {"resourceVersion": "41"}


def test_a_renewal_retries_after_a_conflict_and_leaves_one_already_issuing_alone(
    cluster_folder: LocalKubernetes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready = {"type": "Ready", "status": "True", "observedGeneration": 3}
    assert len(_ask(cluster_folder, tmp_path / "a", monkeypatch, [ready], conflicts=1)) == 2
    issuing = {"type": "Issuing", "status": "True", "reason": "Renewing"}
    assert _ask(cluster_folder, tmp_path / "b", monkeypatch, [ready, issuing]) == []
