"""The host resources a real node owns, and how to give them back.

A node's processes (containerd, its shims, kubelet, every container) all live in the node's own
cgroup tree, in every cgroup hierarchy the machine mounts. That tree is the record of what the
node started: stopping the node kills exactly the processes in it, whoever started them and
whether or not the process that started them is still alive. Mounts are found the same way,
under the node's folder, and the node's bridge by its name.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from infra import toolchain
from infra.localcluster.node_config import NodeSpec, replication_bridge

CGROUP_MOUNTS = Path("/proc/self/mounts")
MOUNTINFO = Path("/proc/self/mountinfo")
CNI_CACHE = Path("/var/lib/cni/results")


class HostError(RuntimeError):
    """A host resource could not be set up; the message says what to do."""


@contextlib.contextmanager
def exclusive(lock: Path) -> Iterator[None]:
    """The block runs while no other process on this machine holds `lock` (flock on the file,
    released with it, also when the holder dies)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def cgroup_hierarchies() -> list[Path]:
    """Every mounted cgroup hierarchy (v1 controllers and the unified v2 one)."""
    found = []
    for line in CGROUP_MOUNTS.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[2] in ("cgroup", "cgroup2"):
            found.append(Path(fields[1]))
    if not found:
        raise HostError("no cgroup hierarchy is mounted: real nodes need cgroups (run as root)")
    return found


def make_cgroup(path: str) -> list[Path]:
    """Create `path` (e.g. /kafkastack-nodes/c/n/system) in every hierarchy; returns the
    folders. cpuset folders start with no CPUs or memory nodes, so each level copies its
    parent's, as systemd does."""
    made = []
    for root in cgroup_hierarchies():
        current = root
        for part in path.strip("/").split("/"):
            parent, current = current, current / part
            current.mkdir(exist_ok=True)
            for knob in ("cpuset.cpus", "cpuset.mems"):
                if (current / knob).is_file() and not (current / knob).read_text().strip():
                    (current / knob).write_text((parent / knob).read_text())
        made.append(current)
    return made


def enter_cgroups(folders: list[Path]) -> None:
    """Move the calling process into `folders` (used between fork and exec)."""
    for folder in folders:
        (folder / "cgroup.procs").write_text(str(os.getpid()))


def cgroup_pids(path: str) -> set[int]:
    """Every process in the tree at `path`, in any hierarchy."""
    pids: set[int] = set()
    for root in cgroup_hierarchies():
        top = root / path.strip("/")
        if not top.is_dir():
            continue
        for folder, _, _ in os.walk(top):
            with contextlib.suppress(OSError):
                text = (Path(folder) / "cgroup.procs").read_text()
                pids.update(int(p) for p in text.split())
    return pids


def kill_cgroup(path: str, grace: float = 5) -> None:
    """SIGTERM every process of the tree, SIGKILL what is left after `grace` seconds, until the
    tree is empty (a dying shim may still start nothing: the loop checks again)."""
    sig = signal.SIGTERM
    deadline = time.monotonic() + grace
    while pids := cgroup_pids(path):
        if time.monotonic() > deadline:
            sig = signal.SIGKILL
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        if time.monotonic() > deadline + 30:
            raise HostError(f"processes {sorted(pids)} of {path} survive SIGKILL")
        time.sleep(0.2)


def remove_cgroup(path: str) -> None:
    """Remove the (empty) tree at `path` in every hierarchy, deepest first, then its parents
    while they are empty (another cluster's nodes keep theirs)."""
    for root in cgroup_hierarchies():
        top = root / path.strip("/")
        if top.is_dir():
            for folder, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
                with contextlib.suppress(FileNotFoundError):
                    os.rmdir(folder)
        parent = top.parent
        while parent != root:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent


def mounts_under(folder: Path) -> list[str]:
    """Mount points under `folder`, deepest first (the order to unmount them in)."""
    prefix = str(folder.resolve()) + "/"
    points = []
    for line in MOUNTINFO.read_text(encoding="utf-8").splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point.startswith(prefix):
            points.append(point)
    return sorted(points, key=len, reverse=True)


def unmount_all(folder: Path) -> None:
    for point in mounts_under(folder):
        result = subprocess.run(["umount", "-l", point], capture_output=True, text=True)
        if result.returncode != 0 and Path(point).exists() and point in mounts_under(folder):
            raise HostError(f"cannot unmount {point}: {result.stderr.strip()}")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise HostError("`ip` (iproute2) is missing: run `make system-deps`") from None
    if check and result.returncode != 0:
        raise HostError(f"ip {' '.join(args)}: {result.stderr.strip()}")
    return result


def add_bridge(name: str, address: str, prefix: int) -> None:
    """The node's pod bridge with the node's address; the CNI bridge plugin adopts it."""
    if _ip("link", "show", name, check=False).returncode == 0:
        raise HostError(
            f"network device {name} already exists: stop the local cluster that owns it "
            f"(`kafkastack local down`) or delete it (`ip link del {name}`)"
        )
    taken = _ip("-o", "addr", "show", "to", f"{address}/{prefix}").stdout.split()
    if taken:
        raise HostError(
            f"{address}/{prefix} is already on {taken[1]}: another local cluster uses this "
            "subnet; stop it or give this cluster another name"
        )
    _ip("link", "add", name, "type", "bridge")
    _ip("addr", "add", f"{address}/{prefix}", "dev", name)
    _ip("link", "set", name, "up")


