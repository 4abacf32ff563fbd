"""The disk real nodes take, asked of the machine before they take it.

A node's containerd keeps the images imported into it unpacked (imported, not pulled: no
registry is reachable, so an image a node loses cannot come back), its pods write their volumes
and logs beside it, and every node has its own copy. The kubelets evict nothing for disk
(node_config.kubelet_config): a kubelet under disk pressure garbage-collects the images no pod
uses at that moment, which left a later pod of the HAProxy image in ErrImagePull. So the room is
checked here, before a node starts or an image is imported, and a shortfall is an error that
says how much is missing and where, instead of pods that fail one by one later."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from infra.localcluster import images
from infra.localcluster.control_plane import LocalClusterError

GIB = 1024**3
# A node's disk per byte of the tarballs imported into it. Measured with the layers' blobs
# discarded after unpacking (nodes.py imports so): 470 MiB for the 180 MiB of the pause,
# busybox, CoreDNS, HAProxy and Kafka 4.3 images (2.6), 607 MiB more for the 227 MiB of Kafka
# 3.9's and ZooKeeper's (2.7); 650 MiB for the first set while the blobs were kept.
UNPACKED_PER_TARBALL_BYTE = 2.7
# What one node's pods write during a test: broker volumes (sparse files filled by the records
# the proofs send), container and pod logs.
POD_DATA_PER_NODE = 1 * GIB
# Left free for everything else on the machine (the JVMs' class archives, Pulumi's state, the
# other lane's temporary files): the nodes must not be what fills the disk.
SPARE = 2 * GIB


def room_needed(nodes: int, wanted: Sequence[images.Image], with_pod_data: bool = True) -> int:
    """Bytes `nodes` nodes take for the images `wanted` (and their pods' data when new)."""
    unpacked = sum(image.require().stat().st_size for image in dict.fromkeys(wanted))
    per_node = int(unpacked * UNPACKED_PER_TARBALL_BYTE)
    if with_pod_data:
        per_node += POD_DATA_PER_NODE
    return nodes * per_node + SPARE


def free_bytes(folder: Path) -> int:
    """Free bytes on the disk that holds (or will hold) `folder`."""
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    return shutil.disk_usage(existing).free


def require_room(
    folder: Path, nodes: int, wanted: Sequence[images.Image], with_pod_data: bool = True
) -> None:
    """Refuse, naming the shortfall, when the disk holding `folder` lacks the room."""
    need = room_needed(nodes, wanted, with_pod_data)
    free = free_bytes(folder)
    if free < need:
        what = "more images for" if not with_pod_data else "starting"
        raise LocalClusterError(
            f"{what} {nodes} real node(s) needs {need / GIB:.1f} GiB free on the disk of "
            f"{folder} ({len(dict.fromkeys(wanted))} images unpacked per node, "
            f"{'1 GiB for its pods, ' if with_pod_data else ''}{SPARE // GIB} GiB to spare); "
            f"it has {free / GIB:.1f} GiB: free {(need - free) / GIB:.1f} GiB there (caches such "
            "as Go's and uv's are often the largest) or set KAFKASTACK_CACHE to a larger disk"
        )
