"""Whether the stack's Kafka workloads exist yet, asked of the cluster, so the first `pulumi up`
creates every node at once.

A change must restart brokers (and KRaft controllers) one at a time, so the program chains their
StatefulSets (infra/model/desired.py), and Pulumi creates a chained one only once the one before
is ready. On the first `pulumi up` nothing runs and no client depends on a node: the chain would
only make the creation as slow as every node's start-up added up (minutes for a production
cluster). The answer has three states: no StatefulSet of the stack (the first creation: no
chain), some (chain), or no answer (no kubectl, an unreachable API server, a render to files:
chain, the safe order).
"""

from __future__ import annotations

from infra.model import labels
from infra.pod_metrics import objects
from infra.stack_config import StackConfig


def is_first_creation(config: StackConfig) -> bool:
    """True only when the cluster answered that none of the stack's StatefulSets exists."""
    selector = {labels.PART_OF: "kafkastack", labels.INSTANCE: config.cluster_name}
    found = objects(config.namespace, "statefulsets", selector)
    return not isinstance(found, str) and not found
