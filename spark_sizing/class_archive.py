"""A class-data-sharing archive for the driver JVM, so Spark starts and warms up faster.

Each start of Spark's driver loads, parses and verifies some 20,000 classes. A dynamic CDS archive
(JDK 13+) holds 14,000 of them ready to map, and a sizing run is 4 to 9 s shorter. The archive is
recorded from real sizing runs by `make spark-cds` (`spark_sizing/class_archive_recorder.py`) into
`$KAFKASTACK_CACHE/spark-cds/`, once per Java and set of pyspark jar files (`jar_files`); the
name carries both, so a JDK or pyspark upgrade records a new one rather than loading a stale
one. The JVM checks the archive against its classpath too and, if they differ, starts without
it (the archive is only ever a speed-up).

Sessions the job starts itself get `-XX:SharedArchiveFile` on `spark.driver.extraJavaOptions`
when the archive exists; under spark-submit, or when java options were set another way, the
launcher's choice stands (docs/spark-submit.md shows how to pass the archive there).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import pyspark
from pyspark import SparkContext
from pyspark.sql import SparkSession

from spark_sizing import launch

JAVA_OPTION_KEYS = ("spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions")
# The JVM says when it cannot use an archive; the run is only slower then, so it stays quiet.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def cache_dir(env: Mapping[str, str]) -> Path:
    return launch.cache_root(env) / "spark-cds"


def java_binary(env: Mapping[str, str]) -> Path | None:
    """The java that spark-class runs: JAVA_HOME's, else the first on PATH."""
    if env.get("JAVA_HOME"):
        return Path(env["JAVA_HOME"]) / "bin" / "java"
    found = shutil.which("java", path=env.get("PATH"))
    return Path(found) if found else None


def installation_id(env: Mapping[str, str]) -> str | None:
    """Identifies the JDK (its resolved home and module image) and the pyspark jars."""
    java = java_binary(env)
    if java is None or not java.exists():
        return None
    home = java.resolve().parent.parent
    modules = home / "lib" / "modules"  # the JDK's classes: replaced by every JDK update
    stat = modules.stat() if modules.exists() else java.resolve().stat()
    jars = Path(pyspark.__file__).parent / "jars"
    identity = f"{home}|{stat.st_size}|{stat.st_mtime_ns}|{pyspark.__version__}|{jar_files(jars)}"
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def jar_files(jars: Path) -> str:
    """The jars as the JVM tells them apart when it checks an archive's classpath: a jar at
    another path passes as the same file (the same inode), one at the same path fails once
    rewritten (its size and time). A reinstalled pyspark, even at the same path, has new files;
    a fresh clone's virtualenv installed from uv's cache (`make venv`) has hard links to the
    files every other one has, and shares their archive instead of recording its own."""
    files = sorted(jars.glob("*.jar")) if jars.is_dir() else []
    return ",".join(
        f"{jar.name}:{s.st_dev}:{s.st_ino}:{s.st_size}:{s.st_mtime_ns}"
        for jar in files
        for s in (jar.stat(),)
    )


def archive_path(env: Mapping[str, str]) -> Path | None:
    ident = installation_id(env)
    return cache_dir(env) / f"spark-{pyspark.__version__}-{ident}.jsa" if ident else None


def java_options(env: Mapping[str, str]) -> str | None:
    """The driver's java options that use the archive, or None when there is none to use or the
    launcher decides the java options."""
    archive = archive_path(env)
    if archive is None or not archive.is_file():
        return None
    if launch.launcher_decided(env, flags=("--driver-java-options",), keys=JAVA_OPTION_KEYS):
        return None
    return f"-XX:SharedArchiveFile={archive} {QUIET}"


def with_archive(
    builder: SparkSession.Builder, env: Mapping[str, str] = os.environ
) -> SparkSession.Builder:
    """`builder` with the archive on the driver's java options, when it applies."""
    if SparkContext._jvm is not None:  # the JVM of this process is already running
        return builder
    options = java_options(env)
    return builder.config(JAVA_OPTION_KEYS[0], options) if options else builder
