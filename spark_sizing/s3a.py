"""Spark's s3a connector: the cached jars, the hook that puts them on the classpath, its options.

Large `s3://` inputs are read by Spark straight from S3 (as `s3a://` paths) instead of being
downloaded to the driver first. s3a is `hadoop-aws` at exactly the Hadoop version of the pyspark
wheel plus the AWS SDK modules it calls; `scripts/spark/fetch.sh` caches them under
`$KAFKASTACK_CACHE/hadoop-aws/<version>/`. Jars only reach the driver's classloader when they are
named before the JVM starts, so the hook works on a `SparkSession.Builder`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pyspark
from pyspark import SparkContext
from pyspark.sql import SparkSession

from spark_sizing import launch, s3

JAR_KEYS = ("spark.jars", "spark.jars.packages")
# Both must load: hadoop-aws alone fails later, when the first S3 client is built.
CONNECTOR_CLASSES = (
    "org.apache.hadoop.fs.s3a.S3AFileSystem",
    "software.amazon.awssdk.services.s3.S3Client",
)


def hadoop_version() -> str | None:
    """The Hadoop in the pyspark wheel, from its hadoop-client-api jar (None outside a wheel)."""
    api = sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))
    return api[0].stem.removeprefix("hadoop-client-api-") if api else None


def cache_dir(env: Mapping[str, str]) -> Path:
    return launch.cache_root(env) / "hadoop-aws"


def cached_jars(env: Mapping[str, str], version: str | None) -> list[Path]:
    """The jars fetch.sh left for `version`; none until a fetch completed (.complete comes last)."""
    if version is None:
        return []
    home = cache_dir(env) / version
    if not (home / ".complete").is_file():
        return []
    return sorted((home / "lib").glob("*.jar"))


def launcher_chose_jars(env: Mapping[str, str]) -> bool:
    """Whether whoever starts the JVM already picked its extra jars.

    Ours would then be a second opinion: `spark.jars` replaces theirs, and a second hadoop-aws
    next to one from `--packages` can load mismatched classes.
    """
    return launch.launcher_decided(env, flags=("--jars", "--packages"), keys=JAR_KEYS)


def jar_options(env: Mapping[str, str], jars: list[Path]) -> dict[str, str]:
    """The builder settings that add `jars`, or none when the launcher decides the classpath."""
    if not jars or launcher_chose_jars(env):
        return {}
    return {"spark.jars": ",".join(str(jar) for jar in jars)}


def with_connector(
    builder: SparkSession.Builder, env: Mapping[str, str] = os.environ
) -> SparkSession.Builder:
    """`builder` with the cached s3a jars, when they exist and nothing else chose the jars."""
    if SparkContext._jvm is not None:  # a session in this process already fixed the classpath
        return builder
    for key, value in jar_options(env, cached_jars(env, hadoop_version())).items():
        builder = builder.config(key, value)
    return builder


def connector_loaded(spark: SparkSession) -> bool:
    """Whether this session's Hadoop can load s3a and the SDK it calls (however they got there)."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return all(conf.getClassByNameOrNull(name) is not None for name in CONNECTOR_CLASSES)


def missing_fix() -> str:
    """What to run when the connector is not loaded, for error messages."""
    version = hadoop_version() or "<the Hadoop version of your Spark>"
    return (
        "run `make spark-jars` (or scripts/spark/fetch.sh) before Spark starts, "
        f"or under spark-submit pass --packages org.apache.hadoop:hadoop-aws:{version}"
    )


def hadoop_options(env: Mapping[str, str]) -> dict[str, str]:
    """s3a settings from the environment boto3 reads, so both sides reach the same store.

    Credentials are left to s3a's default chain, which reads AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, then instance or container credentials.
    """
    options: dict[str, str] = {}
    endpoint = s3.endpoint(env)
    if endpoint:
        options["fs.s3a.endpoint"] = endpoint
        # S3-compatible stores (MinIO, Ceph, moto) rarely resolve bucket.host names; AWS
        # accepts path-style requests too.
        options["fs.s3a.path.style.access"] = "true"
        if endpoint.startswith("http://"):
            options["fs.s3a.connection.ssl.enabled"] = "false"
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        options["fs.s3a.endpoint.region"] = region
    return options


def configure(spark: SparkSession, env: Mapping[str, str] = os.environ) -> None:
    """Apply `hadoop_options` to the running session.

    Set at read time rather than on the builder: the endpoint may change after the session
    started (the tests' moto server does), and Spark hands this configuration to every task.
    """
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in hadoop_options(env).items():
        conf.set(key, value)
