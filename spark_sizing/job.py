"""The sizing job: extract → transform → size → load, with progress for the long stages.

Runs unchanged under `spark-submit --master <url>` (docs/spark-submit.md): the session takes the
master and resources spark-submit gives it and only sets defaults that are unset.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import Observation, SparkSession
from pyspark.sql import functions as F

from spark_sizing import s3, sources, transforms, validation
from spark_sizing.calibration import profile_figures
from spark_sizing.charts import MonthTotal
from spark_sizing.comparison import AUTO, choose_profile
from spark_sizing.contract import InputStats, ProfileChoice, SizingReport
from spark_sizing.costs import PriceTable, built_in_prices
from spark_sizing.formulas import SizingParameters, SizingResult, TopicDemand, size_cluster
from spark_sizing.model_inputs import DemandError
from spark_sizing.outputs import (
    REJECTED_FILE,
    check_out,
    publish,
    staged,
    write_rejected,
    write_reports,
)
from spark_sizing.profiles import HardwareProfile
from spark_sizing.progress import Stages
from spark_sizing.rejected_lines import InputFile, add_sources
from spark_sizing.session import observed_counts, observed_plan_kept_whole, spark_session

SAMPLE_INPUT = Path(__file__).parent / "samples" / "projections.csv"


@dataclass(frozen=True)
class SizingRun:
    report: SizingReport
    months: list[MonthTotal]
    out: str


def _chosen(profile: HardwareProfile | Sequence[HardwareProfile], name: str) -> HardwareProfile:
    """The profile the cluster was sized on (`--profile auto` sizes several)."""
    if isinstance(profile, HardwareProfile):
        return profile
    return next(p for p in profile if p.name == name)


def run_sizing(
    input_location: str,
    out: str,
    profile: HardwareProfile | Sequence[HardwareProfile],
    params: SizingParameters,
    *,
    prices: PriceTable | None = None,
    spark: SparkSession | None = None,
    show_progress: bool = True,
    s3_read: sources.S3Read = sources.DEFAULT_S3_READ,
    allow_unknown_columns: bool = False,
) -> SizingRun:
    """Size a cluster from projections at `input_location`; write every output to `out`.

    `profile`: one profile, or several to compare (`--profile auto`): the cheapest that meets
    every constraint is chosen. Columns the input contract does not know are refused unless
    `allow_unknown_columns`."""
    # A wrong path, a CSV header with a missing or misspelt column, or an --out that is a file
    # is reported before a JVM starts.
    if not s3.is_s3(input_location):
        sources.check_local_header(sources.local_input(input_location), allow_unknown_columns)
    check_out(out)
    spark = spark or spark_session(reads_s3=s3.is_s3(input_location))
    with (
        tempfile.TemporaryDirectory(prefix="kafkastack-") as tmp,
        # Outputs are written here and published to `out` only at the end (outputs.staged).
        staged(out, Path(tmp)) as local_out,
        Stages(show_progress) as stages,
    ):
        with stages.stage(f"reading {input_location}"):
            staging = Path(tmp) / "input"
            files = sources.resolve(input_location, staging, spark, s3_read)
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
            add_sources(local_out / REJECTED_FILE, _line_sources(input_location, files, staging))
        if accepted == 0:
            publish(local_out, out)
            raise sources.InputError(
                f"--input {input_location}: none of {read_count} rows is valid; "
                f"see the reasons in {out.rstrip('/')}/{REJECTED_FILE} and fix the input"
            )
        with stages.stage("projecting demand per topic"):
            try:
                demand = [
                    _topic_demand(row)
                    for row in transforms.topic_demand(pieces, params.horizon_months).collect()
                ]
            except DemandError as err:
                raise sources.InputError(f"--input {input_location}: {err}") from None
            months = [
                MonthTotal(**row.asDict()) for row in transforms.monthly_totals(pieces).collect()
            ]
            pieces.unpersist()
        with stages.stage("sizing the cluster and writing reports"):
            topics = sorted(demand, key=lambda d: d.topic)
            result, choice = _sized(topics, profile, params, prices)
            report = SizingReport(
                generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
                parameters={
                    "input": input_location,
                    "profile": result.cluster.profile if choice is None else AUTO,
                    "prices": (prices or built_in_prices()).cited,
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
                recovery=result.recovery,
                cost=result.cost,
                profile_choice=choice,
                profile_figures=profile_figures(_chosen(profile, result.cluster.profile)),
            )
            write_reports(report, months, local_out)
            publish(local_out, out)
    return SizingRun(report=report, months=months, out=out)


def _line_sources(location: str, files: sources.InputFiles, staging: Path) -> list[InputFile]:
    """The CSV inputs on the driver's disk, named as the user gave them (S3 URLs for downloads);
    none for other formats or s3a (spark_sizing/rejected_lines.py)."""
    if files.format != "csv" or files.reader == "s3a":
        return []
    if files.reader == "download":
        bucket = location.removeprefix("s3://").split("/", 1)[0]
        return [
            InputFile(Path(p), f"s3://{bucket}/{Path(p).relative_to(staging).as_posix()}")
            for p in files.paths
        ]
    return [InputFile(Path(p), p) for p in files.paths]


def _sized(
    topics: list[TopicDemand],
    profile: HardwareProfile | Sequence[HardwareProfile],
    params: SizingParameters,
    prices: PriceTable | None,
) -> tuple[SizingResult, ProfileChoice | None]:
    if isinstance(profile, HardwareProfile):
        return size_cluster(topics, profile, params, prices), None
    chosen = choose_profile(topics, profile, params, prices)
    return chosen.result, chosen.choice


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
