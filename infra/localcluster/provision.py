"""`pulumi up` of a stack onto the local cluster: the real engine, its state beside the cluster.

The state describes what is in this cluster, so it lives in the cluster's folder and goes with
`kafkastack local down`. SCRAM passwords are generated once per cluster and kept as Pulumi
secrets, the documented flow (`pulumi config set --secret`) done for the user.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.config import secret_keys
from infra.engine import LOCAL_PASSPHRASE, Engine, change_summary, update_sequence
from infra.localcluster import host, loop_provisioner, loop_volumes
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.node_config import replication_bridge
from infra.model.cluster import ClusterModel
from infra.model.storage import provisioner_of, storage_class_names
from infra.network_rules import attachment_plugin
from infra.stack_config import StackConfig


def local_engine(kube: LocalKubernetes, state_dir: Path | None = None) -> Engine:
    """The engine for stacks on this cluster: its state in `state_dir`, or the cluster's."""
    return Engine(
        state_dir=state_dir or kube.pulumi_state,
        kubeconfig=kube.kubeconfig,
        passphrase=LOCAL_PASSPHRASE,
    )


def ensure_passwords(engine: Engine, stack: str, config: StackConfig) -> None:
    """A random password for every secret key that has none yet (kept on later runs)."""
    present = engine.config_keys(stack)
    for key in secret_keys(config):
        if f"kafkastack:{key}" not in present:
            engine.set_secret(stack, key, secrets.token_urlsafe(24))


def second_network_routers(kube: LocalKubernetes, model: ClusterModel) -> list[str]:
    """The host addresses a `bridge`-plugin second network needs on real nodes: each zone's
    router (`address/prefix`), on the cluster's replication bridge. Empty when the stack has no
    such network, or one stretched segment (no router)."""
    plan, replication = model.address_plan, model.config.network.replication
    if plan is None or replication is None or attachment_plugin(model.config) != "bridge":
        return []
    expected = replication_bridge(kube.name)
    if replication.master_interface != expected:
        raise LocalClusterError(
            f"network.replication.master_interface is {replication.master_interface!r}; the "
            f"real nodes of cluster {kube.name!r} share the bridge {expected!r}: set it to that"
        )
    if not plan.zoned:
        return []
    return [f"{plan.gateway(z)}/{plan.ranges[z].prefixlen}" for z in model.zones]


@dataclass(frozen=True)
class Provisioned:
    changes: dict[str, int]  # operation → count, as the engine summarised its `up`
    pods: list[dict[str, Any]]  # every pod of the stack, scheduled
    # (phase, name) of each updated resource in the engine's order (engine.update_sequence):
    # how a roll went, one workload after the other.
    updates: list[tuple[str, str]]


def prepare_volumes(
    kube: LocalKubernetes, model: ClusterModel
) -> loop_provisioner.LoopProvisioner | None:
    """Volumes for the stack's claims: node-local ones of a fixed size, or, when its
    StorageClasses name the loop provisioner, a volume per claim that grows with it (the
    provisioner answering them is returned)."""
    if provisioner_of(model) != loop_volumes.PROVISIONER:
        kube.add_volumes(storage_class_names(model))
        return None
    if not kube.has_real_nodes():
        raise LocalClusterError(
            f"kafkastack:storage.provisioner: {loop_volumes.PROVISIONER} volumes are mounted by "
            "real nodes, and this cluster runs none: start them (docs/real-nodes.md) or remove "
            "the setting"
        )
    return loop_provisioner.provisioning(kube)


def provision(
    kube: LocalKubernetes,
    stack_file: Path,
    config: StackConfig,
    expect_no_changes: bool = False,
    engine: Engine | None = None,
) -> Provisioned:
    """Bring the local cluster up if needed, `pulumi up` the stack onto it (with the cluster's
    own engine state unless another `engine` is given) and wait until every pod is placed.

    On a cluster with real nodes the stack's pods really start, so their Certificates' Secrets
    must exist: the cluster's cert-manager (infra/localcluster/cert_manager.py) issues them
    while `pulumi up` runs, and the pods that mount them wait for them meanwhile."""
    model = ClusterModel.from_config(config)
    kube.up()
    volumes = prepare_volumes(kube, model)
    engine = engine or local_engine(kube)
    stack = config.environment
    engine.select(stack, stack_file)
    ensure_passwords(engine, stack, config)
    if kube.has_real_nodes():
        routers = second_network_routers(kube, model)
        if routers:
            host.add_router(replication_bridge(kube.name), routers)
    events = engine.up_events(stack, expect_no_changes=expect_no_changes)
    try:
        pods = kube.wait_scheduled(config.namespace, model.pod_count)
    except LocalClusterError as err:
        if volumes is None or not volumes.errors:
            raise
        raise LocalClusterError(f"{err}; the loop provisioner: {volumes.errors[-3:]}") from None
    return Provisioned(change_summary(events), pods, update_sequence(events))
