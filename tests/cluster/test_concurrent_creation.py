"""Two local control planes created at the same moment (the suite's two lanes each make one)
both come up on ports of their own: kwokctl picks free ports when it starts, so without one
creation at a time both picked 32761-32766 and one cluster never scheduled a pod."""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml

from infra.localcluster.control_plane import LocalKubernetes

pytestmark = pytest.mark.cluster


def _server(kube: LocalKubernetes) -> str:
    config = yaml.safe_load(kube.kubeconfig.read_text(encoding="utf-8"))
    return str(config["clusters"][0]["cluster"]["server"])


def test_clusters_created_at_once_each_get_their_own_ports() -> None:
    clusters = [LocalKubernetes(f"concurrent-{i}-{os.getpid()}") for i in range(2)]
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(LocalKubernetes.up, clusters))
        servers = [_server(kube) for kube in clusters]
        assert len(set(servers)) == 2, servers
        for kube in clusters:
            assert kube.is_up(), f"{kube.name} at {_server(kube)} is not ready"
            zones = kube.kubectl(
                "get",
                "nodes",
                "-o",
                "jsonpath={.items[*].metadata.labels.topology\\.kubernetes\\.io/zone}",
            ).stdout.split()
            assert {"zone-a", "zone-b", "zone-c"} <= set(zones), zones
    finally:
        for kube in clusters:
            kube.down()
            shutil.rmtree(kube.workdir, ignore_errors=True)
