"""A failed kafka-tier proof reports each server's state and its telling log lines since its
last start (infra/verify/process_health.py), and a report is never lost to a failing look."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from infra.verify.network import Host
from infra.verify.process_health import LINES_PER_NODE, diagnosis
from infra.verify.processes import Node, ProcessCluster
from tests.failure_reports import add_diagnosis, describe_failure


def node(tmp_path: Path, name: str, log: str, started_at: int = 0) -> Node:
    workdir = tmp_path / name
    workdir.mkdir()
    made = Node({"name": name, "role": "zookeeper"}, Host(name, 0, "10.0.0.1", None), workdir)
    made.log.write_text(log)
    made.started_at = started_at
    return made


def test_each_server_says_its_state_and_its_telling_lines_since_it_last_started(
    tmp_path: Path,
) -> None:
    earlier = "=== start 01:00:00\nERROR before the restart, naïvely\n"  # an offset in bytes
    said = [f"2026-11-29 WARN Cannot open channel to {i}" for i in range(LINES_PER_NODE + 2)]
    log = earlier + "\n".join(["=== start 01:05:00", "INFO unrelated", *said, "INFO LOOKING"])
    restarted = node(tmp_path, "zk-2", log, started_at=len(earlier.encode()))
    exited = node(tmp_path, "zk-1", "")
    exited.process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    exited.process.wait()
    running = node(tmp_path, "zk-0", "")
    running.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        report = diagnosis([running, exited, restarted]).splitlines()
    finally:
        running.process.kill()
        running.process.wait()
    assert report[0] == f"zk-0: running, log {running.log}"
    assert report[1] == f"zk-1: exited with code 3, log {exited.log}"
    assert report[2] == f"zk-2: stopped, log {restarted.log}"
    kept = [line.strip() for line in report[3:]]
    assert len(kept) == LINES_PER_NODE
    assert kept[0] == said[3] and kept[-1] == "INFO LOOKING"
    assert not any("before the restart" in line or "unrelated" in line for line in report)
    assert restarted.log_since_start().startswith("=== start 01:05:00\n")


def report(when: str, outcome: str) -> pytest.TestReport:
    return pytest.TestReport("t", ("t.py", 0, "t"), {}, outcome, None, when)  # type: ignore[arg-type]


def test_only_a_failed_setup_or_call_gets_the_section_and_a_failing_look_is_said() -> None:
    def broken() -> str:
        raise OSError("gone")

    failed, passed, teardown = (
        report("call", "failed"),
        report("call", "passed"),
        report("teardown", "failed"),
    )
    for each in (failed, passed, teardown):
        add_diagnosis(each, "servers", lambda: "zk-0: running")
    add_diagnosis(failed, "servers", broken)
    assert failed.sections == [
        ("servers", "zk-0: running"),
        ("servers", "no diagnosis: OSError('gone')"),
    ]
    assert passed.sections == [] and teardown.sections == []


def test_a_failed_proof_given_a_cluster_reports_its_servers(tmp_path: Path) -> None:
    cluster = ProcessCluster.__new__(ProcessCluster)  # its servers only; nothing started
    cluster.nodes = [node(tmp_path, "kafka-broker-0", "ERROR Disk error while writing\n")]
    failed, passed = report("call", "failed"), report("call", "passed")
    for each in (failed, passed):
        describe_failure(each, ["a value of another fixture", cluster])
    assert failed.sections == [
        (
            "servers",
            f"kafka-broker-0: stopped, log {cluster.nodes[0].log}\n"
            "  ERROR Disk error while writing",
        )
    ]
    assert passed.sections == []
