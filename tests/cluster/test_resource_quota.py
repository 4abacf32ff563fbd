"""The real apiserver's ResourceQuota admission: in a namespace whose quota caps requests and
limits of CPU and memory, every pod each committed stack declares is admitted (a pod with one
container without limits, say an init container, is refused there: the control case)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.config import load_stack
from infra.localcluster.control_plane import LocalKubernetes
from infra.model.cluster import ClusterModel
from infra.model.desired import desired_state

pytestmark = pytest.mark.cluster

# Far above what any stack asks: the quota is there for the fields it requires, not its sums.
QUOTA = {
    "requests.cpu": "1k",
    "requests.memory": "64Ti",
    "limits.cpu": "1k",
    "limits.memory": "64Ti",
}
POD_KINDS = ("StatefulSet", "Deployment", "Job")


@pytest.fixture(scope="module")
def quota_namespace(kube: LocalKubernetes) -> Iterator[str]:
    name = f"quota-{uuid.uuid4().hex[:8]}"
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "compute", "namespace": name},
        "spec": {"hard": QUOTA},
    }
    kube.kubectl("create", "namespace", name)
    kube.kubectl("create", "-f", "-", stdin=json.dumps(quota))
    # Admission needs what the controllers fill in: the quota's status, the default account.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = kube.kubectl("get", "resourcequota", "compute", "-n", name, "-o", "json")
        account = kube.kubectl("get", "serviceaccount", "default", "-n", name, check=False)
        if json.loads(status.stdout).get("status", {}).get("hard") and account.returncode == 0:
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"namespace {name}: the quota's status or the default account never came")
    yield name
    kube.kubectl("delete", "namespace", name, "--wait=false")


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    """The pod its controller would create: a StatefulSet's claims become the pod's volumes."""
    spec: dict[str, Any] = json.loads(json.dumps(workload["spec"]["template"]["spec"]))
    name = workload["metadata"]["name"]
    for claim in workload["spec"].get("volumeClaimTemplates", []):
        volume = claim["metadata"]["name"]
        spec.setdefault("volumes", []).append(
            {"name": volume, "persistentVolumeClaim": {"claimName": f"{volume}-{name}-0"}}
        )
    return spec


def pod_templates(stacks: Path, environment: str) -> list[tuple[str, dict[str, Any]]]:
    model = ClusterModel.from_config(load_stack(stacks, environment))
    return [
        (f"{declared.kind}/{declared.logical}", pod_spec(declared.manifest))
        for concern in desired_state(model)
        for declared in concern.objects
        if declared.kind in POD_KINDS
    ]


def admitted(kube: LocalKubernetes, namespace: str, spec: dict[str, Any]) -> tuple[bool, str]:
    """Create the pod through every admission step of the real apiserver, storing nothing."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "quota-probe", "namespace": namespace},
        "spec": spec,
    }
    result = kube.kubectl(
        "create", "--dry-run=server", "-f", "-", stdin=json.dumps(pod), check=False
    )
    return result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("environment", ["local", "dev", "staging", "prod"])
def test_a_namespace_quota_on_requests_and_limits_admits_every_pod_of_the_stack(
    kube: LocalKubernetes, quota_namespace: str, repo_root: Path, environment: str
) -> None:
    templates = pod_templates(repo_root / "stacks", environment)
    assert any(name.startswith("StatefulSet/") for name, _ in templates)
    refused = {}
    for name, spec in templates:
        ok, output = admitted(kube, quota_namespace, spec)
        if not ok:
            refused[name] = output.strip()[-300:]
    assert not refused, refused


def test_the_quota_refuses_a_pod_whose_init_container_has_no_limits(
    kube: LocalKubernetes, quota_namespace: str, repo_root: Path
) -> None:
    name, spec = next(
        (n, s) for n, s in pod_templates(repo_root / "stacks", "prod") if s.get("initContainers")
    )
    del spec["initContainers"][0]["resources"]
    ok, output = admitted(kube, quota_namespace, spec)
    assert not ok, name
    assert "exceeded quota" in output or "must specify" in output, output
