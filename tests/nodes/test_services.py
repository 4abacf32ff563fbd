"""Services and cluster DNS on the real nodes: kube-proxy routes a ClusterIP from pods on every
node (and from the backing pod itself), CoreDNS answers Service and headless pod names; local
volumes bind in the pod's node."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from infra.localcluster import dns, images
from infra.localcluster.node_config import CLUSTER_DOMAIN
from infra.localcluster.nodes import RealNodes
from tests.nodes.pods import create, name, pod, wait_phase


def _services(app: str) -> list[dict[str, Any]]:
    """A headless Service (pod names) and a ClusterIP one (port 80 → the pod's 8080)."""
    selector = {"app": app}
    return [
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": app, "namespace": "default"},
         "spec": {"clusterIP": "None", "selector": selector,
                  "ports": [{"name": "http", "port": 8080}]}},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": f"{app}-ip", "namespace": "default"},
         "spec": {"selector": selector,
                  "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}},
    ]  # fmt: skip


def _until(command: str, tries: int = 30) -> str:
    """A shell loop retrying `command` each second until it succeeds: kube-proxy and CoreDNS
    learn of a new Service's endpoints within a few seconds."""
    return f"(for i in $(seq {tries}); do {command} && exit 0; sleep 1; done; exit 1)"


def test_cluster_ip_and_dns_names_answer_from_pods_on_every_node(real_nodes: RealNodes) -> None:
    kube = real_nodes.kube
    app = name("web")
    server = "web-0"
    page = name("page")  # unique per run, and in no DNS name
    backend = pod(server, real_nodes.specs[0].name, images.BUSYBOX,
                  ["sh", "-c", f"mkdir /tmp/www && echo {page} > /tmp/www/index.html && "
                   "exec httpd -f -p 8080 -h /tmp/www"])  # fmt: skip
    backend["metadata"]["name"] = f"{app}-0"
    backend["metadata"]["labels"] = {"app": app}
    # What a StatefulSet sets: the pod's own DNS name under its headless Service.
    backend["spec"]["hostname"] = server
    backend["spec"]["subdomain"] = app
    backend["spec"]["containers"][0]["readinessProbe"] = {
        "tcpSocket": {"port": 8080},
        "periodSeconds": 1,
    }
    kube.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([*_services(app), backend]))
    pod_ip = wait_phase(real_nodes, f"{app}-0", {"Running"})["status"]["podIP"]
    cluster_ip = kube.kubectl("get", "svc", f"{app}-ip", "-o", "jsonpath={.spec.clusterIP}").stdout
    pod_name = f"{server}.{app}.default.svc.{CLUSTER_DOMAIN}"
    service_name = f"{app}-ip.default.svc.{CLUSTER_DOMAIN}"

    clients = []
    for node in real_nodes.specs:
        client = name(f"dns-{node.index}")
        # busybox-static's wget resolves names (and port names) through glibc's NSS, which a
        # static binary cannot load: names go through nslookup (its own resolver), wget gets
        # the address and port (and no -T: Debian's static build crashes on it too).
        script = " && ".join([
            _until(f"wget -qO- http://{cluster_ip}:80/"),
            _until(f"nslookup {service_name}"),
            _until(f"nslookup {pod_name}"),
        ])  # fmt: skip
        create(real_nodes, pod(client, node.name, images.BUSYBOX, ["sh", "-c", script]))
        clients.append(client)
    for client in clients:
        done = wait_phase(real_nodes, client, {"Succeeded", "Failed"}, timeout=180)
        out = kube.kubectl("logs", client).stdout
        assert done["status"]["phase"] == "Succeeded", out
        assert out.count(page) == 1, out
        after_service, after_pod = out.split(service_name, 1)[1].split(pod_name, 1)
        assert cluster_ip in after_service, out
        assert pod_ip in after_pod, out
    # Hairpin: the backing pod reaches itself through its own Service.
    hairpin = kube.kubectl(
        "exec", f"{app}-0", "--", "sh", "-c", _until(f"wget -qO- http://{cluster_ip}:80/")
    )
    assert hairpin.stdout.strip() == page
    kube.kubectl("delete", "svc", app, f"{app}-ip", "--wait=false")
    kube.kubectl("delete", "pod", f"{app}-0", *clients, "--wait=false")


def test_coredns_runs_on_the_real_nodes_ready_through_its_probe(real_nodes: RealNodes) -> None:
    pods = real_nodes.kube.objects("pods", dns.NAMESPACE)
    coredns = [p for p in pods if p["metadata"]["labels"].get("k8s-app") == "kube-dns"]
    assert len(coredns) == 2
    names = {n.name for n in real_nodes.specs}
    assert len({p["spec"]["nodeName"] for p in coredns}) == 2  # spread
    assert {p["spec"]["nodeName"] for p in coredns} <= names
    for p in coredns:
        ready = {c["type"]: c["status"] for c in p["status"]["conditions"]}
        assert ready["Ready"] == "True"


def test_a_local_volume_binds_on_the_node_of_its_pod_and_is_writable(
    real_nodes: RealNodes,
) -> None:
    """WaitForFirstConsumer: the claim binds to a volume of the node the pod was placed on,
    which is a folder of that node."""
    kube = real_nodes.kube
    storage_class = name("vol")
    node = real_nodes.specs[1]
    kube.kubectl("apply", "-f", "-", stdin=yaml.safe_dump({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": storage_class}, "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer"}))  # fmt: skip
    kube.add_volumes({"broker": storage_class, "quorum": f"{storage_class}-q"})
    claim = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": storage_class, "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                 "resources": {"requests": {"storage": "1Gi"}}},
    }  # fmt: skip
    marker = name("data")
    writer = pod(name("writer"), node.name, images.BUSYBOX,
                 ["sh", "-c", f"echo {marker} > /data/marker && cat /data/marker"])  # fmt: skip
    writer["spec"]["volumes"] = [
        {"name": "data", "persistentVolumeClaim": {"claimName": storage_class}}
    ]
    writer["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    kube.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([claim, writer]))
    done = wait_phase(real_nodes, writer["metadata"]["name"], {"Succeeded", "Failed"})
    assert done["status"]["phase"] == "Succeeded", kube.kubectl(
        "describe", "pod", writer["metadata"]["name"]
    ).stdout
    bound = json.loads(kube.kubectl("get", "pvc", storage_class, "-o", "json").stdout)
    volume = json.loads(kube.kubectl("get", "pv", bound["spec"]["volumeName"], "-o", "json").stdout)
    (term,) = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert term["matchExpressions"][0]["values"] == [node.name]
    folder = volume["spec"]["local"]["path"]
    assert folder.startswith(str(node.dir) + "/")
    assert (Path(folder) / "marker").read_text().strip() == marker  # on the node's own disk
    kube.kubectl("delete", "pod", writer["metadata"]["name"], "--wait=false")
