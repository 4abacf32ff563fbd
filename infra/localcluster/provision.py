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
from infra.engine import LOCAL_PASSPHRASE, Engine
from infra.localcluster.control_plane import LocalKubernetes
from infra.model.cluster import ClusterModel
from infra.model.storage import storage_class_names
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


@dataclass(frozen=True)
class Provisioned:
    changes: dict[str, int]  # operation → count, as the engine summarised its `up`
    pods: list[dict[str, Any]]  # every pod of the stack, scheduled


def provision(
    kube: LocalKubernetes,
    stack_file: Path,
    config: StackConfig,
    expect_no_changes: bool = False,
    engine: Engine | None = None,
) -> Provisioned:
    """Bring the local cluster up if needed, `pulumi up` the stack onto it (with the cluster's
    own engine state unless another `engine` is given) and wait until every pod is placed."""
    model = ClusterModel.from_config(config)
    kube.up()
    kube.add_volumes(storage_class_names(model))
    engine = engine or local_engine(kube)
    stack = config.environment
    engine.select(stack, stack_file)
    ensure_passwords(engine, stack, config)
    changes = engine.up(stack, expect_no_changes=expect_no_changes)
    return Provisioned(changes, kube.wait_scheduled(config.namespace, model.pod_count))
