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

The same answers say whether the quorum already runs: combined brokers (the voters themselves)
cannot be created one by one — the first would wait for a majority that is not there yet — but
once every voter answers, a change can and must restart them one at a time.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from infra.model import metrics
from infra.model.cluster import ClusterModel
from infra.stack_config import StackConfig
from infra.toolchain import bin_dir

TIMEOUT_SECONDS = 15


def _active_count(namespace: str, pod: str, port: int) -> float | None:
    # Yours on PATH, else the one `make toolchain` built (the engine's PATH may lack the cache).
    cached = bin_dir() / "kubectl"
    kubectl = shutil.which("kubectl") or (str(cached) if cached.is_file() else None)
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


@dataclass(frozen=True)
class RunningQuorum:
    """What the running cluster said: every voter answered (`running`), and which one leads."""

    running: bool = False
    active: int | None = None


def read_running_quorum(config: StackConfig) -> RunningQuorum:
    """Ask every KRaft voter's pod; nothing is known unless all of them answer."""
    if config.quorum.kind != "kraft" or config.skip_await:
        return RunningQuorum()
    model = ClusterModel.from_config(config)
    active = None
    for node in model.voters:
        count = _active_count(config.namespace, model.names.pod(node.workload), model.ports.metrics)
        if count is None:
            return RunningQuorum()  # one voter does not answer: not a state to reorder on
        if count == 1:
            active = node.node_id
    # Combined voters are brokers: their order is the brokers' node order, none goes last.
    return RunningQuorum(running=True, active=None if config.quorum.combined else active)
