"""Changes are applied only while every Kafka node of the stack is Ready (issue 14, "Ordered,
gated rolls").

A roll waits, node after node, until the restarted node is Ready again (its readiness asks that
it is back in the in-sync set of every partition it hosts: infra/model/in_sync.py), but only for
the nodes it restarts. A node already down elsewhere (a lost zone, a crash loop) is no step of the
roll: stopping the next broker then takes the partitions it shares with the down one from min ISR
to below it for the length of its restart (acks=all writes wait). So `pulumi up` starts only once
every existing broker, controller and ZooKeeper server StatefulSet of the stack reports its pod
Ready; `pulumi preview` says that the `up` would be refused now and still shows the change (a
pull request's preview is for reading the change, whatever the cluster's state that minute).

A repair is the exception: the change that brings a failing node back cannot wait for it to be
Ready. The stack says so for that one change (`allow_unready_nodes: true`). A cluster that cannot
be asked (no kubectl, an unreachable API server) is not refused here: the `up` itself cannot
reach it either, and a removal that needs the cluster's answer is refused on its own
(infra/broker_removal.py).
"""

from __future__ import annotations

from typing import Any

from infra.config_base import NAMESPACE
from infra.errors import ConfigError
from infra.model import labels
from infra.stack_config import StackConfig

OVERRIDE_KEY = "allow_unready_nodes"
# How a preview says it (a warning: the preview goes on), and how the PR report finds it.
PREVIEW_WARNING = "`pulumi up` would be refused now: "
KAFKA_NODES = (labels.BROKER, labels.CONTROLLER, labels.ZOOKEEPER)


def unready_nodes(running: dict[str, dict[str, Any]]) -> list[str]:
    """`<StatefulSet> (ready/wanted)` for each Kafka node StatefulSet whose pods are not all
    Ready, by name; `running` as infra/stack_workloads.py lists it."""
    found = []
    for name, workload in sorted(running.items()):
        if labels.component_of(workload) not in KAFKA_NODES:
            continue
        wanted = int(workload.get("spec", {}).get("replicas", 1))
        ready = int(workload.get("status", {}).get("readyReplicas", 0))
        if ready < wanted:
            found.append(f"{name} ({ready}/{wanted} Ready)")
    return found


def unready_refusal(
    config: StackConfig, running: dict[str, dict[str, Any]] | str | None
) -> ConfigError | None:
    """Why this change must not be applied now, or None: a Kafka node of the stack is not
    Ready and the stack does not say that the change repairs it."""
    if config.allow_unready_nodes or not isinstance(running, dict):
        return None
    unready = unready_nodes(running)
    if not unready:
        return None
    return ConfigError(
        f"{NAMESPACE}:{OVERRIDE_KEY}: not applying this change while {', '.join(unready)} "
        "is not Ready: the roll would restart other nodes while partitions on it may already "
        "be at min.insync.replicas. Bring it back first (`kubectl describe pod` shows what its "
        f"readiness waits for) and run again, or set {NAMESPACE}:{OVERRIDE_KEY}: true for the "
        "one change that repairs it"
    )
