"""Dual networks: the pod network for clients, a Multus network for replication and quorum.

NetworkPolicies restrict each port to the peers that need it. Multus attaches the replication
network with a static address per pod (the annotation carries it), so a broker's replication
listener address is known when its config is rendered.
"""

from __future__ import annotations

import json
from typing import Any

from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node


def network_attachment(model: ClusterModel) -> dict[str, Any]:
    """macvlan with static IPAM: addresses come from each pod's annotation."""
    config = {
        "cniVersion": "0.3.1",
        "type": "macvlan",
        "master": model.config.network.replication.master_interface,
        "mode": "bridge",
        "ipam": {"type": "static"},
    }
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {"name": model.names.replication_network, "namespace": model.config.namespace},
        "spec": {"config": json.dumps(config, sort_keys=True)},
    }


def pod_network_annotation(model: ClusterModel, node: Node) -> dict[str, str]:
    if not model.dual_network or node.replication_ip is None:
        return {}
    attachment = [
        {
            "name": model.names.replication_network,
            "namespace": model.config.namespace,
            "ips": [f"{node.replication_ip}/{model.replication_prefix}"],
            "interface": "repl0",
        }
    ]
    return {"k8s.v1.cni.cncf.io/networks": json.dumps(attachment)}


def _peer(cluster: str, component: str) -> dict[str, Any]:
    return {"podSelector": {"matchLabels": labels.selector(cluster, component)}}


def _ports(*numbers: int) -> list[dict[str, Any]]:
    return [{"protocol": "TCP", "port": n} for n in numbers]


def network_policies(model: ClusterModel) -> list[dict[str, Any]]:
    """Who may reach which port. Clients reach only CLIENT; HAProxy reaches only EXTERNAL;
    replication and metrics ports are open to brokers and the quorum alone."""
    cluster, p = model.config.cluster_name, model.ports
    quorum_component = model.metadata.role
    internal = [_peer(cluster, labels.BROKER), _peer(cluster, quorum_component)]
    broker_rules: list[dict[str, Any]] = [
        {"ports": _ports(p.client)},  # any client inside the cluster (SCRAM authenticates)
        {"from": internal, "ports": _ports(p.replication, p.controller)},
        {"ports": _ports(p.metrics)},
    ]
    if model.config.external.mode == "haproxy":
        broker_rules.append({"from": [_peer(cluster, labels.HAPROXY)], "ports": _ports(p.external)})
    elif model.config.external.mode == "route":
        # OpenShift's router pods live in the ingress namespace.
        broker_rules.append(
            {
                "from": [
                    {
                        "namespaceSelector": {
                            "matchLabels": {"network.openshift.io/policy-group": "ingress"}
                        }
                    }
                ],
                "ports": _ports(p.external),
            }
        )
    quorum_ports = _ports(*model.metadata.ports(p).values())
    policies = [
        _policy(model, "brokers", labels.BROKER, broker_rules),
        _policy(
            model,
            "quorum",
            quorum_component,
            [{"from": internal, "ports": quorum_ports}, {"ports": _ports(p.metrics)}],
        ),
    ]
    if model.config.external.mode == "haproxy":
        policies.append(_policy(model, "haproxy", labels.HAPROXY, [{"ports": _ports(p.haproxy)}]))
    return policies


def _policy(
    model: ClusterModel, suffix: str, component: str, ingress: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"{model.config.cluster_name}-{suffix}",
            "namespace": model.config.namespace,
        },
        "spec": {
            "podSelector": {"matchLabels": labels.selector(model.config.cluster_name, component)},
            "policyTypes": ["Ingress"],
            "ingress": ingress,
        },
    }
