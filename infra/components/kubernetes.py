"""Turns a manifest dict from infra/model into the matching pulumi_kubernetes resource.

Plumbing only: the manifests are complete; this maps kinds to SDK classes and top-level fields
to the SDK's keyword arguments.
"""

from __future__ import annotations

import re
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

_CLASSES: dict[str, Any] = {
    "StorageClass": k8s.storage.v1.StorageClass,
    "StatefulSet": k8s.apps.v1.StatefulSet,
    "Deployment": k8s.apps.v1.Deployment,
    "Job": k8s.batch.v1.Job,
    "Service": k8s.core.v1.Service,
    "ConfigMap": k8s.core.v1.ConfigMap,
    # Server-side apply of chosen fields of an object something else created (a claim).
    "PersistentVolumeClaimPatch": k8s.core.v1.PersistentVolumeClaimPatch,
    "Secret": k8s.core.v1.Secret,
    "Namespace": k8s.core.v1.Namespace,
    "NetworkPolicy": k8s.networking.v1.NetworkPolicy,
    "PodDisruptionBudget": k8s.policy.v1.PodDisruptionBudget,
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def declare(
    kind: str, name: str, manifest: dict[str, Any], parent: pulumi.Resource, **options: Any
) -> pulumi.CustomResource:
    """Declare one object as a child of `parent` (logical name = `name`)."""
    opts = pulumi.ResourceOptions(parent=parent, **options)
    if "apiVersion" in manifest and kind not in _CLASSES:
        return k8s.apiextensions.CustomResource(
            name,
            api_version=manifest["apiVersion"],
            kind=manifest["kind"],
            metadata=manifest["metadata"],
            spec=manifest.get("spec"),
            opts=opts,
        )
    fields = {_snake(k): v for k, v in manifest.items() if k not in ("apiVersion", "kind")}
    resource: pulumi.CustomResource = _CLASSES[kind](name, opts=opts, **fields)
    return resource
