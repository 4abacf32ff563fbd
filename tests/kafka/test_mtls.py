"""mTLS clients (`security.client_auth: mtls`) as the stack renders them: every listener SSL
with client certificates required, the admin's certificate the rendered admin Certificate asks
for, and hostname verification on, through the stack's own bootstrap name."""

from __future__ import annotations

from typing import Any

import pytest

from infra.verify.jobs import run_job
from infra.verify.processes import ProcessCluster

pytestmark = pytest.mark.kafka


@pytest.fixture
def mutual(one_network_mtls: ProcessCluster) -> ProcessCluster:
    """mTLS clients (on the one-network cluster the one-network proofs share)."""
    return one_network_mtls


def bootstrap_name(cluster: ProcessCluster) -> str:
    """The stack's `bootstrap` output: the in-cluster bootstrap Service's name."""
    return f"{cluster.topology['bootstrap_host']}:{cluster.topology['ports']['client']}"


def produce(cluster: ProcessCluster, bootstrap: str, security: dict[str, Any]) -> dict[str, Any]:
    return cluster.client_process(
        {
            "op": "produce",
            "bootstrap": bootstrap,
            "security": security,
            "topic": "mtls",
            "count": 5,
            "message_timeout_ms": 10000,
            "flush_timeout_s": 15,
        },
        timeout=90,
    )


def test_a_client_certificate_writes_and_reads_through_the_bootstrap_name(
    mutual: ProcessCluster,
) -> None:
    security = mutual.internal_security()
    assert security["security.protocol"] == "SSL"
    assert security["ssl.endpoint.identification.algorithm"] == "https"
    bootstrap = bootstrap_name(mutual)
    created = mutual.client("create_topic", bootstrap=bootstrap, topic="mtls", partitions=3, rf=3)
    assert created["ok"], created
    acked = produce(mutual, bootstrap, security)["acked"]
    assert len(acked) == 5
    read = mutual.client("consume", bootstrap=bootstrap, topic="mtls", expect=5)
    assert len(read["records"]) == 5


def test_a_client_without_a_certificate_is_refused(mutual: ProcessCluster) -> None:
    security = {
        k: v
        for k, v in mutual.internal_security().items()
        if not k.endswith(("certificate.location", "key.location"))
    }
    assert produce(mutual, bootstrap_name(mutual), security)["acked"] == []


def test_a_name_the_certificate_lacks_fails_hostname_verification(mutual: ProcessCluster) -> None:
    # The first broker's address on the client network: no certificate names it.
    address = mutual.brokers[0].host.client_ip
    bootstrap = f"{address}:{mutual.topology['ports']['client']}"
    assert produce(mutual, bootstrap, mutual.internal_security())["acked"] == []


def test_the_acl_job_runs_as_the_admin_certificate(mutual: ProcessCluster) -> None:
    run_job(mutual, "kafka-acls")  # kafka-acls.sh over SSL to the bootstrap name, as rendered
