"""A class-data-sharing archive for the driver JVM, so Spark starts and warms up faster.

Each start of Spark's driver loads, parses and verifies some 20,000 classes. A dynamic CDS archive
(JDK 13+) holds 14,000 of them ready to map, and a sizing run is 4 to 9 s shorter. The archive is
recorded from real sizing runs by `make spark-cds` (`python -m spark_sizing.class_archive`) into
`$KAFKASTACK_CACHE/spark-cds/`, once per Java and pyspark installation; the name carries both,
so a JDK or pyspark upgrade records a new one rather than loading a stale one. The JVM checks the
archive against its classpath too and, if they differ, starts without it (the archive is only
ever a speed-up).

Sessions the job starts itself get `-XX:SharedArchiveFile` on `spark.driver.extraJavaOptions`
when the archive exists; under spark-submit, or when java options were set another way, the
launcher's choice stands (docs/spark-submit.md shows how to pass the archive there).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
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
    """Identifies the JDK (its resolved home and module image) and the pyspark install."""
    java = java_binary(env)
    if java is None or not java.exists():
        return None
    home = java.resolve().parent.parent
    modules = home / "lib" / "modules"  # the JDK's classes: replaced by every JDK update
    stat = modules.stat() if modules.exists() else java.resolve().stat()
    identity = f"{home}|{stat.st_size}|{stat.st_mtime_ns}|{pyspark.__version__}|{pyspark.__file__}"
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


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


def record(env: Mapping[str, str] = os.environ) -> Path | None:
    """Record the archive from sizing runs over every input format, unless it exists.

    The JVM writes the archive when it exits, so the session runs in a child process that this
    one waits for; the file only takes its final name once complete."""
    archive = archive_path(env)
    if archive is None:
        print("kafkastack: no java found; run scripts/check-java.sh", file=sys.stderr)
        return None
    if archive.is_file():
        return archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    print(f"kafkastack: recording Spark's class archive into {archive.parent}", file=sys.stderr)
    _train(partial)
    if not partial.is_file() or partial.stat().st_size == 0:
        raise RuntimeError(f"the JVM left no class archive at {partial}")
    remove_archives_of_removed_installs(archive.parent)
    archive.with_suffix(".install").write_text(str(Path(pyspark.__file__).parent))
    partial.rename(archive)
    return archive


def remove_archives_of_removed_installs(directory: Path) -> None:
    """Archives are 150+ MB each. One per pyspark install stays while that install exists (two
    checkouts on one machine keep theirs: the JVM only accepts an archive for its own jar paths)."""
    for archive in directory.glob("spark-*.jsa"):
        install = archive.with_suffix(".install")
        if not install.is_file() or not Path(install.read_text().strip()).is_dir():
            archive.unlink()
            install.unlink(missing_ok=True)


def _train(target: Path) -> None:
    """Run the sizing job in a JVM that dumps the classes it loaded to `target` at exit."""
    # Imported here: the job imports this module to start its sessions.
    from spark_sizing import samples
    from spark_sizing.formulas import SizingParameters
    from spark_sizing.job import SAMPLE_INPUT, run_sizing, spark_session
    from spark_sizing.profiles import DEFAULT_PROFILE, load_profile

    spark = spark_session(java_options=f"-XX:ArchiveClassesAtExit={target} {QUIET}")
    with tempfile.TemporaryDirectory(prefix="kafkastack-cds-") as tmp:
        inputs = [str(SAMPLE_INPUT)]
        for file_format in ("parquet", "jsonl"):
            path = Path(tmp) / f"projections.{file_format}"
            samples.write(path, 20, 2, "daily", seed=1, file_format=file_format)
            inputs.append(str(path))
        # A copy of a row and a bad row, so the rejected-rows writer runs too.
        sample = SAMPLE_INPUT.read_text(encoding="utf-8")
        bad = Path(tmp) / "bad.csv"
        bad.write_text(sample + sample.splitlines()[1] + "\nx,not-a-date,1,1,1,1,3,,1\n")
        inputs.append(str(bad))
        for i, location in enumerate(inputs):
            run_sizing(
                location,
                str(Path(tmp) / f"out-{i}"),
                load_profile(DEFAULT_PROFILE),
                SizingParameters(),
                spark=spark,
                show_progress=False,
            )
    spark.stop()
    gateway = SparkContext._gateway
    assert gateway is not None
    # The driver JVM exits when its stdin closes, and writes the archive on the way out.
    gateway.proc.stdin.close()
    gateway.proc.wait(timeout=600)


if __name__ == "__main__":
    record()
