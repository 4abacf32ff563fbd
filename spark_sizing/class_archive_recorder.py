"""Records the driver JVM's class archive (`make spark-cds`) from real sizing runs.

Apart from `class_archive`, which the job imports to start its sessions: recording runs the job.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pyspark
from pyspark import SparkContext

from spark_sizing import samples
from spark_sizing.class_archive import QUIET, archive_path
from spark_sizing.formulas import SizingParameters
from spark_sizing.job import SAMPLE_INPUT, run_sizing
from spark_sizing.profiles import DEFAULT_PROFILE, load_profile
from spark_sizing.session import spark_session


def record(env: Mapping[str, str] = os.environ) -> Path | None:
    """Record the archive from sizing runs over every input format, unless it exists.

    The JVM writes the archive when it exits, so the session runs in a child process that this
    one waits for; the file only takes its final name once complete. Checkouts with the same
    jar files share the archive, so two of them recording at once take turns (a lock file)."""
    archive = archive_path(env)
    if archive is None:
        print("kafkastack: no java found; run scripts/check-java.sh", file=sys.stderr)
        return None
    archive.parent.mkdir(parents=True, exist_ok=True)
    with open(archive.parent / ".record.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not archive.is_file():
            _record(archive, env)
        remember_install(archive)
    return archive


def _record(archive: Path, env: Mapping[str, str]) -> None:
    partial = archive.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    home = archive.with_suffix(".home")
    print(f"kafkastack: recording Spark's class archive into {archive.parent}", file=sys.stderr)
    try:
        _train(partial, linked_spark_home(home) if uses_pyspark_home(env) else None)
        if not partial.is_file() or partial.stat().st_size == 0:
            raise RuntimeError(f"the JVM left no class archive at {partial}")
    except BaseException:
        shutil.rmtree(home, ignore_errors=True)
        raise
    remove_archives_of_removed_installs(archive.parent)
    partial.rename(archive)


def remember_install(archive: Path) -> None:
    """This install uses the archive: it stays while this or another listed install exists."""
    listed = archive.with_suffix(".install")
    here = str(Path(pyspark.__file__).parent)
    known = listed.read_text().split("\n") if listed.is_file() else []
    living = [line for line in known if line and line != here and Path(line).is_dir()]
    listed.write_text("\n".join([*living, here]) + "\n")


def remove_archives_of_removed_installs(directory: Path) -> None:
    """Archives are 150+ MB each. One per set of jar files stays while an install that recorded
    or asked for it exists (two checkouts with jars of their own keep theirs: the JVM only
    accepts an archive for its own jar files)."""
    for archive in directory.glob("spark-*.jsa"):
        listed = archive.with_suffix(".install")
        installs = listed.read_text().split() if listed.is_file() else []
        if not any(Path(line).is_dir() for line in installs):
            archive.unlink()
            listed.unlink(missing_ok=True)
            shutil.rmtree(archive.with_suffix(".home"), ignore_errors=True)


def uses_pyspark_home(env: Mapping[str, str]) -> bool:
    """Whether Spark runs from pyspark's own folder: a SPARK_HOME set elsewhere (another Spark
    distribution) is what the job's runs use, so the recording uses it too."""
    chosen = env.get("SPARK_HOME")
    return not chosen or Path(chosen).resolve() == Path(pyspark.__file__).parent.resolve()


def linked_spark_home(home: Path) -> Path | None:
    """A Spark home of hard links to this install's launch scripts and jars, beside the archive,
    for the recording to run from. The archive holds the paths of the jars it was recorded
    with, and the JVM takes a jar at another path only while the recorded one still exists and
    is the same file: recorded from a checkout's own `.venv`, it would stop serving every other
    checkout once that one is deleted (a CI clone is). None where the cache cannot hold hard
    links to the install (another filesystem): the recording then runs from the install.
    `copytree` makes the links in the order the install's folder lists its jars, which ext4,
    XFS and btrfs keep, so the wildcard `jars/*` expands to the same classpath in both
    (tmpfs before Linux 6.6 lists in reverse: the JVM then starts without the archive)."""
    source = Path(pyspark.__file__).parent
    shutil.rmtree(home, ignore_errors=True)
    try:
        for folder in ("bin", "jars"):
            shutil.copytree(source / folder, home / folder, copy_function=os.link)
    except OSError:
        shutil.rmtree(home, ignore_errors=True)
        return None
    return home


def _train(target: Path, spark_home: Path | None) -> None:
    """Run the sizing job in a JVM that dumps the classes it loaded to `target` at exit,
    launched from `spark_home` when given."""
    if spark_home is not None:
        os.environ["SPARK_HOME"] = str(spark_home)  # this process only records
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
