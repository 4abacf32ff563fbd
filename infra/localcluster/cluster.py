"""A local Kubernetes control plane: real apiserver, controller-manager and scheduler, fake nodes.

kwokctl runs the binaries scripts/toolchain built (binary runtime, nothing downloaded); kwok
fakes the kubelets of nodes spread over three zones, so the real scheduler places pods by the
rendered affinity rules and binds the rendered claims to node-local volumes.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CRDS = Path(__file__).resolve().parent / "crds"
NAME = "kafkastack"
ZONES = ("zone-a", "zone-b", "zone-c")
NODES_PER_ZONE = 5
# Workloads (StatefulSets, Deployments) go last: what they mount or bind to must exist first.
APPLY_ORDER = (
    ("Namespace", "StorageClass"),
    ("Secret", "ConfigMap", "Certificate", "NetworkAttachmentDefinition", "Service"),
    ("NetworkPolicy", "PodDisruptionBudget", "Route"),
)
VOLUMES_PER_NODE = {"broker": 2, "quorum": 2}  # data + metadata, or snapshots + txlog


class LocalClusterError(RuntimeError):
    """The local cluster could not be created or used; the message says what to do."""


def cache_dir() -> Path:
    return Path(os.environ.get("KAFKASTACK_CACHE", Path.home() / ".cache" / "kafkastack"))


def binary(name: str) -> str:
    path = cache_dir() / "bin" / name
    if not path.is_file():
        raise LocalClusterError(
            f"{path} is missing: run scripts/toolchain/build-all.sh (or make toolchain)"
        )
    return str(path)


@dataclass(frozen=True)
class LocalKubernetes:
    name: str = NAME

    @property
    def workdir(self) -> Path:
        return cache_dir() / "local-cluster" / self.name

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        # kwokctl calls kubectl and would download one if none were on PATH: ours goes first.
        env["PATH"] = f"{cache_dir() / 'bin'}:{env.get('PATH', '')}"
        env["KWOK_WORKDIR"] = str(self.workdir / "kwok")
        return env

    def _run(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            list(args), input=stdin, capture_output=True, text=True, env=self._env(), check=False
        )
        if check and result.returncode != 0:
            raise LocalClusterError(f"{' '.join(args[:4])} …: {result.stderr.strip()[-1500:]}")
        return result

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return self._run(
            binary("kubectl"), "--kubeconfig", str(self.kubeconfig), *args, stdin=stdin, check=check
        )

    def is_up(self) -> bool:
        return (
            self.kubeconfig.is_file()
            and self.kubectl("get", "--raw", "/readyz", check=False).returncode == 0
        )

    def up(self) -> None:
        """Create (or reuse) the cluster, its zoned nodes, volumes and CRDs. Idempotent."""
        if not self.is_up():
            self.workdir.mkdir(parents=True, exist_ok=True)
            self._run(binary("kwokctl"), "delete", "cluster", "--name", self.name, check=False)
            self._run(
                binary("kwokctl"),
                "create",
                "cluster",
                "--name",
                self.name,
                "--runtime",
                "binary",
                "--kube-apiserver-binary",
                binary("kube-apiserver"),
                "--kube-controller-manager-binary",
                binary("kube-controller-manager"),
                "--kube-scheduler-binary",
                binary("kube-scheduler"),
                "--kwok-controller-binary",
                binary("kwok"),
                "--etcd-binary",
                binary("etcd"),
                "--kubeconfig",
                str(self.kubeconfig),
                "--wait",
                "2m",
            )
        self.kubectl("apply", "--server-side", "-f", str(CRDS))
        self.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
        self.kubectl("apply", "--server-side", "-f", "-", stdin=_documents(nodes() + volumes()))

    def down(self) -> None:
        self._run(binary("kwokctl"), "delete", "cluster", "--name", self.name, check=False)

    def apply_rendered(self, kubernetes_dir: Path) -> None:
        """Server-side apply of `kafkastack render` output: the apiserver validates every object.

        Applied in dependency order, as the Pulumi components declare them: a claim created
        before its StorageClass exists binds at once to any volume, in any zone.
        """
        files = sorted(kubernetes_dir.glob("*/*.yaml"))
        for kinds in APPLY_ORDER:
            batch = [p for p in files if p.parent.name in kinds]
            if batch:
                self.kubectl(
                    "apply",
                    "--server-side",
                    "--force-conflicts",
                    *[arg for path in batch for arg in ("-f", str(path))],
                )
        rest = [p for p in files if not any(p.parent.name in kinds for kinds in APPLY_ORDER)]
        if rest:
            self.kubectl(
                "apply",
                "--server-side",
                "--force-conflicts",
                *[arg for path in rest for arg in ("-f", str(path))],
            )

    def objects(self, kind: str, namespace: str) -> list[dict[str, Any]]:
        reply = self.kubectl("get", kind, "-n", namespace, "-o", "json")
        return list(json.loads(reply.stdout)["items"])

    def wait_scheduled(
        self, namespace: str, expected: int, timeout: float = 120
    ) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        pods: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            pods = self.objects("pods", namespace)
            scheduled = [p for p in pods if p["spec"].get("nodeName")]
            if len(pods) >= expected and len(scheduled) == len(pods):
                return pods
            time.sleep(1)
        pending = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
        raise LocalClusterError(f"{len(pods)}/{expected} pods exist, unscheduled: {pending}")


def _documents(objects: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False)


def node_name(zone: str, index: int) -> str:
    return f"{NAME}-{zone}-{index}"


def nodes() -> list[dict[str, Any]]:
    """Fake nodes kwok keeps Ready, labelled with zone and hostname like cloud nodes."""
    result = []
    for zone in ZONES:
        for i in range(1, NODES_PER_ZONE + 1):
            name = node_name(zone, i)
            capacity = {"cpu": "32", "memory": "128Gi", "pods": "110"}
            result.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": name,
                        "annotations": {"kwok.x-k8s.io/node": "fake"},
                        "labels": {
                            "type": "kwok",
                            "kubernetes.io/hostname": name,
                            "topology.kubernetes.io/zone": zone,
                        },
                    },
                    "spec": {},
                    "status": {"capacity": capacity, "allocatable": capacity},
                }
            )
    return result


def volumes() -> list[dict[str, Any]]:
    """Node-local PersistentVolumes for the stack's StorageClasses: WaitForFirstConsumer binding
    then follows the scheduler's choice of node, as with real zonal disks."""
    result = []
    for zone in ZONES:
        for i in range(1, NODES_PER_ZONE + 1):
            host = node_name(zone, i)
            for role, count in VOLUMES_PER_NODE.items():
                for v in range(count):
                    result.append(
                        {
                            "apiVersion": "v1",
                            "kind": "PersistentVolume",
                            "metadata": {"name": f"{host}-{role}-{v}"},
                            "spec": {
                                "capacity": {"storage": "16Ti"},
                                "accessModes": ["ReadWriteOnce"],
                                "persistentVolumeReclaimPolicy": "Retain",
                                "storageClassName": f"kafka-{role}-fast",
                                "local": {"path": f"/mnt/kafkastack/{role}-{v}"},
                                "nodeAffinity": {
                                    "required": {
                                        "nodeSelectorTerms": [
                                            {
                                                "matchExpressions": [
                                                    {
                                                        "key": "kubernetes.io/hostname",
                                                        "operator": "In",
                                                        "values": [host],
                                                    }
                                                ]
                                            }
                                        ]
                                    }
                                },
                            },
                        }
                    )
    return result
