"""What a real node of the local cluster is made of: its names, addresses, folders and configs.

Pure: nothing here starts a process or touches the host, so the configs are tested in
milliseconds. The settings follow what ran a pod on a real kubelet on this machine kind
(cgroup v1 allowed, cgroupfs, no CAP_SYS_RESOURCE so containerd must not lower OOM scores,
a locally built sandbox image) and give every node its own copy of anything two kubelets or two
containerds on one host would otherwise share: sockets, state, cgroup root, pod log folder,
CNI network, IPAM state, network namespaces.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from infra.localcluster import images

# The cgroup every node's processes live under: <hierarchy>/kafkastack-nodes/<cluster>/<node>.
CGROUP_PARENT = "kafkastack-nodes"
# Kubelet ports: node i listens on FIRST_PORT + 2i (API) and FIRST_PORT + 2i + 1 (healthz).
FIRST_PORT = 10350
# Debian's containernetworking-plugins.
CNI_BIN_DIR = "/usr/lib/cni"
# containerd's CNI library loads the first config of the node's folder by name: Multus's, when
# the nodes run it, which delegates the pod network to the bridge config beside it.
MULTUS_CONF = "00-multus.conf"
BRIDGE_CONF = "10-bridge.conflist"
# containerd refuses unix socket paths over 104 bytes, too few for the cluster's folder in the
# cache: the sockets, containerd's state and the kubelet's root (which holds sockets too) live
# under a short folder per node, <RUNTIME_ROOT>/<cluster tag>-<index>.
RUNTIME_ROOT = Path("/var/lib/kafkastack-nodes")
# Services: the apiserver's ClusterIP range (control_plane.KWOKCTL_CONFIG sets it), the
# `kubernetes` Service's address (first of the range, which the apiserver's certificate must
# name for in-cluster clients) and cluster DNS (CoreDNS, dns.py) at a fixed address of it.
SERVICE_CIDR = "10.96.0.0/16"
API_SERVICE_IP = "10.96.0.1"
DNS_SERVICE_IP = "10.96.0.10"
CLUSTER_DOMAIN = "cluster.local"
# kube-proxy's metrics and healthz ports on 127.0.0.1 (one kube-proxy per cluster: nodes.py).
KUBE_PROXY_PORT = 10340


def _cluster_octet(cluster: str) -> int:
    """Second octet of a cluster's pod networks (10.<200..249>.<node>.0/24), from its name, so
    two local clusters rarely pick the same addresses."""
    return 200 + int(hashlib.sha256(cluster.encode()).hexdigest(), 16) % 50


def _cluster_tag(cluster: str) -> str:
    return hashlib.sha256(cluster.encode()).hexdigest()[:4]


@dataclass(frozen=True)
class NodeSpec:
    """One real node: a containerd and a kubelet of its own, in one zone."""

    cluster: str
    index: int
    """0-based position among the cluster's real nodes; picks ports and the pod subnet."""
    zone: str
    workdir: Path
    """The cluster's folder of real nodes; this node's configs, logs and image store are in
    `workdir/<name>`, its sockets and runtime state in `runtime_dir`."""

    def __post_init__(self) -> None:
        if not 0 <= self.index < 20:
            raise ValueError(f"node index {self.index} out of range: at most 20 real nodes")

    @property
    def name(self) -> str:
        return f"{self.cluster}-nodes-{self.index}"

    @property
    def dir(self) -> Path:
        return self.workdir / self.name

    @property
    def volume_plugin_dir(self) -> Path:
        """The kubelet's FlexVolume drivers (loop_volumes.install_driver)."""
        return self.dir / "volume-plugins"

    @property
    def bridge(self) -> str:
        """Linux interface names are at most 15 characters: nodes-<cluster tag>-<index>."""
        return f"nodes-{_cluster_tag(self.cluster)}-{self.index}"

    @property
    def pod_cidr(self) -> str:
        """Every real node's pod subnet of this cluster (kube-proxy's clusterCIDR)."""
        return f"10.{_cluster_octet(self.cluster)}.0.0/16"

    @property
    def subnet(self) -> str:
        return f"10.{_cluster_octet(self.cluster)}.{self.index}.0/24"

    @property
    def address(self) -> str:
        """The node's own address: the gateway of its pod bridge (kubelet's --node-ip)."""
        return f"10.{_cluster_octet(self.cluster)}.{self.index}.1"

    @property
    def cni_bin_dir(self) -> Path:
        """The node's own CNI binaries (Multus), searched before Debian's."""
        return self.dir / "cni-bin"

    @property
    def port(self) -> int:
        return FIRST_PORT + 2 * self.index

    @property
    def runtime_dir(self) -> Path:
        return RUNTIME_ROOT / f"{_cluster_tag(self.cluster)}-{self.index}"

    @property
    def socket(self) -> Path:
        return self.runtime_dir / "containerd.sock"

    @property
    def cgroup(self) -> str:
        """The node's cgroup path (kubelet's cgroupRoot; containerd runs in its `system` child)."""
        return f"/{CGROUP_PARENT}/{self.cluster}/{self.name}"

    @property
    def labels(self) -> dict[str, str]:
        return {"topology.kubernetes.io/zone": self.zone, "kafkastack.io/node": "real"}

    def to_json(self) -> str:
        return json.dumps({"cluster": self.cluster, "index": self.index, "zone": self.zone})

    @classmethod
    def from_file(cls, path: Path) -> NodeSpec:
        """The spec a started node left in its folder (node.json), for stopping it later."""
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(str(data["cluster"]), int(data["index"]), str(data["zone"]), path.parent.parent)


