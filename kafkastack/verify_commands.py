"""`kafkastack verify`: start the rendered stack as real processes and prove the basics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkastack.provision_commands import STACKS
from kafkastack.sizing_commands import fail


def verify(
    stack: Annotated[str, typer.Option(help="environment to render and start")],
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
    workdir: Annotated[Path | None, typer.Option(help="keep render, logs and data here")] = None,
) -> None:
    """Start STACK's rendered brokers, quorum and HAProxy here (network namespaces, root)."""
    from rich.console import Console
    from rich.table import Table

    from infra.config import load_stack
    from infra.errors import ConfigError
    from infra.verify.errors import VerifyError
    from infra.verify.smoke import passed, smoke

    try:
        result = smoke(load_stack(stacks_dir, stack), workdir)
    except (ConfigError, VerifyError) as err:
        raise fail(str(err)) from None
    table = Table(title=f"kafkastack verify --stack {stack}")
    table.add_column("check")
    table.add_column("result")
    table.add_row(
        "brokers (id → rack)", ", ".join(f"{k}→{v}" for k, v in sorted(result.brokers.items()))
    )
    table.add_row("replicas on distinct racks", str(result.partitions_on_distinct_racks))
    table.add_row("records acked via CLIENT", str(result.internal_acked))
    table.add_row("records acked via HAProxy (TLS, SNI)", str(result.external_acked))
    table.add_row("plaintext to external port refused", str(result.plaintext_refused))
    Console().print(table)
    if not passed(result):
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command()(verify)
