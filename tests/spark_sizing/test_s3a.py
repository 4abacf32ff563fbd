"""`kafkastack size` reading s3:// inputs through Spark's s3a connector, against moto's server.

Each s3a run is compared with the boto3 download of the same objects, and spied on to prove the
driver downloaded nothing: the files handed to Spark are s3a:// URLs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from kafkastack.cli import app
from spark_sizing import s3, sources
from spark_sizing.contract import InputStats, SizingReport
from spark_sizing.job import SAMPLE_INPUT
from spark_sizing.samples import write

pytestmark = [pytest.mark.s3, pytest.mark.spark]

# Same column order as the sample: Spark maps every CSV file's columns by position.
BAD_ROWS = (
    "topic,period_start,produce_mb_s,produce_mb_s_peak,consumer_groups,retention_hours,"
    "replication_factor,partitions,avg_message_bytes\n"
    "late.topic,2027-01-01,1.0,,1,24,3,,512\n"
    ",2027-01-01,1.0,,1,24,3,,512\n"  # empty topic
    "late.topic,2027-01-01,0.5,,1,24,3,,512\n"  # duplicate period, lower throughput
    "other.topic,someday,1.0,,1,24,3,,512\n"  # bad date
)


@dataclass
class Spy:
    """What `run_sizing` handed to Spark, and which objects were downloaded to the driver."""

    reads: list[sources.InputFiles] = field(default_factory=list)
    downloaded: list[s3.S3Object] = field(default_factory=list)

    @property
    def reader(self) -> str:
        assert len(self.reads) == 1
        return self.reads[0].reader


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    seen = Spy()
    read, download = sources.read, s3.download

    def spy_read(spark: SparkSession, files: sources.InputFiles, allow_unknown: bool) -> Any:
        seen.reads.append(files)
        return read(spark, files, allow_unknown)

    def spy_download(objects: list[s3.S3Object], target: Path) -> list[Path]:
        seen.downloaded.extend(objects)
        return download(objects, target)

    monkeypatch.setattr(sources, "read", spy_read)
    monkeypatch.setattr(s3, "download", spy_download)
    return seen


def size(out: Path, *args: str) -> InputStats:
    result = CliRunner().invoke(app, ["size", "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    return SizingReport.model_validate_json((out / "sizing.json").read_text()).inputs


def size_both_ways(url: str, tmp_path: Path, spy: Spy) -> tuple[InputStats, InputStats]:
    """The same prefix sized through s3a and through the boto3 download."""
    through_s3a = size(tmp_path / "s3a", "--input", url, "--s3-read", "s3a")
    assert spy.reader == "s3a" and spy.downloaded == []
    assert all(p.startswith("s3a://") for p in spy.reads[0].paths), spy.reads[0].paths
    spy.reads.clear()
    downloaded = size(tmp_path / "download", "--input", url, "--s3-read", "download")
    assert spy.reader == "download" and spy.downloaded
    return through_s3a, downloaded


def test_csv_prefix_through_s3a_counts_like_the_download(
    spark: SparkSession, s3_env: Any, spy: Spy, tmp_path: Path
) -> None:
    s3_env.create_bucket(Bucket="csv-in")
    s3_env.upload_file(str(SAMPLE_INPUT), "csv-in", "proj/a.csv")
    s3_env.put_object(Bucket="csv-in", Key="proj/b.csv", Body=BAD_ROWS.encode())
    through_s3a, downloaded = size_both_ways("s3://csv-in/proj/", tmp_path, spy)
    assert through_s3a == downloaded
    assert (through_s3a.rows_read, through_s3a.rows_accepted) == (4324, 4321)
    assert (through_s3a.rows_rejected, through_s3a.duplicates_dropped) == (3, 1)


def test_parquet_prefix_through_s3a_counts_like_the_download(
    spark: SparkSession, s3_env: Any, spy: Spy, tmp_path: Path
) -> None:
    s3_env.create_bucket(Bucket="parquet-in")
    rows = 0
    for seed in (1, 2):  # same topics and periods: the second file's rows are duplicates
        local = tmp_path / f"part-{seed}.parquet"
        rows += write(
            local, topics=6, months=2, granularity="daily", seed=seed, file_format="parquet"
        )
        s3_env.upload_file(str(local), "parquet-in", f"proj/part-{seed}.parquet")
    through_s3a, downloaded = size_both_ways("s3://parquet-in/proj/", tmp_path, spy)
    assert through_s3a == downloaded
    assert through_s3a.rows_read == rows
    assert through_s3a.duplicates_dropped == rows // 2 == through_s3a.rows_rejected


def test_auto_reads_through_s3a_only_above_the_threshold(
    spark: SparkSession, s3_env: Any, spy: Spy, tmp_path: Path
) -> None:
    s3_env.create_bucket(Bucket="auto-in")
    s3_env.upload_file(str(SAMPLE_INPUT), "auto-in", "proj/a.csv")  # 0.27 MiB
    url = "s3://auto-in/proj/"
    above = size(tmp_path / "above", "--input", url, "--s3a-threshold-mib", "0.1")
    assert spy.reader == "s3a" and spy.downloaded == []
    spy.reads.clear()
    below = size(tmp_path / "below", "--input", url)  # default threshold: 256 MiB
    assert spy.reader == "download" and len(spy.downloaded) == 1
    assert above == below and above.rows_read == 4320


def test_s3a_without_the_connector_is_one_clear_line(s3_env: Any, tmp_path: Path) -> None:
    """A fresh process whose cache has no jars: its JVM starts without s3a."""
    s3_env.create_bucket(Bucket="no-connector")
    s3_env.upload_file(str(SAMPLE_INPUT), "no-connector", "proj/a.csv")
    env = {**os.environ, "KAFKASTACK_CACHE": str(tmp_path / "empty-cache")}
    args = [
        "--input",
        "s3://no-connector/proj/",
        "--out",
        str(tmp_path / "out"),
        "--s3-read",
        "s3a",
    ]
    result = subprocess.run(
        [sys.executable, "-m", "spark_sizing", "size", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("kafkastack:")]
    assert len(lines) == 1, result.stderr
    assert "--s3-read s3a" in lines[0] and "s3a connector" in lines[0]
    assert "make spark-jars" in lines[0] and "--packages org.apache.hadoop:hadoop-aws:" in lines[0]


def test_csv_header_is_read_by_byte_ranges(s3_env: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    s3_env.create_bucket(Bucket="headers")
    monkeypatch.setattr(s3, "_HEADER_RANGE", 4)  # a header spanning several ranges
    for key, body, line in (
        ("crlf.csv", b"topic,period_start\r\nx,2026-01-01\r\n", "topic,period_start"),
        ("no-newline.csv", b"topic,period_start", "topic,period_start"),
        ("empty.csv", b"", ""),
    ):
        s3_env.put_object(Bucket="headers", Key=key, Body=body)
        assert s3.first_line(s3.S3Object("headers", key, len(body))) == line
