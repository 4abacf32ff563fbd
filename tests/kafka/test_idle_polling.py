"""The stack's `polling` on real servers (the local stack's, which this tier's clusters take):
the brokers run its fetch wait, and the active controller appends its no-op records to an idle
metadata log that much less often (docs/provisioning.md, "Idle polling")."""

from __future__ import annotations

import time

import pytest

from infra.verify.processes import ProcessCluster
from tests.kafka.conftest import local_server_tuning
from tests.kafka.test_metrics import samples, settled

pytestmark = pytest.mark.kafka

HIGH_WATERMARK = "kafka_server_raft_metrics_high_watermark"
WINDOW_SECONDS = 15
KAFKAS_METADATA_IDLE_MS = 500  # metadata.max.idle.interval.ms's default


def test_the_servers_run_the_stacks_idle_polling(kraft: ProcessCluster) -> None:
    polling = local_server_tuning()["polling"]
    assert polling["metadata_idle_interval_ms"] >= 4 * KAFKAS_METADATA_IDLE_MS
    for broker in kraft.brokers:
        configs = kraft.client("describe_configs", broker=broker.entry["node_id"])["configs"]
        assert configs["replica.fetch.wait.max.ms"] == [
            str(polling["replica_fetch_wait_ms"]),
            "STATIC_BROKER_CONFIG",
        ], broker.name
    # Idle, the metadata log grows by the active controller's no-op records (and any ISR
    # change a test before left going): Kafka's 500 ms would append about 30 in the window.
    controller = kraft.quorum[0].entry["client_host"]
    settled(kraft)
    first = samples(kraft.metrics(controller))[HIGH_WATERMARK]
    began = time.monotonic()
    time.sleep(WINDOW_SECONDS)  # the window measured, not a wait for a condition
    grown = samples(kraft.metrics(controller))[HIGH_WATERMARK] - first
    elapsed = time.monotonic() - began
    kafkas_default = elapsed * 1000 / KAFKAS_METADATA_IDLE_MS
    assert grown < kafkas_default / 2, f"{grown:.0f} records in {elapsed:.0f} s of an idle cluster"
    print(f"\nidle metadata log: {grown:.0f} records in {elapsed:.0f} s")
