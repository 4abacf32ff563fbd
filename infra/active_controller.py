"""Which KRaft controller leads the quorum now, asked of the running cluster, so a roll restarts
it last (`ClusterModel.active_controller`).

Pulumi orders updates statically (`dependsOn`), so the program decides the order before the
engine runs: it asks each controller pod, through `kubectl exec`, for the agent's
`activecontrollercount` on localhost (the pods' own metrics; no network path from here to the
pods is needed, only the API server). Anything else — no kubectl, no kubeconfig, no pods yet (a
first `pulumi up`), a kwok cluster (`skip_await`), a timeout — leaves the node order: when the
active controller is restarted earlier, leadership moves to another voter, and once more when
that one restarts; each move is an election of well under a second during which metadata
changes (not produce or fetch) wait.
"""

from __future__ import annotations

import shutil
import subprocess

from infra.model import labels, metrics
from infra.model.cluster import ClusterModel
from infra.stack_config import StackConfig

TIMEOUT_SECONDS = 15


def _active_count(namespace: str, pod: str, port: int) -> float | None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None
    command = metrics.scrape_command(port, (metrics.ACTIVE_CONTROLLER,))
    try:
        result = subprocess.run(
            [kubectl, "exec", "-n", namespace, pod, "-c", "kafka", "--", "sh", "-c", command],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    for line in result.stdout.splitlines():
        name, _, value = line.partition(" ")
        if name == metrics.ACTIVE_CONTROLLER:
            try:
                return float(value)
            except ValueError:
                return None
    return None


def read_active_controller(config: StackConfig) -> int | None:
    """The node id of the active controller, or None when the cluster cannot say."""
    if config.quorum.kind != "kraft" or config.quorum.combined or config.skip_await:
        return None
    model = ClusterModel.from_config(config)
    for node in model.quorum:
        if node.role != labels.CONTROLLER:
            continue
        count = _active_count(config.namespace, model.names.pod(node.workload), model.ports.metrics)
        if count is None:
            return None  # one controller does not answer: not a state to reorder on
        if count == 1:
            return node.node_id
    return None
