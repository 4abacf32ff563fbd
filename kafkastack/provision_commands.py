"""`kafkastack render` and `kafkastack apply-sizing`: parse, delegate, report errors plainly."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkastack.sizing_commands import fail

STACKS = Path(__file__).resolve().parent.parent / "stacks"


def render(
    stack: Annotated[str, typer.Option(help="environment: local, dev, staging, prod")],
    out: Annotated[Path, typer.Option(help="directory to (re)write")],
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
) -> None:
    """Write every Kubernetes object and config file the stack declares (no cluster needed)."""
    from infra import render as renderer
    from infra.config import ConfigError, load_stack

    try:
        config = load_stack(stacks_dir, stack)
    except ConfigError as err:
        raise fail(str(err)) from None
    counts = renderer.write(config, out)
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    typer.echo(f"rendered stack {stack} to {out}: {summary}")


def apply_sizing(
    sizing: Annotated[Path, typer.Option(help="sizing.json from `kafkastack size`")],
    stack: Annotated[str, typer.Option(help="environment whose stack file gets the sizing")],
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
) -> None:
    """Write the cluster sizing into stacks/Pulumi.STACK.yaml (kafkastack:sizing)."""
    from infra.config import ConfigError
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
    base: Annotated[str, typer.Option(help="git revision to compare the stack file with")] = "HEAD",
    markdown: Annotated[bool, typer.Option(help="print the pull-request comment")] = False,
    out: Annotated[Path | None, typer.Option(help="also write the comment to this file")] = None,
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
) -> None:
    """What a stack change creates, updates, replaces or deletes (data-loss risks flagged)."""
    from infra.config import ConfigError
    from infra.preview import preview as run_preview

    try:
        found, comment = run_preview(stacks_dir, stack, base)
    except ConfigError as err:
        raise fail(str(err)) from None
    if out is not None:
        out.write_text(comment, encoding="utf-8")
    if markdown:
        typer.echo(comment, nl=False)
    else:
        for change in found:
            flag = "  (data-loss risk)" if change.data_loss_risk else ""
            typer.echo(f"{change.operation:8} {change.kind}/{change.name}{flag}")
    if any(c.data_loss_risk for c in found):
        raise typer.Exit(code=3)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command()(render)
    app.command("apply-sizing")(apply_sizing)
    app.command()(preview)
