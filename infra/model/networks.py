"""Which peer reaches which listener, on which network (docs/networks.md).

Every listener is its own port. NetworkPolicies deny all ingress in the namespace, then admit
CLIENT from client namespaces, EXTERNAL from HAProxy (or OpenShift's routers), metrics from the
monitoring namespace, and REPLICATION/CONTROLLER only from this cluster's Kafka pods.

NetworkPolicies govern the pod network alone. In `dual` mode REPLICATION and CONTROLLER listen
only on the Multus second network, so their rules live in MultiNetworkPolicies bound to its
attachments; the attachments use static IPAM with the `ips` capability, which is what makes
Multus hand each pod the address its annotation (and its rendered listeners) name.
"""

from __future__ import annotations

import json
from typing import Any

from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node
from infra.network_rules import attachment_plugin, monitoring_namespace

NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
POLICY_FOR_ANNOTATION = "k8s.v1.cni.cncf.io/policy-for"
SECOND_INTERFACE = "repl0"
CNI_VERSION = "0.4.0"
MULTI_NETWORK_POLICY_API = "k8s.cni.cncf.io/v1beta1"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every namespace


def attachment_name(model: ClusterModel, zone: str) -> str:
    plan = model.address_plan
    if plan is not None and plan.zoned:
        return model.names.zone_replication_network(zone)
    return model.names.replication_network


def network_attachments(model: ClusterModel) -> dict[str, dict[str, Any]]:
    """Logical name → NetworkAttachmentDefinition: one for a stretched segment (its logical name
    predates zoned plans and stays, as it is part of the URN), else one per zone."""
    plan = model.address_plan
    if plan is None:
        return {}
    if not plan.zoned:
        return {"replication": _attachment(model, model.zones[0])}
    return {f"replication-{zone}": _attachment(model, zone) for zone in model.zones}


def _attachment(model: ClusterModel, zone: str) -> dict[str, Any]:
    plan = model.address_plan
    assert plan is not None
    plugin_type = attachment_plugin(model.config)
    ipam: dict[str, Any] = {"type": "static"}
    if plan.zoned:
        # Other zones' subnets are reached through this zone's router.
        ipam["routes"] = [
            {"dst": str(plan.ranges[other]), "gw": str(plan.gateway(zone))}
            for other in model.zones
            if other != zone
        ]
    name = attachment_name(model, zone)
    replication = model.config.network.replication
    assert replication is not None
    plugin: dict[str, Any] = {
        "type": plugin_type,
        **_attach_to(plugin_type, replication.master_interface),
    }
    # Multus hands the annotation's `ips` to a plugin only when it declares the capability;
    # static IPAM then assigns exactly that address (without it the pod gets none).
    plugin["capabilities"] = {"ips": True}
    plugin["ipam"] = ipam
    config = {"cniVersion": CNI_VERSION, "name": name, "plugins": [plugin]}
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {"name": name, "namespace": model.config.namespace},
        "spec": {"config": json.dumps(config, sort_keys=True)},
    }


def _attach_to(plugin_type: str, interface: str) -> dict[str, Any]:
    """Where the plugin puts the pod's second interface. macvlan and ipvlan hang it off a host
    NIC; `bridge` plugs it into a host bridge, for nodes that share one network stack (where a
    macvlan child of one NIC per node cannot exist). The bridge is never made the gateway: the
    plugin gives a bridge one address per family and fails every pod of a second zone ("already
    has an IP address different from …", seen on real nodes), so the zones' routers (the plan's
    first host addresses) belong to the network, as on-prem; locally the host bridge has them."""
    if plugin_type == "bridge":
        return {"bridge": interface, "isGateway": False, "ipMasq": False}
    return {"master": interface, "mode": "bridge" if plugin_type == "macvlan" else "l2"}


def pod_network_annotation(model: ClusterModel, node: Node) -> dict[str, str]:
    """The network-selection element: the zone's attachment and this node's static address."""
    plan = model.address_plan
    if plan is None or node.replication_ip is None:
        return {}
    prefix = plan.ranges[node.zone].prefixlen
    attachment = [
        {
            "name": attachment_name(model, node.zone),
            "namespace": model.config.namespace,
            "ips": [f"{node.replication_ip}/{prefix}"],
            "interface": SECOND_INTERFACE,
        }
    ]
    return {NETWORKS_ANNOTATION: json.dumps(attachment)}


def _peer(cluster: str, component: str) -> dict[str, Any]:
    return {"podSelector": {"matchLabels": labels.selector(cluster, component)}}


