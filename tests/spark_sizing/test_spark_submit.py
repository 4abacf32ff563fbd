"""The job under spark-submit on a real Spark standalone cluster (master and worker from the
pyspark wheel, on 127.0.0.1), as docs/spark-submit.md says to run it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest

from spark_sizing.contract import SizingReport
from spark_sizing.job import SAMPLE_INPUT

SPARK_HOME = Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(log: Path, env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    with log.open("wb") as handle:
        return subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
        )


def wait_for(log: Path, text: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while text not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"no '{text}' in {log}:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)


@dataclass(frozen=True)
class Cluster:
    url: str
    ui: str


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("spark-standalone")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(root)}
    port, ui = free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    master = start(
        root / "master.log",
        env,
        "org.apache.spark.deploy.master.Master",
        *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)),
    )
    worker = None
    try:
        wait_for(root / "master.log", "I have been elected leader", master)
        worker = start(
            root / "worker.log",
            env,
            "org.apache.spark.deploy.worker.Worker",
            url,
            *("--host", "127.0.0.1", "--cores", "2", "--memory", "1g"),
            *("--webui-port", str(free_port()), "--work-dir", str(root / "work")),
        )
        wait_for(root / "worker.log", "Successfully registered with master", worker)
        yield Cluster(url, f"http://127.0.0.1:{ui}")
    finally:
        for process in (worker, master):
            if process is not None:
                process.terminate()
                process.wait(timeout=60)


@pytest.mark.spark
def test_the_job_runs_unchanged_under_spark_submit(
    standalone: Cluster, tmp_path: Path, repo_root: Path
) -> None:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    submitted = subprocess.run(
        [
            str(SPARK_HOME / "bin" / "spark-submit"),
            *("--master", standalone.url, "--conf", "spark.ui.enabled=false"),
            str(repo_root / "spark_sizing" / "__main__.py"),
            *("size", "--input", str(SAMPLE_INPUT), "--out", str(tmp_path / "cluster")),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    # The application ran on the standalone master, with executors of its worker.
    with urllib.request.urlopen(f"{standalone.ui}/json/") as response:
        state = json.load(response)
    assert [a["name"] for a in state["completedapps"]] == ["kafkastack-sizing"]
    # And sized exactly as a run of its own (a fresh local JVM, not this test session's) does.
    local = subprocess.run(
        [
            *(sys.executable, "-m", "spark_sizing", "size"),
            *("--input", str(SAMPLE_INPUT), "--out", str(tmp_path / "local")),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert local.returncode == 0, local.stderr[-3000:]
    on_cluster, in_process = (
        SizingReport.model_validate_json((tmp_path / run / "sizing.json").read_text())
        for run in ("cluster", "local")
    )
    assert on_cluster.cluster == in_process.cluster
    assert on_cluster.topics == in_process.topics
    assert on_cluster.inputs == in_process.inputs
