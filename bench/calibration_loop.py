"""Benchmark: the sizing's closed loop on this machine. Calibrate a stack (by default the
committed `local` one, whose sizing renders 12 brokers) on real brokers, size a projection at
40 % of what they carried with the calibrated profile, apply that sizing to a copy of the stack,
start it and measure it the same way; print what the model predicted for the sized cluster and
what it carried.

    sudo .venv/bin/python bench/calibration_loop.py [--stack local] [--stacks-dir stacks]
        [--records 150000] [--rounds 3]

One host runs every broker, so the projection is sized to the calibrated cluster's own count
and the loop checks the model's arithmetic end to end (units, RF, utilisation), not how brokers
scale out. Both figures are speeds of a shared machine: they are printed with their ratio,
never asserted (the suite checks the arithmetic and that `kafkastack calibrate` writes a
profile the sizing takes: tests/kafka/test_calibration.py).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from infra.config import load_stack  # noqa: E402
from infra.verify.calibrate import measure  # noqa: E402
from spark_sizing.calibration import loop_projection, predicted_produce_mb_s  # noqa: E402
from spark_sizing.contract import SizingReport  # noqa: E402
from spark_sizing.profiles import load_profile  # noqa: E402

# Under the 50 % utilisation target: the model sizes as many brokers as were calibrated.
SHARE_OF_CALIBRATED = 0.4


def kafkastack(*args: str) -> None:
    """A kafkastack command in a process of its own, as a user runs it."""
    subprocess.run([str(Path(sys.executable).with_name("kafkastack")), *args], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="local", help="the stack to calibrate and size")
    parser.add_argument("--stacks-dir", type=Path, default=REPO / "stacks")
    parser.add_argument("--records", type=int, default=150_000, help="1 KiB records per round")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per cluster")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kafkastack-calibration-loop-") as tmp:
        work = Path(tmp)
        stacks = work / "stacks"
        shutil.copytree(args.stacks_dir, stacks)
        profile_file = work / "calibrated.yaml"
        kafkastack(
            "calibrate",
            "--stack",
            args.stack,
            "--stacks-dir",
            str(stacks),
            "--out",
            str(profile_file),
            "--records",
            str(args.records),
            "--rounds",
            str(args.rounds),
        )
        profile = load_profile(str(profile_file))
        if profile.measured is None:
            raise SystemExit(f"{profile_file} has no measured figures")
        calibrated_mb_s = sorted(profile.measured.produce_mb_s)[args.rounds // 2]

        sized_dir = work / "sizing"
        peak = SHARE_OF_CALIBRATED * calibrated_mb_s
        kafkastack(
            "size",
            "--input",
            str(loop_projection(work / "projection.csv", peak)),
            "--out",
            str(sized_dir),
            "--profile",
            str(profile_file),
        )
        report = SizingReport.model_validate_json((sized_dir / "sizing.json").read_text())
        predicted = predicted_produce_mb_s(report)
        kafkastack(
            "apply-sizing",
            "--sizing",
            str(sized_dir / "sizing.json"),
            "--stack",
            args.stack,
            "--stacks-dir",
            str(stacks),
        )
        run = measure(load_stack(stacks, args.stack), args.records, args.rounds)
    measured = run.cluster_produce_mb_s
    print(f"calibrated rounds: {profile.measured.produce_mb_s} MB/s → {profile.disk_mb_s} MB/s")
    print(f"sized {report.cluster.brokers} brokers for a {peak:.2f} MB/s peak")
    print(f"predicted {predicted:.2f} MB/s, measured {measured:.2f} MB/s {run.produce_mb_s}")
    print(f"ratio measured/predicted {measured / predicted:.2f}")
    print(f"whole loop {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
