"""`kafkastack size` end to end: the sample data, every bad-input case, and S3 (moto server)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from kafkastack.cli import app
from spark_sizing.contract import SizingReport
from spark_sizing.job import SAMPLE_INPUT

runner = CliRunner()
HEADER = "topic,period_start,produce_mb_s,consumer_groups,retention_hours\n"


def size(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["size", *args])
    return result.exit_code, result.output


def rejected_rows(out: Path) -> list[dict[str, str]]:
    with (out / "rejected.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.spark
def test_sample_data_end_to_end(spark: SparkSession, tmp_path: Path) -> None:
    code, output = size("--input", str(SAMPLE_INPUT), "--out", str(tmp_path))
    assert code == 0, output
    report = SizingReport.model_validate_json((tmp_path / "sizing.json").read_text())
    c = report.cluster
    assert c.brokers >= 3 and c.brokers % 3 == 0
    assert c.constraints[c.binding_constraint] == max(c.constraints.values())
    assert report.inputs.rows_read == 4320 == report.inputs.rows_accepted
    assert len(report.topics) == 24
    md = (tmp_path / "report.md").read_text()
    assert f"{c.brokers} brokers" in md and "Binding constraint" in md
    html = (tmp_path / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 4 and "<script" not in html
    assert rejected_rows(tmp_path) == []


@pytest.mark.spark
def test_bad_rows_are_quarantined_and_counted(spark: SparkSession, tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text(
        HEADER
        + "a,2026-01-01,1.0,1,24\n"
        + ",2026-01-01,1.0,1,24\n"  # empty topic
        + "b,yesterday,1.0,1,24\n"  # bad date
        + "c,2026-01-01,-2,1,24\n"  # negative
        + "d,2026-01-01,NaN,1,24\n"
        + "e,2026-01-01,1.0,1,0\n"  # retention 0
        + "a,2026-01-01,0.5,1,24\n"  # duplicate of the first row, lower throughput
        + "f,2026-01-01,1.0,1,24,extra,columns\n"  # malformed line
    )
    out = tmp_path / "out"
    code, output = size("--input", str(data), "--out", str(out))
    assert code == 0, output
    report = SizingReport.model_validate_json((out / "sizing.json").read_text())
    i = report.inputs
    assert (i.rows_read, i.rows_accepted, i.rows_rejected, i.duplicates_dropped) == (8, 1, 7, 1)
    assert i.rows_read == i.rows_accepted + i.rows_rejected
    reasons = sorted(r["reason"] for r in rejected_rows(out))
    assert reasons == sorted(
        [
            "topic: missing or empty",
            "period_start: not a date or timestamp: 'yesterday'",
            "produce_mb_s: must be ≥ 0, got -2",
            "produce_mb_s: not a number: 'NaN'",
            "retention_hours: must be > 0, got 0",
            "duplicate (topic, period_start): kept the row with the highest produce_mb_s",
            "7 fields where the header has 5: f,2026-01-01,1.0,1,24,extra,columns",
        ]
    )


@pytest.mark.spark
def test_rejected_rows_are_one_file_written_as_read(spark: SparkSession, tmp_path: Path) -> None:
    # Every column of the contract's sample: with this many, planning the duplicates' pass
    # once exhausted the driver's heap.
    header = SAMPLE_INPUT.read_text().splitlines()[0]
    data = tmp_path / "in.csv"
    data.write_text(
        header
        + "\na,2026-01-01,10,,1,24,3,,512\n"
        + "a,2026-01-01,7,,1,24,3,,512\n"  # a lower copy: quarantined with its own text
        + "b,2026-01-01,fast,,1,24,3,,512\n"
        + "c,2026-01-01,1,1\n"  # fields short
    )
    out = tmp_path / "out"
    code, output = size("--input", str(data), "--out", str(out))
    assert code == 0, output
    assert sorted(p.name for p in out.iterdir()) == [
        "rejected.csv",
        "report.html",
        "report.md",
        "sizing.json",
    ]
    lines = (out / "rejected.csv").read_text().splitlines()
    assert lines[0] == header + ",reason,source_file,line"
    # Each row names the file and line it was read from (the header is line 1).
    assert sorted(lines[1:]) == [
        'a,2026-01-01,7,,1,24,3,,512,"duplicate (topic, period_start): kept the row with the '
        f'highest produce_mb_s",{data},3',
        f"b,2026-01-01,fast,,1,24,3,,512,produce_mb_s: not a number: 'fast',{data},4",
        f'c,2026-01-01,1,1,,,,,,"4 fields where the header has 9: c,2026-01-01,1,1",{data},5',
    ]
    assert "_corrupt_record" not in (out / "rejected.csv").read_text()


@pytest.mark.spark
def test_a_line_with_extra_fields_is_quarantined_even_beside_an_unread_column(
    spark: SparkSession, tmp_path: Path
) -> None:
    # An allowed unknown column is never read, and Spark then skipped the field-count check.
    data = tmp_path / "in.csv"
    data.write_text(
        HEADER.strip()
        + ",owner\n"
        + "a,2026-01-01,10,1,24,team-a\n"
        + "b,2026-01-01,10,1,24,team-b,surplus\n"
    )
    out = tmp_path / "out"
    code, output = size("--input", str(data), "--out", str(out), "--allow-unknown-columns")
    assert code == 0, output
    report = SizingReport.model_validate_json((out / "sizing.json").read_text())
    assert (report.inputs.rows_accepted, report.inputs.rows_rejected) == (1, 1)
    assert [r["reason"] for r in rejected_rows(out)] == [
        "7 fields where the header has 6: b,2026-01-01,10,1,24,team-b,surplus"
    ]


def test_misspelt_column_is_refused_before_spark_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_spark(**_: object) -> None:
        raise AssertionError("Spark must not start for a header that can be refused at once")

    monkeypatch.setattr("spark_sizing.job.spark_session", no_spark)
    data = tmp_path / "in.csv"
    data.write_text(HEADER.strip() + ",replication_factr\na,2026-01-01,10,1,24,2\n")
    code, output = size("--input", str(data), "--out", str(tmp_path / "out"))
    assert code == 2
    assert "unknown column 'replication_factr' (did you mean 'replication_factor'?)" in output
    assert "--allow-unknown-columns" in output


@pytest.mark.spark
def test_unknown_json_key_is_refused_unless_allowed(spark: SparkSession, tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text(
        '{"topic": "a", "period_start": "2026-01-01", "produce_mb_s": 1, "consumer_groups": 1,'
        ' "retention_hours": 24, "min_insync_replica": 1}\n'
    )
    code, output = size("--input", str(data), "--out", str(tmp_path / "out"))
    assert code == 2
    assert "unknown column 'min_insync_replica' (did you mean 'min_insync_replicas'?)" in output
    code, output = size(
        "--input", str(data), "--out", str(tmp_path / "out"), "--allow-unknown-columns"
    )
    assert code == 0, output


@pytest.mark.spark
def test_missing_required_column_names_it(spark: SparkSession, tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text("topic,period_start,produce_mb_s,consumer_groups\na,2026-01-01,1,1\n")
    code, output = size("--input", str(data), "--out", str(tmp_path / "out"))
    assert code == 2
    assert "missing required column(s) retention_hours" in output


def test_missing_path_names_it(tmp_path: Path) -> None:
    code, output = size("--input", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o"))
    assert code == 2
    assert "nope.csv: no such file" in output


def test_unknown_profile_is_refused(tmp_path: Path) -> None:
    code, output = size("--input", str(SAMPLE_INPUT), "--out", str(tmp_path), "--profile", "x9")
    assert code == 2 and "--profile 'x9'" in output


def test_bad_parameter_names_the_option(tmp_path: Path) -> None:
    code, output = size("--input", str(SAMPLE_INPUT), "--out", str(tmp_path), "--zones", "0")
    assert code == 2 and "--zones" in output


@pytest.mark.spark
def test_zero_accepted_rows_fails_but_keeps_the_rejects(
    spark: SparkSession, tmp_path: Path
) -> None:
    data = tmp_path / "in.csv"
    data.write_text(HEADER + "a,2026-01-01,bad,1,24\n")
    out = tmp_path / "out"
    code, output = size("--input", str(data), "--out", str(out))
    assert code == 2 and "none of 1 rows is valid" in output
    assert [r["reason"] for r in rejected_rows(out)] == ["produce_mb_s: not a number: 'bad'"]


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_other_formats_and_directories(spark: SparkSession, tmp_path: Path, fmt: str) -> None:
    data = tmp_path / "in" / f"part.{fmt}"
    code, output = (
        runner.invoke(
            app,
            [
                "sample-projections",
                "--out",
                str(data),
                "--topics",
                "4",
                "--months",
                "2",
                "--format",
                fmt,
            ],
        ).exit_code,
        "",
    )
    assert code == 0
    code, output = size("--input", str(data.parent), "--out", str(tmp_path / "out"))
    assert code == 0, output
    report = SizingReport.model_validate_json((tmp_path / "out" / "sizing.json").read_text())
    assert len(report.topics) == 4 and report.inputs.rows_rejected == 0


@pytest.mark.spark
def test_parquet_with_text_periods_is_checked_like_csv(spark: SparkSession, tmp_path: Path) -> None:
    data = tmp_path / "in.parquet"
    pd.DataFrame(
        {
            "topic": ["a", "a", "b"],
            "period_start": ["2026-01-01", "2026-02-01T06:00:00", "first of May"],
            "produce_mb_s": [1.0, 2.0, 3.0],
            "consumer_groups": [1, 1, 1],
            "retention_hours": [24.0, 24.0, 24.0],
        }
    ).to_parquet(data)
    code, output = size("--input", str(data), "--out", str(tmp_path / "out"))
    assert code == 0, output
    report = SizingReport.model_validate_json((tmp_path / "out" / "sizing.json").read_text())
    assert [t.topic for t in report.topics] == ["a"]
    assert (report.inputs.rows_read, report.inputs.rows_rejected) == (3, 1)
    assert [r["reason"] for r in rejected_rows(tmp_path / "out")] == [
        "period_start: not a date or timestamp: 'first of May'"
    ]


def test_input_schema_document_matches_the_code(repo_root: Path) -> None:
    from spark_sizing.schema import json_schema

    assert json.loads((repo_root / "docs" / "input-schema.json").read_text()) == json_schema()


@pytest.mark.spark
def test_warnings_reach_the_console_too(spark: SparkSession, tmp_path: Path) -> None:
    # Two zones cannot keep RF 3 / min ISR 2 writing through a zone loss: said on the console.
    code, output = size("--input", str(SAMPLE_INPUT), "--out", str(tmp_path), "--zones", "2")
    assert code == 0, output
    # The 22 topics at RF 3 stop; the 2 at RF 2 (min ISR 1) keep one replica and go on.
    assert "zone loss: acks=all writes stop for 22 of 24 topics" in output
    report = SizingReport.model_validate_json((tmp_path / "sizing.json").read_text())
    assert report.zone_loss is not None and not report.zone_loss.writes_survive
    assert "Zone loss: **not survived**" in (tmp_path / "report.md").read_text()


def test_bad_partition_multiple_names_the_option(tmp_path: Path) -> None:
    code, output = size(
        "--input", str(SAMPLE_INPUT), "--out", str(tmp_path), "--partition-multiple", "nodes"
    )
    assert code == 2 and "--partition-multiple 'nodes'" in output


@pytest.mark.spark
def test_rows_that_once_crashed_the_job_are_rejected_with_their_rule(
    spark: SparkSession, tmp_path: Path
) -> None:
    # 1e308 overflowed the partition count; year 9999 crashed the charts after sizing.json was
    # written; a name Kafka refuses was sized as a topic.
    data = tmp_path / "in.csv"
    data.write_text(
        HEADER
        + "a,2026-01-01,1.0,1,24\n"
        + "b,2026-01-01,1e308,1,24\n"
        + "c,9999-01-01,1.0,1,24\n"
        + "bad topic!,2026-01-01,1.0,1,24\n"
    )
    out = tmp_path / "out"
    code, output = size("--input", str(data), "--out", str(out))
    assert code == 0, output
    assert "rows read 4, accepted 1, rejected 3" in output
    assert sorted(r["reason"].split(":")[0] for r in rejected_rows(out)) == [
        "period_start",
        "produce_mb_s",
        "topic",
    ]


@pytest.mark.spark
def test_rejected_rows_leave_the_exit_code_at_zero_and_say_so(
    spark: SparkSession, tmp_path: Path
) -> None:
    data = tmp_path / "in.csv"
    data.write_text(HEADER + "a,2026-01-01,1.0,1,24\nb,2026-01-01,fast,1,24\n")
    out = tmp_path / "out"
    code, output = size("--input", str(data), "--out", str(out))
    assert code == 0, output
    assert (
        f"warning: 1 of 2 rows rejected and left out of the sizing; the reasons are in "
        f"{out}/rejected.csv" in output
    )
