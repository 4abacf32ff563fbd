"""The sizing job: extract → transform → size → load, with progress for the long stages.

Runs unchanged under `spark-submit --master <url>` (docs/spark-submit.md): the session takes the
master and resources spark-submit gives it and only sets defaults that are unset.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from spark_sizing import s3, s3a, sources, transforms
from spark_sizing.contract import InputStats, SizingReport
from spark_sizing.formulas import SizingParameters, TopicDemand, size_cluster
from spark_sizing.profiles import HardwareProfile
from spark_sizing.report import MonthTotal, html_report, markdown
from spark_sizing.schema import ALL_COLUMNS, CORRUPT_RECORD

SAMPLE_INPUT = Path(__file__).parent / "samples" / "projections.csv"


def spark_session(reads_s3: bool = False) -> SparkSession:
    """The session, with local defaults that spark-submit or spark-defaults.conf may override.

    `reads_s3` adds the cached s3a connector; the jars cost about a second of JVM start, so
    local inputs go without."""
    # The console progress bar would fight rich's progress lines on the same terminal.
    builder = SparkSession.builder.appName("kafkastack-sizing").config(
        "spark.ui.showConsoleProgress", "false"
    )
    if reads_s3:
        # s3a's jars must be named before the JVM starts; spark-submit's --jars/--packages win.
        builder = s3a.with_connector(builder)
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    spark = builder.getOrCreate()
    conf = spark.conf
    if (conf.get("spark.master", "") or "").startswith("local"):
        # Small shuffles on a laptop: 200 partitions of a few rows each cost more than the work.
        conf.set("spark.sql.shuffle.partitions", "8")
    spark.sparkContext.setLogLevel("ERROR")
    return spark


STAGING_CONF = "spark.kafkastack.stagingDir"


class _Staging:
    """Intermediate results written as Parquet and read back.

    The de-duplicated rows feed two aggregations; re-reading compact Parquet costs less than
    recomputing the ranking or persisting rows in Spark's block store (on 10M rows a DISK_ONLY
    persist cost 18 s). Local runs stage under the job's temporary directory; on a cluster, set
    `spark.kafkastack.stagingDir` to a folder every executor reaches (hdfs://, s3a://); each run
    uses its own subfolder and removes it.
    """

    def __init__(self, spark: SparkSession, local_tmp: Path) -> None:
        self._spark = spark
        configured = spark.conf.get(STAGING_CONF, None)
        base = configured.rstrip("/") if configured else (local_tmp / "staging").as_uri()
        self.root = f"{base}/run-{uuid.uuid4().hex}"

    def stage(self, df: DataFrame, name: str) -> DataFrame:
        path = f"{self.root}/{name}"
        df.write.mode("overwrite").parquet(path)
        return self._spark.read.parquet(path)

    def __enter__(self) -> _Staging:
        return self

    def __exit__(self, *_: object) -> None:
        self.remove()

    def remove(self) -> None:
        jvm = self._spark.sparkContext._jvm
        assert jvm is not None
        path = jvm.org.apache.hadoop.fs.Path(self.root)
        hadoop_conf = self._spark.sparkContext._jsc.hadoopConfiguration()
        path.getFileSystem(hadoop_conf).delete(path, True)


@dataclass(frozen=True)
class SizingRun:
    report: SizingReport
    months: list[MonthTotal]
    out: str


class _Stages:
    """Rich progress lines for the long stages; silent when disabled (tests, benchmarks)."""

    def __init__(self, enabled: bool) -> None:
        self._progress = (
            Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            if enabled
            else None
        )

    @contextmanager
    def stage(self, description: str) -> Iterator[None]:
        if self._progress is None:
            yield
            return
        task = self._progress.add_task(description, total=1)
        yield
        self._progress.update(task, completed=1)

    def __enter__(self) -> _Stages:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._progress is not None:
            self._progress.stop()


def run_sizing(
    input_location: str,
    out: str,
    profile: HardwareProfile,
    params: SizingParameters,
    *,
    spark: SparkSession | None = None,
    show_progress: bool = True,
    s3_read: sources.S3Read = sources.DEFAULT_S3_READ,
) -> SizingRun:
    """Size a cluster from projections at `input_location`; write every output to `out`."""
    spark = spark or spark_session(reads_s3=s3.is_s3(input_location))
    with (
        tempfile.TemporaryDirectory(prefix="kafkastack-") as tmp,
        _Staging(spark, Path(tmp)) as staging,
        _Stages(show_progress) as stages,
    ):
        local_out = Path(tmp) / "out" if s3.is_s3(out) else Path(out)
        local_out.mkdir(parents=True, exist_ok=True)
        with stages.stage(f"reading {input_location}"):
            files = sources.resolve(input_location, Path(tmp) / "input", spark, s3_read)
            raw = sources.read(spark, files)
        with stages.stage("validating rows and removing duplicate periods"):
            validated = transforms.validate(raw)
            ranked = transforms.ranked_copies(transforms.accepted_rows(validated))
            kept = staging.stage(transforms.kept_rows(ranked), "kept")
            accepted, duplicate_count = transforms.kept_and_duplicate_counts(kept)
        with stages.stage("writing rejected rows"):
            invalid = transforms.rejected_rows(validated)
            # A counting pass of its own: an Observation on the ranking pass would save it, but
            # its get() waits forever when adaptive execution prunes the observed node (no valid
            # rows at all).
            invalid_count = invalid.count()
            _write_rejected(
                # With nothing invalid, limit(0) writes the empty file without another pass.
                invalid if invalid_count else invalid.limit(0),
                transforms.duplicate_rows(ranked) if duplicate_count else None,
                local_out / "rejected",
            )
        read_count = raw.count()  # Parquet answers from its footers
        if read_count != accepted + duplicate_count + invalid_count:
            raise RuntimeError(
                f"row accounting broke: {read_count} read but {accepted} kept, "
                f"{duplicate_count} duplicates, {invalid_count} invalid; please report this"
            )
        kept = kept.drop(transforms.COPIES)
        if accepted == 0:
            _publish(local_out, out)
            raise sources.InputError(
                f"--input {input_location}: none of {read_count} rows is valid; "
                f"see the reasons in {out.rstrip('/')}/rejected/ and fix the input"
            )
        with stages.stage("projecting demand per topic"):
            ready = transforms.with_defaults(kept, params.peak_factor)
            demand = [
                _topic_demand(row)
                for row in transforms.topic_demand(ready, params.horizon_months).collect()
            ]
            months = [
                MonthTotal(**row.asDict()) for row in transforms.monthly_totals(ready).collect()
            ]
        with stages.stage("sizing the cluster and writing reports"):
            result = size_cluster(sorted(demand, key=lambda d: d.topic), profile, params)
            report = SizingReport(
                generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
                parameters={
                    "input": input_location,
                    "profile": profile.name,
                    **params.model_dump(),
                },
                cluster=result.cluster,
                topics=result.topics,
                inputs=InputStats(
                    rows_read=read_count,
                    rows_accepted=accepted,
                    rows_rejected=invalid_count + duplicate_count,
                    duplicates_dropped=duplicate_count,
                ),
                warnings=result.warnings,
            )
            _write_reports(report, months, profile, local_out)
            _publish(local_out, out)
    return SizingRun(report=report, months=months, out=out)


def _topic_demand(row: object) -> TopicDemand:
    r = row.asDict()  # type: ignore[attr-defined]
    pinned = r["pinned_partitions"]
    return TopicDemand(
        topic=r["topic"],
        peak_ingress_mb_s=float(r["peak_ingress_mb_s"]),
        avg_ingress_mb_s=float(r["avg_ingress_mb_s"]),
        consumer_groups=int(r["consumer_groups"]),
        retention_hours=float(r["retention_hours"]),
        replication_factor=int(r["replication_factor"]),
        min_insync_replicas=int(r["min_insync_replicas"]),
        pinned_partitions=int(pinned) if pinned is not None else None,
        compression_ratio=float(r["compression_ratio"]),
    )


def _write_rejected(invalid: DataFrame, duplicates: DataFrame | None, target: Path) -> None:
    """Invalid rows and duplicates in one CSV with the input's columns and a reason."""
    columns = [c for c in (*ALL_COLUMNS, CORRUPT_RECORD) if c in invalid.columns]
    rows = invalid.select(*columns, transforms.REASON)
    if duplicates is not None:
        as_text = duplicates.select(
            *[
                (
                    F.col(c).cast("string")
                    if c in duplicates.columns
                    else F.lit(None).cast("string")
                ).alias(c)
                for c in columns
            ],
            transforms.REASON,
        )
        rows = rows.unionByName(as_text)
    rows.coalesce(1).write.mode("overwrite").option("header", "true").csv(str(target))


def _write_reports(
    report: SizingReport, months: list[MonthTotal], profile: HardwareProfile, out: Path
) -> None:
    (out / "sizing.json").write_text(
        json.dumps(report.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
    )
    (out / "report.md").write_text(markdown(report), encoding="utf-8")
    (out / "report.html").write_text(
        html_report(report, months, profile.network_mb_s), encoding="utf-8"
    )


def _publish(local_out: Path, out: str) -> None:
    if s3.is_s3(out):
        s3.upload_tree(local_out, out)
    elif Path(out).resolve() != local_out.resolve():
        shutil.copytree(local_out, out, dirs_exist_ok=True)
