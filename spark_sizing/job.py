"""The sizing job: extract → transform → size → load, with progress for the long stages.

Runs unchanged under `spark-submit --master <url>` (docs/spark-submit.md): the session takes the
master and resources spark-submit gives it and only sets defaults that are unset.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from spark_sizing import class_archive, s3, s3a, sources, transforms, validation
from spark_sizing.contract import InputStats, SizingReport
from spark_sizing.formulas import SizingParameters, TopicDemand, size_cluster
from spark_sizing.profiles import HardwareProfile
from spark_sizing.report import MonthTotal, html_report, markdown

SAMPLE_INPUT = Path(__file__).parent / "samples" / "projections.csv"


# The job's one big shuffle (rows grouped by topic) is sized by adaptive execution: partitions of
# about 16 MB keep each sort in memory under the default 1 GB driver (8 fixed partitions spilled
# 1 GB at 50M rows), and small inputs coalesce to a few partitions.
SESSION_DEFAULTS = {
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "16m",
    # The per-(topic, month) pieces are persisted, and Spark plans a cached query with
    # adaptive coalescing off unless this is set: 200 tiny tasks instead of a few dozen.
    "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
    # Input splits of 32 MB rather than 128: a 430 MB file makes 14 tasks that two cores share
    # evenly, where 4 left one core idle for a quarter of the scan.
    "spark.sql.files.maxPartitionBytes": "32m",
    # Periods without a zone, and calendar months, are UTC whatever the machine's zone.
    "spark.sql.session.timeZone": "UTC",
}


def spark_session(reads_s3: bool = False, java_options: str | None = None) -> SparkSession:
    """The session, with local defaults that spark-submit or spark-defaults.conf may override.

    `reads_s3` adds the cached s3a connector; the jars cost about a second of JVM start, so
    local inputs go without. A JVM started here uses the class archive when there is one
    (class_archive.py), or `java_options` instead when given."""
    # The console progress bar would fight rich's progress lines on the same terminal.
    builder = SparkSession.builder.appName("kafkastack-sizing").config(
        "spark.ui.showConsoleProgress", "false"
    )
    if reads_s3:
        # s3a's jars must be named before the JVM starts; spark-submit's --jars/--packages win.
        builder = s3a.with_connector(builder)
    if java_options is not None:
        builder = builder.config(class_archive.JAVA_OPTION_KEYS[0], java_options)
    else:
        builder = class_archive.with_archive(builder)
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    spark = builder.getOrCreate()
    submitted = spark.sparkContext.getConf()
    for key, value in SESSION_DEFAULTS.items():
        if not submitted.contains(key):
            spark.conf.set(key, value)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


EXCLUDED_AQE_RULES = "spark.sql.adaptive.optimizer.excludedRules"
PROPAGATE_EMPTY = "org.apache.spark.sql.execution.adaptive.AQEPropagateEmptyRelation"


@contextmanager
def _observed_plan_kept_whole(spark: SparkSession) -> Iterator[None]:
    """Keeps adaptive execution from pruning an observed plan around an empty stage.

    SPARK-54620 (open in Spark 4.0): when no row passes validation, the empty shuffle lets
    adaptive execution replace the plan above and below it, metrics node included, and
    Observation.get then waits forever. Only the counted action runs with the rule off."""
    before = spark.conf.get(EXCLUDED_AQE_RULES, None)
    spark.conf.set(EXCLUDED_AQE_RULES, ",".join(r for r in (before, PROPAGATE_EMPTY) if r))
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(EXCLUDED_AQE_RULES)
        else:
            spark.conf.set(EXCLUDED_AQE_RULES, before)


OBSERVATION_WAIT_S = 60.0


def _observed_counts(observation: Observation, *names: str) -> tuple[int, ...]:
    """The observed counts, or a clear error if Spark never reports them.

    Metrics reach the driver through the listener bus shortly after the action; Observation.get
    would wait forever if they never come, so the wait has a deadline."""
    future = observation._jo.future() if observation._jo is not None else None
    deadline = time.monotonic() + OBSERVATION_WAIT_S
    while future is not None and not future.isCompleted():
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"Spark did not report the row counts within {OBSERVATION_WAIT_S:.0f} s after "
                "the aggregation finished; please report this with the Spark version"
            )
        time.sleep(0.05)
    metrics = observation.get
    return tuple(int(metrics[name]) for name in names)


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
    if not s3.is_s3(input_location):
        sources.local_input(input_location)  # a wrong path is reported before a JVM starts
    spark = spark or spark_session(reads_s3=s3.is_s3(input_location))
    with (
        tempfile.TemporaryDirectory(prefix="kafkastack-") as tmp,
        _Stages(show_progress) as stages,
    ):
        local_out = Path(tmp) / "out" if s3.is_s3(out) else Path(out)
        local_out.mkdir(parents=True, exist_ok=True)
        with stages.stage(f"reading {input_location}"):
            files = sources.resolve(input_location, Path(tmp) / "input", spark, s3_read)
            raw = sources.read(spark, files)
        with stages.stage("validating rows, marking duplicate periods, aggregating per month"):
            validated = validation.validate(raw)
            # Rows read and rows invalid are counted in the same scan that feeds the aggregation.
            counted = Observation("rows")
            observed = validated.observe(
                counted,
                F.count(F.lit(1)).alias("read"),
                F.count(F.col(validation.REASON)).alias("invalid"),
            )
            # The cached plan takes the session's settings when it is defined, so the rule is
            # off from persist() on.
            with _observed_plan_kept_whole(spark):
                modelled = transforms.model_rows(validation.accepted_rows(observed))
                pieces = (
                    transforms.topic_month_pieces(
                        transforms.with_defaults(
                            transforms.mark_duplicates(modelled), params.peak_factor
                        )
                    )
                    # A task per core for the small jobs that read the cached pieces: as many
                    # partitions as the big shuffle made them a few hundred tasks each.
                    .coalesce(spark.sparkContext.defaultParallelism)
                    .persist()
                )
                accepted, duplicate_count = transforms.row_counts(pieces)
            read_count, invalid_count = _observed_counts(counted, "read", "invalid")
        if read_count != accepted + duplicate_count + invalid_count:
            raise RuntimeError(
                f"row accounting broke: {read_count} read but {accepted} kept, "
                f"{duplicate_count} duplicates, {invalid_count} invalid; please report this"
            )
        with stages.stage("writing rejected rows"):
            _write_rejected(validated, invalid_count, duplicate_count, local_out / "rejected")
        if accepted == 0:
            _publish(local_out, out)
            raise sources.InputError(
                f"--input {input_location}: none of {read_count} rows is valid; "
                f"see the reasons in {out.rstrip('/')}/rejected/ and fix the input"
            )
        with stages.stage("projecting demand per topic"):
            demand = [
                _topic_demand(row)
                for row in transforms.topic_demand(pieces, params.horizon_months).collect()
            ]
            months = [
                MonthTotal(**row.asDict()) for row in transforms.monthly_totals(pieces).collect()
            ]
            pieces.unpersist()
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


def _write_rejected(
    validated: DataFrame, invalid_count: int, duplicate_count: int, target: Path
) -> None:
    """Invalid rows and duplicates in one CSV with the input's columns and a reason.

    Only a run that rejected something pays for the pass that finds those rows again; otherwise
    the file holds just the header."""
    invalid = validation.rejected_rows(validated)  # the input's columns as text, and reason
    rows = invalid if invalid_count else invalid.limit(0)
    if duplicate_count:
        duplicates = transforms.duplicate_rows(
            transforms.mark_duplicates(validation.accepted_rows(validated))
        )
        as_text = duplicates.select(
            *[
                (
                    F.col(c).cast("string")
                    if c in duplicates.columns
                    else F.lit(None).cast("string")
                ).alias(c)
                for c in invalid.columns
                if c != validation.REASON
            ],
            validation.REASON,
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
