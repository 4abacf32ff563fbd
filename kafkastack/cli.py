"""Entry point of the `kafkastack` command: composes the command groups each area owns.

Each module below only parses arguments and delegates to importable, tested code in
`spark_sizing/` or `infra/`.
"""

from __future__ import annotations

from importlib import metadata

import typer

from kafkastack import (
    calibrate_commands,
    cluster_commands,
    demo_commands,
    growth_commands,
    provision_commands,
    sizing_commands,
    verify_commands,
)

app = typer.Typer(
    name="kafkastack",
    help="Size Apache Kafka from projected throughput and provision it on Kubernetes/OpenShift.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def main() -> None:
    """Size Apache Kafka from projected throughput and provision it on Kubernetes/OpenShift."""


@app.command()
def version() -> None:
    """Print the kafkastack version."""
    typer.echo(metadata.version("kafkastack"))


for group in (
    sizing_commands,
    provision_commands,
    cluster_commands,
    growth_commands,
    verify_commands,
    calibrate_commands,
    demo_commands,
):
    group.register(app)
