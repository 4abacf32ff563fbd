"""One local SparkSession for the whole test session (UI off, one shuffle partition)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from pyspark.sql import SparkSession

from spark_sizing import class_archive, s3a


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    # The one JVM of the run: s3a's jars (installed by `make test`) must be on it from the start
    # for tests/spark_sizing/test_s3a.py; without them those tests fail naming the fix.
    builder = class_archive.with_archive(
        s3a.with_connector(
            SparkSession.builder.master("local[1]")
            .appName("kafkastack-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.sql.session.timeZone", "UTC")  # as the job's session
        )
    )
    # s3a takes credentials from the JVM's environment, copied when it starts (before any test's
    # s3_env): give it moto's dummy ones, and only it.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def s3_env(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """boto3 (and s3a) pointed at moto's server with dummy credentials; a client for setup."""
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "KAFKASTACK_S3_ENDPOINT": moto_endpoint,
    }.items():
        monkeypatch.setenv(key, value)
    return boto3.client("s3", endpoint_url=moto_endpoint)
