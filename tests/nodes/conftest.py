"""One local cluster with real nodes (containerd + kubelet each, three zones) for the session;
their CNI is Multus in front of the pod bridge, so pods may also ask for a second network."""

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
    nodes = RealNodes(kube, count=3, multus=True)
    try:
        nodes.up()
        yield nodes
    finally:
        nodes.down()
        kube.down()
