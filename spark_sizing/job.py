"""The sizing job: extract → transform → size → load, with progress for the long stages.

Runs unchanged under `spark-submit --master <url>` (docs/spark-submit.md): the session takes the
master and resources spark-submit gives it and only sets defaults that are unset.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from spark_sizing import s3, sources, transforms
from spark_sizing.contract import InputStats, SizingReport
from spark_sizing.formulas import SizingParameters, TopicDemand, size_cluster
from spark_sizing.profiles import HardwareProfile
from spark_sizing.report import MonthTotal, html_report, markdown
from spark_sizing.schema import ALL_COLUMNS, CORRUPT_RECORD

SAMPLE_INPUT = Path(__file__).parent / "samples" / "projections.csv"


def spark_session() -> SparkSession:
    """The session, with local defaults that spark-submit or spark-defaults.conf may override."""
    # The console progress bar would fight rich's progress lines on the same terminal.
    builder = SparkSession.builder.appName("kafkastack-sizing").config(
        "spark.ui.showConsoleProgress", "false"
    )
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
) -> SizingRun:
    """Size a cluster from projections at `input_location`; write every output to `out`."""
    spark = spark or spark_session()
    with (
        tempfile.TemporaryDirectory(prefix="kafkastack-") as tmp,
        _Stages(show_progress) as stages,
    ):
        local_out = Path(tmp) / "out" if s3.is_s3(out) else Path(out)
        local_out.mkdir(parents=True, exist_ok=True)
        with stages.stage(f"reading {input_location}"):
            files = sources.resolve(input_location, Path(tmp) / "input")
            raw = sources.read(spark, files)
        with stages.stage("validating rows"):
            # Several passes read the validated rows; DISK_ONLY keeps them serialized off the heap
            # (unrolling wide rows into memory is what runs a 1 GB default driver out of heap).
            validated = transforms.validate(raw).persist(StorageLevel.DISK_ONLY)
            read_count, invalid_count = _counts(validated)
        with stages.stage("removing duplicate periods"):
            good_rows = transforms.accepted_rows(validated)
            grouped = transforms.one_row_per_key(good_rows).persist(StorageLevel.DISK_ONLY)
            duplicate_count = transforms.duplicate_count(grouped)
            kept = transforms.kept_rows(grouped, good_rows.columns)
        with stages.stage("writing rejected rows"):
            duplicates = transforms.duplicate_rows(good_rows, grouped) if duplicate_count else None
            _write_rejected(transforms.rejected_rows(validated), duplicates, local_out / "rejected")
        accepted = read_count - invalid_count - duplicate_count
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
        validated.unpersist()
        grouped.unpersist()
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


def _counts(validated: DataFrame) -> tuple[int, int]:
    """Rows read and rows invalid, in one pass over the data."""
    row = validated.agg(
        F.count(F.lit(1)).alias("read"),
        F.count(F.col(transforms.REASON)).alias("invalid"),
    ).first()
    assert row is not None
    return int(row["read"]), int(row["invalid"])


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
