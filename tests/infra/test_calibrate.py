"""`kafkastack calibrate`'s refusals, each before or instead of a profile (no brokers started),
and the CPU time it reads from /proc."""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

import pytest
from typer.testing import CliRunner

from infra.verify import calibrate
from infra.verify.cpu_time import group_cpu_seconds, machine_busy_seconds, process_cpu_seconds
from infra.verify.processes import ProcessCluster
from infra.verify.throughput import Produced
from kafkastack.cli import app
from spark_sizing.calibration import CalibrationRun

STACKS = Path(__file__).resolve().parents[2] / "stacks"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["calibrate", "--stacks-dir", str(STACKS), *args])
    return result.exit_code, result.output


def test_unknown_stack_is_named(tmp_path: Path) -> None:
    code, output = invoke("--stack", "nosuch", "--out", str(tmp_path / "p.yaml"))
    assert code == 2
    assert "Pulumi.nosuch.yaml" in output


def test_out_path_that_cannot_be_written_is_refused_before_measuring(tmp_path: Path) -> None:
    code, output = invoke("--stack", "local", "--out", str(tmp_path / "missing" / "p.yaml"))
    assert code == 2
    assert "--out" in output and "does not exist" in output
    code, output = invoke("--stack", "local", "--out", str(tmp_path / "p.json"))
    assert code == 2
    assert "--out" in output and ".yaml" in output
    if os.geteuid() != 0:  # root writes anywhere: the folder check above is what it gets
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        code, output = invoke("--stack", "local", "--out", str(locked / "p.yaml"))
        assert code == 2 and "cannot write" in output


def test_out_path_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "p.yaml"
    folder.mkdir()
    code, output = invoke("--stack", "local", "--out", str(folder))
    assert code == 2 and "cannot write" in output


def test_a_measurement_with_nothing_acknowledged_fails_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def nothing_acked(*_: object, **__: object) -> CalibrationRun:
        return CalibrationRun(3, 3, [0.0, 0.0, 0.0], 0.0, 0.0, 30.0)

    monkeypatch.setattr(calibrate, "measure", nothing_acked)
    out = tmp_path / "p.yaml"
    code, output = invoke("--stack", "local", "--out", str(out))
    assert code == 2
    assert "no records were acknowledged" in output
    assert not out.exists()


def test_records_below_one_is_refused(tmp_path: Path) -> None:
    code, output = invoke("--stack", "local", "--out", str(tmp_path / "p.yaml"), "--records", "0")
    assert code == 2 and "--records 0" in output


def test_cpu_time_sums_the_process_groups_of_the_brokers(tmp_path: Path) -> None:
    ticks = os.sysconf("SC_CLK_TCK")

    def process(pid: int, name: str, group: int, utime: int, stime: int) -> None:
        folder = tmp_path / str(pid)
        folder.mkdir()
        # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
        # stime …; a command name may hold spaces and parentheses.
        (folder / "stat").write_text(
            f"{pid} ({name}) S 1 {group} {group} 0 -1 0 0 0 0 0 {utime} {stime} 0 0 20 0\n"
        )

    process(100, "sh", 100, 1, 1)
    process(101, "java (main) x", 100, 3 * ticks, ticks)
    process(200, "java", 200, 2 * ticks, 0)
    process(300, "other", 300, 50 * ticks, 0)
    (tmp_path / "self").mkdir()
    assert group_cpu_seconds([100, 200], proc=tmp_path) == pytest.approx(6 + 2 / ticks)
    # One process by pid (the load benchmark's brokers), and none once it has exited.
    assert process_cpu_seconds(101, proc=tmp_path) == pytest.approx(4)
    assert process_cpu_seconds(999, proc=tmp_path) is None
    # The machine: every field of /proc/stat's first line but idle (the fourth).
    (tmp_path / "stat").write_text(f"cpu  {ticks} 0 {2 * ticks} {90 * ticks} 1 0 1 0 0 0\ncpu0 x\n")
    assert machine_busy_seconds(proc=tmp_path) == pytest.approx(3 + 2 / ticks)


def test_warmups_below_zero_are_refused(tmp_path: Path) -> None:
    code, output = invoke("--stack", "local", "--out", str(tmp_path / "p.yaml"), "--warmups", "-1")
    assert code == 2 and "--warmups -1" in output and "≥ 0" in output


@pytest.mark.parametrize(("most", "expected"), [(0, 0), (1, 1), (3, 3), (6, 4)])
def test_warm_up_stops_at_the_most_rounds_or_once_two_agree(
    most: int, expected: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Throughput still climbing by half per round for three rounds, then settled.
    speeds = iter([10.0, 15.0, 22.5, 23.0, 23.1, 23.2])
    rounds: list[str] = []
    monkeypatch.setattr(calibrate.throughput, "create_topic", lambda _c, topic, *_: None)

    def produce(_cluster: object, topic: str, records: int, _work: Path) -> Produced:
        rounds.append(topic)
        return Produced(records, next(speeds), records_s=1000.0, p50_ms=1.0, p99_ms=2.0)

    monkeypatch.setattr(calibrate.throughput, "produce", produce)
    monkeypatch.setattr(calibrate.throughput, "consume", lambda *_: None)
    calibrate.warm_up(cast(ProcessCluster, object()), 6, 3, 1000, Path("."), most)
    assert rounds == [f"calibrate-warmup-{n}" for n in range(expected)]
