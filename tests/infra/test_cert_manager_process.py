"""The local cluster's cert-manager process bookkeeping (infra/localcluster/cert_manager.py):
`stop` signals only the controller it started for that cluster, never a process that merely
reuses the recorded pid, and a Certificate counts as Ready only for its current generation."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from infra.localcluster import cert_manager
from infra.localcluster.control_plane import LocalKubernetes


@pytest.fixture
def kube(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalKubernetes:
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path / "cache"))
    cluster = LocalKubernetes("cm-process-test")
    cluster.workdir.mkdir(parents=True)
    return cluster


def test_stop_leaves_alone_a_process_that_reuses_the_recorded_pid(kube: LocalKubernetes) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (kube.workdir / "cert-manager.pid").write_text(str(other.pid))
        cert_manager.stop(kube, grace=1)
        assert other.poll() is None
        assert not (kube.workdir / "cert-manager.pid").exists()
    finally:
        other.kill()
        other.wait()


def test_stop_ends_the_controller_of_this_cluster(kube: LocalKubernetes) -> None:
    # A stand-in process whose command line names the cluster's kubeconfig, as the real one's does.
    argv = [sys.executable, "-c", "import time; time.sleep(60)", f"--kubeconfig={kube.kubeconfig}"]
    controller = subprocess.Popen(argv)
    cmdline = Path(f"/proc/{controller.pid}/cmdline")
    while argv[-1].encode() not in cmdline.read_bytes():  # until the child has exec'd
        time.sleep(0.01)
    try:
        (kube.workdir / "cert-manager.pid").write_text(str(controller.pid))
        cert_manager.stop(kube, grace=5)
        assert controller.wait(timeout=10) != 0
    finally:
        controller.kill()


def test_ready_means_ready_for_the_current_generation() -> None:
    ready = {"type": "Ready", "status": "True", "observedGeneration": 1}
    certificate = {"metadata": {"generation": 2}, "status": {"conditions": [ready]}}
    assert not cert_manager.ready(certificate)
    certificate["metadata"]["generation"] = 1
    assert cert_manager.ready(certificate)
