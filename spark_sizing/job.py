"""The sizing job: extract → transform → size → load, with progress for the long stages.

Runs unchanged under `spark-submit --master <url>` (docs/spark-submit.md): the session takes the
master and resources spark-submit gives it and only sets defaults that are unset.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import Observation, SparkSession
from pyspark.sql import functions as F

from spark_sizing import s3, sources, transforms, validation
from spark_sizing.calibration import profile_figures
from spark_sizing.charts import MonthTotal
from spark_sizing.contract import InputStats, SizingReport
from spark_sizing.formulas import SizingParameters, TopicDemand, size_cluster
from spark_sizing.outputs import REJECTED_FILE, publish, write_rejected, write_reports
from spark_sizing.profiles import HardwareProfile
from spark_sizing.progress import Stages
from spark_sizing.session import observed_counts, observed_plan_kept_whole, spark_session

SAMPLE_INPUT = Path(__file__).parent / "samples" / "projections.csv"


@dataclass(frozen=True)
class SizingRun:
    report: SizingReport
    months: list[MonthTotal]
    out: str


def run_sizing(
    input_location: str,
    out: str,
    profile: HardwareProfile,
    params: SizingParameters,
    *,
    spark: SparkSession | None = None,
    show_progress: bool = True,
    s3_read: sources.S3Read = sources.DEFAULT_S3_READ,
    allow_unknown_columns: bool = False,
) -> SizingRun:
    """Size a cluster from projections at `input_location`; write every output to `out`.

    Columns the input contract does not know are refused unless `allow_unknown_columns`."""
    if not s3.is_s3(input_location):
        # A wrong path, or a CSV header with a missing or misspelt column, is reported before
        # a JVM starts.
        sources.check_local_header(sources.local_input(input_location), allow_unknown_columns)
    spark = spark or spark_session(reads_s3=s3.is_s3(input_location))
    with (
        tempfile.TemporaryDirectory(prefix="kafkastack-") as tmp,
        Stages(show_progress) as stages,
    ):
        local_out = Path(tmp) / "out" if s3.is_s3(out) else Path(out)
        local_out.mkdir(parents=True, exist_ok=True)
        with stages.stage(f"reading {input_location}"):
            files = sources.resolve(input_location, Path(tmp) / "input", spark, s3_read)
            raw = sources.read(spark, files, allow_unknown_columns)
        with stages.stage("validating rows, marking duplicate periods, aggregating per month"):
            validated = validation.validate(raw.frame, raw.csv_fields)
            # Rows read and rows invalid are counted in the same scan that feeds the aggregation.
            counted = Observation("rows")
            observed = validated.observe(
                counted,
                F.count(F.lit(1)).alias("read"),
                F.count(F.col(validation.REASON)).alias("invalid"),
            )
            # The cached plan takes the session's settings when it is defined, so the rule is
            # off from persist() on.
            with observed_plan_kept_whole(spark):
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
            read_count, invalid_count = observed_counts(counted, "read", "invalid")
        if read_count != accepted + duplicate_count + invalid_count:
            raise RuntimeError(
                f"row accounting broke: {read_count} read but {accepted} kept, "
                f"{duplicate_count} duplicates, {invalid_count} invalid; please report this"
            )
        with stages.stage("writing rejected rows"):
            write_rejected(
                validated,
                validation.input_columns(raw.frame),
                (invalid_count, duplicate_count),
                Path(tmp),
                local_out / REJECTED_FILE,
            )
        if accepted == 0:
            publish(local_out, out)
            raise sources.InputError(
                f"--input {input_location}: none of {read_count} rows is valid; "
                f"see the reasons in {out.rstrip('/')}/{REJECTED_FILE} and fix the input"
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
                utilisation=result.utilisation,
                zone_loss=result.zone_loss,
                profile_figures=profile_figures(profile),
            )
            write_reports(report, months, local_out)
            publish(local_out, out)
    return SizingRun(report=report, months=months, out=out)


def _topic_demand(row: object) -> TopicDemand:
    r = row.asDict()  # type: ignore[attr-defined]
    pinned, consumers = r["pinned_partitions"], r["consumers_per_group"]
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
        consumers_per_group=int(consumers) if consumers is not None else None,
    )
