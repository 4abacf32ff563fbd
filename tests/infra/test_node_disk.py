"""The room real nodes take is asked of the disk before a node starts or an image is imported,
and the kubelets never trade the imported images for disk."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.localcluster import images, node_disk
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.node_config import NodeSpec, kubelet_config
from infra.localcluster.nodes import RealNodes

MIB = 1024**2


@pytest.fixture
def image_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Tarballs of 100 MiB for every image (sparse: they only need a size)."""
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path))
    for image in (*images.ALL, *images.ZOOKEEPER_MODE):
        image.tarball.parent.mkdir(parents=True, exist_ok=True)
        with image.tarball.open("wb") as tarball:
            tarball.truncate(100 * MIB)
    return tmp_path


def free_space(monkeypatch: pytest.MonkeyPatch, free: int) -> None:
    real = shutil.disk_usage(".")
    usage = type(real)(real.total, real.total - free, free)
    monkeypatch.setattr(node_disk.shutil, "disk_usage", lambda path: usage)


def test_the_room_counts_each_image_once_per_node_with_its_pods_and_a_spare(
    image_cache: Path,
) -> None:
    per_node = int(2 * 100 * MIB * node_disk.UNPACKED_PER_TARBALL_BYTE)
    wanted = [images.PAUSE, images.KAFKA, images.PAUSE]
    assert node_disk.room_needed(3, wanted) == (
        3 * (per_node + node_disk.POD_DATA_PER_NODE) + node_disk.SPARE
    )
    assert node_disk.room_needed(3, wanted, with_pod_data=False) == 3 * per_node + node_disk.SPARE


def test_too_little_disk_names_the_need_the_folder_and_the_fix(
    image_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = image_cache / "local-cluster" / "c" / "nodes"  # not made yet: its disk is asked
    free_space(monkeypatch, 3 * node_disk.GIB)
    with pytest.raises(LocalClusterError) as refused:
        node_disk.require_room(folder, 3, images.ALL)
    message = str(refused.value)
    need = node_disk.room_needed(3, images.ALL) / node_disk.GIB
    assert f"starting 3 real node(s) needs {need:.1f} GiB free on the disk of {folder}" in message
    assert "it has 3.0 GiB" in message and f"free {need - 3:.1f} GiB there" in message
    assert "KAFKASTACK_CACHE" in message
    free_space(monkeypatch, int(need * node_disk.GIB) + 1)
    node_disk.require_room(folder, 3, images.ALL)


def test_importing_more_images_without_the_room_touches_no_node(
    image_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = RealNodes(LocalKubernetes("unit"), count=3)
    calls: list[Any] = []
    monkeypatch.setattr(nodes, "ctr", lambda *args: calls.append(args))
    free_space(monkeypatch, node_disk.SPARE)
    with pytest.raises(LocalClusterError, match=r"more images for 3 real node\(s\) needs"):
        nodes.import_images(images.ZOOKEEPER_MODE)
    assert calls == []


def test_starting_nodes_without_the_room_starts_nothing(
    image_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    nodes = RealNodes(LocalKubernetes("unit"), count=2)
    started: list[Any] = []
    monkeypatch.setattr(nodes, "_start", lambda *args: started.append(args))
    free_space(monkeypatch, node_disk.SPARE)
    with pytest.raises(LocalClusterError, match=r"starting 2 real node\(s\) needs"):
        nodes._start_nodes(nodes.specs, {}, images.ALL)
    assert started == [] and not nodes.folder.exists()


def test_kubelets_have_no_disk_eviction_threshold_and_no_defaults_merged() -> None:
    conf = yaml.safe_load(kubelet_config(NodeSpec("c", 0, "zone-a", Path("/w/nodes"))))
    assert conf["evictionHard"] == {"memory.available": "100Mi"}
    assert conf["mergeDefaultEvictionSettings"] is False
    assert "evictionSoft" not in conf
