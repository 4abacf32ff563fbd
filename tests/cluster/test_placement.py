"""What the real scheduler and controllers make of the rendered `local` stack."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from infra import render
from infra.config import load_stack
from infra.model import labels
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
    assert pods and all(p["status"].get("phase") == "Running" for p in pods)


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
        assert claim["spec"]["storageClassName"] in {"kafka-broker-fast", "kafka-quorum-fast"}
        # StatefulSet claims are named <template>-<pod>.
        pod = next(name for name in nodes if claim["metadata"]["name"].endswith(f"-{name}"))
        volume = volumes[claim["spec"]["volumeName"]]
        host = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0][
            "matchExpressions"
        ][0]["values"][0]
        assert host == nodes[pod], claim["metadata"]["name"]


def test_policies_budgets_networks_and_haproxy_exist(deployed: Deployed) -> None:
    kube = deployed.kube
    assert len(kube.objects("poddisruptionbudgets", "kafka")) == 2
    assert len(kube.objects("networkpolicies", "kafka")) == 3
    assert [
        n["metadata"]["name"] for n in kube.objects("network-attachment-definitions", "kafka")
    ] == ["kafka-replication"]
    (haproxy,) = kube.objects("deployments", "kafka")
    assert haproxy["status"].get("readyReplicas") == deployed.model.haproxy_replicas


def test_applying_the_same_render_again_changes_nothing(deployed: Deployed) -> None:
    files = [
        arg
        for p in sorted((deployed.render_dir / "kubernetes").glob("*/*.yaml"))
        for arg in ("-f", str(p))
    ]
    diff = deployed.kube.kubectl("diff", "--server-side", "--force-conflicts", *files, check=False)
    assert diff.returncode == 0, diff.stdout[-2000:]


def test_growing_brokers_adds_and_keeps_existing_pods_and_claims(
    deployed: Deployed, repo_root: Path, tmp_path: Path
) -> None:
    kube = deployed.kube
    before = {
        p["metadata"]["name"]: p["metadata"]["uid"]
        for p in kube.objects("pods", "kafka")
        if p["metadata"]["labels"].get(labels.COMPONENT) == "broker"
    }
    claims_before = {c["metadata"]["uid"] for c in kube.objects("pvc", "kafka")}
    config = load_stack(repo_root / "stacks", "local")
    grown_sizing = config.sizing.model_copy(
        update={
            "cluster": config.sizing.cluster.model_copy(
                update={"brokers": len(deployed.model.brokers) + 2}
            )
        }
    )
    grown = config.model_copy(update={"sizing": grown_sizing})
    render.write(grown, tmp_path)
    kube.apply_rendered(tmp_path / "kubernetes")
    pods = kube.wait_scheduled("kafka", len(deployed.pods) + 2)
    after = {
        p["metadata"]["name"]: p["metadata"]["uid"]
        for p in pods
        if p["metadata"]["labels"].get(labels.COMPONENT) == "broker"
    }
    assert {k: after[k] for k in before} == before  # no broker pod was replaced
    assert len(after) == len(before) + 2
    assert claims_before <= {c["metadata"]["uid"] for c in kube.objects("pvc", "kafka")}


def test_deleting_the_workloads_keeps_the_data_claims(deployed: Deployed) -> None:
    kube = deployed.kube
    claims = {c["metadata"]["name"] for c in kube.objects("pvc", "kafka")}
    kube.kubectl("delete", "statefulsets", "-n", "kafka", "--all", "--wait=true", "--timeout=120s")
    assert {c["metadata"]["name"] for c in kube.objects("pvc", "kafka")} == claims
