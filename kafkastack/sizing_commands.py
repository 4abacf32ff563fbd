"""`kafkastack size` and `kafkastack sample-projections`: parse, delegate, report errors plainly."""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

import typer
from pydantic import ValidationError

from spark_sizing.contract import first_error
from spark_sizing.profiles import DEFAULT_PROFILE


class Quorum(StrEnum):
    kraft = "kraft"
    zookeeper = "zookeeper"


class Granularity(StrEnum):
    hourly = "hourly"
    daily = "daily"
    monthly = "monthly"


class S3ReadMode(StrEnum):
    auto = "auto"
    download = "download"
    s3a = "s3a"


class FileFormat(StrEnum):
    csv = "csv"
    jsonl = "jsonl"
    parquet = "parquet"


def fail(message: str) -> typer.Exit:
    """One clear line on stderr and a non-zero exit."""
    typer.secho(f"kafkastack: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code=2)


def refuse_non_finite_options(ctx: typer.Context) -> None:
    """One check for every float option of the command: `inf` and `nan` parse as floats and
    pass every range check (`--recovery-hours inf` sized a cluster that never recovers)."""
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if isinstance(value, float) and not math.isfinite(value):
            option = max(param.opts, key=len)
            raise fail(f"{option} {value}: not a finite number; give a number such as 2.5")


def size(
    ctx: typer.Context,
    input: Annotated[str, typer.Option(help="file, directory, glob or s3://bucket/prefix")],
    out: Annotated[str, typer.Option(help="output directory or s3://bucket/prefix")],
    profile: Annotated[
        str,
        typer.Option(
            help="built-in profile name, YAML file, or auto: every built-in profile (and each "
            "--candidate-profile) sized and the cheapest that meets every constraint chosen"
        ),
    ] = DEFAULT_PROFILE,
    zones: Annotated[int, typer.Option(help="availability zones (racks)")] = 3,
    horizon_months: Annotated[int, typer.Option(help="months of growth to extrapolate")] = 12,
    quorum: Annotated[Quorum, typer.Option(help="metadata quorum")] = Quorum.kraft,
    peak_factor: Annotated[
        float, typer.Option(help="peak/avg when produce_mb_s_peak is absent")
    ] = 2.0,
    target_utilisation: Annotated[
        float, typer.Option(help="share of each broker resource used normally (MSK: 0.5)")
    ] = 0.5,
    zone_down_utilisation: Annotated[
        float, typer.Option(help="share of each broker resource allowed with one zone down")
    ] = 0.8,
    producer_mb_s_per_partition: Annotated[
        float, typer.Option(help="MB/s one producer writes to one partition (Confluent: 10s)")
    ] = 10.0,
    consumer_mb_s_per_partition: Annotated[
        float, typer.Option(help="MB/s one consumer reads from one partition")
    ] = 20.0,
    partition_multiple: Annotated[
        str,
        typer.Option(
            help="round partitions up to a multiple of N, or of the broker count: brokers"
        ),
    ] = "1",
    cpu_target: Annotated[
        float, typer.Option(help="share of a broker's vCPUs used normally (MSK: 0.6)")
    ] = 0.6,
    recovery_hours: Annotated[
        float, typer.Option(help="hours to re-replicate one lost broker's data")
    ] = 4.0,
    recovery_mb_s: Annotated[
        float | None,
        typer.Option(
            help="replication throttle while recovering, MB/s per broker (default: "
            "the disk and network headroom under --zone-down-utilisation)"
        ),
    ] = None,
    follower_fetching_share: Annotated[
        float,
        typer.Option(
            help="share of consumer bytes read from a replica in the consumer's zone "
            "(KIP-392 follower fetching), 0..1: cross-zone cost"
        ),
    ] = 0.0,
    prices: Annotated[
        Path | None,
        typer.Option(
            help="YAML price file laid over the built-in AWS prices (see "
            "spark_sizing/data/prices.yaml)"
        ),
    ] = None,
    candidate_profile: Annotated[
        list[str] | None,
        typer.Option(help="--profile auto: also compare this profile (YAML file); repeatable"),
    ] = None,
    router_capacity_mb_s: Annotated[
        float, typer.Option(help="MB/s one HAProxy replica forwards (HAProxy: 10 Gbps per core)")
    ] = 1250.0,
    router_external_share: Annotated[
        float, typer.Option(help="share of client traffic from outside the cluster (0..1)")
    ] = 1.0,
    s3_read: Annotated[
        S3ReadMode,
        typer.Option(
            help="s3:// input: download (boto3 to the driver), s3a (Spark reads S3), "
            "auto (s3a above --s3a-threshold-mib when the connector is loaded)"
        ),
    ] = S3ReadMode.auto,
    s3a_threshold_mib: Annotated[
        float, typer.Option(min=0, help="--s3-read auto: s3a when the input totals more MiB")
    ] = 256.0,
    allow_unknown_columns: Annotated[
        bool,
        typer.Option(
            "--allow-unknown-columns",
            help="ignore input columns the contract does not know instead of refusing them",
        ),
    ] = False,
) -> None:
    """Size a Kafka cluster from projected throughput.

    Writes sizing.json, report.md, report.html and rejected.csv to --out.
    """
    refuse_non_finite_options(ctx)
    from spark_sizing.comparison import AUTO, NoProfileFits, auto_candidates
    from spark_sizing.costs import PriceError, load_prices
    from spark_sizing.formulas import SizingParameters
    from spark_sizing.job import run_sizing
    from spark_sizing.profiles import HardwareProfile, ProfileError, load_profile
    from spark_sizing.report_sections import binding_detail
    from spark_sizing.s3 import S3Error
    from spark_sizing.sources import MIB, InputError, S3Read

    try:
        params = SizingParameters(
            zones=zones,
            horizon_months=horizon_months,
            quorum_kind=quorum.value,
            peak_factor=peak_factor,
            target_utilisation=target_utilisation,
            zone_down_utilisation=zone_down_utilisation,
            producer_mb_s_per_partition=producer_mb_s_per_partition,
            consumer_mb_s_per_partition=consumer_mb_s_per_partition,
            partition_multiple=_partition_multiple(partition_multiple),
            router_capacity_mb_s=router_capacity_mb_s,
            router_external_share=router_external_share,
            cpu_target=cpu_target,
            recovery_hours=recovery_hours,
            recovery_mb_s=recovery_mb_s,
            follower_fetching_share=follower_fetching_share,
        )
        extra = [load_profile(p, "--candidate-profile") for p in candidate_profile or []]
        if extra and profile != AUTO:
            raise fail("--candidate-profile: only used with --profile auto; drop it or use auto")
        hardware: HardwareProfile | list[HardwareProfile] = (
            auto_candidates(extra) if profile == AUTO else load_profile(profile)
        )
        price_table = load_prices(prices)
        s3_policy = S3Read(s3_read.value, int(s3a_threshold_mib * MIB))
        run = run_sizing(
            input,
            out,
            hardware,
            params,
            prices=price_table,
            s3_read=s3_policy,
            allow_unknown_columns=allow_unknown_columns,
        )
    except ValidationError as err:
        field, problem = first_error(err)
        raise fail(f"--{field.split('.')[0].replace('_', '-')}: {problem}") from None
    except (InputError, ProfileError, S3Error, PriceError, NoProfileFits) as err:
        raise fail(str(err)) from None
    c = run.report.cluster
    inputs = run.report.inputs
    detail = binding_detail(run.report)
    binding = f"{c.binding_constraint}: {detail}" if detail else c.binding_constraint
    typer.echo(
        f"{c.brokers} brokers ({c.profile}, {c.zones} zones, binding: {binding}); "
        f"rows read {inputs.rows_read}, accepted {inputs.rows_accepted}, "
        f"rejected {inputs.rows_rejected} ({inputs.duplicates_dropped} duplicates)"
    )
    if run.report.profile_choice is not None:
        typer.echo(f"profile auto: {c.profile}, {run.report.profile_choice.reason}")
    cost = run.report.cost
    if cost is not None:
        priced = "" if cost.complete else " (parts without a price left out)"
        typer.echo(f"monthly cost: {cost.total_monthly:,.2f} {cost.currency}{priced}")
    if run.report.recovery is not None and run.report.recovery.hours is not None:
        r = run.report.recovery
        typer.echo(
            f"recovery: one broker's {r.data_per_broker_gib:,.0f} GiB in {r.hours:g} h at "
            f"{r.rate_mb_s:,.0f} MB/s (target {r.target_hours:g} h)"
        )
    measured = [f for f in run.report.profile_figures if f.measured]
    if measured:
        typer.echo(
            f"profile {c.profile}: {', '.join(f.field for f in measured)} {measured[0].source}; "
            "the rest documented"
        )
    if run.report.zone_loss is not None and not run.report.zone_loss.writes_survive:
        typer.secho(f"zone loss: {run.report.zone_loss.detail}", fg=typer.colors.YELLOW, err=True)
    for warning in run.report.warnings:
        if not warning.startswith("zone loss:"):
            typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)
    if inputs.rows_rejected:
        # Deliberate and documented (docs/sizing.md): rejected rows do not fail the run while
        # any row is accepted; they are said here and kept, each with its reason.
        typer.secho(
            f"warning: {inputs.rows_rejected} of {inputs.rows_read} rows rejected and left out "
            f"of the sizing; the reasons are in {out.rstrip('/')}/rejected.csv",
            fg=typer.colors.YELLOW,
            err=True,
        )
    typer.echo(f"wrote {out.rstrip('/')}/sizing.json, report.md, report.html, rejected.csv")


