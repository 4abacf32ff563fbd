"""Which objects of a namespace are still the same ones after a step: name → uid (a replaced or
restarted object keeps its name and gets a new uid)."""

from __future__ import annotations

from infra.localcluster.control_plane import LocalKubernetes
from infra.model import labels


def uids(
    kube: LocalKubernetes, namespace: str, kind: str, component: str | None = None
) -> dict[str, str]:
    return {
        o["metadata"]["name"]: o["metadata"]["uid"]
        for o in kube.objects(kind, namespace)
        if component is None or labels.component_of(o) == component
    }
