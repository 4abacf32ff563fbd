"""A pull-request preview from renders: what a stack change creates, updates, replaces, deletes.

Both sides are rendered with the current code: the stack file as it is now, and as it was at a
base revision. So the preview shows what a config or sizing change does to every object, and
flags what would lose data: a stateful object deleted or replaced.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra import render
from infra.config import ConfigError, StackConfig, load_stack

STATEFUL_KINDS = frozenset({"StatefulSet", "PersistentVolumeClaim", "StorageClass"})
# Changing any of these on an existing object makes Kubernetes refuse the update: the object has
# to be deleted and created again, which for a StatefulSet drops its pods' identity.
IMMUTABLE = {
    "StatefulSet": ("spec.selector", "spec.serviceName", "spec.volumeClaimTemplates"),
    "StorageClass": ("provisioner", "parameters", "reclaimPolicy", "volumeBindingMode"),
    "Deployment": ("spec.selector",),
    "Service": ("spec.clusterIP",),
}


@dataclass(frozen=True)
class Change:
    kind: str
    name: str
    operation: str  # create | update | replace | delete

    @property
    def data_loss_risk(self) -> bool:
        return self.kind in STATEFUL_KINDS and self.operation in {"replace", "delete"}


def _field(obj: dict[str, Any], dotted: str) -> Any:
    value: Any = obj
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def changes(
    before: dict[tuple[str, str], dict[str, Any]], after: dict[tuple[str, str], dict[str, Any]]
) -> list[Change]:
    result = []
    for key in sorted(before.keys() | after.keys()):
        kind, name = key
        if key not in before:
            result.append(Change(kind, name, "create"))
        elif key not in after:
            result.append(Change(kind, name, "delete"))
        elif before[key] != after[key]:
            immutable = any(
                _field(before[key], f) != _field(after[key], f) for f in IMMUTABLE.get(kind, ())
            )
            result.append(Change(kind, name, "replace" if immutable else "update"))
    return result


def stack_at(revision: str, environment: str, stacks_dir: Path) -> StackConfig | None:
    """The stack as it was at `revision`, or None when the file did not exist then."""
    relative = (
        (stacks_dir / f"Pulumi.{environment}.yaml").resolve().relative_to(_repo_root(stacks_dir))
    )
    shown = subprocess.run(
        ["git", "show", f"{revision}:{relative.as_posix()}"],
        cwd=stacks_dir,
        capture_output=True,
        text=True,
        check=False,
    )
    if shown.returncode != 0:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / f"Pulumi.{environment}.yaml").write_text(shown.stdout, encoding="utf-8")
        return load_stack(Path(tmp), environment)


def _repo_root(path: Path) -> Path:
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"],
        cwd=path,
        capture_output=True,
        text=True,
        check=False,
    )
    if top.returncode != 0:
        raise ConfigError(f"{path}: not in a git repository; --base needs one")
    return Path(top.stdout.strip()).resolve()


def _row(label: str, before: object, after: object) -> str:
    return (
        f"| {label} | {before:g} | {after:g} |"
        if isinstance(before, float) and isinstance(after, float)
        else f"| {label} | {before} | {after} |"
    )


def markdown(
    environment: str, base: str, old: StackConfig | None, new: StackConfig, found: list[Change]
) -> str:
    lines = [f"## kafkastack preview: stack `{environment}` against `{base}`", ""]
    if old is not None:
        a, b = old.sizing.cluster, new.sizing.cluster
        if a != b:
            lines += [
                "**Sizing change**",
                "",
                "| | before | after |",
                "| --- | ---: | ---: |",
                _row("brokers", a.brokers, b.brokers),
                _row("binding constraint", a.binding_constraint, b.binding_constraint),
                _row("peak ingress MB/s", a.peak_ingress_mb_s, b.peak_ingress_mb_s),
                _row("storage per broker GiB", a.storage_per_broker_gib, b.storage_per_broker_gib),
                _row(
                    "quorum",
                    f"{a.quorum.kind} × {a.quorum.nodes}",
                    f"{b.quorum.kind} × {b.quorum.nodes}",
                ),
                "",
            ]
        else:
            lines += ["Sizing unchanged.", ""]
    else:
        lines += ["New stack: every object is created.", ""]
    risks = [c for c in found if c.data_loss_risk]
    if risks:
        lines += [
            f"> **Data-loss risk**: {len(risks)} stateful object(s) would be replaced or deleted.",
            "",
        ]
    if not found:
        lines.append("No object changes.")
        return "\n".join(lines) + "\n"
    counts = {
        op: sum(1 for c in found if c.operation == op)
        for op in ("create", "update", "replace", "delete")
    }
    lines += [
        ", ".join(f"{n} to {op}" for op, n in counts.items() if n),
        "",
        "| operation | kind | name | |",
        "| --- | --- | --- | --- |",
    ]
    for c in found:
        risk = "⚠ data-loss risk" if c.data_loss_risk else ""
        lines.append(f"| {c.operation} | {c.kind} | {c.name} | {risk} |")
    return "\n".join(lines) + "\n"


def preview(stacks_dir: Path, environment: str, base: str) -> tuple[list[Change], str]:
    new = load_stack(stacks_dir, environment)
    old = stack_at(base, environment, stacks_dir)
    before = render.manifests(old) if old is not None else {}
    found = changes(before, render.manifests(new))
    return found, markdown(environment, base, old, new, found)
