"""The real Pulumi engine against the local control plane: idempotent `up`, growth that only
adds, `destroy` that keeps the data, protection in prod, secrets that stay encrypted."""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.engine import Engine, EngineError, update_sequence
from infra.localcluster.control_plane import LocalKubernetes
from infra.localcluster.provision import local_engine
from infra.model import labels
from tests import objects
from tests.cluster.conftest import Deployed, deploy
from tests.infra.conftest import apply_sizing

pytestmark = pytest.mark.cluster


def small_stack(kube: LocalKubernetes, own_stack: Path, tmp_path: Path) -> tuple[Engine, Deployed]:
    """The test's own copy of the local stack with 3 brokers, deployed with its own state."""
    engine = local_engine(kube, tmp_path / "state")
    apply_sizing(own_stack.parent, "local", tmp_path, brokers=3, brokers_per_zone=[1, 1, 1])
    return engine, deploy(kube, own_stack, engine)


def uids(deployed: Deployed, kind: str, component: str | None = None) -> dict[str, str]:
    return objects.uids(deployed.kube, deployed.config.namespace, kind, component)


def test_a_second_pulumi_up_changes_nothing(deployed: Deployed) -> None:
    again = deploy(deployed.kube, deployed.stack_file, deployed.engine, expect_no_changes=True)
    assert uids(again, "pods") == uids(deployed, "pods")


