"""One local cluster with real nodes (containerd + kubelet each, three zones) for the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from infra.localcluster.control_plane import LocalKubernetes
from infra.localcluster.nodes import RealNodes


@pytest.fixture(scope="session")
def real_nodes() -> Iterator[RealNodes]:
    kube = LocalKubernetes("kafkastack-nodes-test")
    kube.down()
    kube.up()
    nodes = RealNodes(kube, count=3)
    try:
        nodes.up()
        yield nodes
    finally:
        nodes.down()
        kube.down()
