"""Fewer brokers only once the brokers that go hold no partition replicas (issue 14, "Growth").

Kafka never moves replicas by itself: a broker deleted while it holds some leaves its partitions
under-replicated for good (and offline where it held the last in-sync copy). So before any
resource is declared, the program (`pulumi preview` and `pulumi up` alike) asks the running
cluster which broker StatefulSets exist and, for each one this stack no longer declares, how many
partition replicas its pod still holds (ReplicaManager's PartitionCount, from its own JMX agent
through `kubectl exec`, as infra/active_controller.py asks the controllers). More than none:
refused with the `kafkastack drain` command that empties them. No answer (the API server is
unreachable, a going broker's pod does not answer): refused too, saying so, unless the stack sets
`allow_unverified_broker_removal: true` for that one change.
"""

from __future__ import annotations

from typing import Any

from infra.config_base import NAMESPACE
from infra.errors import ConfigError
from infra.model import labels, metrics
from infra.model.cluster import ClusterModel
from infra.pod_metrics import scrape
from infra.stack_config import StackConfig
from infra.stack_workloads import stack_workloads

OVERRIDE_KEY = "allow_unverified_broker_removal"


def node_id(workload: str) -> int | None:
    """A broker's id from its StatefulSet's name (`<cluster>-broker-<id>`)."""
    tail = workload.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _unverified(config: StackConfig, why: str) -> ConfigError | None:
    if config.allow_unverified_broker_removal:
        return None
    return ConfigError(
        f"{NAMESPACE}:brokers: {why}, so this change might remove a broker that still holds "
        "partition replicas; reach the cluster (kubectl's current context) and run again, or "
        f"set {NAMESPACE}:{OVERRIDE_KEY}: true for this change once you know the brokers that "
        "go hold none"
    )


def check_broker_removal(
    config: StackConfig, running: dict[str, dict[str, Any]] | str | None = None
) -> None:
    """Refuse (ConfigError) a change that removes brokers still holding replicas, or that may.
    `running`: the stack's StatefulSets as `stack_workloads` listed them (listed here if not
    given), or why the cluster did not answer."""
    model = ClusterModel.from_config(config)
    running = stack_workloads(config) if running is None else running
    if isinstance(running, str):
        error = _unverified(config, f"cannot ask the cluster which brokers run ({running})")
        if error:
            raise error
        return
    found = [s for s in running.values() if labels.component_of(s) == labels.BROKER]
    declared = {b.workload for b in model.brokers}
    going = sorted(
        (node_id(s["metadata"]["name"]) or -1, s["metadata"]["name"])
        for s in found
        if s["metadata"]["name"] not in declared
    )
    holding: list[str] = []
    silent: list[str] = []
    for broker_id, workload in going:
        pod = model.names.pod(workload)
        values = scrape(config.namespace, pod, model.ports.metrics, (metrics.PARTITION_COUNT,))
        count = None if values is None else values.get(metrics.PARTITION_COUNT)
        if count is None:
            silent.append(f"{broker_id} ({pod})")
        elif count > 0:
            holding.append(f"{broker_id} ({count:g} replicas)")
    ids = ",".join(str(b) for b, _ in going)
    drain = (
        f"kafkastack drain --stack {config.environment} --brokers {ids} "
        "--bootstrap HOST:PORT --throttle MB/S"
    )
    if holding:
        raise ConfigError(
            f"{NAMESPACE}:brokers: {len(found)} → {len(declared)} would remove broker(s) "
            f"{', '.join(holding)} that still hold partition replicas; their partitions would "
            f"stay under-replicated. Drain them first: `{drain}`, then run again"
        )
    if silent:
        error = _unverified(
            config,
            f"broker(s) {', '.join(silent)} would be removed and their metrics do not answer "
            "how many partition replicas they hold",
        )
        if error:
            raise ConfigError(f"{error} (or drain them: `{drain}`)")
