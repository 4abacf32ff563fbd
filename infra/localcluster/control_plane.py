"""A local Kubernetes control plane: real apiserver, controller-manager and scheduler, fake nodes.

kwokctl runs the binaries scripts/toolchain built (binary runtime, nothing downloaded); kwok
fakes the kubelets of nodes spread over three zones, so the real scheduler places pods by the
rendered affinity rules and binds the rendered claims to node-local volumes.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from infra import toolchain
from infra.localcluster import api_reads, cert_manager, host
from infra.localcluster.local_volumes import (
    FAKE_VOLUME_ROOT,
    VOLUME_NODE_LABEL,
    VOLUMES_PER_NODE,
    real_node_volumes,
    volumes,
)
from infra.localcluster.loop_volumes import volume_leftover
from infra.localcluster.node_config import API_SERVICE_IP, SERVICE_CIDR
from infra.localcluster.zones import FAKE_NODE_LABEL, fake_nodes

CRDS = Path(__file__).resolve().parent / "crds"
NAME = "kafkastack"
# kwokctl's kwok fakes every node by default, real ones too (their heartbeats and pod status):
# it keeps to the nodes created here as fake (annotated kwok.x-k8s.io/node=fake). The apiserver
# reaches a real node's kubelet at its InternalIP: its hostname (the kubelet's
# --hostname-override) resolves nowhere; fake nodes are never reached, so this suits both.
# Services get addresses from a range named here (real nodes' kube-proxy and DNS use it), and
# the apiserver's certificate names the `kubernetes` Service's address, which in-cluster
# clients (CoreDNS) dial.
# Node heartbeats at Kubernetes' own timings: kwokctl scales them by 5 by default (a node grace
# of 3 min 20 s). A lost real node must be marked NotReady, and its pods taken out of every
# Service (the cluster DNS's included), after the 40 s a real cluster takes.
# The controller-manager and the scheduler run once each: no leader election, whose lease each
# renews every 2 s (a write through the apiserver to etcd). An idle control plane spent 4.0
# CPU-seconds a minute with it, 3.1 without (and 2.3 without the fake nodes).
KWOKCTL_CONFIG = f"""apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  heartbeatFactor: 1
  kubeApiserverCertSANs:
  - {API_SERVICE_IP}
componentsPatches:
- name: kwok-controller
  extraArgs:
  - key: manage-all-nodes
    value: "false"
  - key: manage-nodes-with-annotation-selector
    value: kwok.x-k8s.io/node=fake
- name: kube-controller-manager
  extraArgs:
  - key: leader-elect
    value: "false"
- name: kube-scheduler
  extraArgs:
  - key: leader-elect
    value: "false"
- name: kube-apiserver
  extraArgs:
  - key: kubelet-preferred-address-types
    value: InternalIP
  - key: service-cluster-ip-range
    value: {SERVICE_CIDR}
