"""Node-local PersistentVolumes of the local clusters: two per StorageClass on each node, bound
to it, so `WaitForFirstConsumer` binds each claim on its pod's node (`LocalKubernetes.add_volumes`
makes them, `delete_node_volumes` deletes them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infra.localcluster.loop_volumes import on_node

VOLUMES_PER_NODE = {"broker": 2, "quorum": 2}  # data + metadata, or snapshots + txlog
# Fake nodes' volumes are never mounted; a real node's are folders it owns (real_node_volumes).
FAKE_VOLUME_ROOT = Path("/mnt/kafkastack")
VOLUME_NODE_LABEL = "kafkastack.io/volume-node"


def real_node_volumes(folder: Path) -> dict[str, Path]:
    """Each running real node (its node.json under `folder`) → the folder for its volumes,
    inside the node's own folder, so stopping the node gives them back."""
    return {
        spec.parent.name: spec.parent / "volumes" for spec in sorted(folder.glob("*/node.json"))
    }


def volumes(storage_classes: dict[str, str], hosts: dict[str, Path]) -> list[dict[str, Any]]:
    """Node-local PersistentVolumes for the stack's StorageClasses on each node (name → folder
    holding its volumes): WaitForFirstConsumer binding then follows the scheduler's choice of
    node, as with real zonal disks."""
    result = []
    for host_name, folder in hosts.items():
        for role, class_name in storage_classes.items():
            for v in range(VOLUMES_PER_NODE[role]):
                result.append(
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolume",
                        "metadata": {
                            "name": f"{host_name}-{class_name}-{v}",
                            "labels": {VOLUME_NODE_LABEL: host_name},
                        },
                        "spec": {
                            "capacity": {"storage": "16Ti"},
                            "accessModes": ["ReadWriteOnce"],
                            "persistentVolumeReclaimPolicy": "Retain",
                            "storageClassName": class_name,
                            "local": {"path": str(folder / f"{class_name}-{v}")},
                            "nodeAffinity": on_node(host_name),
                        },
                    }
                )
    return result