def add_router(bridge: str, addresses: list[str]) -> None:
    """Make the host the router of a second network's subnets: `bridge` (created if missing)
    carries each `address/prefix`, and the host forwards between them (the pod bridges already
    turned forwarding on)."""
    if _ip("link", "show", bridge, check=False).returncode != 0:
        _ip("link", "add", bridge, "type", "bridge")
    present = _ip("-o", "addr", "show", "dev", bridge).stdout.split()
    for address in addresses:
        if address not in present:
            _ip("addr", "add", address, "dev", bridge)
    _ip("link", "set", bridge, "up")


def delete_bridge(name: str) -> None:
    if _ip("link", "show", name, check=False).returncode == 0:
        _ip("link", "del", name)


def remove_log_links(folder: Path, links: Path = Path("/var/log/containers")) -> None:
    """The kubelet links container logs from a fixed machine-wide folder; drop the links that
    point into `folder` (this node's pod logs) and no others."""
    if not links.is_dir():
        return
    prefix = str(folder.resolve()) + "/"
    for link in links.iterdir():
        if link.is_symlink() and os.readlink(link).startswith(prefix):
            link.unlink()


def _container_ids(node: NodeSpec) -> set[str]:
    """The ids of the node's containers and sandboxes, from containerd's task state."""
    tasks = node.runtime_dir / "containerd-state" / "io.containerd.runtime.v2.task" / "k8s.io"
    return {p.name for p in tasks.iterdir()} if tasks.is_dir() else set()


# Chains the kubelet itself writes (its iptables canary, kube-proxy's hint, and the rule that
# drops non-loopback packets to 127.0.0.0/8), by table; kube-proxy --cleanup leaves them.
KUBELET_CHAINS = {
    "filter": ("KUBE-FIREWALL", "KUBE-KUBELET-CANARY"),
    "nat": ("KUBE-KUBELET-CANARY",),
    "mangle": ("KUBE-IPTABLES-HINT", "KUBE-KUBELET-CANARY"),
}


def _iptables(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["iptables", *args], capture_output=True, text=True, check=False)


def remove_kube_rules() -> None:
    """The iptables chains the nodes wrote, once none of them runs (a running kubelet would
    write its canaries again): kube-proxy's (KUBE-SERVICES, KUBE-POSTROUTING, …, removed by
    its own `--cleanup`) and the kubelet's. Only these nodes write `KUBE-` chains: one
    cluster's real nodes run at a time (nodes.py)."""
    kube_proxy = toolchain.bin_dir() / "kube-proxy"
    result = subprocess.run(
        [str(kube_proxy), "--cleanup"], capture_output=True, text=True, check=False
    )
    for table, chains in KUBELET_CHAINS.items():
        for hook in ("INPUT", "OUTPUT"):
            while _iptables("-t", table, "-D", hook, "-j", "KUBE-FIREWALL").returncode == 0:
                pass
        for chain in chains:
            _iptables("-t", table, "-F", chain)
            _iptables("-t", table, "-X", chain)
    left = [
        line
        for line in subprocess.run(
            ["iptables-save"], capture_output=True, text=True, check=False
        ).stdout.splitlines()
        if "KUBE-" in line
    ]
    if left:
        raise HostError(f"iptables rules of the nodes survive: {left[:5]} {result.stderr[-800:]}")


def release_node(node: NodeSpec) -> None:
    """Stop a real node and give back all it owns: its processes (by cgroup), mounts, cgroups,
    bridge, log links, CNI cache entries and folder. Safe to repeat."""
    sandboxes = _container_ids(node)
    kill_cgroup(node.cgroup)
    unmount_all(node.runtime_dir)
    unmount_all(node.dir)
    remove_cgroup(node.cgroup)
    delete_bridge(node.bridge)
    remove_log_links(node.dir)
    # containerd's CNI library caches results machine-wide, named <network>-<container>-<if>.
    if CNI_CACHE.is_dir():
        for cached in CNI_CACHE.iterdir():
            if cached.name.startswith(f"{node.bridge}-") or any(
                f"-{sandbox}-" in cached.name for sandbox in sandboxes
            ):
                cached.unlink()
        with contextlib.suppress(OSError):
            CNI_CACHE.rmdir()
            CNI_CACHE.parent.rmdir()
    shutil.rmtree(node.runtime_dir, ignore_errors=True)
    shutil.rmtree(node.dir, ignore_errors=True)
    with contextlib.suppress(OSError):
        node.runtime_dir.parent.rmdir()


def release_all(folder: Path) -> list[str]:
    """Stop every real node whose folder (with its node.json) is under `folder`, then remove
    the iptables rules they wrote."""
    released = []
    clusters = set()
    for spec_file in sorted(folder.glob("*/node.json")):
        node = NodeSpec.from_file(spec_file)
        release_node(node)
        released.append(node.name)
        clusters.add(node.cluster)
    for cluster in clusters:
        # The second network's bridge (add_router's, or the bridge plugin's for the first pod).
        delete_bridge(replication_bridge(cluster))
    if released:
        remove_kube_rules()
    return released
