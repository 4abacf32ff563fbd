"""Expandable volumes on the real nodes, provisioned per claim as a cloud's CSI driver does.

Node-local PersistentVolumes (local_volumes.volumes) have a fixed capacity and no driver to
grow them, so a larger claim changes nothing underneath. A stack whose StorageClass names
`PROVISIONER` gets volumes that really grow instead:
- loop_provisioner.py (a thread beside `pulumi up`) answers each claim the scheduler placed
  (WaitForFirstConsumer's `selected-node`) with a PersistentVolume of exactly the claim's size
  on that node: the claim's later growth is then a real change of size;
- the volume is a FlexVolume of `DRIVER` (loop_volume_driver.sh, installed into every kubelet's
  plugin folder): an XFS filesystem in a sparse file under the node's folder. Kubernetes counts
  FlexVolumes as expandable by the kubelet alone: the controller-manager records the new size,
  and the kubelet of the node that mounts the volume has the driver grow the file and then the
  mounted filesystem, with no restart of the pod.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from infra.model.volumes import LOCAL_LOOP_PROVISIONER

PROVISIONER = LOCAL_LOOP_PROVISIONER
DRIVER = "kafkastack.io/loop"  # FlexVolume's vendor/driver: the folder vendor~driver
DRIVER_SCRIPT = Path(__file__).with_name("loop_volume_driver.sh")
FS_TYPE = "xfs"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
_BINARY_SUFFIXES = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_QUANTITY = re.compile(r"^(\d+)(Ki|Mi|Gi|Ti)?$")


def install_driver(plugin_dir: Path) -> Path:
    """Put the driver where a kubelet with `plugin_dir` finds it. Written aside and renamed: the
    kubelet watches the folder and would call a half-written file."""
    folder = plugin_dir / DRIVER.replace("/", "~")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / DRIVER.split("/")[1]
    part = folder / f".{target.name}.part"
    shutil.copyfile(DRIVER_SCRIPT, part)
    part.chmod(0o755)
    part.replace(target)
    return target


def quantity_bytes(quantity: str) -> int:
    """A storage quantity as claims carry it (`1Gi`, `512Mi`, a byte count) in bytes."""
    match = _QUANTITY.match(quantity)
    if match is None:
        raise ValueError(
            f"storage quantity {quantity!r}: loop volumes take whole Ki/Mi/Gi/Ti or bytes"
        )
    return int(match[1]) * _BINARY_SUFFIXES[match[2] or ""]


def backing_file(volume: dict[str, Any]) -> Path | None:
    """The file holding a loop volume's filesystem; None for any other kind of volume."""
    flex = volume["spec"].get("flexVolume") or {}
    if flex.get("driver") != DRIVER:
        return None
    return Path(flex["options"]["file"])


def on_node(node: str) -> dict[str, Any]:
    """The node affinity of a volume that lives on one node (a `local` or a loop volume): its
    claims bind, and its pods run, only there."""
    term = {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}}


def loop_classes(classes: list[dict[str, Any]]) -> dict[str, str]:
    """StorageClass name → reclaim policy, for the classes this provisioner serves."""
    return {
        c["metadata"]["name"]: c.get("reclaimPolicy", "Delete")
        for c in classes
        if c.get("provisioner") == PROVISIONER
    }


def waiting_claims(claims: list[dict[str, Any]], classes: dict[str, str]) -> list[dict[str, Any]]:
    """Claims of a loop class the scheduler has placed on a node and no volume answers yet."""
    return [
        c
        for c in claims
        if c["spec"].get("storageClassName") in classes
        and not c["spec"].get("volumeName")
        and c.get("status", {}).get("phase") == "Pending"
        and SELECTED_NODE in c["metadata"].get("annotations", {})
    ]


def volume_for(
    claim: dict[str, Any], reclaim: str, folder: Path, labels: dict[str, str]
) -> dict[str, Any]:
    """The PersistentVolume answering `claim`: its exact size, on the node the scheduler chose,
    bound to it from the start (claimRef), its file in that node's volume `folder`."""
    meta = claim["metadata"]
    node = meta["annotations"][SELECTED_NODE]
    name = f"pvc-{meta['uid']}"
    size = claim["spec"]["resources"]["requests"]["storage"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER},
        },
        "spec": {
            "capacity": {"storage": size},
            "accessModes": claim["spec"]["accessModes"],
            "persistentVolumeReclaimPolicy": reclaim,
            "storageClassName": claim["spec"]["storageClassName"],
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": meta["namespace"],
                "name": meta["name"],
                "uid": meta["uid"],
            },
            "flexVolume": {
                "driver": DRIVER,
                "fsType": FS_TYPE,
                "options": {
                    "file": str(folder / "loop" / f"{name}.img"),
                    "size": str(quantity_bytes(size)),
                },
            },
            "nodeAffinity": on_node(node),
        },
    }


def volume_leftover(volume: dict[str, Any], nodes_folder: Path) -> Path | None:
    """What a released volume leaves on this machine: a loop volume's file or a real node's
    `local` folder, and only if it lies in the real nodes' folder. A fake node's path (never
    created) and anything else are not ours to remove: a volume without a path once made this
    the working directory, and releasing a stack removed the checkout."""
    found = backing_file(volume)
    if found is None:
        local = (volume["spec"].get("local") or {}).get("path")
        found = Path(local) if local else None
    if found is None or not found.is_absolute():
        return None
    normal = Path(os.path.normpath(found))
    return normal if normal.is_relative_to(nodes_folder) and normal != nodes_folder else None
