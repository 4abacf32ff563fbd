"""Kubernetes labels: one vocabulary for selectors, anti-affinity and policies."""

from __future__ import annotations

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


def component_labels(cluster: str, component: str, workload: str | None = None) -> dict[str, str]:
    labels = {PART_OF: "kafkastack", INSTANCE: cluster, COMPONENT: component}
    if workload:
        labels[NAME] = workload
    return labels


def selector(cluster: str, component: str) -> dict[str, str]:
    return {INSTANCE: cluster, COMPONENT: component}