def containerd_config(node: NodeSpec) -> str:
    """containerd 2.x (config version 3): everything under the node's folder; NRI off (its
    socket is machine-wide); network namespaces under the state folder so stopping the node
    finds them."""
    d = node.dir / "containerd"
    return f"""version = 3
root = "{d / "root"}"
state = "{node.runtime_dir / "containerd-state"}"
temp = "{d / "tmp"}"
[grpc]
  address = "{node.socket}"
[ttrpc]
  address = "{node.socket}.ttrpc"
[plugins.'io.containerd.internal.v1.opt']
  path = "{d / "opt"}"
[plugins.'io.containerd.nri.v1.nri']
  disable = true
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = "{images.PAUSE.ref}"
[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["{node.cni_bin_dir}", "{CNI_BIN_DIR}"]
    conf_dir = "{node.dir / "cni"}"
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
"""


def cni_config(node: NodeSpec) -> str:
    """A bridge per node with its own subnet; the host routes between bridges (no masquerade:
    pods see each other's real addresses)."""
    conf: dict[str, Any] = {
        "cniVersion": "1.0.0",
        "name": node.bridge,
        "plugins": [
            {
                "type": "bridge",
                "bridge": node.bridge,
                "isGateway": True,
                "ipMasq": False,
                # A pod reaching itself through a Service leaves and re-enters by its own port.
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": node.subnet, "gateway": node.address}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                    "dataDir": str(node.dir / "ipam"),
                },
            }
        ],
    }
    return json.dumps(conf, indent=2)


def replication_bridge(cluster: str) -> str:
    """The host bridge of a cluster's second network (Multus attachments of `plugin: bridge`):
    one for all its real nodes, which share the machine's network stack."""
    return f"repl-{_cluster_tag(cluster)}"


def multus_config(node: NodeSpec, kubeconfig: Path) -> str:
    """Multus as a thin plugin: the pod network stays the node's bridge (its delegate), and the
    attachments a pod's `k8s.v1.cni.cncf.io/networks` names are read from the apiserver through
    `kubeconfig`. Its caches and log stay in the node's folders (the defaults are machine-wide);
    delegates run from Debian's plugins."""
    conf: dict[str, Any] = {
        "cniVersion": "1.0.0",
        "name": "multus-cni-network",
        "type": "multus",
        "kubeconfig": str(kubeconfig),
        "cniDir": str(node.runtime_dir / "multus"),
        "confDir": str(node.dir / "multus"),
        "binDir": CNI_BIN_DIR,
        "logFile": str(node.dir / "multus.log"),
        "logLevel": "verbose",
        "delegates": [json.loads(cni_config(node))],
    }
    return json.dumps(conf, indent=2)


