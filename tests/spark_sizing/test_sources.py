"""A CSV header is checked before Spark starts: each refusal names the file and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from kafkastack.cli import app
from spark_sizing.contract import SizingReport

runner = CliRunner()
HEADER = "topic,period_start,produce_mb_s,consumer_groups,retention_hours"


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(**_: object) -> None:
        raise AssertionError("Spark must not start for a header that can be refused at once")

    monkeypatch.setattr("spark_sizing.job.spark_session", refuse)


def size(data: Path, out: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["size", "--input", str(data), "--out", str(out)])
    return result.exit_code, result.output


@pytest.mark.usefixtures("no_spark")
def test_an_empty_file_is_called_empty(tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text("")
    code, output = size(data, tmp_path / "out")
    assert code == 2
    assert f"--input {data}: the file is empty" in output
    assert "Columns found" not in output


@pytest.mark.usefixtures("no_spark")
def test_a_column_named_twice_is_refused_naming_it_and_the_file(tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text(HEADER + ",produce_mb_s\na,2026-01-01,1,1,24,2\n")
    code, output = size(data, tmp_path / "out")
    assert code == 2
    assert f"--input {data}: column 'produce_mb_s' appears twice" in output
    assert "columns 3 and 6" in output


@pytest.mark.usefixtures("no_spark")
def test_names_differing_only_in_case_are_one_column_to_spark(tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text(HEADER + ",Topic\na,2026-01-01,1,1,24,b\n")
    result = runner.invoke(
        app,
        ["size", "--input", str(data), "--out", str(tmp_path / "o"), "--allow-unknown-columns"],
    )
    assert result.exit_code == 2
    assert "'topic' and 'Topic' are columns 1 and 6" in result.output


@pytest.mark.spark
def test_spaces_around_header_names_are_trimmed(spark: SparkSession, tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    spaced = ", ".join(f" {name} " for name in HEADER.split(","))
    data.write_text(spaced + "\na,2026-01-01,1,1,24\n")
    code, output = size(data, tmp_path / "out")
    assert code == 0, output
    report = SizingReport.model_validate_json((tmp_path / "out" / "sizing.json").read_text())
    assert [t.topic for t in report.topics] == ["a"]
    assert report.inputs.rows_accepted == 1
    header = (tmp_path / "out" / "rejected.csv").read_text().splitlines()[0]
    assert header.startswith(HEADER + ",")


@pytest.mark.usefixtures("no_spark")
def test_files_of_one_input_whose_columns_differ_are_refused_naming_both(tmp_path: Path) -> None:
    """Spark skips every file's header and maps columns by position: the second file's swapped
    produce_mb_s and retention_hours would be sized as each other."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.csv").write_text(HEADER + "\na,2026-01-01,1,1,24\n")
    swapped = "topic,period_start,retention_hours,consumer_groups,produce_mb_s"
    (folder / "b.csv").write_text(swapped + "\nb,2026-01-01,24,1,1\n")
    code, output = size(folder, tmp_path / "out")
    assert code == 2, output
    assert f"--input {folder / 'b.csv'}: its columns ({swapped}) differ from" in output
    assert f"{folder / 'a.csv'}'s ({HEADER})" in output


@pytest.mark.spark
def test_files_with_the_same_columns_and_an_empty_one_size_together(
    spark: SparkSession, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.csv").write_text(HEADER + "\na,2026-01-01,1,1,24\n")
    (folder / "b.csv").write_text(" topic ," + HEADER.split(",", 1)[1] + "\nb,2026-01-01,2,1,24\n")
    (folder / "c.csv").write_text("")  # an empty partition's file: no rows, no header
    code, output = size(folder, tmp_path / "out")
    assert code == 0, output
    report = SizingReport.model_validate_json((tmp_path / "out" / "sizing.json").read_text())
    assert sorted(t.topic for t in report.topics) == ["a", "b"]
