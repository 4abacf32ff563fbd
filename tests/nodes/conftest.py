"""One local cluster with real nodes (containerd + kubelet each, three zones) for the session,
their CNI Multus in front of the pod bridge so pods may also ask for a second network, and the
real-node variant of the local stack deployed on it once (`pulumi up`) for the proofs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.localcluster.control_plane import LocalKubernetes
from infra.localcluster.deployed import DeployedStack
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


@pytest.fixture(scope="session")
def _stack_deployment(
    real_nodes: RealNodes, repo_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> DeployedStack:
    source = repo_root / "stacks" / "Pulumi.local.yaml"
    return DeployedStack(real_nodes, source, tmp_path_factory.mktemp("real-node-stack"))


@pytest.fixture
def deployed_stack(_stack_deployment: DeployedStack) -> DeployedStack:
    """The stack on the nodes running now (deployed again if a test replaced them), Ready."""
    return _stack_deployment.ensure()
