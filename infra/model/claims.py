"""The volume claims a broker, controller or ZooKeeper server writes to, declared so their size
can grow in place.

A StatefulSet's volumeClaimTemplates are immutable: the Kubernetes provider replaces the whole
StatefulSet when one changes, and the claims the StatefulSet controller made never see the new
size. So the program leaves the templates' sizes as they were first created (`ignore_changes`)
and patches each existing claim instead: the StorageClass allows expansion, the API server
resizes the claim's volume, and nothing is replaced. A new workload (growth 3 → 5 brokers) gets
the current size in its templates, and its claims get the same patch.
"""

from __future__ import annotations

import copy
from typing import Any

from infra.model.access import SKIP_AWAIT
from infra.model.naming import Names

# The StatefulSet controller created each claim, so it owns the claim's fields too; a patch
# that changes one (the size) would conflict with it unless it takes the field over. And there
# is nothing to await: the provider's claim await wants a WaitForFirstConsumer claim Pending on
# create, so a patch of a claim already Bound (its pod scheduled) would wait forever.
PATCH_ANNOTATIONS = {"pulumi.com/patchForce": "true", **SKIP_AWAIT}


def template_size_paths(statefulset: dict[str, Any]) -> tuple[str, ...]:
    """The property paths of each template's size: the engine keeps the deployed values there,
    so a larger size never reads as a change to an immutable field (a replacement)."""
    templates = statefulset["spec"].get("volumeClaimTemplates", [])
    return tuple(
        f"spec.volumeClaimTemplates[{i}].spec.resources.requests.storage"
        for i in range(len(templates))
    )


def claim_patches(names: Names, statefulset: dict[str, Any]) -> list[dict[str, Any]]:
    """One server-side-apply patch per claim of the StatefulSet's single pod, carrying the
    template's whole spec: it expands an existing claim, and if it ever lands before the
    StatefulSet controller made the claim it creates the very claim the controller would adopt."""
    workload = statefulset["metadata"]["name"]
    namespace = statefulset["metadata"]["namespace"]
    return [
        {
            "metadata": {
                "name": names.claim(template["metadata"]["name"], workload),
                "namespace": namespace,
                "annotations": dict(PATCH_ANNOTATIONS),
            },
            "spec": copy.deepcopy(template["spec"]),
        }
        for template in statefulset["spec"].get("volumeClaimTemplates", [])
    ]
