"""The prod/staging security defaults on real Kafka: CLIENT over SASL_SSL, the authorizer denying
what no ACL allows, super users, and the grants the rendered ACL Job adds; every login on a
password with JAAS-special characters (`"`, `\\`, `$`, quotes, `=`), as the rendered Secrets
hold it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.verify.jobs import run_job
from infra.verify.processes import ProcessCluster
from tests.kafka.conftest import KRAFT_PASSWORDS, login

pytestmark = pytest.mark.kafka


@pytest.fixture
def secured(kraft: ProcessCluster) -> ProcessCluster:
    """The folder's shared KRaft cluster: what prod and staging get by default, switched on in
    a local stack the harness can run."""
    return kraft


def produce_as(
    cluster: ProcessCluster, user: str, topic: str, security: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Five records to `topic` as `user` (or with the login `security`)."""
    return cluster.client_process(
        {
            "op": "produce",
            "bootstrap": cluster.bootstrap,
            "security": security or login(cluster, user),
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
    assert secured.password == KRAFT_PASSWORDS["password-admin"]  # as the render holds it
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


def test_a_password_one_escape_off_is_refused(secured: ProcessCluster) -> None:
    """Where the admin's rendered password writes, the same password with one backslash fewer
    (what a login that lost a JAAS escape would send) writes nothing. The admin needs no grant:
    the ACL Job runs only in the test above, which needs the grant absent until it runs it."""
    create(secured, "admin-escaped")
    assert len(produce_as(secured, "admin", "admin-escaped")["acked"]) == 5
    password = KRAFT_PASSWORDS["password-admin"]
    one_escape_off = password.replace("\\", "", 1)
    assert one_escape_off != password
    wrong = {**login(secured, "admin"), "sasl.password": one_escape_off}
    refused = produce_as(secured, "admin", "admin-escaped", security=wrong)
    assert refused["acked"] == [], refused
