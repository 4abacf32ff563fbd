"""Benchmark: the Spark sizing job against a DuckDB reference of the same work.

    .venv/bin/python bench/sizing.py                 # 10k topics × 36 months, then 1M hourly rows
    .venv/bin/python bench/sizing.py --rows 10M 50M  # larger hourly datasets

Each Spark figure is one `kafkastack size` process, end to end as a user runs it: JVM start,
reading, validation, duplicate handling, projection, reports. The reference (bench/
duckdb_reference.py) does the same data work in DuckDB on the same Parquet file; its answers are
checked against sizing.json (row counts and every topic's projected peak). Prints wall time,
rows/s, the Spark/DuckDB ratio and the target beside the figures; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb_reference

from spark_sizing.samples import HOURS_PER_MONTH, write

SIZES = {"1M": 1_000_000, "10M": 10_000_000, "50M": 50_000_000}
TARGETS = {"small": "≤ 30 s incl. Spark start", "50M": "≤ 120 s and ≤ 3× DuckDB"}


@dataclass(frozen=True)
class Figure:
    case: str
    rows: int
    spark_s: float
    duckdb_s: float
    agreement: str
    target: str

    def line(self) -> str:
        ratio = self.spark_s / self.duckdb_s
        return (
            f"{self.case:<20}{self.rows:>12,}{self.spark_s:>9.1f}{self.rows / self.spark_s:>13,.0f}"
            f"{self.duckdb_s:>10.1f}{self.rows / self.duckdb_s:>14,.0f}{ratio:>7.1f}"
            f"   {self.agreement:<10}{self.target}"
        )


def dataset(directory: Path, topics: int, months: int, granularity: str) -> tuple[Path, int]:
    path = directory / f"{topics}x{months}-{granularity}.parquet"
    rows = write(path, topics, months, granularity, seed=11, file_format="parquet")
    return path, rows


def run_spark(path: Path, out: Path) -> float:
    """Wall time of one `kafkastack size` process on the default profile."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "spark_sizing", "size", "--input", str(path), "--out", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def agreement(sizing: dict[str, object], ref: duckdb_reference.ReferenceResult) -> str:
    """'agree' when counts match and every topic's projected peak matches to sizing.json's
    rounding; otherwise what differs."""
    inputs = sizing["inputs"]
    assert isinstance(inputs, dict)
    counts = (inputs["rows_read"], inputs["rows_accepted"], inputs["duplicates_dropped"])
    expected = (ref.rows_read, ref.rows_kept, ref.duplicates)
    if counts != expected:
        return f"counts {counts} != {expected}"
    topics = sizing["topics"]
    assert isinstance(topics, list)
    spark_peaks = {t["topic"]: t["peak_ingress_mb_s"] for t in topics}
    if spark_peaks.keys() != ref.peak_ingress_by_topic.keys():
        return "topic sets differ"
    worst = max(abs(spark_peaks[t] - p) for t, p in ref.peak_ingress_by_topic.items())
    return "agree" if worst <= 5e-4 + 1e-9 else f"peak off {worst:.2g}"


def measure(case: str, path: Path, rows: int, out: Path, target: str) -> Figure:
    spark_s = run_spark(path, out)
    start = time.perf_counter()
    reference = duckdb_reference.run(str(path))
    duckdb_s = time.perf_counter() - start
    sizing = json.loads((out / "sizing.json").read_text())
    return Figure(case, rows, spark_s, duckdb_s, agreement(sizing, reference), target)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--case", choices=["small", "none"], default="small")
    parser.add_argument("--rows", nargs="*", choices=sorted(SIZES), default=["1M"])
    args = parser.parse_args()
    print(
        f"{'case':<20}{'rows':>12}{'spark s':>9}{'spark rows/s':>13}{'duckdb s':>10}"
        f"{'duckdb rows/s':>14}{'ratio':>7}   {'answers':<10}target",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="kafkastack-bench-") as tmp:
        root = Path(tmp)
        if args.case == "small":
            path, rows = dataset(root, topics=10_000, months=36, granularity="monthly")
            small = measure("10k topics × 36 mo", path, rows, root / "out-small", TARGETS["small"])
            print(small.line(), flush=True)
        for size in args.rows:
            topics = max(1, SIZES[size] // (2 * HOURS_PER_MONTH))
            path, rows = dataset(root, topics=topics, months=2, granularity="hourly")
            figure = measure(
                f"{size} hourly rows", path, rows, root / f"out-{size}", TARGETS.get(size, "")
            )
            print(figure.line(), flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
