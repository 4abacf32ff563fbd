"""The prod/staging security defaults on real Kafka: CLIENT over SASL_SSL, the authorizer denying
what no ACL allows, super users, and the grants the rendered ACL Job adds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.verify.jobs import run_job
from infra.verify.processes import ProcessCluster
from tests.kafka.conftest import ORDERS_GRANTS as GRANTS
from tests.kafka.conftest import start_cluster

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    """What prod and staging get by default, switched on in a local stack the harness can run."""
    cluster = start_cluster(
        tmp_path_factory.mktemp("secured"),
        brokers=3,
        security={
            "users": ["admin", "orders"],
            "client_tls": True,
            "authorization": True,
            "acls": GRANTS,
        },
    )
    yield cluster
    cluster.close()


def as_user(cluster: ProcessCluster, user: str) -> dict[str, Any]:
    return {**cluster.internal_security(), "sasl.username": user}


def produce_as(cluster: ProcessCluster, user: str, topic: str) -> dict[str, Any]:
    return cluster.client_process(
        {
            "op": "produce",
            "bootstrap": cluster.bootstrap,
            "security": as_user(cluster, user),
            "topic": topic,
            "count": 5,
            "message_timeout_ms": 15000,
            "flush_timeout_s": 20,
        },
        timeout=120,
    )


def create(cluster: ProcessCluster, topic: str) -> None:
    created = cluster.client("create_topic", topic=topic, partitions=3, rf=3)
    assert created["ok"], created


def test_the_admin_is_a_super_user_over_tls(secured: ProcessCluster) -> None:
    assert secured.internal_security()["security.protocol"] == "SASL_SSL"
    create(secured, "admin-only")
    assert len(secured.client("produce", topic="admin-only", count=5)["acked"]) == 5


def test_a_user_without_a_grant_is_denied_until_the_acl_job_runs(
    secured: ProcessCluster, tmp_path: Path
) -> None:
    create(secured, "orders.created")
    denied = produce_as(secured, "orders", "orders.created")
    assert denied["acked"] == [] and "TOPIC_AUTHORIZATION_FAILED" in denied["errors"]
    run_job(secured, "kafka-acls")
    run_job(secured, "kafka-acls")  # idempotent: adding the same grants again changes nothing
    allowed = produce_as(secured, "orders", "orders.created")
    assert len(allowed["acked"]) == 5
    create(secured, "payments")
    elsewhere = produce_as(secured, "orders", "payments")
    assert elsewhere["acked"] == [] and "TOPIC_AUTHORIZATION_FAILED" in elsewhere["errors"]
