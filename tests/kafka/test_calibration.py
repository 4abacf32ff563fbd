"""`kafkastack calibrate` on real brokers started from the stack's rendered configs, and the
sizing job taking the profile it wrote.

What the calibrated model predicts against what the sized cluster then carries is a comparison
of two speeds of a shared machine: bench/calibration_loop.py prints it (docs/sizing.md, "Closed
loop"); nothing here asserts a speed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kafkastack.cli import app
from spark_sizing.calibration import loop_projection
from spark_sizing.contract import SizingReport
from spark_sizing.profiles import load_profile
from tests.infra.conftest import base_values
from tests.kafka.conftest import stack_values

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

# Few records, one warm-up round and one measured round: what is checked is what the profile
# carries, not how fast (up to four warm-up rounds ran until they agreed: as long again).
RECORDS = 5_000
ROUNDS = 1
WARMUPS = 1


def write_stack(stacks: Path, name: str, values: dict[str, Any]) -> None:
    document = {"config": {f"kafkastack:{key}": value for key, value in values.items()}}
    (stacks / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(document))


def test_calibrate_measures_real_brokers_and_the_sizing_takes_the_profile(
    tmp_path: Path,
) -> None:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    write_stack(stacks, "calib", base_values(**stack_values(3)))
    profile_file = tmp_path / "calibrated.yaml"
    calibrated = CliRunner().invoke(
        app,
        [
            "calibrate",
            "--stack",
            "calib",
            "--stacks-dir",
            str(stacks),
            "--out",
            str(profile_file),
            "--records",
            str(RECORDS),
            "--rounds",
            str(ROUNDS),
            "--warmups",
            str(WARMUPS),
        ],
    )
    assert calibrated.exit_code == 0, calibrated.output
    profile = load_profile(str(profile_file))
    measured = profile.measured
    assert measured is not None
    # What the three brokers carried, with where and how it was measured.
    assert len(measured.produce_mb_s) == ROUNDS and min(measured.produce_mb_s) > 0
    assert (measured.stack, measured.brokers, measured.records) == ("calib", 3, RECORDS)
    assert f"(at most {WARMUPS})" in measured.method, measured.method
    assert profile.disk_mb_s > 0

    # The sizing job, in a process of its own as a user runs it (Spark's JVM must not outlive
    # this test into the Spark tier's), names every measured figure it used.
    sized_dir = tmp_path / "sizing"
    sized = subprocess.run(
        [
            str(Path(sys.executable).with_name("kafkastack")),
            "size",
            "--input",
            str(loop_projection(tmp_path / "projection.csv", 0.4 * measured.produce_mb_s[0])),
            "--out",
            str(sized_dir),
            "--profile",
            str(profile_file),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert sized.returncode == 0, sized.stdout + sized.stderr
    report = SizingReport.model_validate_json((sized_dir / "sizing.json").read_text())
    assert {f.field for f in report.profile_figures if f.measured} == set(measured.fields)
