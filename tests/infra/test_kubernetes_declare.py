"""`declare` registers each object as its pulumi_kubernetes class would, without importing the
classes (infra/components/kubernetes.py says why)."""

from __future__ import annotations

import json
import subprocess
import sys
from operator import attrgetter
from pathlib import Path
from typing import Any

import pulumi
import pytest

from infra import render
from infra.components import kubernetes
from infra.config import load_stack
from infra.stack_config import StackConfig


def _sdk_declare(
    kind: str, name: str, manifest: dict[str, Any], parent: pulumi.Resource, **options: Any
) -> pulumi.CustomResource:
    """The reference: the SDK's own class for the kind, given the manifest's top-level fields
    as its keyword arguments (what `declare` did before it stopped importing them)."""
    import pulumi_kubernetes as k8s

    classes: dict[str, Any] = {
        "StorageClass": k8s.storage.v1.StorageClass,
        "StatefulSet": k8s.apps.v1.StatefulSet,
        "Deployment": k8s.apps.v1.Deployment,
        "Job": k8s.batch.v1.Job,
        "Service": k8s.core.v1.Service,
        "ConfigMap": k8s.core.v1.ConfigMap,
        "PersistentVolumeClaimPatch": k8s.core.v1.PersistentVolumeClaimPatch,
        "Secret": k8s.core.v1.Secret,
        "Namespace": k8s.core.v1.Namespace,
        "NetworkPolicy": k8s.networking.v1.NetworkPolicy,
        "PodDisruptionBudget": k8s.policy.v1.PodDisruptionBudget,
    }
    assert set(classes) == set(kubernetes.KINDS)
    if kind not in classes:
        return kubernetes.declare(kind, name, manifest, parent, **options)
    snake = {
        "".join(f"_{c.lower()}" if c.isupper() else c for c in key): value
        for key, value in manifest.items()
        if key not in ("apiVersion", "kind")
    }
    resource: pulumi.CustomResource = classes[kind](
        name, opts=pulumi.ResourceOptions(parent=parent, **options), **snake
    )
    return resource


Registration = tuple[str, str, str, tuple[str, ...], str | None]


def _registrations(
    config: StackConfig, monkeypatch: pytest.MonkeyPatch, declare: Any
) -> tuple[list[render.Captured], list[Registration]]:
    """What the engine was sent for every object of the stack (under mocks), and each custom
    resource's type, name, plugin version, secret outputs and parent."""
    seen: list[Registration] = []
    original = pulumi.CustomResource.__init__

    def spy(self: Any, t: str, name: str, props: Any = None, opts: Any = None, **kw: Any) -> None:
        o = opts or pulumi.ResourceOptions()
        secret = tuple(sorted(o.additional_secret_outputs or ()))
        parent = getattr(o.parent, "_name", None)
        seen.append((t, name, str(o.version), secret, parent))
        original(self, t, name, props, opts, **kw)

    with monkeypatch.context() as patch:
        patch.setattr(pulumi.CustomResource, "__init__", spy)
        patch.setattr("infra.components.kafka_cluster.declare", declare)
        captured = render.capture(config)
    return sorted(captured, key=attrgetter("type", "name")), sorted(seen)


# dev runs ZooKeeper, the others KRaft (staging and prod with controllers of their own).
@pytest.mark.parametrize("environment", ["local", "dev", "staging", "prod"])
def test_every_object_of_a_stack_is_registered_as_its_sdk_class_registers_it(
    environment: str, repo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_stack(repo_root / "stacks", environment)
    ours = _registrations(config, monkeypatch, kubernetes.declare)
    sdk = _registrations(config, monkeypatch, _sdk_declare)
    assert ours == sdk
    kinds = {c.type for c in ours[0]}
    assert "kubernetes:apps/v1:StatefulSet" in kinds and "kubernetes:core/v1:Secret" in kinds


def test_the_program_imports_no_api_group_of_the_sdk_and_no_aws_client(repo_root: Path) -> None:
    """Each engine command starts the program afresh: what it imports is CPU every time."""
    script = (
        "import json, sys, infra.program; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('pulumi_kubernetes.', "
        "'boto3', 'botocore')))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=repo_root, capture_output=True, text=True, check=True
    ).stdout
    loaded = json.loads(out)
    heavy = [m for m in loaded if m.count(".") >= 2 and not m.startswith("pulumi_kubernetes._")]
    assert heavy == [] and not [m for m in loaded if m.startswith(("boto3", "botocore"))], loaded
