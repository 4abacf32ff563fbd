"""`kafkastack demo` (`make demo`): sample projections → sizing → stack → `pulumi up` locally."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from kafkastack.provision_commands import STACKS
from kafkastack.sizing_commands import fail


def demo(
    out: Annotated[Path, typer.Option(help="where sizing, the demo's stack and renders go")] = Path(
        "demo-out"
    ),
    cluster: Annotated[
        bool, typer.Option(help="also `pulumi up` the stack onto the local cluster")
    ] = True,
) -> None:
    """Size the embedded sample projections, write the sizing into a copy of the `local` stack,
    render it, and provision it with `pulumi up` onto a local Kubernetes control plane.

    Committed files are never rewritten: the demo's stack file lives in OUT/stacks.
    """
    from rich.console import Console

    from infra import render
    from infra.config import load_stack
    from infra.engine import EngineError
    from infra.errors import ConfigError
    from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
    from infra.localcluster.placement import placement_table
    from infra.localcluster.provision import provision
    from infra.model.cluster import ClusterModel
    from infra.stack_files import apply_sizing
    from spark_sizing.formulas import SizingParameters
    from spark_sizing.job import SAMPLE_INPUT, run_sizing
    from spark_sizing.profiles import DEFAULT_PROFILE, load_profile

    console = Console()
    sizing_dir = out / "sizing"
    stacks = out / "stacks"
    console.rule("1/4 sizing the sample projections (Spark)")
    run = run_sizing(
        str(SAMPLE_INPUT), str(sizing_dir), load_profile(DEFAULT_PROFILE), SizingParameters()
    )
    c = run.report.cluster
    console.print(f"{c.brokers} brokers, binding constraint: {c.binding_constraint}")
    try:
        console.rule(f"2/4 writing the sizing into {stacks / 'Pulumi.local.yaml'}")
        stacks.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(STACKS / "Pulumi.local.yaml", stacks / "Pulumi.local.yaml")
        apply_sizing(sizing_dir / "sizing.json", stacks, "local")
        config = load_stack(stacks, "local")
        model = ClusterModel.from_config(config)
        console.rule("3/4 rendering the local stack")
        counts = render.write(config, out / "render")
        console.print(", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())))
        if cluster:
            console.rule("4/4 pulumi up onto the local control plane")
            kube = LocalKubernetes()
            done = provision(kube, stacks / "Pulumi.local.yaml", config)
            console.print(
                "pulumi up: " + ", ".join(f"{n} {op}" for op, n in sorted(done.changes.items()))
            )
            console.print(placement_table(done.pods, kube))
            console.print(f"kubeconfig: {kube.kubeconfig}")
    except (ConfigError, LocalClusterError, EngineError) as err:
        raise fail(str(err)) from None
    console.print(f"bootstrap (in cluster): {model.names.bootstrap_dns}:{model.ports.client}")
    console.print(f"bootstrap (external):   {model.names.external_bootstrap}:{model.ports.route}")
    console.print(f"reports: {sizing_dir / 'report.md'}, {sizing_dir / 'report.html'}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command()(demo)