def kubelet_config(node: NodeSpec) -> str:
    """KubeletConfiguration. The apiserver reaches the kubelet without a client certificate
    (kwokctl sets none), hence anonymous + AlwaysAllow on the node's own address: first slice."""
    conf: dict[str, Any] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "failCgroupV1": False,
        "failSwapOn": False,
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": node.cgroup,
        "cgroupsPerQOS": True,
        "enforceNodeAllocatable": [],
        "containerRuntimeEndpoint": f"unix://{node.socket}",
        "address": node.address,
        "port": node.port,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": node.port + 1,
        "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False}},
        "authorization": {"mode": "AlwaysAllow"},
        "resolvConf": "/etc/resolv.conf",
        "clusterDNS": [DNS_SERVICE_IP],
        "clusterDomain": CLUSTER_DOMAIN,
        "podLogsDir": str(node.dir / "pod-logs"),
        "volumePluginDir": str(node.volume_plugin_dir),
        # Imported images cannot be pulled again: never collect them, and no eviction for disk,
        # since a kubelet under disk pressure deletes every image no running pod uses whatever
        # the thresholds above say (the room is checked before a node starts: node_disk.py).
        # Without the merge, the signals left out here have no threshold, not the defaults.
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "evictionHard": {"memory.available": "100Mi"},
        "mergeDefaultEvictionSettings": False,
        "serializeImagePulls": False,
        # How often the kubelet re-syncs each pod, and so swaps a changed Secret's files into
        # its volumes (a renewed certificate): 1 min by default, add about 50 s to what these
        # nodes show on a cluster that keeps it.
        "syncFrequency": "10s",
    }
    return yaml.safe_dump(conf, sort_keys=False)


def kubelet_args(node: NodeSpec, kubelet: str, kubeconfig: Path) -> list[str]:
    labels = ",".join(f"{k}={v}" for k, v in sorted(node.labels.items()))
    return [
        kubelet,
        "--config",
        str(node.dir / "kubelet-config.yaml"),
        "--kubeconfig",
        str(kubeconfig),
        "--root-dir",
        str(node.runtime_dir / "kubelet"),
        "--cert-dir",
        str(node.runtime_dir / "kubelet" / "pki"),
        "--hostname-override",
        node.name,
        "--node-ip",
        node.address,
        "--node-labels",
        labels,
    ]


def kube_proxy_config(node: NodeSpec, kubeconfig: Path) -> str:
    """KubeProxyConfiguration (iptables mode) for the one kube-proxy of a cluster's real nodes.

    Masquerade all Service traffic: whether a reply between two pods of one bridge passes the
    host's conntrack (and so is translated back) depends on br_netfilter, a machine-wide module
    this machine did not have loaded at first and had later; with SNAT the reply returns
    through the host either way. Sysctls that are machine-wide are left alone (conntrack
    sizes and timeouts, route_localnet for localhost NodePorts).
    """
    conf: dict[str, Any] = {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": "iptables",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "hostnameOverride": node.name,
        "clusterCIDR": node.pod_cidr,
        "bindAddress": node.address,
        "healthzBindAddress": f"127.0.0.1:{KUBE_PROXY_PORT}",
        "metricsBindAddress": f"127.0.0.1:{KUBE_PROXY_PORT + 1}",
        "iptables": {"masqueradeAll": True, "localhostNodePorts": False},
        "conntrack": {
            "maxPerCore": 0,
            "min": 0,
            "tcpEstablishedTimeout": "0s",
            "tcpCloseWaitTimeout": "0s",
        },
        "nodePortAddresses": [f"{node.address}/32"],
    }
    return yaml.safe_dump(conf, sort_keys=False)
