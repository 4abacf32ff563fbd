"""The report from a sizing computed in plain Python (no Spark): tables, capacity, warnings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkastack.cli import app
from spark_sizing.charts import client_ingress_capacity
from spark_sizing.contract import InputStats, SizingReport
from spark_sizing.formulas import SizingParameters, TopicDemand, size_cluster
from spark_sizing.job import SizingRun
from spark_sizing.report import html_report, markdown
from tests.spark_sizing.test_zone_loss import ORDERS, WORKED, worked_params


def sized(params: SizingParameters, topics: Sequence[TopicDemand] = (ORDERS,)) -> SizingReport:
    result = size_cluster(topics, WORKED, params)
    return SizingReport(
        generated_at="2026-01-01T00:00:00+00:00",
        parameters={"input": "x.csv", "profile": WORKED.name, **params.model_dump()},
        cluster=result.cluster,
        topics=result.topics,
        inputs=InputStats(rows_read=1, rows_accepted=1, rows_rejected=0),
        warnings=result.warnings,
        utilisation=result.utilisation,
        zone_loss=result.zone_loss,
        recovery=result.recovery,
        cost=result.cost,
    )


def test_report_shows_each_resource_normally_and_with_a_zone_down() -> None:
    md = markdown(sized(worked_params()))
    assert "Per broker at 15 brokers (10 left with one zone down):" in md
    assert "| disk writes | 250.0 MB/s | 120.0 MB/s (48%) | 120.0 MB/s (48%) |" in md
    assert "| network out | 500.0 MB/s | 200.0 MB/s (40%) | 240.0 MB/s (48%) |" in md
    # The partition constraint with its real figure and limit, not just a broker count.
    assert "| partitions: partition replicas | 180 | 2,000 × 100% | 1 |" in md
    binding = "| 250.0 MB/s × 50% (80% with a zone down) | 15 **← binding** |"
    assert f"| ingress: disk writes | 1,800.0 MB/s {binding}" in md
    assert "Zone loss: survived" in md


def test_the_broker_request_says_what_it_leaves_room_for() -> None:
    md = markdown(sized(worked_params()))
    # The worked node (8 vCPUs, 64 GiB, 110 pods): 8 − 0.09 = 7.91 vCPUs; 64 × 0.925 = 59.2 GiB
    # less 255 + 11 × 110 + 100 = 1,565 MiB = 57.672 GiB. Less daemon sets and two sidecars:
    # 7.91 − 0.5 − 0.1 = 7.31 → 7.3; 57.672 − 1 − 0.75 = 55.922 → 55.75.
    assert (
        "| broker | 7.3 vCPU, 55.75 GiB (heap 6 GiB): the node's 7.91 vCPU, 57.672 GiB "
        "allocatable less daemon sets (0.5 vCPU, 1 GiB) and the pod's 2 sidecars "
        "(0.1 vCPU, 0.75 GiB), rounded down |"
    ) in md


def test_assumptions_are_one_table() -> None:
    md = markdown(sized(worked_params(horizon_months=9, zone_down_utilisation=0.7)))
    assert "| horizon | 9 months of growth past the last period |" in md
    assert "| zones | 3 (2/3 of the brokers left with one down) |" in md
    assert "| target utilisation | 50% normally, 70% with one zone down |" in md
    assert "| retention headroom | disks 50% full at the horizon, +10% for segments" in md


def test_two_zones_are_reported_as_not_surviving_a_zone_loss() -> None:
    md = markdown(sized(worked_params(zones=2)))
    assert "Zone loss: **not survived**: acks=all writes stop for 1 of 1 topics" in md
    assert "- zone loss: acks=all writes stop" in md


def test_capacity_line_uses_the_configured_targets() -> None:
    # At 15 brokers disk writes bind: 125 MB/s per broker at 50 % is 1875 MB/s of writes,
    # 625 MB/s of client ingress at RF 3. At 60 % the same brokers carry 750.
    assert client_ingress_capacity(sized(worked_params())) == pytest.approx(625.0)
    report = sized(worked_params(target_utilisation=0.6))
    per_broker = 250 * 0.6
    expected = per_broker * report.cluster.brokers / 3
    assert client_ingress_capacity(report) == pytest.approx(expected)


def test_html_report_is_self_contained() -> None:
    html = html_report(sized(worked_params()), [])
    assert html.count("data:image/png;base64,") == 4 and "<script" not in html


def test_report_shows_cpu_recovery_and_cost() -> None:
    md = markdown(sized(worked_params()))
    # tests/spark_sizing/test_zone_loss.py computes these by hand.
    assert "| cpu | 48.0 vCPU | 7.3 vCPU × 60% (80% with a zone down) | 11 |" in md
    assert (
        "| recovery: one broker's data in ≤ 12 h | 2,655.4 GiB a broker | 80.0 MB/s spare "
        "(disk writes) → 9.9 h | 14 |"
    ) in md
    # 3.2 / 7.3 = 43.8 %, 3.6 / 7.3 = 49.3 %.
    assert "| cpu | 7.3 vCPU | 3.2 vCPU (44%) | 3.6 vCPU (49%) |" in md
    # No instance price for the "worked" profile: the part says so and the total leaves it out.
    assert "| broker instances | — | no price for worked;" in md
    assert "(parts without a price left out)" in md
    assert "| cross-zone replication | 31,536.00 |" in md
    assert "| disk fill at the horizon | 2,655.4 of 5,310.8 GiB a broker (50%) |" in md


def test_a_replication_factor_that_sets_the_broker_count_is_named_with_its_topic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # RF 100 typed for 10: the minimum constraint sizes 100 brokers, 102 over 3 zones.
    small = {"peak_ingress_mb_s": 1.0, "avg_ingress_mb_s": 1.0}
    typo = replace(
        ORDERS, topic="payments", replication_factor=100, min_insync_replicas=99, **small
    )
    report = sized(worked_params(), [replace(ORDERS, **small), typo])
    assert (report.cluster.brokers, report.cluster.binding_constraint) == (102, "minimum")
    named = "replication_factor 100 of topic payments needs 100 brokers, one per replica"
    assert f"Binding constraint: **minimum**: {named} (brokers per zone" in markdown(report)
    # The console summary says it too.
    monkeypatch.setattr(
        "spark_sizing.job.run_sizing",
        lambda *_, **__: SizingRun(report=report, months=[], out=str(tmp_path)),
    )
    result = CliRunner().invoke(app, ["size", "--input", "x.csv", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"102 brokers (worked, 3 zones, binding: minimum: {named});" in result.output


def test_the_minimum_of_three_brokers_needs_no_topic_named() -> None:
    small = replace(ORDERS, peak_ingress_mb_s=1.0, avg_ingress_mb_s=1.0)
    report = sized(worked_params(), [small])
    assert report.cluster.binding_constraint == "minimum"
    assert "Binding constraint: **minimum** (brokers per zone" in markdown(report)
