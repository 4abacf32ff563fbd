"""The throughput benchmark reports MB/s (10^6 B/s) like the sizing model, not the tools' MiB/s."""

from __future__ import annotations

import pytest

from bench.kafka_throughput import PRODUCER, perf_figures


def test_perf_tool_mib_s_become_mb_s() -> None:
    produced = PRODUCER.search(
        "200000 records sent, 51200.0 records/sec (50.00 MB/sec), 12.00 ms avg latency, "
        "300.00 ms max latency, 10 ms 50th, 20 ms 95th, 30 ms 99th, 40 ms 99.9th."
    )
    assert produced
    consumed = (
        "2026-11-23 10:00:00:000, 2026-11-23 10:00:04:000, 195.3125, 48.8281, 200000, 50000.0"
    )
    figures = perf_figures(produced, consumed)
    # 50 MiB/s = 52.43 MB/s; 48.8281 MiB/s = 51.2 MB/s (50,000 records of 1,024 B a second).
    assert figures["produce_mb_s"] == pytest.approx(52.4288)
    assert figures["consume_mb_s"] == pytest.approx(51.2, abs=1e-3)
    assert (figures["p50_ms"], figures["p99_ms"]) == (10.0, 30.0)
