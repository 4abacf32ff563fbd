"""Services, external access (HAProxy or OpenShift Routes), disruption budgets."""

from __future__ import annotations

from typing import Any

from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.model.pod_security import container_security_context, pod_security_context
from infra.model.resources import HAPROXY

SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}
# The StatefulSet controller labels each pod with its own name: a per-pod Service selects on it.
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"


def _meta(
    model: ClusterModel, name: str, component: str, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": model.config.namespace,
        "labels": labels.component_labels(model.config.cluster_name, component),
    }
    if annotations:
        meta["annotations"] = annotations
    return meta


def headless_service(
    model: ClusterModel, name: str, component: str, ports: dict[str, int]
) -> dict[str, Any]:
    """Stable per-pod DNS names (the CLIENT advertised host) without a load balancer."""
    return {
        "metadata": _meta(model, name, component),
        "spec": {
            "clusterIP": "None",
            # Brokers must resolve each other while still starting (before readiness).
            "publishNotReadyAddresses": True,
            "selector": labels.selector(model.config.cluster_name, component),
            "ports": [{"name": n, "port": p, "targetPort": p} for n, p in ports.items()],
        },
    }


def services(model: ClusterModel) -> list[dict[str, Any]]:
    p = model.ports
    quorum_component = model.metadata.role
    quorum_ports = model.metadata.ports(p)
    result = [
        headless_service(
            model,
            model.names.brokers_service,
            labels.BROKER,
            {"client": p.client, "replication": p.replication, "external": p.external},
        ),
        {
            "metadata": _meta(model, model.names.bootstrap_service, labels.BROKER),
            "spec": {
                "selector": labels.selector(model.config.cluster_name, labels.BROKER),
                "ports": [{"name": "client", "port": p.client, "targetPort": p.client}],
            },
        },
    ]
    if model.quorum:
        result.append(
            headless_service(model, model.names.quorum_service, quorum_component, quorum_ports)
        )
    return result


def haproxy_deployment(model: ClusterModel, config_hash: str) -> dict[str, Any]:
    name = model.names.haproxy
    pod_labels = labels.component_labels(model.config.cluster_name, labels.HAPROXY, name)
    return {
        "metadata": _meta(model, name, labels.HAPROXY),
        "spec": {
            "replicas": model.haproxy_replicas,
            "selector": {"matchLabels": labels.selector(model.config.cluster_name, labels.HAPROXY)},
            "template": {
                # The hash rolls the pods when the rendered config changes.
                "metadata": {
                    "labels": pod_labels,
                    "annotations": {labels.CONFIG_HASH: config_hash},
                },
                "spec": {
                    # HAProxy runs unprivileged yet listens on 443 like the routes it stands in for.
                    "securityContext": {
                        **pod_security_context(model, model.config.images.haproxy),
                        # A namespaced sysctl "restricted" allows; an added NET_BIND_SERVICE
                        # would not reach a non-root process (no ambient capabilities).
                        "sysctls": [{"name": "net.ipv4.ip_unprivileged_port_start", "value": "0"}],
                    },
                    "topologySpreadConstraints": _haproxy_spread(model),
                    "containers": [
                        {
                            "name": "haproxy",
                            "image": model.config.images.haproxy.image,
                            "securityContext": container_security_context(),
                            "args": ["-f", "/usr/local/etc/haproxy/haproxy.cfg"],
                            "ports": [{"name": "tls", "containerPort": model.ports.haproxy}],
                            "resources": HAPROXY.manifest(),
                            "volumeMounts": [
                                {"name": "config", "mountPath": "/usr/local/etc/haproxy"}
                            ],
                            "readinessProbe": {"tcpSocket": {"port": model.ports.haproxy}},
                        }
                    ],
                    "volumes": [{"name": "config", "configMap": {"name": f"{name}-config"}}],
                },
            },
        },
    }


def _haproxy_spread(model: ClusterModel) -> list[dict[str, Any]]:
    """Replicas evenly over zones, then over nodes. ScheduleAnyway: during a zone outage the
    replicas replacing the lost ones must still start in the zones that are left."""
    selector = {"matchLabels": labels.selector(model.config.cluster_name, labels.HAPROXY)}
    return [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": selector,
        }
        for key in (labels.ZONE, labels.HOSTNAME)
    ]


def load_balancer_annotations(model: ClusterModel) -> dict[str, str]:
    """On AWS, an NLB from the AWS Load Balancer Controller sending straight to the pod IPs in
    every zone (the in-tree controller's classic ELB would terminate nothing but add a hop)."""
    if model.config.platform != "aws":
        return {}
    prefix = "service.beta.kubernetes.io/aws-load-balancer"
    return {
        f"{prefix}-type": "external",
        f"{prefix}-nlb-target-type": "ip",
        f"{prefix}-scheme": model.config.external.load_balancer_scheme,
        f"{prefix}-attributes": "load_balancing.cross_zone.enabled=true",
    }


