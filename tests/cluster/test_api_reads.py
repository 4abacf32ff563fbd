"""The harness's own reads of the API (infra/localcluster/api_reads.py), which its polls use
instead of a kubectl each, see what kubectl sees, on the cluster tier's real API server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.localcluster import api_reads
from tests.cluster.conftest import Deployed

pytestmark = pytest.mark.cluster


def seen(listed: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return sorted((o["kind"], o["apiVersion"], o["metadata"]["uid"]) for o in listed)


def test_each_kind_lists_and_gets_what_kubectl_does(deployed: Deployed) -> None:
    kube, namespace = deployed.kube, deployed.config.namespace
    for kind in api_reads.KINDS:
        ours = kube.objects(kind, namespace)
        reply = kube.kubectl("get", kind, "-n", namespace, "-o", "json")
        theirs = json.loads(reply.stdout)["items"]
        assert ours, f"the stack has no {kind}: nothing compared"
        assert seen(ours) == seen(theirs), kind
        first = theirs[0]["metadata"]
        one = kube.object(kind, first.get("namespace", namespace), first["name"])
        assert one is not None and one["metadata"]["uid"] == first["uid"], kind
    assert kube.object("pods", namespace, "no-such-pod") is None
