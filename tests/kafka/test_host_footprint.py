"""A harness run touches only what it owns: no in-pod path appears on the host, and of the
`ksv-*` network namespaces it deletes only those it made."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.kafka.conftest import start_cluster

pytestmark = pytest.mark.kafka

# Every in-pod path's top the rendered pods name (infra/model/paths.py), and /conf, where an
# earlier harness made ZooKeeper's config mount point.
IN_POD_TOPS = [
    Path("/etc/kafka"),
    Path("/etc/zookeeper"),
    Path("/var/lib/kafka"),
    Path("/var/lib/zookeeper"),
    Path("/opt/kafka"),
    Path("/conf"),
]


def _remove_empty_mount_points(top: Path) -> None:
    """Earlier harness versions left empty mount-point folders here; rmdir refuses anything
    that holds a file, so nothing of value can go."""
    if not top.is_dir():
        return
    for sub in sorted(top.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        sub.rmdir()
    top.rmdir()


def _namespaces() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return [line.split(" ")[0] for line in listed.stdout.splitlines() if line.strip()]


def test_a_run_leaves_the_host_and_other_namespaces_alone(tmp_path: Path) -> None:
    for top in IN_POD_TOPS:
        _remove_empty_mount_points(top)
    foreign = f"ksv-someone-else-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", foreign], check=True)
    try:
        cluster = start_cluster(tmp_path, brokers=3)
        own_prefix = f"ksv-{cluster.network.run_id}-"
        try:
            own = [n for n in _namespaces() if n.startswith(own_prefix)]
            assert sorted(own) == sorted(cluster.network.created)
            assert [top for top in IN_POD_TOPS if top.exists()] == []
            # The brokers did write their data: into the run's folders, through the mounts.
            assert list((tmp_path / "run").glob("kafka-broker-0/data-0/meta.properties"))
        finally:
            cluster.close()
        left = _namespaces()
        assert foreign in left
        assert [n for n in left if n.startswith(own_prefix)] == []
        assert [top for top in IN_POD_TOPS if top.exists()] == []
    finally:
        subprocess.run(["ip", "netns", "delete", foreign], check=False)
