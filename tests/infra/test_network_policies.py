"""NetworkPolicies on the pod network and MultiNetworkPolicies on the second one: each Kafka
port admitted only from its peers."""

from __future__ import annotations

from typing import Any

from infra.config import parse_stack_config
from infra.model import labels, networks
from infra.model.cluster import ClusterModel
from tests.infra.conftest import OPENSHIFT, base_values
from tests.infra.network_stacks import ON_PREM, ZONED, model_of


# ----- policies -------------------------------------------------------------------------------
def rules_for(policy: dict[str, Any], port: int) -> list[dict[str, Any]]:
    return [
        r
        for r in policy["spec"].get("ingress", [])
        if {"protocol": "TCP", "port": port} in r["ports"]
    ]


def by_name(policies: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in policies}


def components(rule: dict[str, Any]) -> set[str]:
    return {peer["podSelector"]["matchLabels"][labels.COMPONENT] for peer in rule["from"]}


def test_pod_network_denies_by_default_and_admits_each_port_from_its_peers() -> None:
    model = model_of()  # aws: single network
    policies = by_name(networks.network_policies(model))
    deny = policies["kafka-default-deny"]["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress"]}
    brokers, quorum = policies["kafka-brokers"], policies["kafka-quorum"]
    (replication,) = rules_for(brokers, 9091)
    assert components(replication) == {"broker"}
    (controller,) = rules_for(quorum, 9093)
    assert components(controller) == {"broker", "controller"}
    (client,) = rules_for(brokers, 9092)
    assert client["from"] == [{"namespaceSelector": {}}]
    for policy in (brokers, quorum):
        (metrics,) = rules_for(policy, 9404)
        assert metrics["from"] == [
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
        ]
    assert networks.multi_network_policies(model) == []


def test_client_namespaces_narrow_who_reaches_client() -> None:
    model = model_of(network={"client_namespaces": ["apps"], "monitoring_namespace": "obs"})
    brokers = by_name(networks.network_policies(model))["kafka-brokers"]
    (client,) = rules_for(brokers, 9092)
    names = [
        p["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for p in client["from"]
    ]
    assert names == ["apps", "kafka"]
    (metrics,) = rules_for(brokers, 9404)
    assert metrics["from"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "obs"
    }


def test_openshift_metrics_come_from_user_workload_monitoring() -> None:
    model = model_of(**OPENSHIFT)
    brokers = by_name(networks.network_policies(model))["kafka-brokers"]
    (metrics,) = rules_for(brokers, 9404)
    assert metrics["from"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "openshift-user-workload-monitoring"
    }


def test_second_network_ports_are_guarded_by_multi_network_policies() -> None:
    """NetworkPolicies do not govern Multus interfaces: in dual mode the pod network has no rule
    for 9091/9093 (nothing listens there), the second network's policies do."""
    model = model_of(**ON_PREM)
    for policy in networks.network_policies(model):
        assert not rules_for(policy, 9091) and not rules_for(policy, 9093)
    multi = by_name(networks.multi_network_policies(model))
    assert sorted(multi) == ["kafka-brokers-replication", "kafka-quorum-replication"]
    for policy in multi.values():
        assert policy["apiVersion"] == "k8s.cni.cncf.io/v1beta1"
        assert policy["kind"] == "MultiNetworkPolicy"
        assert policy["metadata"]["annotations"] == {
            "k8s.v1.cni.cncf.io/policy-for": "kafka/kafka-replication"
        }
    (replication,) = rules_for(multi["kafka-brokers-replication"], 9091)
    assert components(replication) == {"broker"}
    (controller,) = rules_for(multi["kafka-quorum-replication"], 9093)
    assert components(controller) == {"broker", "controller"}
    zoned = by_name(networks.multi_network_policies(model_of(**ZONED)))
    assert (
        zoned["kafka-brokers-replication"]["metadata"]["annotations"][
            "k8s.v1.cni.cncf.io/policy-for"
        ]
        == "kafka/kafka-replication-a,kafka/kafka-replication-b,kafka/kafka-replication-c"
    )


def test_combined_brokers_admit_the_controller_port_from_brokers() -> None:
    config = parse_stack_config(base_values(quorum={"combined": True}), "dev")
    model = ClusterModel.from_config(config)
    brokers = by_name(networks.network_policies(model))["kafka-brokers"]
    (controller,) = rules_for(brokers, 9093)
    assert components(controller) == {"broker"}
