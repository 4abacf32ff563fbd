"""The parts of the s3a wiring that need no Spark: options from the environment, jars, policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_sizing import s3a
from spark_sizing.sources import MIB, InputError, S3Read, use_s3a


def test_moto_like_http_endpoint_gets_path_style_and_no_tls() -> None:
    env = {"KAFKASTACK_S3_ENDPOINT": "http://127.0.0.1:5000", "AWS_DEFAULT_REGION": "eu-west-1"}
    assert s3a.hadoop_options(env) == {
        "fs.s3a.endpoint": "http://127.0.0.1:5000",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.endpoint.region": "eu-west-1",
    }


def test_https_endpoint_keeps_tls_and_kafkastack_setting_wins() -> None:
    env = {
        "KAFKASTACK_S3_ENDPOINT": "https://minio.internal:9000",
        "AWS_ENDPOINT_URL_S3": "https://ignored.example",
    }
    assert s3a.hadoop_options(env) == {
        "fs.s3a.endpoint": "https://minio.internal:9000",
        "fs.s3a.path.style.access": "true",
    }


def test_aws_endpoint_setting_and_aws_region_first() -> None:
    env = {
        "AWS_ENDPOINT_URL_S3": "https://s3.example",
        "AWS_REGION": "ap-south-1",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    options = s3a.hadoop_options(env)
    assert options["fs.s3a.endpoint"] == "https://s3.example"
    assert options["fs.s3a.endpoint.region"] == "ap-south-1"


def test_plain_aws_sets_nothing_but_the_region() -> None:
    assert s3a.hadoop_options({}) == {}
    assert s3a.hadoop_options({"AWS_DEFAULT_REGION": "us-west-2"}) == {
        "fs.s3a.endpoint.region": "us-west-2"
    }


def test_the_wheel_hadoop_version_is_read_from_its_jar() -> None:
    version = s3a.hadoop_version()
    assert version is not None and version.count(".") == 2


def fetched(cache: Path, version: str, complete: bool = True) -> list[Path]:
    lib = cache / "hadoop-aws" / version / "lib"
    lib.mkdir(parents=True)
    jars = [lib / f"hadoop-aws-{version}.jar", lib / "s3-2.24.6.jar"]
    for jar in jars:
        jar.touch()
    if complete:
        (lib.parent / ".complete").write_text("stamp\n")
    return sorted(jars)


def test_cached_jars_only_after_a_complete_fetch(tmp_path: Path) -> None:
    env = {"KAFKASTACK_CACHE": str(tmp_path)}
    jars = fetched(tmp_path, "3.4.1")
    assert s3a.cached_jars(env, "3.4.1") == jars
    assert s3a.cached_jars(env, "3.4.2") == []
    assert s3a.cached_jars(env, None) == []
    fetched(tmp_path, "9.9.9", complete=False)
    assert s3a.cached_jars(env, "9.9.9") == []


def test_jars_go_on_the_builder_unless_the_launcher_chose_them(tmp_path: Path) -> None:
    jars = [tmp_path / "a.jar", tmp_path / "b.jar"]
    assert s3a.jar_options({}, jars) == {"spark.jars": f"{jars[0]},{jars[1]}"}
    assert s3a.jar_options({}, []) == {}
    for env in (
        {"PYSPARK_GATEWAY_PORT": "40000"},  # under spark-submit
        {"PYSPARK_SUBMIT_ARGS": "--packages org.apache.hadoop:hadoop-aws:3.4.1 pyspark-shell"},
        {"PYSPARK_SUBMIT_ARGS": "--jars=/x.jar pyspark-shell"},
        {"PYSPARK_SUBMIT_ARGS": "--conf spark.jars.packages=g:a:1 pyspark-shell"},
    ):
        assert s3a.jar_options(env, jars) == {}, env
    assert s3a.jar_options({"PYSPARK_SUBMIT_ARGS": "--driver-memory 2g pyspark-shell"}, jars)


def test_spark_defaults_naming_jars_counts_as_a_choice(tmp_path: Path) -> None:
    (tmp_path / "spark-defaults.conf").write_text("# spark.jars x\nspark.driver.memory 2g\n")
    env = {"SPARK_CONF_DIR": str(tmp_path)}
    assert not s3a.launcher_chose_jars(env)
    (tmp_path / "spark-defaults.conf").write_text("spark.jars.packages=g:a:1\n")
    assert s3a.launcher_chose_jars(env)


def test_download_mode_never_asks_for_the_connector() -> None:
    def unexpected() -> bool:
        raise AssertionError("the connector probe ran")

    assert not use_s3a(S3Read("download"), 10**12, unexpected)


def test_auto_uses_s3a_above_the_threshold_when_the_connector_is_loaded() -> None:
    policy = S3Read("auto", threshold_bytes=256 * MIB)
    assert use_s3a(policy, 256 * MIB + 1, lambda: True)
    assert not use_s3a(policy, 256 * MIB, lambda: True)
    assert not use_s3a(policy, 10**12, lambda: False)  # no connector: download instead


def test_forced_s3a_without_the_connector_names_the_fix() -> None:
    assert use_s3a(S3Read("s3a"), 0, lambda: True)
    with pytest.raises(InputError, match="--s3-read s3a") as err:
        use_s3a(S3Read("s3a"), 0, lambda: False)
    assert "make spark-jars" in str(err.value) and "--packages" in str(err.value)