def _namespace(name: str) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: name}}}


def _ports(*numbers: int) -> list[dict[str, Any]]:
    return [{"protocol": "TCP", "port": n} for n in numbers]


def _clients(model: ClusterModel) -> list[dict[str, Any]]:
    listed = model.config.network.client_namespaces
    if listed is None:
        return [{"namespaceSelector": {}}]  # any pod in the cluster; SCRAM/mTLS authenticates
    return [_namespace(ns) for ns in sorted({model.config.namespace, *listed})]


def _replication_rules(model: ClusterModel) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Ingress of brokers and of the quorum on whichever network carries replication."""
    cluster, p = model.config.cluster_name, model.ports
    brokers = _peer(cluster, labels.BROKER)
    quorum = _peer(cluster, model.metadata.role)
    broker_ports = [p.replication]
    if model.config.quorum.combined:
        broker_ports.append(p.controller)  # brokers are the voters
    broker_rules = [{"from": [brokers], "ports": _ports(*broker_ports)}]
    quorum_rules = [{"from": [brokers, quorum], "ports": _ports(*model.metadata.ports(p).values())}]
    return broker_rules, quorum_rules


def network_policies(model: ClusterModel) -> list[dict[str, Any]]:
    """The pod network: deny by default, then admit each listener's peers."""
    c, p = model.config, model.ports
    cluster = c.cluster_name
    metrics = {"from": [_namespace(monitoring_namespace(c))], "ports": _ports(p.metrics)}
    broker_rules: list[dict[str, Any]] = [{"from": _clients(model), "ports": _ports(p.client)}]
    quorum_rules: list[dict[str, Any]] = []
    if model.address_plan is None:
        replication_brokers, replication_quorum = _replication_rules(model)
        broker_rules += replication_brokers
        quorum_rules += replication_quorum
    if c.external.mode == "haproxy":
        broker_rules.append({"from": [_peer(cluster, labels.HAPROXY)], "ports": _ports(p.external)})
    elif c.external.mode == "route":
        # OpenShift's router pods live in the ingress namespace.
        routers = {
            "namespaceSelector": {"matchLabels": {"network.openshift.io/policy-group": "ingress"}}
        }
        broker_rules.append({"from": [routers], "ports": _ports(p.external)})
    policies = [
        _policy(model, "default-deny", None, []),
        _policy(model, "brokers", labels.BROKER, [*broker_rules, metrics]),
    ]
    if model.quorum:
        policies.append(_policy(model, "quorum", model.metadata.role, [*quorum_rules, metrics]))
    if c.external.mode == "haproxy":
        policies.append(_policy(model, "haproxy", labels.HAPROXY, [{"ports": _ports(p.haproxy)}]))
    return policies


def multi_network_policies(model: ClusterModel) -> list[dict[str, Any]]:
    """The second network: REPLICATION/CONTROLLER (and ZooKeeper's ports) from Kafka pods only."""
    if model.address_plan is None:
        return []
    namespace = model.config.namespace
    attachments = sorted({attachment_name(model, zone) for zone in model.zones})
    policy_for = ",".join(f"{namespace}/{name}" for name in attachments)
    broker_rules, quorum_rules = _replication_rules(model)
    policies = [_policy(model, "brokers-replication", labels.BROKER, broker_rules)]
    if model.quorum:
        policies.append(_policy(model, "quorum-replication", model.metadata.role, quorum_rules))
    for policy in policies:
        policy["apiVersion"] = MULTI_NETWORK_POLICY_API
        policy["kind"] = "MultiNetworkPolicy"
        policy["metadata"]["annotations"] = {POLICY_FOR_ANNOTATION: policy_for}
    return policies


def _policy(
    model: ClusterModel, suffix: str, component: str | None, ingress: list[dict[str, Any]]
) -> dict[str, Any]:
    """Pods of `component` (every pod of the namespace when None) admit only `ingress`."""
    selector = (
        {"matchLabels": labels.selector(model.config.cluster_name, component)} if component else {}
    )
    spec: dict[str, Any] = {"podSelector": selector, "policyTypes": ["Ingress"]}
    if ingress:  # the API server drops an empty list; leaving it out keeps diffs quiet
        spec["ingress"] = ingress
    return {
        "metadata": {
            "name": f"{model.config.cluster_name}-{suffix}",
            "namespace": model.config.namespace,
        },
        "spec": spec,
    }
