"""`--profile auto`: the cheapest profile that meets every constraint, computed by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_sizing.comparison import NoProfileFits, auto_candidates, choose_profile
from spark_sizing.costs import load_prices
from spark_sizing.profiles import BUILT_IN_PROFILES
from spark_sizing.report import markdown
from tests.spark_sizing.test_zone_loss import ORDERS, WORKED, worked_params

# The worked example's broker with twice the disk bandwidth, at 1.2/h instead of 1.0/h.
FAST_DISK = WORKED.model_copy(update={"name": "fast-disk", "disk_mb_s": 500.0})
# Too little memory for a 6 GiB heap and 30 s of page cache: it cannot do the job.
SMALL = WORKED.model_copy(update={"name": "small", "memory_gib": 8.0})
UNPRICED = WORKED.model_copy(update={"name": "unpriced"})


@pytest.fixture
def prices(tmp_path: Path) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text("instance_per_hour: {worked: 1.0, fast-disk: 1.2, small: 0.1}\n")
    return path


def test_the_cheapest_profile_that_meets_every_constraint_is_chosen(prices: Path) -> None:
    chosen = choose_profile(
        [ORDERS], [WORKED, FAST_DISK, SMALL, UNPRICED], worked_params(), load_prices(prices)
    )
    by_name = {c.profile: c for c in chosen.choice.candidates}
    # worked: 15 brokers (disk writes), 91,038.60 a month (test_recovery_cpu_cost.py).
    assert (by_name["worked"].brokers, by_name["worked"].monthly_cost) == (15, 91_038.6)
    # fast-disk: disk writes 1800 / 250 = 7.2 → 8, so network out's 3000 / 250 = 12 binds.
    # 12 × 1.2 × 730 = 10,512; one volume of 39,830.8 / 12 / 50 % = 6,638.5 → 6,639 GiB at 0.08
    # = 6,373.44 each month for the 12; 1800 / 8 survivors / 50 % = 450 MB/s = 429.2 → 430 MiB/s,
    # 305 above 125 at 0.04 = 146.40; cross-zone as for worked, 73,584.
    fast = by_name["fast-disk"]
    assert (fast.brokers, fast.binding_constraint) == (12, "egress")
    assert fast.monthly_cost == pytest.approx(10_512 + 6_373.44 + 146.4 + 73_584, abs=0.02)
    assert chosen.profile.name == "fast-disk" and chosen.choice.chosen == "fast-disk"
    assert chosen.result.cluster.brokers == 12
    assert "next worked costs 422.76 more" in chosen.choice.reason
    assert not by_name["small"].meets_constraints and "memory" in by_name["small"].note
    assert by_name["unpriced"].monthly_cost is None and "not priced" in by_name["unpriced"].note
    assert by_name["worked"].note == "meets every constraint; 422.76 USD more a month"


def test_no_fitting_profile_is_an_error_naming_the_fix(prices: Path) -> None:
    with pytest.raises(NoProfileFits, match=r"none of 2 profiles .* add prices \(--prices\)"):
        choose_profile([ORDERS], [SMALL, UNPRICED], worked_params(), load_prices(prices))


def test_auto_compares_every_built_in_profile_and_the_given_ones() -> None:
    names = [p.name for p in auto_candidates([WORKED])]
    assert names == [*BUILT_IN_PROFILES, "worked"]
    chosen = choose_profile([ORDERS], auto_candidates(), worked_params())
    priced = [c for c in chosen.choice.candidates if c.meets_constraints and c.monthly_cost]
    assert len(chosen.choice.candidates) == len(BUILT_IN_PROFILES)
    assert chosen.result.cost.total_monthly == min(c.monthly_cost or 0 for c in priced)


def test_the_report_shows_the_comparison(prices: Path) -> None:
    from tests.spark_sizing.test_report import sized

    chosen = choose_profile([ORDERS], [WORKED, FAST_DISK], worked_params(), load_prices(prices))
    report = sized(worked_params()).model_copy(update={"profile_choice": chosen.choice})
    md = markdown(report)
    assert "Profile: **fast-disk** (`--profile auto`), cheapest of 2 profiles" in md
    # At 12 brokers: disk 1800 / 12 = 150 of 500 MB/s; network out 3000 / 12 = 250 of 500;
    # CPU 48 / 12 = 4 of 7.3 vCPUs (54.8 %); storage 39,830.8 / 12 of 10,000 GiB.
    assert (
        "| **fast-disk** | 12 | egress | 30% | 30% | 50% | 55% | 33% | 90,615.84 | chosen |" in md
    )
