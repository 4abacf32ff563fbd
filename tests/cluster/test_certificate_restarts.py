"""A renewed certificate that ZooKeeper cannot reload rolls its server at the next `pulumi up`,
through the real engine (infra/certificate_restarts.py): the preview names that server's
StatefulSet and nothing else, the roll applies it, and the `up` after changes nothing. The
cluster's real cert-manager issues the certificates and renews the one asked for, as
`cmctl renew` asks it to."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from infra.localcluster import cert_manager
from infra.localcluster.control_plane import LocalKubernetes
from infra.localcluster.provision import local_engine
from infra.localcluster.real_stack import without_kraft_polling
from infra.model import labels, security
from tests.cluster.conftest import deploy
from tests.infra.conftest import apply_sizing

pytestmark = pytest.mark.cluster

QUORUM = {"kind": "zookeeper", "nodes": 3}


def test_a_renewal_zookeeper_cannot_reload_rolls_only_its_server(
    kube: LocalKubernetes, own_stack: Path, tmp_path: Path
) -> None:
    document = yaml.safe_load(own_stack.read_text())
    document["config"]["kafkastack:kafka_version"] = "3.9.1"
    document["config"]["kafkastack:quorum"] = QUORUM
    # ZooKeeper mode has no metadata log to poll: the local stack's no-op interval is refused.
    polling = document["config"].get("kafkastack:polling", {})
    document["config"]["kafkastack:polling"] = without_kraft_polling(polling)
    own_stack.write_text(yaml.safe_dump(document, sort_keys=False))
    sized = {"kind": "zookeeper", "nodes": 3, "cpu": 1.0, "memory_gib": 2.0, "heap_gib": 1.0}
    apply_sizing(
        own_stack.parent, "local", tmp_path, brokers=3, brokers_per_zone=[1, 1, 1],
        quorum={**sized, "storage_gib": 64.0},
    )  # fmt: skip
    engine = local_engine(kube, tmp_path / "state")
    deployed = deploy(kube, own_stack, engine)
    model = deployed.model
    server = model.quorum[1]
    assert server.role == labels.ZOOKEEPER and model.config.security.replication_tls
    # kwok's pods need no Secret to run: a pod may have "started" before cert-manager issued
    # its certificate, which this `up` rolls; then, with each pod started after its
    # certificate, nothing is left to change.
    certificates = {c["spec"]["secretName"]: c for c in security.certificates(model)}
    namespace = model.config.namespace
    cert_manager.wait_ready(kube, namespace, [c["metadata"]["name"] for c in certificates.values()])
    deploy(kube, own_stack, engine)
    engine.select("local", own_stack)
    assert [s for s in engine.preview("local").steps if s.op != "same"] == []
    # cert-manager renews one server's certificate.
    renewed = certificates[model.names.tls_secret(server.workload)]
    cert_manager.renew(kube, namespace, [renewed["metadata"]["name"]])

    engine.select("local", own_stack)
    changed = [s for s in engine.preview("local").steps if s.op != "same"]
    assert [(s.op, s.kind, s.name) for s in changed] == [
        ("update", "StatefulSet", server.workload)
    ], changed
    deploy(kube, own_stack, engine)
    deploy(kube, own_stack, engine, expect_no_changes=True)
