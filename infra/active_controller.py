"""Which KRaft controller leads the quorum now, asked of the running cluster, so a roll restarts
it last (`ClusterModel.active_controller`): the last of the dedicated controllers, or in combined
mode, where the voters are the brokers, the last of the brokers.

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
once every voter that exists answers (and, while some are still to be created, one of them
leads), a change can and must restart them one at a time.

Voters a change adds (more `quorum.nodes`, or more combined brokers) have no pod yet: only the
voters whose StatefulSets exist are asked. Asking all of them made a growing quorum look
unknown, and its roll restarted the active controller in node order, not last (found on real
nodes, tests/nodes/test_dedicated_controllers.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from infra.model import metrics
from infra.model.cluster import ClusterModel
from infra.pod_metrics import scrape
from infra.stack_config import StackConfig


def _active_count(namespace: str, pod: str, port: int) -> float | None:
    values = scrape(namespace, pod, port, (metrics.ACTIVE_CONTROLLER,))
    return None if values is None else values.get(metrics.ACTIVE_CONTROLLER)


@dataclass(frozen=True)
class RunningQuorum:
    """What the running cluster said: every voter that exists answered, with a leader among them
    when some are still to be created (`running`); and which one leads."""

    running: bool = False
    active: int | None = None


def read_running_quorum(
    config: StackConfig, existing: frozenset[str] | None = None
) -> RunningQuorum:
    """Ask the pod of every KRaft voter that exists; nothing is known unless all of them answer.

    `existing`: the stack's StatefulSets the cluster holds (infra/stack_workloads.py), when it
    said. A voter declared but not among them is one this change creates (more voters): it has
    no pod to ask, and the voters that run are asked without it. Then they must also have a
    leader to count as running: voters still to be created join a quorum that works (a first
    `pulumi up` that stopped half-way left voters that never formed one, and chaining the rest
    behind them would wait forever)."""
    if config.quorum.kind != "kraft" or config.skip_await:
        return RunningQuorum()
    model = ClusterModel.from_config(config)
    voters = [v for v in model.voters if existing is None or v.workload in existing]
    if not voters:
        return RunningQuorum()
    active = None
    for node in voters:
        count = _active_count(config.namespace, model.names.pod(node.workload), model.ports.metrics)
        if count is None:
            return RunningQuorum()  # one voter does not answer: not a state to reorder on
        if count == 1:
            active = node.node_id
    if len(voters) < len(model.voters) and active is None:
        return RunningQuorum()
    return RunningQuorum(running=True, active=active)
