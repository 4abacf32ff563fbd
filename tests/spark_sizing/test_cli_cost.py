"""`kafkastack size` with the cost options: --profile auto, --prices, and their bad values."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_sizing.contract import SizingReport
from spark_sizing.job import SAMPLE_INPUT
from tests.spark_sizing.test_cli import size


@pytest.mark.spark
def test_profile_auto_picks_the_cheapest_at_the_given_prices(
    spark: SparkSession, tmp_path: Path
) -> None:
    prices = tmp_path / "prices.yaml"
    # A give-away price for one type: whatever else changes, it must win on cost.
    prices.write_text("instance_per_hour: {m5.xlarge: 0.001}\ncross_zone_per_gb: 0\n")
    out = tmp_path / "out"
    code, output = size(
        "--input", str(SAMPLE_INPUT), "--out", str(out), "--profile", "auto",
        "--prices", str(prices),
    )  # fmt: skip
    assert code == 0, output
    report = SizingReport.model_validate_json((out / "sizing.json").read_text())
    choice, cost = report.profile_choice, report.cost
    assert choice is not None and cost is not None
    assert choice.chosen == report.cluster.profile == "m5.xlarge"
    assert report.parameters["profile"] == "auto"
    ranked = [c for c in choice.candidates if c.meets_constraints and c.monthly_cost is not None]
    assert cost.total_monthly == min(c.monthly_cost or 0 for c in ranked)
    assert {p.part for p in cost.parts if p.part.startswith("cross-zone")} and all(
        p.monthly == 0 for p in cost.parts if p.part.startswith("cross-zone")
    )
    assert f"profile auto: m5.xlarge, {choice.reason}" in output
    assert "monthly cost: " in output and "recovery: one broker's" in output
    md = (out / "report.md").read_text()
    assert "Profile: **m5.xlarge** (`--profile auto`)" in md and "| part | USD a month |" in md


def test_candidate_profiles_need_profile_auto(tmp_path: Path) -> None:
    code, output = size(
        "--input", str(SAMPLE_INPUT), "--out", str(tmp_path), "--candidate-profile", "m5.large"
    )
    assert code == 2 and "--candidate-profile: only used with --profile auto" in output


def test_a_bad_price_file_is_refused_before_spark_starts(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("cross_zone_per_gb: -1\n")
    code, output = size(
        "--input", str(SAMPLE_INPUT), "--out", str(tmp_path), "--prices", str(prices)
    )
    assert code == 2 and "--prices" in output and "cross_zone_per_gb" in output


@pytest.mark.parametrize(
    ("option", "value"),
    [("--cpu-target", "0"), ("--recovery-hours", "0"), ("--follower-fetching-share", "2")],
)
def test_bad_cost_and_constraint_options_name_the_option(
    tmp_path: Path, option: str, value: str
) -> None:
    code, output = size("--input", str(SAMPLE_INPUT), "--out", str(tmp_path), option, value)
    assert code == 2 and option in output
