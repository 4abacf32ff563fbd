"""`kafkastack render` and `kafkastack apply-sizing`: parse, delegate, report errors plainly."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kafkastack.sizing_commands import fail

# The project the command runs in (its stacks/ folder), never the folder of the installed package.
STACKS = Path("stacks")


class RenderEngine(StrEnum):
    mock = "mock"
    pulumi = "pulumi"


def render(
    stack: Annotated[str, typer.Option(help="environment: local, dev, staging, prod")],
    out: Annotated[Path, typer.Option(help="new directory, or an earlier render to replace")],
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
    engine: Annotated[
        RenderEngine,
        typer.Option(
            help="mock: Pulumi's mock runtime (fast, no binaries); pulumi: the real engine "
            "and Kubernetes provider (renderYamlToDirectory)"
        ),
    ] = RenderEngine.mock,
) -> None:
    """Write every Kubernetes object and config file the stack declares (no cluster needed)."""
    from infra import render as renderer
    from infra.config import load_stack
    from infra.engine import EngineError
    from infra.errors import ConfigError

    try:
        config = load_stack(stacks_dir, stack)
        objects = None
        if engine is RenderEngine.pulumi:
            with tempfile.TemporaryDirectory(prefix="kafkastack-engine-render-") as tmp:
                objects = renderer.engine_manifests(
                    stacks_dir / f"Pulumi.{stack}.yaml", config, Path(tmp)
                )
        counts = renderer.write(config, out, objects)
    except (ConfigError, EngineError) as err:
        raise fail(str(err)) from None
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    typer.echo(f"rendered stack {stack} to {out} ({engine.value}): {summary}")


def apply_sizing(
    sizing: Annotated[Path, typer.Option(help="sizing.json from `kafkastack size`")],
    stack: Annotated[str, typer.Option(help="environment whose stack file gets the sizing")],
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
) -> None:
    """Write the cluster sizing into stacks/Pulumi.STACK.yaml (kafkastack:sizing)."""
    from infra.errors import ConfigError
    from infra.stack_files import apply_sizing as write_sizing

    try:
        applied = write_sizing(sizing, stacks_dir, stack)
    except ConfigError as err:
        raise fail(str(err)) from None
    c = applied.cluster
    typer.echo(
        f"stack {stack}: sizing {applied.schema_version} applied "
        f"({c.brokers} brokers over {c.zones} zones, {c.quorum.kind} × {c.quorum.nodes})"
    )


def preview(
    stack: Annotated[str, typer.Option(help="environment to preview")],
    markdown: Annotated[bool, typer.Option(help="print the pull-request comment")] = False,
    out: Annotated[Path | None, typer.Option(help="also write the comment to this file")] = None,
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
    state_dir: Annotated[
        Path | None,
        typer.Option(help="a local file backend (default: the backend you are logged in to)"),
    ] = None,
    base: Annotated[
        str | None,
        typer.Option(
            help="no deployed state at hand: `pulumi up` this git revision into a throwaway "
            "backend (provider render mode, no cluster) and preview against that"
        ),
    ] = None,
) -> None:
    """What `pulumi up` would create, update, replace or delete against the deployed stack.

    Runs `pulumi preview` of this checkout's program and stack file against the stack's state
    (or against --base); exits 3 when a stateful object would be replaced or deleted, or when
    the change cannot roll one node at a time (how the nodes talk to each other changes).
    """
    from infra import preview as previews
    from infra.config import load_stack
    from infra.engine import Engine, EngineError, placeholder_passwords
    from infra.errors import ConfigError

    try:
        config = load_stack(stacks_dir, stack)
        project = previews.project_of(stacks_dir)
        stack_file = stacks_dir / f"Pulumi.{stack}.yaml"
        if base is None:
            found = previews.run(Engine(state_dir, project_dir=project), stack_file, config)
        else:
            with tempfile.TemporaryDirectory(prefix="kafkastack-preview-") as tmp:
                engine, settings = previews.offline_baseline(project, base, stack, Path(tmp))
                engine = replace(engine, project_dir=project)
                settings.update(placeholder_passwords(config))
                found = previews.run(engine, stack_file, config, settings)
    except (ConfigError, EngineError) as err:
        raise fail(str(err)) from None
    comment = previews.markdown(found)
    if out is not None:
        out.write_text(comment, encoding="utf-8")
    if markdown:
        typer.echo(comment, nl=False)
    else:
        for step in found.changes:
            flag = "  (data-loss risk)" if step.data_loss_risk else ""
            typer.echo(f"{step.op:8} {step.kind}/{step.name}{flag}")
        for change in found.protocol_changes:
            typer.echo(f"cannot roll: {change.sentence()}")
    if found.blocked:
        raise typer.Exit(code=3)


def doctor() -> None:
    """Every engine and cluster tool: its version, where it came from, and whether it fits."""
    from rich.console import Console
    from rich.table import Table

    from infra.toolchain import parts

    table = Table(title="kafkastack toolchain")
    for column in ("part", "version", "origin", "status"):
        table.add_column(column)
    found = parts()
    for part in found:
        status = "ok" if part.ok else f"[red]FAIL[/red] {part.note}"
        table.add_row(part.name, part.version, part.origin, status)
    Console().print(table)
    if not all(part.ok for part in found):
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command()(render)
    app.command("apply-sizing")(apply_sizing)
    app.command()(preview)
    app.command()(doctor)
