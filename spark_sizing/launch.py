"""What whoever starts Spark's driver JVM already decided, so the job adds only what is left.

The job adds settings to a session it starts itself (the s3a jars, the class archive), from the
artifacts the project's scripts cache under `$KAFKASTACK_CACHE`. Under
spark-submit, or when `PYSPARK_SUBMIT_ARGS` or `spark-defaults.conf` name the same settings, the
launcher's choice stands and the job adds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path


def cache_root(env: Mapping[str, str]) -> Path:
    """Where `make` caches heavy artifacts, outside the repo (as the Makefile says)."""
    return Path(env.get("KAFKASTACK_CACHE") or Path.home() / ".cache" / "kafkastack")


def jvm_started_by_spark_submit(env: Mapping[str, str]) -> bool:
    """spark-submit started the JVM before Python ran (it hands over the gateway's port)."""
    return "PYSPARK_GATEWAY_PORT" in env


def launcher_decided(env: Mapping[str, str], flags: Iterable[str], keys: Iterable[str]) -> bool:
    """Whether spark-submit, `PYSPARK_SUBMIT_ARGS` (a flag, or `--conf key=…`) or
    `spark-defaults.conf` already set any of these."""
    if jvm_started_by_spark_submit(env):
        return True
    names = {*flags, *keys}
    for arg in env.get("PYSPARK_SUBMIT_ARGS", "").split():
        if arg.split("=", 1)[0] in names:
            return True
    return bool(spark_defaults_keys(env) & set(keys))


def spark_defaults_keys(env: Mapping[str, str]) -> set[str]:
    """The keys `spark-defaults.conf` sets, in SPARK_CONF_DIR or SPARK_HOME/conf."""
    conf_dir = env.get("SPARK_CONF_DIR") or (
        str(Path(env["SPARK_HOME"]) / "conf") if env.get("SPARK_HOME") else None
    )
    if conf_dir is None:
        return set()
    path = Path(conf_dir) / "spark-defaults.conf"
    if not path.is_file():
        return set()
    # A Java properties file: the key ends at the first blank, '=' or ':'.
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {re.split(r"[\s=:]", line, maxsplit=1)[0] for line in lines if line[:1] not in "#!"}
