"""Outputs appear in --out only once a run has written all of them, sizing.json last."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from kafkastack.cli import app
from spark_sizing import outputs, s3
from spark_sizing.job import SAMPLE_INPUT
from tests.spark_sizing.test_report import sized
from tests.spark_sizing.test_zone_loss import worked_params


def broken_charts(*_: object) -> str:
    raise ValueError("Date ordinal 3652059.0 converts to 9999-12-31, beyond what it can draw")


def test_a_report_that_fails_to_render_leaves_out_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "rejected.csv").write_text("from an earlier run\n")
    monkeypatch.setattr(outputs, "html_report", broken_charts)
    with (
        pytest.raises(ValueError, match="Date ordinal"),
        outputs.staged(str(out), tmp_path / "scratch") as folder,
    ):
        (folder / "rejected.csv").write_text("this run's\n")
        outputs.write_reports(sized(worked_params()), [], folder)
        outputs.publish(folder, str(out))
    assert sorted(p.name for p in out.iterdir()) == ["rejected.csv"]
    assert (out / "rejected.csv").read_text() == "from an earlier run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder left


def test_publish_moves_sizing_json_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    with outputs.staged(str(out), tmp_path) as folder:
        outputs.write_reports(sized(worked_params()), [], folder)
        (folder / "rejected.csv").write_text("topic,reason\n")
        moved: list[str] = []
        replace = Path.replace

        def recorded(self: Path, target: Path) -> Path:
            moved.append(self.name)
            return replace(self, target)

        monkeypatch.setattr(Path, "replace", recorded)
        outputs.publish(folder, str(out))
    assert moved[-1] == "sizing.json" and len(moved) == 4
    assert sorted(p.name for p in out.iterdir()) == sorted(moved)


def test_an_s3_out_gets_sizing_json_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uploaded: list[str] = []

    class Client:
        def upload_file(self, path: str, bucket: str, key: str) -> None:
            uploaded.append(key)

    monkeypatch.setattr(s3, "client", Client)
    for name in ("sizing.json", "report.md", "rejected.csv", "z.txt"):
        (tmp_path / name).write_text("x")
    s3.upload_tree(tmp_path, "s3://bucket/run", last="sizing.json")
    assert uploaded[-1] == "run/sizing.json" and len(uploaded) == 4


def test_an_out_that_is_a_file_is_refused_before_spark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(**_: object) -> None:
        raise AssertionError("Spark must not start for an --out that can be refused at once")

    monkeypatch.setattr("spark_sizing.job.spark_session", refuse)
    out = tmp_path / "sizing.json"
    out.write_text("{}")
    result = CliRunner().invoke(app, ["size", "--input", str(SAMPLE_INPUT), "--out", str(out)])
    assert result.exit_code == 2
    assert f"--out {out}: is a file; name a directory" in result.output


@pytest.mark.spark
def test_a_run_that_crashes_at_the_charts_leaves_no_sizing(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The crash the audit met: sizing.json and report.md were in --out before the charts failed.
    monkeypatch.setattr(outputs, "html_report", broken_charts)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["size", "--input", str(SAMPLE_INPUT), "--out", str(out)])
    assert isinstance(result.exception, ValueError), result.output
    assert not out.exists() or not any(out.iterdir())
    assert [p.name for p in tmp_path.iterdir() if p.name != "out"] == []


def test_the_staging_folder_is_inside_out_so_a_mounted_out_still_renames(tmp_path: Path) -> None:
    """`--out /out` in a container is a mount point: a folder beside it is on another file
    system (or unwritable), and the final rename failed there after the whole run."""
    out = tmp_path / "out"
    with outputs.staged(str(out), tmp_path / "scratch") as folder:
        assert folder.parent == out
        (folder / "sizing.json").write_text("{}")
        outputs.publish(folder, str(out))
    assert sorted(p.name for p in out.iterdir()) == ["sizing.json"]


def test_an_out_that_cannot_be_written_is_refused_naming_it(tmp_path: Path) -> None:
    unwritable = pytest.raises(outputs.InputError, match="--out /proc/kafkastack: cannot write")
    with unwritable, outputs.staged("/proc/kafkastack", tmp_path):
        pass


def test_an_out_made_for_a_run_that_published_nothing_is_gone_again(tmp_path: Path) -> None:
    out = tmp_path / "new" / "out"
    with pytest.raises(RuntimeError), outputs.staged(str(out), tmp_path):
        raise RuntimeError("the run failed")
    assert not out.exists()