def _partition_multiple(value: str) -> int | Literal["brokers"]:
    """--partition-multiple: an integer (checked ≥ 1 with the other parameters) or "brokers"."""
    text = value.strip()
    if text == "brokers":
        return "brokers"
    if text.lstrip("-").isdigit():
        return int(text)
    raise fail(f"--partition-multiple {value!r}: must be an integer ≥ 1 or 'brokers'")


def sample_projections(
    out: Annotated[
        Path,
        typer.Option(
            help="file to write: .csv, .parquet or .jsonl (the extension sets the format, as "
            "size reads it); refused if it exists, unless --force"
        ),
    ],
    topics: Annotated[int, typer.Option(min=1)] = 24,
    months: Annotated[int, typer.Option(min=1)] = 6,
    granularity: Annotated[Granularity, typer.Option()] = Granularity.daily,
    seed: Annotated[int, typer.Option(min=0)] = 7,
    format: Annotated[
        FileFormat | None,
        typer.Option(help="csv, jsonl or parquet; must agree with --out's extension"),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="replace --out if it exists")] = False,
) -> None:
    """Write seeded synthetic projections (growth plus weekly/daily seasonality)."""
    from spark_sizing.samples import SampleError, target_format, write

    try:
        file_format = target_format(out, format.value if format else None, force)
        replaced = out.exists()
        rows = write(out, topics, months, granularity.value, seed, file_format)
    except SampleError as err:
        raise fail(str(err)) from None
    typer.echo(f"wrote {rows} rows to {out}{' (replaced the file there)' if replaced else ''}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command()(size)
    app.command("sample-projections")(sample_projections)
