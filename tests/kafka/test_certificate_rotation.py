"""Renewed certificates reach running Kafka through each pod's rendered keystore reloader
(`checks.check_renewal_reaches_every_listener`), on the cloud shape with every in-cluster
listener encrypted, as prod and staging render it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from infra.verify.processes import ProcessCluster
from tests.kafka.checks import check_renewal_reaches_every_listener, create
from tests.kafka.conftest import start_cluster

pytestmark = pytest.mark.kafka

SHAPE: dict[str, Any] = {"network": {"mode": "single"}, "security": {"client_tls": True}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    started = start_cluster(tmp_path_factory.mktemp("rotation"), brokers=3, **SHAPE)
    yield started
    started.close()


def test_renewed_certificates_reach_every_listener_without_a_restart(
    cluster: ProcessCluster,
) -> None:
    renewed = check_renewal_reaches_every_listener(cluster)
    assert {"kafka-broker-0 via haproxy", "kafka-controller-9000 controller"} <= set(renewed)
    # New connections, clients and followers alike, work on the renewed certificates.
    create(cluster, "after-renewal", partitions=3)
    produced = cluster.client("produce", topic="after-renewal", count=300, keys=30)
    assert len(produced["acked"]) == 300 and not produced["errors"], produced["errors"][:3]
    consumed = cluster.client("consume", external=True, topic="after-renewal", expect=300)
    assert len(consumed["records"]) == 300
