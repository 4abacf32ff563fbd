"""One local cluster with real nodes (containerd + kubelet each, three zones) for this folder,
their CNI Multus in front of the pod bridge so pods may also ask for a second network, and the
real-node variant of the local stack deployed on it once (`pulumi up`) for the proofs; then,
for the proofs of prod's shape on-prem, its variant with KRaft controllers of their own on nodes
of their own and a second network, also deployed once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.localcluster.deployed import DeployedStack
from infra.localcluster.nodes import RealNodes, fresh_real_nodes
from tests.nodes.pods import DualDeployment
from tests.ordering import order_within


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Deploying a stack onto the nodes takes about a minute, starting the nodes half of one:
    the tests of this folder that only need the nodes run first, then those of the session's
    deployed stack, then the one that changes it for good (on the same deployment), then those
    of the dual-network variant with controllers of their own (the one that changes it last),
    then those that release both for a stack of their own, and last the one that stops the
    nodes (nothing starts them again after it)."""

    def group(fixtures: set[str]) -> int:
        if "nodes_to_stop" in fixtures:
            return 6
        if "dual_stack" in fixtures:
            return 3
        if "dual_stack_to_change" in fixtures:
            return 4
        if "deployed_stack" in fixtures:
            return 1
        if "stack_to_change" in fixtures:
            return 2
        return 5 if "_stack_deployment" in fixtures else 0

    order_within(items, Path(__file__).parent, group)


@pytest.fixture(scope="package")
def _node_set() -> Iterator[RealNodes]:
    with fresh_real_nodes(multus=True) as nodes:
        yield nodes


@pytest.fixture
def real_nodes(_node_set: RealNodes) -> RealNodes:
    """The real nodes, running: started again if a test left them stopped."""
    if not _node_set.running:
        _node_set.up()
    return _node_set


@pytest.fixture
def nodes_to_stop(released_nodes: RealNodes) -> RealNodes:
    """The running nodes, idle (the shared deployments released, as the tests before it in the
    tier leave them), for a test that stops them and leaves them stopped: it runs last, so the
    lane does not start them again (a test after it, in another order or alone, would through
    `real_nodes`)."""
    return released_nodes


@pytest.fixture(scope="package")
def _stack_deployment(
    _node_set: RealNodes, repo_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> DeployedStack:
    source = repo_root / "stacks" / "Pulumi.local.yaml"
    return DeployedStack(_node_set, source, tmp_path_factory.mktemp("real-node-stack"))


@pytest.fixture
def deployed_stack(
    real_nodes: RealNodes, _stack_deployment: DeployedStack, _dual_deployment: DualDeployment
) -> DeployedStack:
    """The stack on the nodes running now (deployed again if a test replaced them), Ready."""
    _dual_deployment.release()
    return _stack_deployment.ensure()


@pytest.fixture
def stack_to_change(
    real_nodes: RealNodes, _stack_deployment: DeployedStack, _dual_deployment: DualDeployment
) -> Iterator[DeployedStack]:
    """The session's deployment, Ready, for a test that changes it beyond what the other tests
    expect (more brokers on nodes of its own): it runs after them and reuses their deployment
    rather than deploying a copy; the next user deploys the stack afresh. The test releases
    it itself before giving back nodes it added; the release here covers a test that did not
    get that far."""
    _dual_deployment.release()
    yield _stack_deployment.ensure()
    _stack_deployment.release()


@pytest.fixture
def released_nodes(
    real_nodes: RealNodes, _stack_deployment: DeployedStack, _dual_deployment: DualDeployment
) -> RealNodes:
    """The nodes, for a stack of the test's own: the shared deployments hold the namespace and
    the nodes' volumes, so they are released first (the next test that uses one deploys it
    again), whichever test ran before or runs after."""
    _dual_deployment.release()
    _stack_deployment.release()
    return real_nodes


@pytest.fixture(scope="package")
def _dual_deployment(
    _node_set: RealNodes, repo_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> DualDeployment:
    source = repo_root / "stacks" / "Pulumi.local.yaml"
    workdir = tmp_path_factory.mktemp("dual-network-stack")
    return DualDeployment(
        DeployedStack(_node_set, source, workdir, quorum="dedicated", second_network=True)
    )


@pytest.fixture
def dual_stack(
    real_nodes: RealNodes, _stack_deployment: DeployedStack, _dual_deployment: DualDeployment
) -> DeployedStack:
    """The dual-network variant with controllers of their own, Ready, for a test that only
    reads it (the session's stack released first: they share the namespace)."""
    _stack_deployment.release()
    return _dual_deployment.ensure().stack


@pytest.fixture
def dual_stack_to_change(
    real_nodes: RealNodes, _stack_deployment: DeployedStack, _dual_deployment: DualDeployment
) -> Iterator[DualDeployment]:
    """The same deployment for a test that changes it beyond what the others expect (nodes it
    adds through `add_nodes` go with it): it runs after them, and the deployment is released
    after it (the next user deploys it afresh)."""
    _stack_deployment.release()
    yield _dual_deployment.ensure()
    _dual_deployment.release()
