"""The rendered local stack (its real-node variant) on the three real nodes, through the real
engine: every pod Ready through its own probes, and how long that takes."""

from __future__ import annotations

import time
from pathlib import Path

from infra.config import load_stack
from infra.localcluster.nodes import RealNodes
from infra.localcluster.provision import local_engine, provision
from infra.localcluster.real_stack import write_real_node_stack
from infra.model import labels

SETTINGS = "dynamic-settings"  # the component label of the dynamic settings Job's pod


def _ready(pod: dict[str, object]) -> bool:
    status = pod.get("status", {})
    assert isinstance(status, dict)
    return any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions", []))


def test_local_stack_is_ready_on_real_nodes(
    real_nodes: RealNodes, repo_root: Path, tmp_path: Path
) -> None:
    kube = real_nodes.kube
    stack_file = write_real_node_stack(
        repo_root / "stacks" / "Pulumi.local.yaml", tmp_path / "stacks" / "Pulumi.local.yaml"
    )
    config = load_stack(stack_file.parent, "local")
    started = time.monotonic()
    done = provision(kube, stack_file, config, engine=local_engine(kube, tmp_path / "state"))
    elapsed = time.monotonic() - started
    # skip_await is off: `pulumi up` returned once the workloads were Ready; every pod says so.
    everything = kube.objects("pods", config.namespace)
    # The dynamic settings Job ran to completion (`pulumi up` awaited it); the rest serve.
    settings = [p for p in everything if p["metadata"]["labels"].get(labels.COMPONENT) == SETTINGS]
    assert settings and all(p["status"]["phase"] == "Succeeded" for p in settings), settings
    pods = [p for p in everything if p not in settings]
    roles = sorted(p["metadata"]["labels"].get(labels.COMPONENT, "") for p in pods)
    # The brokers are the KRaft controllers (combined: three nodes, and the two roles never
    # share one); HAProxy in front.
    assert roles == sorted([labels.BROKER] * 3 + [labels.HAPROXY]), roles
    real = set(real_nodes.ready())
    assert {p["spec"]["nodeName"] for p in pods} <= real
    assert [p["metadata"]["name"] for p in pods if not _ready(p)] == []
    assert done.changes.get("create", 0) > 0
    print(f"\nlocal stack Ready on real nodes in {elapsed:.0f} s (pulumi up included)")