"""


@contextlib.contextmanager
def _creating_alone() -> Iterator[None]:
    """One cluster creation at a time on this machine: kwokctl picks its components' ports
    (32761-32766 first) by what is free when it starts, so two creations at once (two test
    lanes, or a bench beside the suite) pick the same ports and one cluster never works. Once a
    cluster runs, its processes hold its ports and the next creation picks others."""
    with host.exclusive(toolchain.cache_dir() / "local-cluster" / ".create.lock"):
        yield


KUBECTL_BURST = 10  # kubectl's client-side rate limit: this many requests at once, then 5/s


class LocalClusterError(RuntimeError):
    """The local cluster could not be created or used; the message says what to do."""


def binary(name: str) -> str:
    try:
        return toolchain.binary(name)
    except toolchain.ToolchainError as err:
        raise LocalClusterError(str(err)) from None


@dataclass(frozen=True)
class LocalKubernetes:
    name: str = NAME

    @property
    def workdir(self) -> Path:
        return toolchain.cache_dir() / "local-cluster" / self.name

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        # kwokctl calls kubectl and would download one if none were on PATH: ours goes first.
        env["PATH"] = f"{toolchain.bin_dir()}:{env.get('PATH', '')}"
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

    def delete_and_wait(
        self,
        kind: str,
        *names: str,
        namespace: str | None = None,
        timeout: float = 180,
        options: tuple[str, ...] = (),
    ) -> None:
        """Delete these objects (all of `kind` in `namespace` without names); return once none is
        left. kubectl sends a request per name under its rate limit (96 volumes: 34 s with
        `--wait`), so names go in concurrent batches within the burst; the poll lists once."""
        scope = ["-n", namespace] if namespace else []
        batches = [names[i : i + KUBECTL_BURST] for i in range(0, len(names), KUBECTL_BURST)]
        flags = [*scope, *options, "--wait=false", "--ignore-not-found"]

        def delete(batch: tuple[str, ...]) -> None:
            self.kubectl("delete", kind, *batch, *flags, check=False)

        with ThreadPoolExecutor(max_workers=8) as pool:  # map re-raises a kubectl that cannot run
            list(pool.map(delete, batches or [("--all",)]))
        wanted = set(names)
        deadline = time.monotonic() + timeout
        while True:
            listed = self.kubectl("get", kind, *scope, "-o", "name", check=False)
            found = {line.split("/", 1)[-1] for line in listed.stdout.split()}
            left = found & wanted if names else found
            if listed.returncode == 0 and not left:
                return
            if time.monotonic() > deadline:
                named = ", ".join(sorted(left)[:10]) or listed.stderr.strip()[-500:]
                raise LocalClusterError(f"{kind} left {timeout:.0f} s after deletion: {named}")
            time.sleep(0.5)

    def is_up(self) -> bool:
        return (
            self.kubeconfig.is_file()
            and self.kubectl("get", "--raw", "/readyz", check=False).returncode == 0
        )

    def up(self) -> None:
        """Create (or reuse) the cluster, its zoned nodes, volumes, CRDs and cert-manager.
        Idempotent."""
        try:
            cert_manager_crds = cert_manager.crd_folder()
        except cert_manager.CertManagerError as err:
            raise LocalClusterError(str(err)) from None
        if not self.is_up():
            self.workdir.mkdir(parents=True, exist_ok=True)
            # One left from a cluster of this name that is gone talks to its old apiserver.
            cert_manager.stop(self)
            with _creating_alone():
                self._create()
        for folder in (CRDS, cert_manager_crds):
            self.kubectl("apply", "--server-side", "-f", str(folder))
        self.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
        self.apply_fake_nodes()
        try:
            cert_manager.ensure_running(self)
        except cert_manager.CertManagerError as err:
            raise LocalClusterError(str(err)) from None

    def _create(self) -> None:
        self._run(binary("kwokctl"), "delete", "cluster", "--name", self.name, check=False)
        config = self.workdir / "kwokctl.yaml"
        config.write_text(KWOKCTL_CONFIG, encoding="utf-8")
        self._run(
            binary("kwokctl"), "create", "cluster", "--name", self.name,
            "--config", str(config), "--runtime", "binary",
            "--kube-apiserver-binary", binary("kube-apiserver"),
            "--kube-controller-manager-binary", binary("kube-controller-manager"),
            "--kube-scheduler-binary", binary("kube-scheduler"),
            "--kwok-controller-binary", binary("kwok"),
            "--etcd-binary", binary("etcd"),
            "--kubeconfig", str(self.kubeconfig), "--wait", "2m",
        )  # fmt: skip

    def has_real_nodes(self) -> bool:
        """Whether real nodes of this cluster run now (each has its node.json)."""
        return bool(real_node_volumes(self.workdir / "nodes"))

    def apply_fake_nodes(self) -> None:
        """The fake nodes, there exactly while no real node runs (the one place that decides
        where a stack's pods may land): `up()` and the real nodes' start and stop call it.
        While real nodes run, no pod may land where kwok would only pretend to run it, so the
        fake nodes go, with the volumes made for them: kwok then heartbeats no Node nobody uses
        (21 of them cost the apiserver and etcd 0.9 CPU-seconds a minute) and a stack's release
        deletes only its real nodes' volumes."""
        fake = fake_nodes(self.name)
        if not self.has_real_nodes():
            self.kubectl("apply", "--server-side", "-f", "-", stdin=_documents(fake))
            return
        selector = "=".join(FAKE_NODE_LABEL)
        self.kubectl("delete", "nodes", "-l", selector, "--ignore-not-found", "--wait=false")
        self.delete_node_volumes([n["metadata"]["name"] for n in fake])

    def delete_node_volumes(self, names: list[str]) -> None:
        """The volumes made for these nodes (`add_volumes`), whichever state they are in."""
        selector = f"{VOLUME_NODE_LABEL} in ({','.join(names)})"
        self.kubectl("delete", "pv", "-l", selector, "--ignore-not-found", "--wait=false")

    @property
    def pulumi_state(self) -> Path:
        """The engine's state of what runs on this cluster: it lives and dies with the cluster."""
        return self.workdir / "pulumi"

    def down(self) -> None:
        # Real nodes first (infra/localcluster/nodes.py): their processes, mounts and devices.
        host.release_all(self.workdir / "nodes")
        cert_manager.stop(self)
        self._run(binary("kwokctl"), "delete", "cluster", "--name", self.name, check=False)
        shutil.rmtree(self.pulumi_state, ignore_errors=True)

    def add_volumes(self, storage_classes: dict[str, str]) -> None:
        """Node-local volumes for a stack's StorageClasses (role → class name), on every node:
        the real ones running now (their folders are created here), else the fake ones."""
        hosts = self.volume_hosts()
        for folder in hosts.values():
            if folder == FAKE_VOLUME_ROOT:
                continue  # never mounted: kwok only pretends to run the pods
            for role, class_name in storage_classes.items():
                for v in range(VOLUMES_PER_NODE[role]):
                    (folder / f"{class_name}-{v}").mkdir(parents=True, exist_ok=True)
        objects = volumes(storage_classes, hosts)
        self.kubectl("apply", "--server-side", "-f", "-", stdin=_documents(objects))

    def volume_hosts(self) -> dict[str, Path]:
        """Whose volumes a stack gets (node → folder of its volumes): the real nodes running
        now, else the fake ones (apply_fake_nodes: never both)."""
        real = real_node_volumes(self.workdir / "nodes")
        return real or {n["metadata"]["name"]: FAKE_VOLUME_ROOT for n in fake_nodes(self.name)}

    def release_stack(self, namespace: str, storage_classes: list[str]) -> None:
        """Delete a stack's namespace and StorageClasses (cluster-wide: another stack's engine
        would find them taken) and free the volumes its claims held and the unclaimed ones of
        its classes (folders or loop files removed, PersistentVolumes deleted; `add_volumes` or
        the loop provisioner makes them again), so another stack can run from scratch: volumes
        are Retained, and a Released one binds no more.

        Its pods go first, each within a second: the stack and its data are thrown away, and a
        graceful stop would take the whole grace period (probes.TERMINATION_GRACE_SECONDS)
        where brokers go down together (combined controllers lose their quorum; ZooKeeper-mode
        brokers may lose their ensemble), each waiting on a controlled shutdown that cannot
        come. The workloads are deleted without their pods (orphaned) so none is replaced."""
        for kind in ("statefulsets", "deployments", "replicasets", "jobs"):
            self.kubectl("delete", kind, "--all", "-n", namespace, "--cascade=orphan", check=False)
        self.delete_and_wait("pods", namespace=namespace, options=("--grace-period=1",))
        self.delete_and_wait("namespace", namespace)
        for name in storage_classes:
            self.kubectl("delete", "storageclass", name, "--ignore-not-found", check=False)
        # Its volumes: those its claims held, and the unclaimed ones of its classes (a stack
        # of the same class names with another provisioner must not bind these).
        reply = self.kubectl("get", "persistentvolumes", "-o", "json")

        def freed_by_this_stack(volume: dict[str, Any]) -> bool:
            claim = volume["spec"].get("claimRef")
            if claim:
                return bool(claim.get("namespace") == namespace)
            return volume["spec"].get("storageClassName") in storage_classes

        freed = [v for v in json.loads(reply.stdout)["items"] if freed_by_this_stack(v)]
        if freed:
            self.delete_and_wait("pv", *[v["metadata"]["name"] for v in freed])
        for volume in freed:
            leftover = volume_leftover(volume, self.workdir / "nodes")
            if leftover is not None and leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            elif leftover is not None:
                leftover.unlink(missing_ok=True)

    def objects(self, kind: str, namespace: str) -> list[dict[str, Any]]:
        """Every `kind` in `namespace` (ignored for a kind of the whole cluster), as kubectl
        lists them: read by this process for the kinds the proofs poll, kubectl for others."""
        try:
            if kind in api_reads.KINDS:
                return api_reads.items(self.kubeconfig, kind, namespace)
        except api_reads.ApiReadError as err:
            raise LocalClusterError(str(err)) from None
        reply = self.kubectl("get", kind, "-n", namespace, "-o", "json")
        return list(json.loads(reply.stdout)["items"])

    def object(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """One object of a kind in `api_reads.KINDS`, or None when there is none."""
        try:
            return api_reads.item(self.kubeconfig, kind, namespace, name)
        except api_reads.ApiReadError as err:
            raise LocalClusterError(str(err)) from None

    def secret_data(self, namespace: str, name: str) -> dict[str, bytes]:
        """Secret `name`'s keys and their decoded values."""
        reply = self.kubectl("get", "secret", name, "-n", namespace, "-o", "json")
        return {k: base64.b64decode(v) for k, v in json.loads(reply.stdout)["data"].items()}

    def wait_scheduled(
        self, namespace: str, expected: int, timeout: float = 120
    ) -> list[dict[str, Any]]:
        """The stack's workload pods once `expected` of them exist and all are scheduled. Pods of
        Jobs (the admin Jobs) come and go: counting one would return before a workload's pod."""
        deadline = time.monotonic() + timeout
        pods: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            pods = [p for p in self.objects("pods", namespace) if not _job_pod(p)]
            scheduled = [p for p in pods if p["spec"].get("nodeName")]
            if len(pods) >= expected and len(scheduled) == len(pods):
                return pods
            time.sleep(1)
        pending = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
        raise LocalClusterError(f"{len(pods)}/{expected} pods exist, unscheduled: {pending}")


def _job_pod(pod: dict[str, Any]) -> bool:
    return any(o.get("kind") == "Job" for o in pod["metadata"].get("ownerReferences", []))


def _documents(objects: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False)
