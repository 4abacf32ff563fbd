"""`kafkastack local up|down|apply`: the local Kubernetes control plane and what runs on it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkastack.provision_commands import STACKS
from kafkastack.sizing_commands import fail

local = typer.Typer(
    help="A local control plane (real apiserver/scheduler, kwok nodes in 3 zones).",
    no_args_is_help=True,
)


@local.command()
def up(
    real_nodes: Annotated[
        int,
        typer.Option(
            min=0,
            max=20,
            help="also start this many real nodes (containerd + kubelet, zones in turn; root; "
            "docs/real-nodes.md)",
        ),
    ] = 0,
    multus: Annotated[
        bool,
        typer.Option(
            help="run Multus on the real nodes, for stacks with a second network "
            "(network.mode: dual; docs/real-nodes.md)",
        ),
    ] = False,
) -> None:
    """Create or reuse the local cluster (idempotent)."""
    from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
    from infra.localcluster.host import HostError
    from infra.localcluster.images import ImageError
    from infra.localcluster.nodes import RealNodes

    kube = LocalKubernetes()
    try:
        if multus and not real_nodes:
            raise LocalClusterError("--multus runs on real nodes: add --real-nodes 3")
        nodes = RealNodes(kube, real_nodes, multus=multus) if real_nodes else None
        if nodes is not None:
            nodes.check()  # before anything is created
        kube.up()
        if nodes is not None:
            nodes.up()
    except (LocalClusterError, HostError, ImageError) as err:
        raise fail(str(err)) from None
    typer.echo(f"local cluster up; kubeconfig: {kube.kubeconfig}")
    if nodes is not None:
        typer.echo("real nodes Ready: " + ", ".join(n.name for n in nodes.specs))


@local.command()
def down() -> None:
    """Delete the local cluster (and stop its real nodes)."""
    from infra.localcluster.control_plane import LocalKubernetes

    LocalKubernetes().down()
    typer.echo("local cluster deleted")


@local.command()
def apply(
    stack: Annotated[str, typer.Option(help="environment to provision")] = "local",
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
) -> None:
    """`pulumi up` STACK onto the local cluster (created if needed); print the placement."""
    from rich.console import Console

    from infra.config import load_stack
    from infra.engine import EngineError
    from infra.errors import ConfigError
    from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
    from infra.localcluster.placement import placement_table
    from infra.localcluster.provision import provision

    kube = LocalKubernetes()
    try:
        config = load_stack(stacks_dir, stack)
        done = provision(kube, stacks_dir / f"Pulumi.{stack}.yaml", config)
    except (ConfigError, LocalClusterError, EngineError) as err:
        raise fail(str(err)) from None
    typer.echo("pulumi up: " + ", ".join(f"{n} {op}" for op, n in sorted(done.changes.items())))
    Console().print(placement_table(done.pods, kube))


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.add_typer(local, name="local")
