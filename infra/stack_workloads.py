"""The stack's StatefulSets the cluster holds now, asked before anything is declared.

What runs already decides how a `pulumi up` may order its nodes (infra/model/desired.py):
- none of them (the first creation): nothing runs that a chain would protect, so every node is
  created at once instead of one start-up after another (minutes for a production cluster);
- ZooKeeper servers answer their readiness only inside a quorum, so they can be changed one at
  a time only once all of them exist;
- a node that cannot reload a renewed certificate carries on its pod template the value that
  rolls it (infra/certificate_restarts.py), kept from the StatefulSet the cluster holds.

- brokers it no longer declares are removed only once they hold no replicas
  (infra/broker_removal.py).

The answer has three states: the StatefulSets (maybe none), or why the cluster could not be
asked (no kubectl, an unreachable API server), which keeps the safe order and refuses a
removal it cannot check. One listing serves all of them.
"""

from __future__ import annotations

from typing import Any

from infra.model import labels
from infra.pod_metrics import objects
from infra.stack_config import StackConfig


def stack_workloads(config: StackConfig) -> dict[str, dict[str, Any]] | str:
    """The stack's StatefulSets by name, or why the cluster did not answer."""
    selector = {labels.PART_OF: "kafkastack", labels.INSTANCE: config.cluster_name}
    found = objects(config.namespace, "statefulsets", selector)
    if isinstance(found, str):
        return found
    return {s["metadata"]["name"]: s for s in found}
