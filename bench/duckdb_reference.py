"""The sizing job's data work written again in DuckDB SQL, for bench/sizing.py.

Same contract, same answers: validation, the duplicate policy (highest produce_mb_s, then peak,
retention, consumer groups, then the other values), defaults, the per-topic projection and the
monthly totals. It is a reference for speed and a cross-check of the Spark results, not part of
the product.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from spark_sizing.schema import COLUMNS, DEFAULT_REPLICATION_FACTOR
from spark_sizing.transforms import MEAN_MONTH_MICROS, RECENT_MICROS

DUCKDB_TYPES = {"string": "VARCHAR", "timestamp": "TIMESTAMP", "number": "DOUBLE", "integer": "INT"}

# A value passes when it is blank (optional columns only), or parses and keeps its rule; rules
# read the typed values (t_*).
RULES = {
    "produce_mb_s": "t_produce_mb_s >= 0",
    "consumer_groups": "t_consumer_groups >= 0",
    "retention_hours": "t_retention_hours > 0",
    "produce_mb_s_peak": "t_produce_mb_s_peak >= coalesce(t_produce_mb_s, 0)",
    "avg_message_bytes": "t_avg_message_bytes > 0",
    "replication_factor": "t_replication_factor >= 1",
    "min_insync_replicas": (
        "t_min_insync_replicas BETWEEN 1 AND "
        f"coalesce(t_replication_factor, {DEFAULT_REPLICATION_FACTOR})"
    ),
    "partitions": "t_partitions >= 1",
    "compression_ratio": "t_compression_ratio > 0 AND t_compression_ratio <= 1",
    "consumers_per_group": "t_consumers_per_group >= 1",
}
RANKING = ("produce_mb_s", "produce_mb_s_peak", "retention_hours", "consumer_groups")


@dataclass(frozen=True)
class ReferenceResult:
    rows_read: int
    rows_invalid: int
    rows_kept: int
    duplicates: int
    peak_ingress_by_topic: dict[str, float]
    monthly_avg_ingress: list[float]


def _typed_select(types: dict[str, str]) -> str:
    """Typed values (t_*) and blank flags (b_*); columns that arrive typed are used as they are."""
    items = []
    for c in COLUMNS:
        kind = types.get(c.name)
        raw = f'"{c.name}"' if kind else "NULL"
        target = DUCKDB_TYPES[c.kind]
        if c.name == "topic":
            items.append(f"trim(CAST({raw} AS VARCHAR)) AS t_topic")
            continue
        typed = raw if kind == target else f"TRY_CAST({raw} AS {target})"
        blank = f"({raw} IS NULL OR trim({raw}) = '')" if kind == "VARCHAR" else f"{raw} IS NULL"
        items.append(f"{typed} AS t_{c.name}")
        items.append(f"{blank} AS b_{c.name}")
    return ",\n  ".join(items)


def _valid_condition() -> str:
    parts = ["coalesce(t_topic, '') <> ''", "t_period_start IS NOT NULL"]
    for c in COLUMNS:
        if c.name in ("topic", "period_start"):
            continue
        value = f"t_{c.name}"
        parses = f"{value} IS NOT NULL" + (f" AND isfinite({value})" if c.kind == "number" else "")
        good = f"({parses} AND {RULES[c.name]})"
        parts.append(good if c.required else f"(b_{c.name} OR {good})")
    return "\n  AND ".join(parts)


def run(path: str, peak_factor: float = 2.0, horizon_months: int = 12) -> ReferenceResult:
    """Everything the Spark job computes from the rows, for a Parquet file or glob."""
    con = duckdb.connect()
    con.sql("SET enable_progress_bar = false")
    con.sql("SET TimeZone = 'UTC'")  # as the job's session
    source = f"read_parquet('{path}')"
    types = {row[0]: row[1] for row in con.sql(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    con.sql(
        f"CREATE VIEW checked AS SELECT {_typed_select(types)},\n"
        f"  ({_valid_condition()}) AS ok FROM {source}"
    )
    rest = [c.name for c in COLUMNS if c.name not in ("topic", "period_start", *RANKING)]
    order = ", ".join(f"t_{c} DESC NULLS LAST" for c in (*RANKING, *rest))
    con.sql(
        f"""CREATE TEMP TABLE kept AS
        SELECT t_topic AS topic, t_period_start AS period_start, t_produce_mb_s AS y,
               coalesce(t_produce_mb_s_peak, t_produce_mb_s * {peak_factor}) AS peak,
               t_consumer_groups AS cg, t_retention_hours AS ret,
               coalesce(t_replication_factor, {DEFAULT_REPLICATION_FACTOR}) AS rf,
               coalesce(t_min_insync_replicas,
                        greatest(1, coalesce(t_replication_factor,
                                             {DEFAULT_REPLICATION_FACTOR}) - 1)) AS isr,
               t_partitions AS pinned, coalesce(t_compression_ratio, 1.0) AS comp
        FROM checked WHERE ok
        QUALIFY row_number() OVER (PARTITION BY t_topic, t_period_start ORDER BY {order}) = 1"""
    )
    read, invalid, valid = con.sql(
        "SELECT count(*), count(*) FILTER (WHERE NOT ok), count(*) FILTER (WHERE ok) FROM checked"
    ).fetchall()[0]
    kept = con.sql("SELECT count(*) FROM kept").fetchall()[0][0]
    demand = con.sql(
        f"""WITH x AS (
          SELECT *,
                 (epoch_us(period_start) - epoch_us(min(period_start) OVER w))
                   / {float(MEAN_MONTH_MICROS)} AS x,
                 epoch_us(period_start) >= epoch_us(max(period_start) OVER w) - {RECENT_MICROS}
                   AS recent
          FROM kept WINDOW w AS (PARTITION BY topic)),
        t AS (SELECT topic, regr_slope(y, x) AS slope,
                     avg(y) FILTER (WHERE recent) AS recent_avg,
                     max(peak) FILTER (WHERE recent) AS recent_peak,
                     max(peak) AS max_peak
              FROM x GROUP BY topic),
        g AS (SELECT *, CASE WHEN recent_avg > 0 AND slope IS NOT NULL
                     THEN greatest(1.0, (recent_avg + slope * {horizon_months}) / recent_avg)
                     ELSE 1.0 END AS growth FROM t)
        SELECT topic, greatest(max_peak, recent_peak * growth) FROM g"""
    ).fetchall()
    months = con.sql(
        """SELECT sum(avg_y) FROM (
             SELECT date_trunc('month', period_start) AS month, avg(y) AS avg_y
             FROM kept GROUP BY topic, month)
           GROUP BY month ORDER BY month"""
    ).fetchall()
    return ReferenceResult(
        rows_read=read,
        rows_invalid=invalid,
        rows_kept=kept,
        duplicates=valid - kept,
        peak_ingress_by_topic={topic: peak for topic, peak in demand},
        monthly_avg_ingress=[m for (m,) in months],
    )
