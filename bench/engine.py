"""Benchmark: the real Pulumi engine on this machine (2 cores). Prints figures, asserts nothing.

    .venv/bin/python bench/engine.py [--repeat 3] [--no-cluster]

- `pulumi preview` of prod against its deployed state (deployed into a throwaway backend with
  the provider rendering to files): cold (a new backend and an empty mypy cache, since the
  project's `typechecker: mypy` runs first) and warm (the same again).
- the pull-request flow `kafkastack preview --stack prod --base HEAD` (base `up` + head preview).
- `kafkastack render --stack prod` through the mock runtime and through the engine, and the
  engine's render in CPU-seconds (every process it started) with its state written once per
  command (kafkastack's default for a state it owns) and after every step (the CLI's default).
- `pulumi up` of the local stack onto a local control plane (kwok nodes), and the no-op `up`
  after it (`--expect-no-changes`).
- the toolchain scripts of the two source-built plugins when already built (the warm no-op).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from infra.config import load_stack  # noqa: E402
from infra.engine import LOCAL_PASSPHRASE, Engine, placeholder_passwords  # noqa: E402
from infra.localcluster.control_plane import LocalKubernetes  # noqa: E402
from infra.localcluster.provision import provision  # noqa: E402

KAFKASTACK = str(Path(sys.executable).parent / "kafkastack")


def seconds(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def run(*command: str) -> None:
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)


def row(name: str, runs: list[float], target: str = "") -> None:
    print(f"{name:<46}{min(runs):>8.1f}{statistics.median(runs):>10.1f}   {target}", flush=True)


def prod_preview(tmp: Path, repeat: int) -> None:
    config = load_stack(REPO / "stacks", "prod")
    stack_file = REPO / "stacks" / "Pulumi.prod.yaml"
    settings = {
        "kubernetes:renderYamlToDirectory": str(tmp / "rendered"),
        **placeholder_passwords(config),
    }
    cold, warm = [], []
    for attempt in range(repeat):
        deployed = Engine(state_dir=tmp / f"state-{attempt}", passphrase=LOCAL_PASSPHRASE)
        deployed.select("prod", stack_file, settings)
        deployed.up("prod")
        # The project's `typechecker: mypy` runs before the program: cold means its cache too.
        engine = Engine(
            state_dir=tmp / f"state-{attempt}",
            passphrase=LOCAL_PASSPHRASE,
            extra_env={"MYPY_CACHE_DIR": str(tmp / f"mypy-{attempt}")},
        )
        cold.append(seconds(partial(engine.preview, "prod")))
        warm.append(seconds(partial(engine.preview, "prod")))
    row("pulumi preview prod (cold: empty mypy cache)", cold, "≤ 20 s")
    row("pulumi preview prod (warm)", warm, "≤ 10 s")


def plugins_built() -> None:
    run("scripts/toolchain/build-pulumi-python.sh")
    run("scripts/toolchain/build-pulumi-kubernetes.sh")


def render_command(engine: str, out: Path) -> tuple[str, ...]:
    return (KAFKASTACK, "render", "--stack", "prod", "--engine", engine, "--out", str(out))


def render_seconds(engine: str, out: Path) -> float:
    command = render_command(engine, out)
    return seconds(lambda: run(*command))


def render_cpu_seconds(out: Path, skip_checkpoints: str) -> float:
    """CPU-seconds of an engine render of prod and of every process it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = render_command("pulumi", out)
    env = {**os.environ, "PULUMI_SKIP_CHECKPOINTS": skip_checkpoints}
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-cluster", action="store_true", help="skip the local-cluster cases")
    args = parser.parse_args()
    print(f"{'case':<46}{'min s':>8}{'median s':>10}   target")
    with tempfile.TemporaryDirectory(prefix="kafkastack-bench-") as name:
        tmp = Path(name)
        prod_preview(tmp, args.repeat)
        row(
            "kafkastack preview --stack prod --base HEAD",
            [
                seconds(lambda: run(KAFKASTACK, "preview", "--stack", "prod", "--base", "HEAD"))
                for _ in range(args.repeat)
            ],
        )
        for engine in ("mock", "pulumi"):
            renders = [tmp / f"render-{engine}-{i}" for i in range(args.repeat)]
            row(
                f"kafkastack render --stack prod --engine {engine}",
                [render_seconds(engine, out) for out in renders],
            )
        for skip, when in (("true", "once per command"), ("false", "after every step")):
            row(
                f"  its CPU-s, state written {when}",
                [render_cpu_seconds(tmp / f"cpu-{skip}-{i}", skip) for i in range(args.repeat)],
            )
        row(
            "toolchain scripts of the plugins, already built",
            [seconds(plugins_built) for _ in range(args.repeat)],
        )
        if args.no_cluster:
            return
        kube = LocalKubernetes("kafkastack-bench")
        kube.down()
        kube.up()
        try:
            stack_file = REPO / "stacks" / "Pulumi.local.yaml"
            config = load_stack(REPO / "stacks", "local")
            first = seconds(lambda: provision(kube, stack_file, config))
            again = [
                seconds(lambda: provision(kube, stack_file, config, expect_no_changes=True))
                for _ in range(args.repeat)
            ]
        finally:
            kube.down()
        row("pulumi up local (62+ objects, kwok cluster)", [first], "≤ 90 s")
        row("pulumi up local again (no changes)", again)


if __name__ == "__main__":
    main()
