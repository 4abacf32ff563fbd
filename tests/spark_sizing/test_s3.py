"""S3 input and output through boto3 against moto's server on 127.0.0.1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from kafkastack.cli import app
from spark_sizing.job import SAMPLE_INPUT

pytestmark = [pytest.mark.s3, pytest.mark.spark]


def test_sizes_from_s3_and_writes_back_to_s3(spark: SparkSession, s3_env: object) -> None:
    s3 = s3_env
    s3.create_bucket(Bucket="projections")  # type: ignore[attr-defined]
    s3.upload_file(str(SAMPLE_INPUT), "projections", "2026/q1/projections.csv")  # type: ignore[attr-defined]
    result = CliRunner().invoke(
        app, ["size", "--input", "s3://projections/2026/", "--out", "s3://projections/sizing/run1"]
    )
    assert result.exit_code == 0, result.output
    keys = {
        o["Key"]
        for o in s3.list_objects_v2(Bucket="projections", Prefix="sizing/run1/")["Contents"]  # type: ignore[attr-defined]
    }
    assert {"sizing/run1/sizing.json", "sizing/run1/report.md", "sizing/run1/report.html"} <= keys
    assert "sizing/run1/rejected.csv" in keys
    body = s3.get_object(Bucket="projections", Key="sizing/run1/sizing.json")["Body"].read()  # type: ignore[attr-defined]
    assert json.loads(body)["inputs"]["rows_read"] == 4320


def test_missing_bucket_is_a_clear_error(
    spark: SparkSession, s3_env: object, tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        app, ["size", "--input", "s3://no-such-bucket/x/", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 2
    assert "no-such-bucket" in result.output and "does not exist" in result.output


def test_empty_prefix_is_a_clear_error(spark: SparkSession, s3_env: object, tmp_path: Path) -> None:
    s3_env.create_bucket(Bucket="empty")  # type: ignore[attr-defined]
    out = str(tmp_path / "out")
    result = CliRunner().invoke(app, ["size", "--input", "s3://empty/none/", "--out", out])
    assert result.exit_code == 2 and "no objects under this prefix" in result.output
    assert os.environ["KAFKASTACK_S3_ENDPOINT"].startswith("http://127.0.0.1:")
