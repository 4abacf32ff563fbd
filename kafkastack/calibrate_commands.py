"""`kafkastack calibrate`: parse, delegate, report errors plainly."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkastack.provision_commands import STACKS
from kafkastack.sizing_commands import fail
from spark_sizing.calibration import MAX_WARMUPS
from spark_sizing.profiles import DEFAULT_PROFILE


def calibrate(
    stack: Annotated[str, typer.Option(help="environment whose rendered brokers are measured")],
    out: Annotated[Path, typer.Option(help="profile YAML to write (for size --profile)")],
    base_profile: Annotated[
        str, typer.Option(help="profile whose other figures are kept (name or YAML file)")
    ] = DEFAULT_PROFILE,
    records: Annotated[int, typer.Option(help="1 KiB records per measured round")] = 200_000,
    rounds: Annotated[int, typer.Option(help="measured rounds (the median is kept)")] = 3,
    warmups: Annotated[
        int,
        typer.Option(
            help="most warm-up rounds, discarded once two agree (fewer: quicker, the figures "
            "may still carry the JVMs' warm-up)"
        ),
    ] = MAX_WARMUPS,
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
    workdir: Annotated[Path | None, typer.Option(help="keep render, logs and data here")] = None,
) -> None:
    """Measure what STACK's brokers carry here (root: network namespaces) and write a profile
    whose disk_mb_s, network_mb_s and mb_s_per_vcpu are the measured ones."""
    from infra.config import load_stack
    from infra.errors import ConfigError
    from infra.verify.calibrate import calibrate as measure_profile
    from infra.verify.errors import VerifyError
    from spark_sizing.calibration import (
        CalibrationError,
        check_out_path,
        check_rounds,
        write_profile,
    )
    from spark_sizing.profiles import ProfileError, load_profile

    try:
        check_rounds(records, rounds, warmups)
        check_out_path(out)
        base = load_profile(base_profile, "--base-profile")
        config = load_stack(stacks_dir, stack)
        profile = measure_profile(config, stack, base, records, rounds, workdir, warmups)
        write_profile(profile, out)
    except (CalibrationError, ConfigError, ProfileError) as err:
        raise fail(str(err)) from None
    except VerifyError as err:
        raise fail(f"calibrate --stack {stack}: {err}") from None
    measured = profile.measured
    assert measured is not None
    typer.echo(
        f"{measured.brokers} brokers of stack {stack} carried "
        f"{', '.join(f'{v:.1f}' for v in measured.produce_mb_s)} MB/s of produce (RF 3, acks=all): "
        f"disk_mb_s = network_mb_s = {profile.disk_mb_s:g} MB/s per broker, "
        f"mb_s_per_vcpu = {profile.mb_s_per_vcpu:g}"
    )
    typer.echo(f"wrote {out} (base {base.name}); use it with: kafkastack size --profile {out}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command()(calibrate)
