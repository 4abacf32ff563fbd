"""Benchmark: the prod stack's preview and the mocked Pulumi unit suite.

    .venv/bin/python bench/preview.py [--repeat 3]

Times, in fresh processes (so each pays Python and Pulumi start-up like a CI step does):
`kafkastack preview --stack prod` (a render of the stack under Pulumi's mock runtime for both
revisions, then the per-object diff), `kafkastack render --stack prod`, and the mocked unit suite
(`pytest tests/infra`). Prints min and median beside the targets; nothing is
asserted.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KAFKASTACK = [str(Path(sys.executable).parent / "kafkastack")]


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kafkastack-bench-") as tmp:
        cases = {
            "preview --stack prod": ([*KAFKASTACK, "preview", "--stack", "prod"], "≤ 20 s"),
            "render --stack prod": (
                [*KAFKASTACK, "render", "--stack", "prod", "--out", f"{tmp}/render"],
                "",
            ),
            "mocked unit suite": (
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/infra"],
                "≤ 10 s",
            ),
        }
        print(f"{'case':<24}{'min s':>8}{'median s':>10}   target")
        for name, (command, target) in cases.items():
            runs = [timed(command) for _ in range(args.repeat)]
            print(f"{name:<24}{min(runs):>8.1f}{statistics.median(runs):>10.1f}   {target}")


if __name__ == "__main__":
    main()
