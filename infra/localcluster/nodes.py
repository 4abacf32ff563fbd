"""Real nodes joined to the local control plane: a containerd and a kubelet per node.

Each node has its own folder under the cluster's (`<workdir>/nodes/<node>`), its own containerd
(root, state, socket), kubelet (root dir, ports, node name, zone label), cgroup tree, pod
bridge and subnet (node_config.py). The locally built images are imported into its containerd
before its kubelet starts. The kubelets register with the cluster's admin kubeconfig (first
slice: no per-node identity yet). Stopping gives back exactly what the nodes own (host.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from infra import toolchain
from infra.localcluster import dns, host, images, node_disk
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.loop_volumes import install_driver
from infra.localcluster.node_config import (
    BRIDGE_CONF,
    CNI_BIN_DIR,
    MULTUS_CONF,
    RUNTIME_ROOT,
    NodeSpec,
    cni_config,
    containerd_config,
    kube_proxy_config,
    kubelet_args,
    kubelet_config,
    multus_config,
)
from infra.localcluster.zones import ZONES

NODE_BINARIES = ("kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2", "ctr")
# The nodes tier's cluster, which the benchmarks on real nodes replace too: the nodes' chains
# and bridges are machine-wide, so one such cluster runs at a time.
NODES_CLUSTER = "kafkastack-nodes-test"


def _require_binaries(multus: bool) -> dict[str, str]:
    if os.geteuid() != 0:
        raise LocalClusterError(
            "real nodes need root (cgroups, a bridge per node, mounts): run as root"
        )
    found = {}
    for name in (*NODE_BINARIES, *(["multus"] if multus else [])):
        path = toolchain.bin_dir() / name
        if not path.is_file():
            raise LocalClusterError(
                f"{name} is missing ({path}): run `make nodes-toolchain` "
                "(scripts/toolchain/build-kubelet.sh, build-containerd.sh, build-multus.sh)"
            )
        found[name] = str(path)
    for name, check in (
        ("runc", shutil.which("runc")),
        ("CNI plugins", _cni_plugins()),
        ("iptables", shutil.which("iptables-restore")),
    ):
        if not check:
            raise LocalClusterError(f"{name} missing: run `make system-deps`")
    return found


def _cni_plugins() -> str | None:
    bridge = Path(CNI_BIN_DIR) / "bridge"
    return str(bridge) if bridge.is_file() else None


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class RealNodes:
    """The real nodes of one local cluster. With `multus`, every node's CNI is Multus (thin
    plugin) in front of the pod bridge, so pods can ask for a second network
    (NetworkAttachmentDefinitions; the stack's `network.mode: dual`)."""

    def __init__(self, kube: LocalKubernetes, count: int = 3, multus: bool = False) -> None:
        if count < 1:
            raise LocalClusterError(f"real node count must be at least 1, got {count}")
        self.kube = kube
        self.multus = multus
        self.folder = kube.workdir / "nodes"
        self.specs = [
            NodeSpec(kube.name, i, ZONES[i % len(ZONES)], self.folder) for i in range(count)
        ]
        self._processes: list[subprocess.Popen[bytes]] = []
        # Between a complete `up()` and the next `down()`.
        self.running = False

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        # Our containerd's own shim must come before any other (Debian ships a 1.x one).
        env["PATH"] = f"{toolchain.bin_dir()}:/usr/local/sbin:/usr/sbin:/sbin:{env.get('PATH', '')}"
        return env

    def _start(self, argv: list[str], node: NodeSpec, log_name: str) -> subprocess.Popen[bytes]:
        folders = host.make_cgroup(f"{node.cgroup}/system")
        with open(node.dir / log_name, "ab") as log:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self._env(),
                start_new_session=True,
                # Into the node's cgroup before exec: everything it starts stays in the tree.
                preexec_fn=lambda: host.enter_cgroups(folders),
            )
        self._processes.append(proc)
        return proc

    def ctr(self, node: NodeSpec, *args: str) -> subprocess.CompletedProcess[str]:
        """ctr against the node's containerd (an absolute socket path: a relative one would be
        read as a gRPC authority)."""
        argv = [str(toolchain.bin_dir() / "ctr"), "-a", str(node.socket), *args]
        return subprocess.run(argv, capture_output=True, text=True, env=self._env(), check=False)

    def _write_configs(self, node: NodeSpec) -> None:
        for sub in ("containerd", "cni", "pod-logs", "ipam", "cni-bin"):
            (node.dir / sub).mkdir(parents=True, exist_ok=True)
        node.runtime_dir.mkdir(parents=True, exist_ok=True)
        (node.dir / "containerd.toml").write_text(containerd_config(node))
        (node.dir / "cni" / BRIDGE_CONF).write_text(cni_config(node))
        if self.multus:
            shutil.copy2(toolchain.bin_dir() / "multus", node.cni_bin_dir / "multus")
            (node.dir / "cni" / MULTUS_CONF).write_text(multus_config(node, self.kube.kubeconfig))
        (node.dir / "kubelet-config.yaml").write_text(kubelet_config(node))
        install_driver(node.volume_plugin_dir)
        # Before any host resource exists: from here on, release_all finds the node and frees it.
        (node.dir / "node.json").write_text(node.to_json())

    def _wait_containerd(
        self, node: NodeSpec, proc: subprocess.Popen[bytes], timeout: float = 60
    ) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if node.socket.exists() and self.ctr(node, "version").returncode == 0:
                return
            time.sleep(0.2)
        raise LocalClusterError(
            f"containerd of {node.name} did not answer on {node.socket}:\n"
            f"{_tail(node.dir / 'containerd.log')}"
        )

    def _import(self, node: NodeSpec, wanted: Sequence[images.Image]) -> None:
        for image in wanted:
            tarball = image.require()
            # Containers run from the unpacked snapshots: the layers' blobs would only be a
            # second copy of each image on every node (about a third of its disk).
            result = self.ctr(
                node, "-n", "k8s.io", "images", "import", "--base-name", image.base_name,
                "--local", "--discard-unpacked-layers", str(tarball),
            )  # fmt: skip
            if result.returncode != 0:
                raise LocalClusterError(f"importing {tarball} on {node.name}: {result.stderr}")

    def check(self, wanted: Sequence[images.Image] = images.ALL) -> dict[str, str]:
        """Every prerequisite there (root, binaries, Debian packages, images), or an error
        naming the fix; returns the binaries' paths."""
        binaries = _require_binaries(self.multus)
        for image in (*images.ALWAYS, *wanted):
            image.require()
        return binaries

    def up(self, wanted: Sequence[images.Image] = images.ALL, timeout: float = 180) -> None:
        """Start the nodes (after stopping any left from an earlier run) and wait until each is
        Ready in the apiserver."""
        binaries = self.check(wanted)
        if not self.kube.is_up():
            raise LocalClusterError("the local cluster is not up: start it first (kube.up())")
        self.down()
        self._refuse_other_clusters()
        try:
            self._start_nodes(self.specs, binaries, wanted)
            self.wait_ready(timeout)
            self.kube.apply_fake_nodes()  # now gone: the stack's pods land on real nodes
            self._start_kube_proxy(binaries["kube-proxy"])
            dns.deploy(self.kube, replicas=min(2, len(self.specs)))
            self.running = True
        except BaseException:
            # A half-started set of nodes is worth nothing: give everything back (the error
            # carries the log tail that explains it).
            self.down()
            raise

    def _refuse_other_clusters(self) -> None:
        """The nodes share the machine's network namespace, so Service rules (iptables chains
        of fixed names) are machine-wide: one cluster with real nodes at a time."""
        mine = self.specs[0].runtime_dir.name.split("-")[0]
        others = sorted(
            p.name for p in RUNTIME_ROOT.glob("*-*") if p.is_dir() and not p.name.startswith(mine)
        ) if RUNTIME_ROOT.is_dir() else []  # fmt: skip
        if others:
            raise LocalClusterError(
                f"real nodes of another local cluster run on this machine ({RUNTIME_ROOT}/"
                f"{others[0]}): their Services would share this machine's iptables; stop that "
                "cluster first (`kafkastack local down` with its name)"
            )

    def _start_kube_proxy(self, kube_proxy: str) -> None:
        """One kube-proxy programs Services for every real node: they share the machine's
        network namespace. It runs in the first node's cgroup, so it stops with that node
        (host.release_all then removes its iptables rules and the kubelets')."""
        first = self.specs[0]
        config = first.dir / "kube-proxy.yaml"
        config.write_text(kube_proxy_config(first, self.kube.kubeconfig))
        self._start([kube_proxy, "--config", str(config)], first, "kube-proxy.log")

    def _start_nodes(
        self, nodes: Sequence[NodeSpec], binaries: dict[str, str], wanted: Sequence[images.Image]
    ) -> None:
        # The sandbox image first: without it containerd would try to pull it.
        ordered = [*images.ALWAYS, *[i for i in wanted if i not in images.ALWAYS]]
        node_disk.require_room(self.folder, len(nodes), ordered)
        for node in nodes:
            node.dir.mkdir(parents=True, exist_ok=True)
            self._write_configs(node)
            host.add_bridge(node.bridge, node.address, 24)
            containerd = [binaries["containerd"], "--config", str(node.dir / "containerd.toml")]
            self._wait_containerd(node, self._start(containerd, node, "containerd.log"))
        # Unpacking the images is most of a node's start (about 15 s each for Kafka's): every
        # node's at once, in threads that only run `ctr` (the processes above and below are
        # started from this thread alone: their cgroup step runs between fork and exec).
        with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
            list(pool.map(lambda node: self._import(node, ordered), nodes))
        for node in nodes:
            argv = kubelet_args(node, binaries["kubelet"], self.kube.kubeconfig)
            self._start(argv, node, "kubelet.log")

    def ready(self) -> dict[str, bool]:
        nodes = self.kube.objects("nodes", "default")
        state = {n.name: False for n in self.specs}
        for item in nodes:
            name = item["metadata"]["name"]
            if name in state:
                state[name] = any(
                    c["type"] == "Ready" and c["status"] == "True"
                    for c in item.get("status", {}).get("conditions", [])
                )
        return state

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        state: dict[str, bool] = {}
        while time.monotonic() < deadline:
            state = self.ready()
            if all(state.values()):
                return
            time.sleep(1)
        late = [n for n in self.specs if not state.get(n.name)]
        logs = "\n".join(f"--- {n.name}:\n{_tail(n.dir / 'kubelet.log')}" for n in late)
        raise LocalClusterError(f"nodes not Ready after {timeout:.0f}s:\n{logs}")

    def down(self) -> list[str]:
        """Stop the nodes this cluster started (found from their folders) and delete their Node
        objects; nothing else on the machine is touched."""
        self.running = False
        released = host.release_all(self.folder)
        for proc in self._processes:
            proc.wait(timeout=30)
        self._processes.clear()
        if released and self.kube.is_up():
            self._forget(released)
            self.kube.apply_fake_nodes()  # back: no real node is left
        return released

    def crash(self, node: NodeSpec) -> None:
        """The node goes down at once, as a lost machine or zone does: every process it started
        (containerd, kubelet, the pods' shims and containers) gets SIGKILL, with no time to shut
        down; its folders, volumes and bridge stay as they were (`restart` boots it again)."""
        if node.name == self.specs[0].name:
            raise LocalClusterError(
                f"{node.name} also runs the cluster's kube-proxy (every node's Services): "
                "crash another node"
            )
        host.kill_cgroup(node.cgroup, grace=0)
        self._processes = [p for p in self._processes if p.poll() is None]

    def restart(self, node: NodeSpec, timeout: float = 180) -> None:
        """Start a crashed node's containerd and kubelet again on the state it left (its images
        are still in its containerd); the kubelet then starts its pods' containers again."""
        binaries = _require_binaries(self.multus)
        containerd = [binaries["containerd"], "--config", str(node.dir / "containerd.toml")]
        self._wait_containerd(node, self._start(containerd, node, "containerd.log"))
        argv = kubelet_args(node, binaries["kubelet"], self.kube.kubeconfig)
        self._start(argv, node, "kubelet.log")
        self.wait_ready(timeout)

    def import_images(self, wanted: Sequence[images.Image]) -> None:
        """Import more images into every running node's containerd (a test that needs them)."""
        node_disk.require_room(self.folder, len(self.specs), wanted, with_pod_data=False)
        with ThreadPoolExecutor(max_workers=max(1, len(self.specs))) as pool:
            list(pool.map(lambda node: self._import(node, wanted), self.specs))

    def add(
        self, count: int, wanted: Sequence[images.Image] = images.ALL, timeout: float = 180
    ) -> list[NodeSpec]:
        """Start `count` more nodes beside the running ones (zones in turn after theirs) and
        wait until they are Ready; `remove` gives them back (`down` too, with the others)."""
        binaries = self.check(wanted)
        first = len(self.specs)
        added = [
            NodeSpec(self.kube.name, i, ZONES[i % len(ZONES)], self.folder)
            for i in range(first, first + count)
        ]
        self.specs.extend(added)
        try:
            self._start_nodes(added, binaries, wanted)
            self.wait_ready(timeout)
        except BaseException:
            self.remove(added)
            raise
        return added

    def remove(self, nodes: Sequence[NodeSpec]) -> None:
        """Stop these nodes (others keep running) and delete their Node objects, pods and
        volumes."""
        names = [n.name for n in nodes]
        for node in nodes:
            host.release_node(node)
        self.specs = [s for s in self.specs if s.name not in names]
        self._processes = [p for p in self._processes if p.poll() is None]
        self._forget(names)

    def _forget(self, released: list[str]) -> None:
        """Delete the Node objects of stopped nodes, their pods and their volumes."""
        self.kube.kubectl("delete", "node", "--ignore-not-found", *released)
        # Their pods are gone with them (the pod collector would take a minute to notice,
        # and a Deployment would count them Ready meanwhile).
        for node in released:
            self.kube.kubectl(
                "delete", "pods", "--all-namespaces", "--force", "--grace-period=0",
                "--field-selector", f"spec.nodeName={node}",
            )  # fmt: skip
        # Their volumes were folders of the nodes, now gone.
        self.kube.delete_node_volumes(released)

    def labels(self) -> dict[str, dict[str, Any]]:
        items = json.loads(self.kube.kubectl("get", "nodes", "-o", "json").stdout)["items"]
        names = {n.name for n in self.specs}
        return {
            i["metadata"]["name"]: i["metadata"]["labels"]
            for i in items
            if i["metadata"]["name"] in names
        }


@contextlib.contextmanager
def fresh_real_nodes(count: int = 3, multus: bool = False) -> Iterator[RealNodes]:
    """NODES_CLUSTER made anew (a running one of that name is replaced) with `count` real
    nodes; the nodes and the control plane stop on the way out, whatever happened."""
    kube = LocalKubernetes(NODES_CLUSTER)
    kube.down()
    kube.up()
    nodes = RealNodes(kube, count=count, multus=multus)
    try:
        nodes.up()
        yield nodes
    finally:
        nodes.down()
        kube.down()