def haproxy_service_type(model: ClusterModel) -> str:
    """A cloud's load balancer in front of HAProxy; a local cluster has no load balancer
    implementation (a LoadBalancer would never get an address, and Pulumi, awaiting it, would
    time out), so there every node's port serves it."""
    return "NodePort" if model.config.platform == "local" else "LoadBalancer"


def haproxy_service(model: ClusterModel) -> dict[str, Any]:
    """HAProxy's Service on 443 (skipAwait only where nothing may be awaited: kwok)."""
    annotations = {
        **load_balancer_annotations(model),
        **(SKIP_AWAIT if model.config.skip_await else {}),
    }
    return {
        "metadata": _meta(model, model.names.haproxy, labels.HAPROXY, annotations or None),
        "spec": {
            "type": haproxy_service_type(model),
            "selector": labels.selector(model.config.cluster_name, labels.HAPROXY),
            "ports": [
                {"name": "tls", "port": model.ports.route, "targetPort": model.ports.haproxy}
            ],
        },
    }


def external_services(model: ClusterModel) -> list[dict[str, Any]]:
    """Route targets: one Service per broker (its pod alone) and one over every broker for
    bootstrap, each exposing the EXTERNAL listener's port as `external`."""
    c, port = model.config, model.ports.external
    ports = [{"name": "external", "port": port, "targetPort": port}]
    result = [
        {
            "metadata": _meta(model, model.names.external_bootstrap_service, labels.BROKER),
            "spec": {"selector": labels.selector(c.cluster_name, labels.BROKER), "ports": ports},
        }
    ]
    for broker in model.brokers:
        result.append(
            {
                "metadata": _meta(
                    model, model.names.external_service(broker.workload), labels.BROKER
                ),
                "spec": {
                    "selector": {POD_NAME_LABEL: model.names.pod(broker.workload)},
                    "ports": ports,
                },
            }
        )
    return result


def routes(model: ClusterModel) -> list[dict[str, Any]]:
    """OpenShift Routes: TLS passthrough (SNI picks the Route), one per broker to its own
    Service, plus a bootstrap Route to the Service over all brokers."""
    ext = model.config.external
    route_labels = {"router-shard": ext.router_shard} if ext.router_shard else {}
    annotations = {
        "haproxy.router.openshift.io/timeout": "1h",
        "haproxy.router.openshift.io/timeout-tunnel": "1h",
    }
    if model.config.skip_await:
        annotations.update(SKIP_AWAIT)
    targets = [
        (
            f"{model.config.cluster_name}-bootstrap",
            model.names.external_bootstrap,
            model.names.external_bootstrap_service,
        )
    ]
    for broker in model.brokers:
        targets.append(
            (
                f"{broker.workload}-external",
                broker.external_host or "",
                model.names.external_service(broker.workload),
            )
        )
    result = []
    for name, host, service in targets:
        meta = _meta(model, name, labels.BROKER, annotations)
        meta["labels"].update(route_labels)
        result.append(
            {
                "apiVersion": "route.openshift.io/v1",
                "kind": "Route",
                "metadata": meta,
                "spec": {
                    "host": host,
                    "to": {"kind": "Service", "name": service, "weight": 100},
                    "port": {"targetPort": "external"},
                    "tls": {"termination": "passthrough", "insecureEdgeTerminationPolicy": "None"},
                },
            }
        )
    return result


def disruption_budgets(model: ClusterModel) -> list[dict[str, Any]]:
    """One voluntary disruption at a time for brokers and for the quorum alike.

    Draining (N−1)/2 voters at once would keep a bare majority and leave no room for a failure
    during the drain; one at a time keeps the quorum one failure away from loss, as a roll does.
    """
    c = model.config
    budgets = [
        {
            "metadata": _meta(model, f"{c.cluster_name}-brokers", labels.BROKER),
            "spec": {
                "maxUnavailable": 1,
                "selector": {"matchLabels": labels.selector(c.cluster_name, labels.BROKER)},
            },
        }
    ]
    if c.external.mode == "haproxy":
        # Drains take HAProxy replicas one at a time: the rest keep serving the NLB's targets.
        budgets.append(
            {
                "metadata": _meta(model, model.names.haproxy, labels.HAPROXY),
                "spec": {
                    "maxUnavailable": 1,
                    "selector": {"matchLabels": labels.selector(c.cluster_name, labels.HAPROXY)},
                },
            }
        )
    if model.quorum:
        component = model.quorum[0].role
        budgets.append(
            {
                "metadata": _meta(model, f"{c.cluster_name}-quorum", component),
                "spec": {
                    "maxUnavailable": 1,
                    "selector": {"matchLabels": labels.selector(c.cluster_name, component)},
                },
            }
        )
    return budgets
