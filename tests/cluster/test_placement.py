"""What the real scheduler and controllers make of the `local` stack `pulumi up` provisioned."""

from __future__ import annotations

from collections import Counter

import pytest

from infra.model import labels
from infra.model.storage import storage_class_names
from tests.cluster.conftest import Deployed

pytestmark = pytest.mark.cluster


def by_component(deployed: Deployed, component: str) -> dict[str, str]:
    """pod name → node name."""
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in deployed.pods
        if p["metadata"]["labels"].get(labels.COMPONENT) == component
    }


def test_every_pod_is_scheduled_and_running(deployed: Deployed) -> None:
    pods = deployed.kube.objects("pods", "kafka")
    assert pods
    for pod in pods:
        owners = {o["kind"] for o in pod["metadata"].get("ownerReferences", [])}
        # A Job's pod (the dynamic settings) may already have run to completion.
        done = {"Running", "Succeeded"} if "Job" in owners else {"Running"}
        assert pod["status"].get("phase") in done, pod["metadata"]["name"]


def test_brokers_spread_over_three_zones_with_skew_at_most_one(deployed: Deployed) -> None:
    zones = {name: node_labels[labels.ZONE] for name, node_labels in deployed.nodes().items()}
    per_zone = Counter(zones[node] for node in by_component(deployed, "broker").values())
    assert set(per_zone) == {"zone-a", "zone-b", "zone-c"}
    assert max(per_zone.values()) - min(per_zone.values()) <= 1


def test_each_broker_runs_in_the_zone_its_rack_names(deployed: Deployed) -> None:
    zones = {name: node_labels[labels.ZONE] for name, node_labels in deployed.nodes().items()}
    placed = by_component(deployed, "broker")
    for broker in deployed.model.brokers:
        assert zones[placed[f"{broker.workload}-0"]] == broker.zone


def test_no_two_brokers_and_no_broker_beside_a_quorum_pod(deployed: Deployed) -> None:
    brokers = list(by_component(deployed, "broker").values())
    quorum = set(by_component(deployed, "controller").values()) | set(
        by_component(deployed, "zookeeper").values()
    )
    assert len(brokers) == len(set(brokers))
    assert not set(brokers) & quorum


def test_claims_are_bound_in_the_pods_zone_with_the_fast_class(deployed: Deployed) -> None:
    claims = deployed.kube.objects("pvc", "kafka")
    volumes = {v["metadata"]["name"]: v for v in deployed.kube.objects("pv", "default")}
    nodes = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in deployed.pods}
    assert claims
    for claim in claims:
        assert claim["status"]["phase"] == "Bound"
        assert claim["spec"]["storageClassName"] in set(
            storage_class_names(deployed.model).values()
        )
        # StatefulSet claims are named <template>-<pod>.
        pod = next(name for name in nodes if claim["metadata"]["name"].endswith(f"-{name}"))
        volume = volumes[claim["spec"]["volumeName"]]
        host = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0][
            "matchExpressions"
        ][0]["values"][0]
        assert host == nodes[pod], claim["metadata"]["name"]


def test_policies_budgets_networks_and_haproxy_exist(deployed: Deployed) -> None:
    kube = deployed.kube
    # Brokers, controllers and HAProxy: one voluntary disruption at a time each.
    budgets = {
        b["metadata"]["name"]: b["spec"] for b in kube.objects("poddisruptionbudgets", "kafka")
    }
    assert set(budgets) == {"kafka-brokers", "kafka-quorum", "kafka-haproxy"}
    assert {spec["maxUnavailable"] for spec in budgets.values()} == {1}
    # The API server admits what the model declares: a default deny, then brokers, quorum and
    # HAProxy on the pod network, and the second network's own policies.
    assert sorted(p["metadata"]["name"] for p in kube.objects("networkpolicies", "kafka")) == [
        "kafka-brokers",
        "kafka-default-deny",
        "kafka-haproxy",
        "kafka-quorum",
    ]
    assert sorted(
        p["metadata"]["name"] for p in kube.objects("multi-networkpolicies", "kafka")
    ) == ["kafka-brokers-replication", "kafka-quorum-replication"]
    assert [
        n["metadata"]["name"] for n in kube.objects("network-attachment-definitions", "kafka")
    ] == ["kafka-replication"]
    (haproxy,) = kube.objects("deployments", "kafka")
    assert haproxy["status"].get("readyReplicas") == deployed.model.haproxy_replicas
