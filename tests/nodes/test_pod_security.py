"""A real kubelet honours the rendered broker pod's security context: a fresh, root-owned local
volume becomes writable by the image's user through `fsGroup`, and Kafka formats and serves its
log dir there. Without the context the same image cannot write it."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import yaml

from infra import render
from infra.config import load_stack
from infra.localcluster import images
from infra.localcluster.nodes import RealNodes
from infra.model.cluster import ClusterModel

REPO = Path(__file__).resolve().parent.parent.parent
# A single-node KRaft broker whose log dir is the volume (the rendered configs need DNS and
# certificates the real nodes do not offer yet; the pod's security is what is under test).
BROKER = """process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:9093
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=LOG_DIR
offsets.topic.replication.factor=1
"""


def rendered_broker_pod() -> tuple[dict[str, Any], dict[str, Any], str]:
    """The local stack's first broker: its pod security context, its Kafka container's, and
    the mount path of its first log dir."""
    config = load_stack(REPO / "stacks", "local")
    model = ClusterModel.from_config(config)
    manifests = render.manifests(config)
    spec = manifests[("StatefulSet", model.brokers[0].workload)]["spec"]["template"]["spec"]
    kafka = next(c for c in spec["containers"] if c["name"] == "kafka")
    return spec["securityContext"], kafka["securityContext"], model.log_dirs[0]


def fresh_volume(nodes: RealNodes, node_index: int) -> tuple[str, Path]:
    """A local PersistentVolume on one real node, its folder owned by root (mode 0755) as a
    freshly formatted disk is; and a claim bound to it."""
    node = nodes.specs[node_index]
    name = f"podsec-{uuid.uuid4().hex[:6]}"
    folder = node.dir / "volumes" / name
    folder.mkdir(parents=True)
    os.chown(folder, 0, 0)
    folder.chmod(0o755)
    affinity = {"key": "kubernetes.io/hostname", "operator": "In", "values": [node.name]}
    objects = [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "",
                "claimRef": {"namespace": "default", "name": name},
                "local": {"path": str(folder)},
                "nodeAffinity": {
                    "required": {"nodeSelectorTerms": [{"matchExpressions": [affinity]}]}
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "",
                "volumeName": name,
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    ]
    nodes.kube.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(objects))
    return name, folder


def pod_on(
    claim: str, mount: str, command: str, contexts: tuple[dict[str, Any], dict[str, Any]] | None
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "kafka",
        "image": images.KAFKA.ref,
        "imagePullPolicy": "Never",
        "command": ["sh", "-c", command],
        "env": [{"name": "KAFKA_HEAP_OPTS", "value": "-Xmx384m -Xms384m"}],
        "volumeMounts": [{"name": "data", "mountPath": mount}],
    }
    spec: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "restartPolicy": "Never",
        "containers": [container],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
    }
    if contexts is not None:
        spec["securityContext"], container["securityContext"] = contexts
    name = f"{claim}-{uuid.uuid4().hex[:4]}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def wait_log(nodes: RealNodes, name: str, wanted: str, timeout: float = 180) -> tuple[str, str]:
    """(phase, log) once the log shows `wanted` or the pod has ended."""
    deadline = time.monotonic() + timeout
    phase, log = "", ""
    while time.monotonic() < deadline:
        pod = json.loads(nodes.kube.kubectl("get", "pod", name, "-o", "json").stdout)
        phase = pod.get("status", {}).get("phase", "")
        log = nodes.kube.kubectl("logs", name, check=False).stdout
        if wanted in log or phase in ("Succeeded", "Failed"):
            return phase, log
        time.sleep(1)
    raise AssertionError(f"pod {name}: {phase!r} after {timeout}s, log: {log[-1500:]}")


def test_the_rendered_broker_context_makes_a_root_owned_volume_kafkas(
    real_nodes: RealNodes,
) -> None:
    pod_context, container_context, log_dir = rendered_broker_pod()
    assert (pod_context["runAsUser"], pod_context["fsGroup"]) == (1000, 1000)

    # Without the contexts: the image's user 1000 meets a root-owned folder.
    claim, _ = fresh_volume(real_nodes, 1)
    bare = pod_on(claim, log_dir, f"id -u; touch {log_dir}/probe", None)
    real_nodes.kube.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(bare))
    phase, log = wait_log(real_nodes, bare["metadata"]["name"], "never printed")
    assert phase == "Failed" and "Permission denied" in log, log

    claim, folder = fresh_volume(real_nodes, 2)
    start = (
        f"printf '{BROKER}' | sed 's|LOG_DIR|{log_dir}|' > /tmp/server.properties && "
        "kafka-storage.sh format --standalone -t $(kafka-storage.sh random-uuid) "
        "-c /tmp/server.properties && exec kafka-server-start.sh /tmp/server.properties"
    )
    broker = pod_on(claim, log_dir, start, (pod_context, container_context))
    name = broker["metadata"]["name"]
    real_nodes.kube.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(broker))
    try:
        phase, log = wait_log(real_nodes, name, "Kafka Server started")
        assert "Kafka Server started" in log, log[-2000:]
        # On the node: the kubelet gave the folder to group 1000 and Kafka wrote as uid 1000.
        assert folder.stat().st_gid == 1000
        written = {p.name: p.stat() for p in folder.iterdir()}
        assert "meta.properties" in written
        assert {s.st_uid for s in written.values()} == {1000}
    finally:
        real_nodes.kube.kubectl("delete", "pod", name, "--wait=false")
