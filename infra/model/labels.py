"""Kubernetes labels and annotations: one vocabulary for selectors, anti-affinity, policies."""

from __future__ import annotations

import hashlib
from typing import Any

PART_OF = "app.kubernetes.io/part-of"
COMPONENT = "app.kubernetes.io/component"
INSTANCE = "app.kubernetes.io/instance"
NAME = "app.kubernetes.io/name"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"

BROKER = "broker"
CONTROLLER = "controller"
ZOOKEEPER = "zookeeper"
HAPROXY = "haproxy"

# On a pod template: the hash of the files its ConfigMap holds, so a changed file rolls the pods.
CONFIG_HASH = "kafkastack.dev/config-hash"
# On the pod template of a node that cannot reload a renewed certificate: the fingerprint of the
# certificate its next restart serves (infra/certificate_restarts.py).
CERTIFICATE_RESTART = "kafkastack.dev/certificate-restart"


def content_hash(files: dict[str, str]) -> str:
    """A short digest of a ConfigMap's files, names and contents."""
    text = "".join(f"{name}\0{files[name]}\0" for name in sorted(files))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def component_labels(cluster: str, component: str, workload: str | None = None) -> dict[str, str]:
    labels = {PART_OF: "kafkastack", INSTANCE: cluster, COMPONENT: component}
    if workload:
        labels[NAME] = workload
    return labels


def component_of(obj: dict[str, Any]) -> str | None:
    """The component (BROKER, CONTROLLER, ...) a listed Kubernetes object says it is."""
    found = obj["metadata"].get("labels", {}).get(COMPONENT)
    return None if found is None else str(found)


def selector(cluster: str, component: str) -> dict[str, str]:
    return {INSTANCE: cluster, COMPONENT: component}
