"""Cluster DNS for the real nodes: CoreDNS (built here, scripts/toolchain/build-coredns.sh) as a
Deployment on the real nodes behind the `kube-dns` Service at the address every kubelet hands its
pods (`clusterDNS`). It serves Service names and, for pods with a hostname and subdomain
(StatefulSets), `<pod>.<service>.<namespace>.svc.cluster.local` — the names the rendered broker
configs advertise. Nothing outside the cluster is forwarded: no upstream resolver is reachable.
"""

from __future__ import annotations

import time
from typing import Any

import yaml

from infra.localcluster import images
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.node_config import CLUSTER_DOMAIN, DNS_SERVICE_IP

NAMESPACE = "kube-system"
NAME = "coredns"
LABELS = {"k8s-app": "kube-dns"}
COREFILE = f"""\
.:53 {{
    errors
    health :8080
    ready :8181
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }}
    cache 30
    loop
    reload
}}
"""


def _meta(name: str, namespaced: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(LABELS)}
    if namespaced:
        meta["namespace"] = NAMESPACE
    return meta


def objects(replicas: int) -> list[dict[str, Any]]:
    """CoreDNS's account and rights (read Services, EndpointSlices, pods, namespaces), its
    Corefile, a Deployment with one replica per real node (at most as many as nodes), and the
    `kube-dns` Service."""
    rules = [
        {"apiGroups": [""], "resources": ["endpoints", "services", "pods", "namespaces"],
         "verbs": ["list", "watch"]},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
         "verbs": ["list", "watch"]},
    ]  # fmt: skip
    container = {
        "name": NAME,
        "image": images.COREDNS.ref,
        "imagePullPolicy": "Never",
        "args": ["-conf", "/etc/coredns/Corefile"],
        "ports": [
            {"name": "dns", "containerPort": 53, "protocol": "UDP"},
            {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
        ],
        "volumeMounts": [{"name": "config", "mountPath": "/etc/coredns", "readOnly": True}],
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181}, "periodSeconds": 2},
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}},
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
    }
    # One replica per node, strictly: restarted nodes register one by one, and a soft spread
    # would put every replica on the first.
    apart = {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": LABELS}}
        ]
    }
    pod_spec = {
        "serviceAccountName": NAME,
        # Its own resolver is the machine's: it must not ask itself.
        "dnsPolicy": "Default",
        "nodeSelector": {"kafkastack.io/node": "real"},
        "affinity": {"podAntiAffinity": apart},
        "containers": [container],
        "volumes": [{"name": "config", "configMap": {"name": NAME}}],
    }
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": _meta("system:coredns", False), "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": _meta("system:coredns", False),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": "system:coredns"},
         "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(NAME),
         "data": {"Corefile": COREFILE}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(NAME),
         "spec": {"replicas": replicas, "selector": {"matchLabels": LABELS},
                  "template": {"metadata": {"labels": dict(LABELS)}, "spec": pod_spec}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": _meta("kube-dns"),
         "spec": {"selector": LABELS, "clusterIP": DNS_SERVICE_IP, "ports": [
             {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
             {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53}]}},
    ]  # fmt: skip


def deploy(kube: LocalKubernetes, replicas: int, timeout: float = 120) -> None:
    """Apply CoreDNS and wait until every replica is Ready (its own readiness probe)."""
    kube.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(objects(replicas)))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready = kube.kubectl(
            "get", "deployment", NAME, "-n", NAMESPACE, "-o", "jsonpath={.status.readyReplicas}"
        ).stdout
        if ready and int(ready) == replicas:
            return
        time.sleep(1)
    pods = kube.kubectl("get", "pods", "-n", NAMESPACE, "-l", "k8s-app=kube-dns", "-o", "wide")
    raise LocalClusterError(f"CoreDNS not Ready after {timeout:.0f}s:\n{pods.stdout}")
