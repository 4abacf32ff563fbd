"""The local cluster's zones, and the fake nodes kwok keeps Ready in them.

Real nodes (nodes.py) take their zones from here too; the fake ones stand in for them while none
runs (LocalKubernetes.apply_fake_nodes), enough of them for the real scheduler to place a stack
by its rendered affinity rules.
"""

from __future__ import annotations

from typing import Any

ZONES = ("zone-a", "zone-b", "zone-c")
# Brokers and quorum pods each want a node of their own: the committed local stack's sizing puts
# 4 brokers and up to 2 controllers in a zone; one node more leaves room to grow a test stack.
NODES_PER_ZONE = 7
# The label telling the fake nodes from real ones: a selector for deleting them all at once.
FAKE_NODE_LABEL = ("type", "kwok")


def is_fake_node(node: dict[str, Any]) -> bool:
    key, value = FAKE_NODE_LABEL
    return bool(node["metadata"].get("labels", {}).get(key) == value)


def fake_nodes(cluster: str) -> list[dict[str, Any]]:
    """The fake Nodes of cluster `cluster`, labelled with zone and hostname like cloud nodes."""
    capacity = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return [
        _fake_node(f"{cluster}-{zone}-{i}", zone, capacity)
        for zone in ZONES
        for i in range(1, NODES_PER_ZONE + 1)
    ]


def _fake_node(name: str, zone: str, capacity: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {"kwok.x-k8s.io/node": "fake"},
            "labels": {
                **dict([FAKE_NODE_LABEL]),
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": zone,
            },
        },
        "status": {"capacity": capacity, "allocatable": capacity},
    }
