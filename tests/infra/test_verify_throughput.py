"""Kafka's load tools' output read in the model's units (MB/s = 10^6 B/s, not the tools'
MiB/s), and a run with nothing acknowledged is a failed measurement."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.verify.errors import VerifyError
from infra.verify.throughput import client_properties, parse_consumed, parse_produced

PRODUCED = (
    "100000 records sent, 25600.0 records/sec (25.00 MB/sec), 30.00 ms avg latency, 500.00 ms "
    "max latency.\n"
    "200000 records sent, 51200.0 records/sec (50.00 MB/sec), 12.00 ms avg latency, "
    "300.00 ms max latency, 10 ms 50th, 20 ms 95th, 30 ms 99th, 40 ms 99.9th.\n"
)


def test_perf_tool_mib_s_become_mb_s() -> None:
    produced = parse_produced(PRODUCED)
    consumed = parse_consumed(
        "2026-11-23 10:00:00:000, 2026-11-23 10:00:04:000, 195.3125, 48.8281, 200000, 50000.0"
    )
    # 50 MiB/s = 52.43 MB/s; 48.8281 MiB/s = 51.2 MB/s (50,000 records of 1,024 B a second).
    assert produced.mb_s == pytest.approx(52.4288)
    assert consumed.mb_s == pytest.approx(51.2, abs=1e-3)
    assert (produced.records, produced.p50_ms, produced.p99_ms) == (200000, 10.0, 30.0)
    assert produced.payload_mb == pytest.approx(204.8)
    assert consumed.records == 200000


def test_nothing_acknowledged_is_a_failed_measurement() -> None:
    with pytest.raises(VerifyError, match="no records were acknowledged"):
        parse_produced(
            "0 records sent, 0.0 records/sec (0.00 MB/sec), 0.00 ms avg latency, 0.00 ms max "
            "latency, 0 ms 50th, 0 ms 95th, 0 ms 99th, 0 ms 99.9th."
        )


def test_no_summary_is_a_failed_measurement() -> None:
    with pytest.raises(VerifyError, match="no summary"):
        parse_produced("org.apache.kafka.common.errors.TimeoutException: ...\n")


class _Cluster:
    """What client_properties reads of a started cluster: the admin's login."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol

    def internal_security(self) -> dict[str, str]:
        settings = {
            "security.protocol": self.protocol,
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "admin",
            "sasl.password": "pw",
        }
        if self.protocol == "SASL_SSL":
            settings["ssl.ca.location"] = "/run/ca.crt"
        return settings


def test_java_clients_trust_the_runs_ca_when_the_client_listener_is_tls(tmp_path: Path) -> None:
    # Without it ProducerPerformance retried its TLS handshake until the run timed out.
    tls = client_properties(_Cluster("SASL_SSL"), tmp_path).read_text()  # type: ignore[arg-type]
    assert "security.protocol=SASL_SSL" in tls
    assert "ssl.truststore.type=PEM\nssl.truststore.location=/run/ca.crt\n" in tls
    plain = client_properties(_Cluster("SASL_PLAINTEXT"), tmp_path).read_text()  # type: ignore[arg-type]
    assert "truststore" not in plain
