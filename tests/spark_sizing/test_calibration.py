"""Calibration arithmetic (no brokers): measured figures into a profile that `--profile FILE`
reads back with its provenance, the report saying which figures were measured, and the
prediction the closed loop (tests/kafka/test_calibration.py) checks against real brokers."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from spark_sizing.calibration import (
    CalibrationError,
    CalibrationRun,
    calibrated_profile,
    method,
    predicted_produce_mb_s,
    profile_figures,
    write_profile,
)
from spark_sizing.contract import InputStats, SizingReport
from spark_sizing.formulas import SizingParameters, TopicDemand, size_cluster
from spark_sizing.profiles import BUILT_IN_PROFILES, Measured, ProfileError, load_profile
from spark_sizing.report import markdown

BASE = BUILT_IN_PROFILES["m5.2xlarge"]
# 3 brokers acknowledged 20, 24 and 22 MB/s with RF 3; 3 rounds of 100 MB each, all read back;
# the brokers used 100 CPU seconds for it.
RUN = CalibrationRun(
    brokers=3,
    replication_factor=3,
    produce_mb_s=[20.0, 24.0, 22.0],
    produced_mb=300.0,
    consumed_mb=300.0,
    broker_cpu_seconds=100.0,
)


def provenance(**overrides: object) -> Measured:
    values: dict[str, object] = {
        "measured_at": "2026-11-23T19:40:00+00:00",
        "host": "bench-host",
        "cpu_model": "AMD EPYC",
        "host_cpus": 2,
        "kafka_version": "4.3.1",
        "stack": "local",
        "brokers": 3,
        "method": method(3, 3),
        "base_profile": "m5.2xlarge",
        "fields": ["disk_mb_s", "network_mb_s", "mb_s_per_vcpu"],
        "records": 100_000,
        "rounds": 3,
        "produce_mb_s": [20.0, 24.0, 22.0],
    }
    return Measured.model_validate({**values, **overrides})


def test_measured_figures_follow_the_models_traffic_accounting() -> None:
    # Median 22 MB/s × RF 3 written and received by 3 brokers: 22 MB/s each on disk and in.
    assert RUN.per_broker_mb_s == pytest.approx(22.0)
    # In 300 × 3 (producers + followers' copies) + out 300 × 2 (to followers) + 300 consumed.
    assert RUN.broker_traffic_mb == pytest.approx(1800.0)
    assert RUN.mb_s_per_vcpu == pytest.approx(18.0)
    profile = calibrated_profile(BASE, RUN, provenance())
    assert (profile.disk_mb_s, profile.network_mb_s, profile.mb_s_per_vcpu) == (22.0, 22.0, 18.0)
    # Everything not measured is the base profile's.
    assert (profile.cpu, profile.disk_iops, profile.max_disk_gib) == (8, 12000, 16384.0)


def test_a_measurement_with_nothing_acknowledged_makes_no_profile() -> None:
    failed = CalibrationRun(3, 3, [0.0], 0.0, 0.0, 12.0)
    with pytest.raises(CalibrationError, match="no records were acknowledged"):
        calibrated_profile(BASE, failed, provenance())


def test_written_profile_reads_back_with_its_provenance(tmp_path: Path) -> None:
    profile = calibrated_profile(BASE, RUN, provenance())
    out = tmp_path / "calibrated.yaml"
    write_profile(profile, out)
    assert load_profile(str(out)) == profile
    document = yaml.safe_load(out.read_text())
    assert document["measured"]["fields"] == ["disk_mb_s", "network_mb_s", "mb_s_per_vcpu"]
    assert document["measured"]["measured_at"] == "2026-11-23T19:40:00+00:00"


def test_a_measured_field_that_is_no_profile_figure_is_refused(tmp_path: Path) -> None:
    profile = calibrated_profile(BASE, RUN, provenance())
    out = tmp_path / "calibrated.yaml"
    write_profile(profile, out)
    document = yaml.safe_load(out.read_text())
    document["measured"]["fields"] = ["disk_mbs"]
    out.write_text(yaml.safe_dump(document))
    with pytest.raises(ProfileError, match=r"disk_mbs, not a profile figure"):
        load_profile(str(out))


def test_a_built_in_profile_has_only_documented_figures() -> None:
    figures = profile_figures(BASE)
    assert figures and not any(f.measured for f in figures)
    by_field = {f.field: f.source for f in figures}
    # What one vCPU carries comes from AKalculator's published assumption, the rest from EC2's.
    assert by_field.pop("mb_s_per_vcpu").startswith("AKalculator")
    assert all(
        source.startswith("EC2 instance-type specifications") for source in by_field.values()
    )


def sized(profile_name: str = "calibrated", peak_mb_s: float = 8.8) -> SizingReport:
    profile = calibrated_profile(BASE, RUN, provenance())
    topic = TopicDemand(
        topic="orders",
        peak_ingress_mb_s=peak_mb_s,
        avg_ingress_mb_s=peak_mb_s / 2,
        consumer_groups=1,
        retention_hours=1.0,
        replication_factor=3,
        min_insync_replicas=2,
    )
    params = SizingParameters()
    result = size_cluster([topic], profile, params)
    return SizingReport(
        generated_at="2026-11-23T20:00:00+00:00",
        parameters={"input": "x.csv", "profile": profile.name, **params.model_dump()},
        cluster=result.cluster,
        topics=result.topics,
        inputs=InputStats(rows_read=1, rows_accepted=1, rows_rejected=0),
        warnings=result.warnings,
        utilisation=result.utilisation,
        zone_loss=result.zone_loss,
        profile_figures=profile_figures(profile),
    )


def test_report_says_which_figures_were_measured_and_when() -> None:
    md = markdown(sized())
    assert "Profile figures: 3 measured (disk_mb_s, network_mb_s, mb_s_per_vcpu)" in md
    measured_row = next(line for line in md.splitlines() if line.startswith("| disk_mb_s |"))
    assert "**measured**" in measured_row
    assert "2026-11-23T19:40:00+00:00 on bench-host" in measured_row
    iops_row = next(line for line in md.splitlines() if line.startswith("| disk_iops |"))
    assert "documented" in iops_row and "base profile m5.2xlarge" in iops_row


def test_the_sized_cluster_is_predicted_to_carry_what_its_brokers_were_measured_to() -> None:
    # 40 % of the 22 MB/s 3 brokers carried: under the 50 % target, so 3 brokers; at 100 % of
    # the measured 22 MB/s per broker they take 22 × 3 / RF 3 = 22 MB/s of produce.
    report = sized(peak_mb_s=8.8)
    assert report.cluster.brokers == 3
    assert predicted_produce_mb_s(report) == pytest.approx(22.0)
    # Twice the load: 6 brokers, predicted to carry twice as much.
    bigger = sized(peak_mb_s=17.6)
    assert bigger.cluster.brokers == 6
    assert predicted_produce_mb_s(bigger) == pytest.approx(44.0)
