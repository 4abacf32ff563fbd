"""A pull-request preview from the engine's own diff: `pulumi preview --json` of the pull
request's code and config against the stack's state, as the base revision's `pulumi up` left it.

Both the code (infra/, templates/) and the config of the pull request are compared with what is
really deployed, so a change that would replace a StatefulSet or a StorageClass is seen whether
it comes from a stack file or from the program. Stateful replacements and deletions are flagged.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from infra.config import load_stack, sizing_summary
from infra.engine import LOCAL_PASSPHRASE, Engine, EngineError, Step, placeholder_passwords
from infra.errors import ConfigError
from infra.model.cluster import ClusterModel
from infra.protocol_changes import ProtocolChange
from infra.stack_config import StackConfig
from infra.unready_nodes import PREVIEW_WARNING

OPERATIONS = ("create", "update", "replace", "delete")


@dataclass(frozen=True)
class StackPreview:
    stack: str
    steps: list[Step]
    before: dict[str, Any] | None  # the deployed sizing summary; None for a new stack
    after: dict[str, Any]
    refusals: list[str]  # what the engine would refuse to do (protected objects)
    # Broker ids deployed (None for a new stack) and declared: growth needs a rebalance step,
    # shrinking a drain first (Kafka never moves existing replicas by itself).
    deployed_brokers: tuple[int, ...] | None = None
    declared_brokers: tuple[int, ...] = ()
    # Between-node listeners whose protocol changes: no ordered roll can carry them.
    protocol_changes: tuple[ProtocolChange, ...] = ()
    # KRaft voters the change deletes: they must leave the voter set first.
    going_voters: tuple[int, ...] = ()
    # Why `pulumi up` would be refused at this moment (a Kafka node not Ready), not the change.
    not_now: tuple[str, ...] = ()

    @property
    def blocked(self) -> bool:
        """A pipeline gating on the preview stops: data at risk, or a roll that cannot work."""
        return bool(self.risks or self.protocol_changes)

    @property
    def changes(self) -> list[Step]:
        return [s for s in self.steps if s.op in OPERATIONS]

    @property
    def risks(self) -> list[Step]:
        return [s for s in self.steps if s.data_loss_risk]


def run(
    engine: Engine, stack_file: Path, config: StackConfig, settings: dict[str, Any] | None = None
) -> StackPreview:
    """Preview `stack_file` (with the engine's project as checked out) against the stack's
    state; `settings` are run-only config values (see `offline_baseline`)."""
    stack = config.environment
    engine.select(stack, stack_file, settings)
    found = engine.preview(stack)
    try:
        outputs = engine.outputs(stack)
    except EngineError:
        outputs = {}  # a stack that was never deployed has no outputs
    declared = tuple(b.node_id for b in ClusterModel.from_config(config).brokers)
    deployed = broker_ids(outputs.get("broker_zones"))
    return StackPreview(
        stack,
        found.steps,
        outputs.get("sizing"),
        sizing_summary(config),
        found.errors,
        deployed,
        declared,
        tuple(found.protocol_changes),
        going_voters(config, found.steps, deployed, declared),
        # The engine may put its own words before the program's.
        tuple(w.split(PREVIEW_WARNING, 1)[1] for w in found.warnings if PREVIEW_WARNING in w),
    )


def going_voters(
    config: StackConfig,
    steps: list[Step],
    deployed_brokers: tuple[int, ...] | None,
    declared_brokers: tuple[int, ...],
) -> tuple[int, ...]:
    """The KRaft voters the change deletes: controllers whose StatefulSet goes, or, when the
    brokers are the voters (`quorum.combined`), the brokers that go."""
    if config.quorum.kind != "kraft":
        return ()
    if config.quorum.combined:
        return tuple(sorted(set(deployed_brokers or ()) - set(declared_brokers)))
    prefix = ClusterModel.from_config(config).names.controller(0).removesuffix("0")
    return tuple(
        sorted(
            int(step.name.removeprefix(prefix))
            for step in steps
            if step.op == "delete"
            and step.kind == "StatefulSet"
            and step.name.startswith(prefix)
            and step.name.removeprefix(prefix).isdigit()
        )
    )


def broker_ids(broker_zones: object) -> tuple[int, ...] | None:
    """The broker ids of the `broker_zones` output (workload name → zone), or None."""
    if not isinstance(broker_zones, dict) or not broker_zones:
        return None
    return tuple(sorted(int(str(name).rsplit("-", 1)[-1]) for name in broker_zones))


def growth_notes(preview: StackPreview) -> list[str]:
    """The step that must follow (new brokers) or precede (removed brokers or voters) `pulumi
    up`."""
    after = preview.declared_brokers
    before = preview.deployed_brokers or after  # a new stack has no brokers to grow from
    stack = preview.stack
    notes = []
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    if added:
        notes.append(
            f"> **Brokers {len(before)} → {len(after)}**: Kafka puts only new partitions on "
            f"broker(s) {', '.join(map(str, added))}. Once `pulumi up` has them running, the "
            f"rebalance step is due: `kafkastack rebalance --stack {stack} --bootstrap HOST:PORT "
            "--throttle MB/S` (`--dry-run` prints the plan)."
        )
    if removed:
        ids = ",".join(map(str, removed))
        notes.append(
            f"> **Brokers {len(before)} → {len(after)}**: broker(s) {ids} would be removed. "
            f"Drain them first: `kafkastack drain --stack {stack} --brokers {ids} "
            "--bootstrap HOST:PORT --throttle MB/S`: a removed broker that still holds "
            "replicas leaves its partitions under-replicated."
        )
    if preview.going_voters:
        notes.append(
            f"> **KRaft voter(s) {', '.join(map(str, preview.going_voters))} would be "
            f"deleted**: take them out of the voter set first: `kafkastack remove-voters "
            f"--stack {stack}`. `pulumi up` refuses while they are voters: a quorum that still "
            "counts them tolerates fewer lost controllers."
        )
    return notes


def project_of(stacks_dir: Path) -> Path:
    """The Pulumi project a stacks folder belongs to (its parent holds Pulumi.yaml)."""
    project = stacks_dir.resolve().parent
    if not (project / "Pulumi.yaml").is_file():
        raise ConfigError(
            f"--stacks-dir {stacks_dir}: no Pulumi.yaml beside it in {project}; "
            "name the stacks folder of a kafkastack project"
        )
    return project


def offline_baseline(
    project: Path, revision: str, stack: str, workdir: Path
) -> tuple[Engine, dict[str, Any]]:
    """A throwaway backend holding what `pulumi up` of `revision` would have deployed.

    The base revision's program and stack file run through the real engine, with the provider
    rendering to files instead of a cluster (`renderYamlToDirectory`). Returns the engine to
    preview the head with, and the provider settings the head must use too (a change in them
    would read as replacing every object).
    """
    base = workdir / "base"
    base.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision],
        cwd=project,
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise ConfigError(
            f"--base {revision}: {archive.stderr.decode(errors='replace').strip()}; "
            "name a commit of this repository"
        )
    subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
    venv = project / ".venv"
    if venv.exists() and not (base / ".venv").exists():
        # Pulumi.yaml names the project's virtualenv; the base runs with the same packages.
        (base / ".venv").symlink_to(venv.resolve())
    engine = Engine(state_dir=workdir / "state", passphrase=LOCAL_PASSPHRASE)
    settings: dict[str, Any] = {"kubernetes:renderYamlToDirectory": str(workdir / "rendered")}
    base_file = base / "stacks" / f"Pulumi.{stack}.yaml"
    if base_file.is_file():
        base_config = load_stack(base / "stacks", stack)
        settings.update(placeholder_passwords(base_config))
        base_engine = replace(engine, project_dir=base)
        base_engine.select(stack, base_file, settings)
        base_engine.up(stack)
    return engine, settings


def _short(message: str) -> str:
    """An engine error with each URN cut to its object's logical name, first sentence only."""
    message = re.sub(r'"urn:pulumi:[^"]*::([^"]+)"', r"`\1`", message)
    return message.removeprefix("error: ").split(". ", 1)[0][:240]


def _value(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def markdown(preview: StackPreview) -> str:
    lines = [f"## kafkastack preview: stack `{preview.stack}` (pulumi preview)", ""]
    if "load_balancer" in preview.after:
        lines += [f"External access: {preview.after['load_balancer']}.", ""]
    if preview.before is None:
        lines += ["New stack: nothing is deployed yet.", ""]
    elif preview.before != preview.after:
        lines += ["**Sizing change**", "", "| | deployed | proposed |", "| --- | ---: | ---: |"]
        for key, after in preview.after.items():
            label = key.replace("_", " ").replace("mb s", "MB/s").replace("gib", "GiB")
            lines.append(f"| {label} | {_value(preview.before.get(key, '–'))} | {_value(after)} |")
        lines.append("")
    else:
        lines += ["Sizing unchanged.", ""]
    if preview.refusals:
        lines += [
            f"> **Pulumi refuses {len(preview.refusals)} step(s)** of this change "
            "(protected objects; `pulumi up` would stop):",
            "",
            *[f"> - {_short(refusal)}" for refusal in preview.refusals[:10]],
            "",
        ]
    if preview.not_now:
        lines += [
            "> **Not now**: the cluster is not ready for `pulumi up` at this moment (the change "
            "itself is fine):",
            "",
            *[f"> - {reason}" for reason in preview.not_now],
            "",
        ]
    if preview.protocol_changes:
        lines += [
            "> **This change cannot roll**: it changes how the nodes talk to each other. A node "
            "restarted with the new protocol and one still on the old cannot talk on that "
            "listener, so the ordered roll would stop at its first node. It needs every Kafka pod "
            "restarted together, a short outage to plan (docs/provisioning.md, "
            '"Changes roll one node at a time"):',
            "",
            *[f"> - {change.sentence()}" for change in preview.protocol_changes],
            "",
        ]
    notes = growth_notes(preview)
    if notes:
        lines += [*notes, ""]
    if preview.risks:
        lines += [
            f"> **Data-loss risk**: {len(preview.risks)} stateful object(s) would be replaced "
            "or deleted.",
            "",
        ]
    found = preview.changes
    if not found:
        lines.append("No object changes.")
        return "\n".join(lines) + "\n"
    counts = {op: sum(1 for s in found if s.op == op) for op in OPERATIONS}
    lines += [
        ", ".join(f"{n} to {op}" for op, n in counts.items() if n),
        "",
        "| operation | kind | name | changed fields | |",
        "| --- | --- | --- | --- | --- |",
    ]
    for step in sorted(found, key=lambda s: (OPERATIONS.index(s.op), s.kind, s.name)):
        risk = "⚠ data-loss risk" if step.data_loss_risk else ""
        fields = ", ".join(f"`{d}`" for d in step.diffs[:6]) + (" …" if len(step.diffs) > 6 else "")
        lines.append(f"| {step.op} | {step.kind} | {step.name} | {fields} | {risk} |")
    return "\n".join(lines) + "\n"
