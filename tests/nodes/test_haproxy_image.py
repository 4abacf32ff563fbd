"""The HAProxy image built from Debian's package runs as the public image does (uid 99, the
manifest's `-f /usr/local/etc/haproxy/haproxy.cfg`) and finds its backends through cluster DNS
(`resolvers … parse-resolv-conf`, as the rendered config does)."""

from __future__ import annotations

import yaml

from infra.localcluster import images
from infra.localcluster.node_config import CLUSTER_DOMAIN
from infra.localcluster.nodes import RealNodes
from tests.nodes.pods import create, name, pod, wait_phase

CONFIG = """global
    log stdout format raw local0
defaults
    mode tcp
    timeout connect 5s
    timeout client 30s
    timeout server 30s
resolvers cluster
    parse-resolv-conf
frontend in
    bind 0.0.0.0:8443
    default_backend web
backend web
    server web BACKEND:8080 resolvers cluster init-addr none
"""


def test_haproxy_image_routes_to_a_backend_found_through_cluster_dns(
    real_nodes: RealNodes,
) -> None:
    kube = real_nodes.kube
    app = name("hap")
    backend = pod(f"{app}-web", real_nodes.specs[1].name, images.BUSYBOX,
                  ["sh", "-c", f"mkdir /tmp/w && echo {app} > /tmp/w/index.html && "
                   "exec httpd -f -p 8080 -h /tmp/w"])  # fmt: skip
    backend["metadata"]["labels"] = {"app": app}
    service = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": app, "namespace": "default"},
        "spec": {"clusterIP": "None", "selector": {"app": app}, "ports": [{"port": 8080}]},
    }  # fmt: skip
    config = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": app, "namespace": "default"},
        "data": {"haproxy.cfg": CONFIG.replace(
            "BACKEND", f"{app}.default.svc.{CLUSTER_DOMAIN}")},
    }  # fmt: skip
    proxy = pod(f"{app}-proxy", real_nodes.specs[2].name, images.HAPROXY, [])
    container = proxy["spec"]["containers"][0]
    del container["command"]  # the image's entry point, as the rendered Deployment relies on
    container["args"] = ["-f", "/usr/local/etc/haproxy/haproxy.cfg"]
    container["volumeMounts"] = [{"name": "config", "mountPath": "/usr/local/etc/haproxy"}]
    proxy["spec"]["volumes"] = [{"name": "config", "configMap": {"name": app}}]
    kube.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([service, config, backend, proxy]))
    proxy_ip = wait_phase(real_nodes, f"{app}-proxy", {"Running"})["status"]["podIP"]

    client = name("hap-client")
    fetch = f"wget -qO- http://{proxy_ip}:8443/"
    create(real_nodes, pod(client, real_nodes.specs[0].name, images.BUSYBOX,
                           ["sh", "-c", f"for i in $(seq 30); do {fetch} && exit 0; sleep 1; "
                            "done; exit 1"]))  # fmt: skip
    done = wait_phase(real_nodes, client, {"Succeeded", "Failed"}, timeout=120)
    logs = kube.kubectl("logs", f"{app}-proxy", check=False).stdout
    assert done["status"]["phase"] == "Succeeded", logs
    assert kube.kubectl("logs", client).stdout.strip() == app
    uid = kube.kubectl("exec", f"{app}-proxy", "--", "id", "-u").stdout.strip()
    assert uid == "99"  # the public image's haproxy user
    kube.kubectl("delete", "pod", f"{app}-web", f"{app}-proxy", client, "--wait=false")
    kube.kubectl("delete", "svc,configmap", app, "--wait=false")
