"""Services, cluster DNS and volumes of the real nodes (pure configs): the addresses agree
between apiserver, kubelets, kube-proxy and CoreDNS; volumes live in the node's own folder."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest
import yaml

from infra.localcluster import dns, images
from infra.localcluster import nodes as real_nodes
from infra.localcluster.control_plane import KWOKCTL_CONFIG, LocalClusterError, LocalKubernetes
from infra.localcluster.local_volumes import VOLUME_NODE_LABEL, real_node_volumes, volumes
from infra.localcluster.node_config import (
    API_SERVICE_IP,
    CLUSTER_DOMAIN,
    DNS_SERVICE_IP,
    SERVICE_CIDR,
    NodeSpec,
    cni_config,
    kube_proxy_config,
    kubelet_config,
)

WORKDIR = Path("/cache/local-cluster/c/nodes")
NODES = [NodeSpec("c", i, f"zone-{i}", WORKDIR) for i in range(3)]


def test_kubelets_hand_pods_the_dns_service_address_inside_the_service_range() -> None:
    conf = yaml.safe_load(kubelet_config(NODES[1]))
    assert conf["clusterDNS"] == [DNS_SERVICE_IP]
    assert conf["clusterDomain"] == CLUSTER_DOMAIN
    services = ipaddress.ip_network(SERVICE_CIDR)
    assert ipaddress.ip_address(DNS_SERVICE_IP) in services
    # The `kubernetes` Service takes the range's first address.
    assert ipaddress.ip_address(API_SERVICE_IP) == services.network_address + 1
    service = next(o for o in dns.objects(2) if o["kind"] == "Service")
    assert service["spec"]["clusterIP"] == DNS_SERVICE_IP


def test_the_apiserver_uses_the_service_range_and_its_certificate_names_the_api_service() -> None:
    conf = yaml.safe_load(KWOKCTL_CONFIG)
    assert API_SERVICE_IP in conf["options"]["kubeApiserverCertSANs"]
    apiserver = next(p for p in conf["componentsPatches"] if p["name"] == "kube-apiserver")
    assert {"key": "service-cluster-ip-range", "value": SERVICE_CIDR} in apiserver["extraArgs"]


def test_a_lost_node_is_noticed_at_kubernetes_own_timings() -> None:
    # kwokctl's default factor of 5 gives a node grace of 3 min 20 s: the cluster DNS Service
    # would route lookups to a lost node's CoreDNS that long (tests/nodes node-loss proof).
    assert yaml.safe_load(KWOKCTL_CONFIG)["options"]["heartbeatFactor"] == 1


def test_kube_proxy_covers_every_pod_subnet_and_masquerades_service_traffic() -> None:
    conf = yaml.safe_load(kube_proxy_config(NODES[0], Path("/k/kubeconfig")))
    assert conf["mode"] == "iptables"
    assert conf["hostnameOverride"] == NODES[0].name
    assert conf["iptables"]["masqueradeAll"] is True
    assert conf["iptables"]["localhostNodePorts"] is False  # would set route_localnet
    assert conf["conntrack"]["maxPerCore"] == 0  # leaves the machine-wide table size alone
    cluster = ipaddress.ip_network(conf["clusterCIDR"])
    assert all(ipaddress.ip_network(n.subnet).subnet_of(cluster) for n in NODES)
    assert conf["healthzBindAddress"].startswith("127.0.0.1:")


def test_a_pod_can_reach_itself_through_a_service() -> None:
    assert json.loads(cni_config(NODES[2]))["plugins"][0]["hairpinMode"] is True


def test_coredns_runs_the_local_image_on_real_nodes_with_kubernetes_zone() -> None:
    deployment = next(o for o in dns.objects(2) if o["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kafkastack.io/node": "real"}
    assert pod["dnsPolicy"] == "Default"  # never itself
    (apart,) = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert apart["topologyKey"] == "kubernetes.io/hostname"  # one per node, even while they join
    (container,) = pod["containers"]
    assert container["image"] == images.COREDNS.ref
    assert container["imagePullPolicy"] == "Never"
    assert f"kubernetes {CLUSTER_DOMAIN} " in dns.COREFILE
    assert "pods insecure" in dns.COREFILE  # <pod-ip-dashed>.<ns>.pod names
    assert images.COREDNS in images.ALWAYS


def test_real_node_volumes_are_folders_of_their_node_bound_to_it(tmp_path: Path) -> None:
    node = NodeSpec("c", 1, "zone-b", tmp_path)
    node.dir.mkdir(parents=True)
    (node.dir / "node.json").write_text(node.to_json())
    (tmp_path / "stray").mkdir()  # no node.json: not a node
    hosts = real_node_volumes(tmp_path)
    assert hosts == {node.name: node.dir / "volumes"}
    pvs = volumes({"broker": "fast-broker", "quorum": "fast-quorum"}, hosts)
    assert len(pvs) == 4  # two per role
    for pv in pvs:
        assert pv["spec"]["local"]["path"].startswith(str(node.dir) + "/")
        assert pv["metadata"]["labels"] == {VOLUME_NODE_LABEL: node.name}
        (term,) = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
        assert term["matchExpressions"][0]["values"] == [node.name]


def test_real_nodes_refuse_to_share_the_machine_with_another_clusters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(real_nodes, "RUNTIME_ROOT", tmp_path)
    mine = real_nodes.RealNodes(LocalKubernetes("mine"), count=2)
    for node in mine.specs:  # its own leftovers are no reason to refuse
        (tmp_path / node.runtime_dir.name).mkdir()
    mine._refuse_other_clusters()
    other = real_nodes.RealNodes(LocalKubernetes("other"), count=1)
    (tmp_path / other.specs[0].runtime_dir.name).mkdir()
    with pytest.raises(LocalClusterError, match=r"another local cluster.*kafkastack local down"):
        mine._refuse_other_clusters()
