"""Passwords holding JAAS-special characters (`"`, `\\`, `$`, quotes, `,`), end to end: every
place the stack hands a secret to Kafka or ZooKeeper (SCRAM seeding, the ACL Job's login,
ZooKeeper's DIGEST logins) carries it, and the client logs in with the password as it is."""

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

# KRaft's SCRAM seeding refuses commas (secret_text.KRAFT_SCRAM_REFUSALS); everything else goes.
KRAFT_PASSWORDS = {
    "password-admin": "ad\"min\\pass $HOME 'q' =x",
    "password-orders": '"or\\"ders\\\\"',
}
ZOOKEEPER_PASSWORDS = {
    "password-zookeeper": 'zoo"keep\\er, $HOME',
    "password-admin": 'ad"m\\in,=x',
}


def login(cluster: ProcessCluster, user: str) -> dict[str, Any]:
    """The user's SASL login with the password exactly as the rendered Secret holds it."""
    password = cluster.secrets[(f"{cluster.topology['cluster_name']}-user-{user}", "password")]
    return {**cluster.internal_security(), "sasl.username": user, "sasl.password": password}


def produce_as(cluster: ProcessCluster, user: str, topic: str) -> dict[str, Any]:
    return cluster.client_process(
        {
            "op": "produce",
            "bootstrap": cluster.bootstrap,
            "security": login(cluster, user),
            "topic": topic,
            "count": 5,
            "message_timeout_ms": 15000,
            "flush_timeout_s": 20,
        },
        timeout=120,
    )


@pytest.fixture(scope="module")
def kraft_special(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    cluster = start_cluster(
        tmp_path_factory.mktemp("special-kraft"),
        brokers=3,
        passwords=KRAFT_PASSWORDS,
        security={
            "users": ["admin", "orders"],
            "client_tls": True,
            "authorization": True,
            "acls": GRANTS,
        },
    )
    yield cluster
    cluster.close()


def test_kraft_users_and_the_acl_job_log_in_with_special_passwords(
    kraft_special: ProcessCluster,
) -> None:
    cluster = kraft_special
    assert cluster.password == KRAFT_PASSWORDS["password-admin"]  # as the render holds it
    created = cluster.client("create_topic", topic="orders.special", partitions=3, rf=3)
    assert created["ok"], created
    # The ACL Job logs in as the admin through the JAAS line the program quoted.
    run_job(cluster, "kafka-acls")
    assert len(produce_as(cluster, "orders", "orders.special")["acked"]) == 5
    wrong = {**login(cluster, "orders"), "sasl.password": "or\\ders"}
    refused = cluster.client_process(
        {
            "op": "produce",
            "bootstrap": cluster.bootstrap,
            "security": wrong,
            "topic": "orders.special",
            "count": 1,
            "message_timeout_ms": 8000,
            "flush_timeout_s": 10,
        },
        timeout=60,
    )
    assert refused["acked"] == []


@pytest.fixture(scope="module")
def zookeeper_special(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    cluster = start_cluster(
        tmp_path_factory.mktemp("special-zookeeper"),
        brokers=3,
        passwords=ZOOKEEPER_PASSWORDS,
        kafka_version="3.9.1",
        quorum={"kind": "zookeeper", "nodes": 3},
    )
    yield cluster
    cluster.close()


def test_zookeeper_logins_and_scram_users_carry_special_passwords(
    zookeeper_special: ProcessCluster, tmp_path: Path
) -> None:
    """Brokers log in to the ensemble (both JAAS files), the scram-users init container wrote
    the admin's credential, and the admin logs in with it."""
    cluster = zookeeper_special
    created = cluster.client("create_topic", topic="special", partitions=3, rf=3)
    assert created["ok"], created
    assert len(produce_as(cluster, "admin", "special")["acked"]) == 5
