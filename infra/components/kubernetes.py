"""Turns a manifest dict from infra/model into the matching pulumi_kubernetes resource.

Plumbing only: the manifests are complete; this gives each kind the type token, fixed fields and
options of its pulumi_kubernetes class and hands the manifest to the engine as it is.

The SDK's classes are not imported: each API group's package (`pulumi_kubernetes.core.v1`, ...)
defines every class of the group when first touched, about 1.5 s of CPU that every engine
command paid before its program declared anything (a `pulumi preview` on each pull request, a
few hundred commands in the test suite). Declaring `pulumi.CustomResource` with the class's type
token sends the engine the same registration, so the URNs, the state and the provider's
behaviour are unchanged (tests/infra/test_kubernetes_declare.py compares each kind with its SDK
class). Aliases to the kinds' older API versions (`apps/v1beta1`, ...) are left out: they only
let a stack move off objects declared at those versions, which kafkastack never used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

# The provider version and download location the SDK's classes ask the engine for.
from pulumi_kubernetes._utilities import get_resource_opts_defaults


@dataclass(frozen=True)
class Kind:
    token: str
    """The SDK class's type token (`kubernetes:<group>/<version>:<class>`): the URN's type."""
    secret_outputs: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        group_version = self.token.split(":")[1]
        return group_version.removeprefix("core/")

    @property
    def kind(self) -> str:
        # A Patch class applies chosen fields of an object of its kind.
        return self.token.split(":")[2].removesuffix("Patch")


KINDS: dict[str, Kind] = {
    "StorageClass": Kind("kubernetes:storage.k8s.io/v1:StorageClass"),
    "StatefulSet": Kind("kubernetes:apps/v1:StatefulSet"),
    "Deployment": Kind("kubernetes:apps/v1:Deployment"),
    "Job": Kind("kubernetes:batch/v1:Job"),
    "Service": Kind("kubernetes:core/v1:Service"),
    "ConfigMap": Kind("kubernetes:core/v1:ConfigMap"),
    # Server-side apply of chosen fields of an object something else created (a claim).
    "PersistentVolumeClaimPatch": Kind("kubernetes:core/v1:PersistentVolumeClaimPatch"),
    # Its data stays encrypted in the stack's state, as the SDK class has it.
    "Secret": Kind("kubernetes:core/v1:Secret", secret_outputs=("data", "stringData")),
    "Namespace": Kind("kubernetes:core/v1:Namespace"),
    "NetworkPolicy": Kind("kubernetes:networking.k8s.io/v1:NetworkPolicy"),
    "PodDisruptionBudget": Kind("kubernetes:policy/v1:PodDisruptionBudget"),
}


def declare(
    kind: str, name: str, manifest: dict[str, Any], parent: pulumi.Resource, **options: Any
) -> pulumi.CustomResource:
    """Declare one object as a child of `parent` (logical name = `name`)."""
    opts = pulumi.ResourceOptions(parent=parent, **options)
    if "apiVersion" in manifest and kind not in KINDS:
        return k8s.apiextensions.CustomResource(
            name,
            api_version=manifest["apiVersion"],
            kind=manifest["kind"],
            metadata=manifest["metadata"],
            spec=manifest.get("spec"),
            opts=opts,
        )
    known = KINDS[kind]
    # The program never reads an object's outputs (its `status`), so none is declared.
    props = {**manifest, "apiVersion": known.api_version, "kind": known.kind}
    defaults = get_resource_opts_defaults()
    if known.secret_outputs:
        defaults = pulumi.ResourceOptions.merge(
            defaults, pulumi.ResourceOptions(additional_secret_outputs=list(known.secret_outputs))
        )
    return pulumi.CustomResource(
        known.token, name, props, pulumi.ResourceOptions.merge(defaults, opts)
    )