def test_no_password_is_in_clear_text_in_the_state(deployed: Deployed) -> None:
    secret = deployed.kube.objects("secrets", deployed.config.namespace)
    users = [s for s in secret if s["metadata"]["name"].startswith("kafka-user-")]
    assert {s["metadata"]["name"] for s in users} == {
        f"kafka-user-{u}" for u in deployed.config.security.users
    }
    passwords = [base64.b64decode(s["data"]["password"]).decode() for s in users]
    assert all(len(p) >= 24 for p in passwords)  # generated, and reached the cluster
    assert deployed.engine.state_dir is not None
    state_files = [p for p in deployed.engine.state_dir.rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" for p in state_files)
    for path in state_files:
        text = path.read_text(errors="replace")
        for password in passwords:
            assert password not in text, f"{path} holds a password in clear text"
    assert "ciphertext" in deployed.engine.exported_state("local")


def test_growing_brokers_through_apply_sizing_only_adds(
    kube: LocalKubernetes, own_stack: Path, tmp_path: Path
) -> None:
    engine, small = small_stack(kube, own_stack, tmp_path)
    brokers_before = uids(small, "pods", "broker")
    claims_before = uids(small, "pvc")
    assert len(brokers_before) == 3

    apply_sizing(own_stack.parent, "local", tmp_path, brokers=5, brokers_per_zone=[2, 2, 1])
    engine.select("local", own_stack)
    steps = engine.preview("local").steps
    changed = [s for s in steps if s.op != "same"]
    assert {s.op for s in changed} <= {"create", "update"}, changed
    # Existing objects change only where the new brokers must be known: HAProxy's routing table.
    assert {(s.kind, s.name) for s in changed if s.op == "update"} <= {
        ("ConfigMap", f"{small.config.cluster_name}-haproxy-config"),
        ("Deployment", f"{small.config.cluster_name}-haproxy"),
    }, [s for s in changed if s.op == "update"]
    assert {s.name for s in changed if s.kind == "StatefulSet"} == {
        f"{small.config.cluster_name}-broker-3",
        f"{small.config.cluster_name}-broker-4",
    }

    grown = deploy(kube, own_stack, engine)
    assert len(grown.pods) == grown.model.pod_count
    brokers_after = uids(grown, "pods", "broker")
    assert len(brokers_after) == 5
    assert {k: brokers_after[k] for k in brokers_before} == brokers_before  # none replaced
    claims_after = uids(grown, "pvc")
    assert {k: claims_after[k] for k in claims_before} == claims_before


def test_destroy_keeps_the_namespace_claims_and_volumes(
    kube: LocalKubernetes, own_stack: Path, tmp_path: Path
) -> None:
    engine, deployed = small_stack(kube, own_stack, tmp_path)
    claims = uids(deployed, "pvc")
    assert claims
    bound = {c["spec"]["volumeName"] for c in kube.objects("pvc", deployed.config.namespace)}

    engine.destroy("local")

    namespaces = {n["metadata"]["name"] for n in kube.objects("namespaces", "default")}
    assert deployed.config.namespace in namespaces
    assert uids(deployed, "statefulsets") == {}
    assert uids(deployed, "pvc") == claims
    volumes = {v["metadata"]["name"] for v in kube.objects("pv", "default")}
    assert bound <= volumes


def test_protected_stacks_refuse_destroy(
    kube: LocalKubernetes, own_stack: Path, tmp_path: Path
) -> None:
    document = yaml.safe_load(own_stack.read_text())
    document["config"]["kafkastack:protect"] = True
    own_stack.write_text(yaml.safe_dump(document, sort_keys=False))
    engine, deployed = small_stack(kube, own_stack, tmp_path)
    with pytest.raises(EngineError, match="protect"):
        engine.destroy("local")
    assert len(uids(deployed, "statefulsets")) == len(deployed.model.brokers) + len(
        deployed.model.quorum
    )
    state = json.loads(engine.exported_state("local"))
    protected = {
        r["type"].rsplit(":", 1)[-1] for r in state["deployment"]["resources"] if r.get("protect")
    }
    assert protected == {"StatefulSet", "StorageClass", "Namespace"}


def workload_dependencies(engine: Engine) -> dict[str, set[str]]:
    """Each StatefulSet's resource name → the StatefulSets it depends on, as the state says."""
    resources = json.loads(engine.exported_state("local"))["deployment"]["resources"]
    workloads = {
        r["urn"]: r["urn"].rsplit("::", 1)[-1]
        for r in resources
        if r["type"] == "kubernetes:apps/v1:StatefulSet"
    }
    return {
        name: {workloads[d] for d in r.get("dependencies", []) if d in workloads}
        for r in resources
        if (name := workloads.get(r["urn"]))
    }


HOLD = "kafkastack.dev/test-hold"  # a finalizer only this test sets and removes


def settings_jobs(kube: LocalKubernetes, namespace: str) -> list[dict[str, Any]]:
    return [
        j
        for j in kube.objects("jobs", namespace)
        if j["metadata"]["labels"].get(labels.COMPONENT) == "dynamic-settings"
    ]


def test_a_config_change_updates_the_brokers_one_after_another(
    kube: LocalKubernetes, own_stack: Path, tmp_path: Path
) -> None:
    # Dedicated controllers (the local stack's brokers are voters, which cannot be chained).
    document = yaml.safe_load(own_stack.read_text())
    document["config"]["kafkastack:quorum"] = {"kind": "kraft", "nodes": 3, "combined": False}
    own_stack.write_text(yaml.safe_dump(document, sort_keys=False))
    engine, small = small_stack(kube, own_stack, tmp_path)
    # The first `up` created every node at once: nothing ran yet that a chain would protect.
    assert workload_dependencies(engine) and not any(workload_dependencies(engine).values())

    # The settings Job's deletion held open, as a loaded API server keeps it a while: a Job of
    # the same name could not be created meanwhile ("already exists"), and this `up` failed.
    namespace = small.config.namespace
    [old_job] = settings_jobs(kube, namespace)
    old_name = old_job["metadata"]["name"]
    kube.kubectl(
        "patch", "job", old_name, "-n", namespace, "--type=merge",
        "-p", json.dumps({"metadata": {"finalizers": [HOLD]}}),
    )  # fmt: skip

    document = yaml.safe_load(own_stack.read_text())  # as small_stack sized it
    document["config"]["kafkastack:min_insync_replicas"] = 1  # in every broker's properties
    own_stack.write_text(yaml.safe_dump(document, sort_keys=False))
    engine.select("local", own_stack)
    try:
        sequence = update_sequence(engine.up_events("local"))
        jobs = {j["metadata"]["name"]: j["metadata"] for j in settings_jobs(kube, namespace)}
    finally:
        kube.kubectl(
            "patch", "job", old_name, "-n", namespace, "--type=merge",
            "-p", json.dumps({"metadata": {"finalizers": None}}),
        )  # fmt: skip
    # The new settings' Job runs beside the old one, which is on its way out.
    assert "deletionTimestamp" in jobs.pop(old_name), jobs
    assert [m["labels"][labels.NAME] for m in jobs.values()] == [
        old_job["metadata"]["labels"][labels.NAME]
    ]

    brokers = [f"{small.config.cluster_name}-brokers-{b.workload}" for b in small.model.brokers]
    events = [(phase, name) for phase, name in sequence if name in brokers]
    # Each broker's update starts only once the previous broker's is done.
    assert events == [(phase, name) for name in brokers for phase in ("start", "done")], sequence
    # The nodes existed: this `up` chained each broker and controller to the one before.
    chained = workload_dependencies(engine)
    assert all(chained[later] == {earlier} for earlier, later in itertools.pairwise(brokers))


def test_a_larger_volume_expands_the_claims_in_place(
    kube: LocalKubernetes, own_stack: Path, tmp_path: Path
) -> None:
    engine, small = small_stack(kube, own_stack, tmp_path)
    claims = {c["metadata"]["name"]: c for c in kube.objects("pvc", small.config.namespace)}
    workloads = uids(small, "statefulsets")
    data = sorted(name for name in claims if name.startswith("data-"))
    assert len(data) == len(small.model.brokers) * small.config.data_volumes
    grown_gib = int(small.config.data_volume_gib) + 100

    document = yaml.safe_load(own_stack.read_text())  # as small_stack sized it
    storage = dict(document["config"].get("kafkastack:storage") or {})
    document["config"]["kafkastack:storage"] = {**storage, "size_gib": grown_gib}
    own_stack.write_text(yaml.safe_dump(document, sort_keys=False))
    grown = deploy(kube, own_stack, engine)

    after = {c["metadata"]["name"]: c for c in kube.objects("pvc", small.config.namespace)}
    for name in data:
        # The same claim (its uid), asked for more by the API server's own record of it.
        assert after[name]["metadata"]["uid"] == claims[name]["metadata"]["uid"]
        assert after[name]["spec"]["resources"]["requests"]["storage"] == f"{grown_gib}Gi"
    assert uids(grown, "statefulsets") == workloads  # no workload replaced
    # A second `up` finds nothing to do: the StatefulSets' templates keep their first size.
    deploy(kube, own_stack, engine, expect_no_changes=True)
