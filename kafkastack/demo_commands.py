"""`kafkastack demo` (`make demo`): sample projections → sizing → stack → local cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkastack.provision_commands import STACKS
from kafkastack.sizing_commands import fail

REPO = STACKS.parent


def demo(
    out: Annotated[Path, typer.Option(help="where sizing and render outputs go")] = REPO
    / "demo-out",
    cluster: Annotated[bool, typer.Option(help="also start the local cluster and apply")] = True,
) -> None:
    """Size the embedded sample projections, write the sizing into the `local` stack, render it
    and place it on a local Kubernetes control plane."""
    from rich.console import Console

    from infra import render
    from infra.config import ConfigError, load_stack
    from infra.localcluster.cluster import LocalClusterError, LocalKubernetes
    from infra.localcluster.placement import placement_table
    from infra.model.cluster import ClusterModel
    from infra.stack_files import apply_sizing
    from spark_sizing.formulas import SizingParameters
    from spark_sizing.job import SAMPLE_INPUT, run_sizing
    from spark_sizing.profiles import DEFAULT_PROFILE, load_profile

    console = Console()
    sizing_dir = out / "sizing"
    console.rule("1/4 sizing the sample projections (Spark)")
    run = run_sizing(
        str(SAMPLE_INPUT), str(sizing_dir), load_profile(DEFAULT_PROFILE), SizingParameters()
    )
    c = run.report.cluster
    console.print(f"{c.brokers} brokers, binding constraint: {c.binding_constraint}")
    try:
        console.rule("2/4 writing the sizing into stacks/Pulumi.local.yaml")
        # A path relative to the repo keeps the stack file the same on every machine.
        apply_sizing(_repo_relative(sizing_dir / "sizing.json"), STACKS, "local")
        config = load_stack(STACKS, "local")
        console.rule("3/4 rendering the local stack")
        counts = render.write(config, out / "render")
        console.print(", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())))
        if cluster:
            console.rule("4/4 local control plane: apply and place")
            kube = LocalKubernetes()
            kube.up()
            kube.apply_rendered(out / "render" / "kubernetes")
            model = ClusterModel.from_config(config)
            pods = kube.wait_scheduled(
                config.namespace, len(model.brokers) + len(model.quorum) + model.haproxy_replicas
            )
            console.print(placement_table(pods, kube))
            console.print(f"kubeconfig: {kube.kubeconfig}")
    except (ConfigError, LocalClusterError) as err:
        raise fail(str(err)) from None
    model = ClusterModel.from_config(config)
    console.print(f"bootstrap (in cluster): {model.names.bootstrap_dns}:{model.ports.client}")
    console.print(f"bootstrap (external):   bootstrap.{config.external.domain}:{model.ports.route}")
    console.print(f"reports: {sizing_dir / 'report.md'}, {sizing_dir / 'report.html'}")


def _repo_relative(path: Path) -> Path:
    """A path inside the repo as a relative one, so the stack file reads the same everywhere."""
    resolved = path.resolve()
    return resolved.relative_to(REPO.resolve()) if resolved.is_relative_to(REPO.resolve()) else path


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command()(demo)
