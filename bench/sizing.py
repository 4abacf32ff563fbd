"""Benchmark: the Spark sizing job against a DuckDB reference of the same aggregation.

    .venv/bin/python bench/sizing.py                 # 10k topics × 36 months, then 1M hourly rows
    .venv/bin/python bench/sizing.py --rows 10M 50M  # larger hourly datasets

Prints rows, wall time, rows/s and the Spark/DuckDB ratio; targets are printed beside the figures,
never asserted. The first Spark figure includes starting the SparkSession (the JVM).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from spark_sizing.formulas import SizingParameters
from spark_sizing.job import run_sizing, spark_session
from spark_sizing.profiles import DEFAULT_PROFILE, load_profile
from spark_sizing.samples import HOURS_PER_MONTH, write

SIZES = {"1M": 1_000_000, "10M": 10_000_000, "50M": 50_000_000}
# The same per-topic projection as spark_sizing/transforms.topic_demand, in SQL.
REFERENCE_SQL = """
WITH typed AS (
  SELECT topic, CAST(period_start AS TIMESTAMP) AS ts, produce_mb_s, produce_mb_s_peak,
         consumer_groups, retention_hours, replication_factor
  FROM read_parquet('{path}')
  WHERE topic <> '' AND produce_mb_s >= 0 AND retention_hours > 0 AND consumer_groups >= 0
),
x AS (
  SELECT *, date_diff('day', min(ts) OVER (PARTITION BY topic), ts) / 30.4375 AS months FROM typed
),
w AS (SELECT *, months >= max(months) OVER (PARTITION BY topic) - 1 AS recent FROM x)
SELECT topic, regr_slope(produce_mb_s, months) AS slope,
       avg(produce_mb_s) FILTER (WHERE recent) AS recent_avg,
       max(produce_mb_s_peak) FILTER (WHERE recent) AS recent_peak,
       max(produce_mb_s_peak) AS max_peak, max(consumer_groups) AS consumer_groups,
       max(retention_hours) AS retention_hours, max(replication_factor) AS rf
FROM w GROUP BY topic
"""


@dataclass(frozen=True)
class Figure:
    case: str
    rows: int
    spark_s: float
    duckdb_s: float
    target: str

    def line(self) -> str:
        ratio = self.spark_s / self.duckdb_s if self.duckdb_s else float("inf")
        spark_rate, duckdb_rate = self.rows / self.spark_s, self.rows / self.duckdb_s
        return (
            f"{self.case:<22}{self.rows:>12,}{self.spark_s:>10.1f}{spark_rate:>14,.0f}"
            f"{self.duckdb_s:>10.1f}{duckdb_rate:>14,.0f}{ratio:>8.1f}   {self.target}"
        )


def dataset(directory: Path, topics: int, months: int, granularity: str) -> tuple[Path, int]:
    path = directory / f"{topics}x{months}-{granularity}.parquet"
    rows = write(path, topics, months, granularity, seed=11, file_format="parquet")
    return path, rows


def measure(case: str, path: Path, rows: int, out: Path, target: str) -> Figure:
    start = time.perf_counter()
    run_sizing(
        str(path), str(out), load_profile(DEFAULT_PROFILE), SizingParameters(), show_progress=False
    )
    spark_s = time.perf_counter() - start
    start = time.perf_counter()
    duckdb.sql(REFERENCE_SQL.format(path=path)).fetchall()
    return Figure(case, rows, spark_s, time.perf_counter() - start, target)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--case", choices=["small", "none"], default="small")
    parser.add_argument("--rows", nargs="*", choices=sorted(SIZES), default=["1M"])
    args = parser.parse_args()
    figures = []
    with tempfile.TemporaryDirectory(prefix="kafkastack-bench-") as tmp:
        root = Path(tmp)
        if args.case == "small":
            path, rows = dataset(root, topics=10_000, months=36, granularity="monthly")
            start = time.perf_counter()
            spark_session()  # JVM start counts: it is what a user running the job waits for
            startup = time.perf_counter() - start
            figure = measure(
                "10k topics × 36 mo", path, rows, root / "out-small", "≤ 30 s incl. Spark start"
            )
            figures.append(replace(figure, spark_s=figure.spark_s + startup))
        for size in args.rows:
            topics = max(1, SIZES[size] // (2 * HOURS_PER_MONTH))
            path, rows = dataset(root, topics=topics, months=2, granularity="hourly")
            target = "≤ 120 s and ≤ 3× DuckDB" if size == "50M" else ""
            figures.append(measure(f"{size} hourly rows", path, rows, root / f"out-{size}", target))
            path.unlink()
    print(
        f"{'case':<22}{'rows':>12}{'spark s':>10}{'spark rows/s':>14}{'duckdb s':>10}"
        f"{'duckdb rows/s':>14}{'ratio':>8}   target"
    )
    for figure in figures:
        print(figure.line())


if __name__ == "__main__":
    main()
