"""The real apiserver's PodSecurity admission: the local stack's namespace enforces "restricted",
the stack's pods are admitted there, and a pod without the security context is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.model import labels
from infra.model.pod_security import container_security_context, pod_security_context
from tests.cluster.conftest import Deployed

pytestmark = pytest.mark.cluster


def server_dry_run(deployed: Deployed, pod: dict[str, Any]) -> tuple[int, str]:
    """Create `pod` in the stack's namespace through every admission step, storing nothing."""
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "podsec-probe", "namespace": deployed.config.namespace},
        "spec": pod,
    }
    result = deployed.kube.kubectl(
        "create", "--dry-run=server", "-f", "-", stdin=json.dumps(manifest), check=False
    )
    return result.returncode, result.stdout + result.stderr


def test_the_stacks_pods_are_admitted_by_a_namespace_enforcing_restricted(
    deployed: Deployed,
) -> None:
    namespace = deployed.kube.kubectl("get", "namespace", deployed.config.namespace, "-o", "json")
    namespace_labels = json.loads(namespace.stdout)["metadata"]["labels"]
    assert namespace_labels["pod-security.kubernetes.io/enforce"] == "restricted"
    # The fixture waited for every pod to exist: none was refused by the namespace.
    assert len(deployed.pods) == deployed.model.pod_count
    kafka = [
        p
        for p in deployed.pods
        if p["metadata"]["labels"][labels.COMPONENT] in (labels.BROKER, labels.CONTROLLER)
    ]
    assert kafka
    for pod in kafka:
        context = pod["spec"]["securityContext"]
        assert (context["runAsUser"], context["fsGroup"]) == (1000, 1000)


def test_a_pod_without_a_security_context_is_refused_there(deployed: Deployed) -> None:
    container = {"name": "probe", "image": "localhost/kafkastack/busybox:1"}
    code, output = server_dry_run(deployed, {"containers": [container]})
    assert code != 0
    assert "violates PodSecurity" in output and "restricted" in output, output
    # The same pod with the stack's contexts is admitted: the refusal was for the context.
    hardened = {
        "securityContext": pod_security_context(deployed.model, deployed.config.images.kafka),
        "containers": [{**container, "securityContext": container_security_context()}],
    }
    code, output = server_dry_run(deployed, hardened)
    assert code == 0, output
