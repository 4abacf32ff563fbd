"""Pure DataFrame → DataFrame transforms of the sizing job (no I/O here).

validate → split accepted / rejected → deduplicate → apply defaults → per-topic demand.
"""

from __future__ import annotations

from functools import partial

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from spark_sizing.schema import ALL_COLUMNS, CORRUPT_RECORD, DEFAULT_REPLICATION_FACTOR, OPTIONAL

REASON = "reason"
TYPED_PREFIX = "t_"
INFINITY = float("inf")


def with_optional_columns(raw: DataFrame) -> DataFrame:
    """Absent optional columns become null text columns so later steps see one shape."""
    for name in (*OPTIONAL, CORRUPT_RECORD):
        if name not in raw.columns:
            raw = raw.withColumn(name, F.lit(None).cast("string"))
    return raw


def _try_cast(name: str, to: str) -> Column:
    # try_cast yields null instead of failing the job under Spark's ANSI mode.
    return F.expr(f"try_cast(`{name}` as {to})")


def _is_blank(name: str) -> Column:
    return F.col(name).isNull() | (F.trim(F.col(name).cast("string")) == "")


def _value_problem(
    name: str, typed: Column, *, required: bool, check: Column, rule: str, integer: bool = False
) -> Column:
    """A reason when the value is missing (if required), unparseable, or breaks `rule`."""
    if integer:
        unparsed, kind = typed.isNull(), "an integer"
    else:
        unparsed = typed.isNull() | F.isnan(typed) | (F.abs(typed) == F.lit(INFINITY))
        kind = "a number"
    text = F.col(name).cast("string")
    return (
        F.when(_is_blank(name), F.lit(f"{name}: missing") if required else F.lit(None))
        .when(unparsed, F.concat(F.lit(f"{name}: not {kind}: '"), text, F.lit("'")))
        .when(~check, F.concat(F.lit(f"{name}: must be {rule}, got "), text))
    )


_number_problem = _value_problem
_integer_problem = partial(_value_problem, integer=True)


def validate(raw: DataFrame) -> DataFrame:
    """Adds typed `t_*` columns and `reason` (null when the row is good) to every input row."""
    df = with_optional_columns(raw)
    t = {
        "period_start": _try_cast("period_start", "timestamp"),
        "produce_mb_s": _try_cast("produce_mb_s", "double"),
        "consumer_groups": _try_cast("consumer_groups", "int"),
        "retention_hours": _try_cast("retention_hours", "double"),
        "produce_mb_s_peak": _try_cast("produce_mb_s_peak", "double"),
        "avg_message_bytes": _try_cast("avg_message_bytes", "double"),
        "replication_factor": _try_cast("replication_factor", "int"),
        "min_insync_replicas": _try_cast("min_insync_replicas", "int"),
        "partitions": _try_cast("partitions", "int"),
        "compression_ratio": _try_cast("compression_ratio", "double"),
    }
    for name, expr in t.items():
        df = df.withColumn(TYPED_PREFIX + name, expr)
    c = {name: F.col(TYPED_PREFIX + name) for name in t}
    rf_or_default = F.coalesce(c["replication_factor"], F.lit(DEFAULT_REPLICATION_FACTOR))
    problems = [
        F.when(F.col(CORRUPT_RECORD).isNotNull(), F.lit("malformed line")),
        F.when(_is_blank("topic"), F.lit("topic: missing or empty")),
        F.when(_is_blank("period_start"), F.lit("period_start: missing")).when(
            c["period_start"].isNull(),
            F.concat(
                F.lit("period_start: not a date or timestamp: '"),
                F.col("period_start").cast("string"),
                F.lit("'"),
            ),
        ),
        _number_problem(
            "produce_mb_s",
            c["produce_mb_s"],
            required=True,
            check=c["produce_mb_s"] >= 0,
            rule="≥ 0",
        ),
        _integer_problem(
            "consumer_groups",
            c["consumer_groups"],
            required=True,
            check=c["consumer_groups"] >= 0,
            rule="≥ 0",
        ),
        _number_problem(
            "retention_hours",
            c["retention_hours"],
            required=True,
            check=c["retention_hours"] > 0,
            rule="> 0",
        ),
        _number_problem(
            "produce_mb_s_peak",
            c["produce_mb_s_peak"],
            required=False,
            check=c["produce_mb_s_peak"] >= F.coalesce(c["produce_mb_s"], F.lit(0.0)),
            rule="≥ produce_mb_s",
        ),
        _number_problem(
            "avg_message_bytes",
            c["avg_message_bytes"],
            required=False,
            check=c["avg_message_bytes"] > 0,
            rule="> 0",
        ),
        _integer_problem(
            "replication_factor",
            c["replication_factor"],
            required=False,
            check=c["replication_factor"] >= 1,
            rule="≥ 1",
        ),
        _integer_problem(
            "min_insync_replicas",
            c["min_insync_replicas"],
            required=False,
            check=(c["min_insync_replicas"] >= 1) & (c["min_insync_replicas"] <= rf_or_default),
            rule="between 1 and replication_factor",
        ),
        _integer_problem(
            "partitions", c["partitions"], required=False, check=c["partitions"] >= 1, rule="≥ 1"
        ),
        _number_problem(
            "compression_ratio",
            c["compression_ratio"],
            required=False,
            check=(c["compression_ratio"] > 0) & (c["compression_ratio"] <= 1),
            rule="in (0, 1]",
        ),
    ]
    # Two projections so the long reason expression is evaluated once per row, not twice.
    joined = df.withColumn(REASON, F.concat_ws("; ", *problems))
    return joined.withColumn(
        REASON, F.when(F.col(REASON) == "", F.lit(None)).otherwise(F.col(REASON))
    )


def rejected_rows(validated: DataFrame) -> DataFrame:
    """Bad rows as they were read, with the reason; written to <out>/rejected/."""
    present = [n for n in (*ALL_COLUMNS, CORRUPT_RECORD) if n in validated.columns]
    return validated.where(F.col(REASON).isNotNull()).select(
        *[F.col(n).cast("string").alias(n) for n in present], REASON
    )


def accepted_rows(validated: DataFrame) -> DataFrame:
    """Good rows with typed columns under their contract names."""
    typed = [c for c in validated.columns if c.startswith(TYPED_PREFIX)]
    return validated.where(F.col(REASON).isNull()).select(
        F.trim(F.col("topic").cast("string")).alias("topic"),
        *[F.col(c).alias(c[len(TYPED_PREFIX) :]) for c in typed],
    )


DUPLICATE_REASON = "duplicate (topic, period_start): kept the row with the highest produce_mb_s"
KEY = ("topic", "period_start")
# Among duplicates the winner is the highest of these, in order, then of the other values (so the
# choice never depends on input order); a null ranks below any value.
RANKING = ("produce_mb_s", "produce_mb_s_peak", "retention_hours", "consumer_groups")
COPIES = "copies"
RANK = "_rank"


def _best_first(columns: list[str]) -> list[Column]:
    # Column by column rather than one struct: a struct sort key has no sort prefix and sorted
    # 10M rows 4x slower.
    rest = [c for c in columns if c not in (*KEY, *RANKING)]
    return [F.col(c).desc_nulls_last() for c in (*RANKING, *rest)]


def ranked_copies(accepted: DataFrame) -> DataFrame:
    """Every accepted row with its rank among the rows of its (topic, period_start), 1 being the
    one kept, and the number of copies of that key.

    One window: a single shuffle by key and a sort within each key. (A group-by keeping the best
    row as a struct needs a sort-based aggregate, and a hash aggregate over millions of distinct
    keys spills; both measured slower.)"""
    best_first = Window.partitionBy(*KEY).orderBy(*_best_first(accepted.columns))
    whole_key = best_first.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    return accepted.withColumn(RANK, F.row_number().over(best_first)).withColumn(
        COPIES, F.count(F.lit(1)).over(whole_key)
    )


def kept_rows(ranked: DataFrame) -> DataFrame:
    """The winner of every key, with `copies`."""
    return ranked.where(F.col(RANK) == 1).drop(RANK)


def kept_and_duplicate_counts(kept: DataFrame) -> tuple[int, int]:
    """Rows kept, and copies dropped beside them, in one pass over the winners."""
    row = kept.agg(F.count(F.lit(1)).alias("kept"), F.sum(F.col(COPIES) - 1).alias("dups")).first()
    assert row is not None  # a global aggregate always yields one row
    return int(row["kept"]), int(row["dups"] or 0)


def duplicate_rows(ranked: DataFrame) -> DataFrame:
    """Every copy but the winner, with `reason`; quarantined, never dropped."""
    return (
        ranked.where(F.col(RANK) > 1).drop(RANK, COPIES).withColumn(REASON, F.lit(DUPLICATE_REASON))
    )


def deduplicate(accepted: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(kept, duplicates): the highest produce_mb_s wins per (topic, period_start)."""
    ranked = ranked_copies(accepted)
    return kept_rows(ranked).drop(COPIES), duplicate_rows(ranked)


def with_defaults(df: DataFrame, peak_factor: float) -> DataFrame:
    """Fill optional columns with their documented defaults."""
    rf = F.coalesce(F.col("replication_factor"), F.lit(DEFAULT_REPLICATION_FACTOR))
    return (
        df.withColumn("replication_factor", rf)
        .withColumn(
            "min_insync_replicas",
            F.coalesce(F.col("min_insync_replicas"), F.greatest(F.lit(1), rf - 1)),
        )
        .withColumn(
            "produce_mb_s_peak",
            F.coalesce(F.col("produce_mb_s_peak"), F.col("produce_mb_s") * F.lit(peak_factor)),
        )
        .withColumn("compression_ratio", F.coalesce(F.col("compression_ratio"), F.lit(1.0)))
    )


def topic_demand(df: DataFrame, horizon_months: int) -> DataFrame:
    """One row per topic: demand projected to the end of the horizon.

    Growth is the least-squares slope of produce_mb_s over months, added for `horizon_months`
    to the topic's last month's average (a robust base; a fitted intercept swings with noise).
    Peaks scale by the same factor; an older, higher peak is never projected away.
    """
    # First and last period per topic from a small aggregate joined back by broadcast: a window
    # here would sort every row by topic.
    bounds = df.groupBy("topic").agg(
        F.min("period_start").alias("_first"), F.max("period_start").alias("_last")
    )
    months = df.join(F.broadcast(bounds), "topic").withColumn(
        "x", F.months_between(F.col("period_start"), F.col("_first"))
    )
    last_x = F.months_between(F.col("_last"), F.col("_first"))
    recent = months.withColumn("recent", F.col("x") >= last_x - F.lit(1.0))
    per_topic = recent.groupBy("topic").agg(
        F.regr_slope("produce_mb_s", "x").alias("slope"),
        F.avg(F.when(F.col("recent"), F.col("produce_mb_s"))).alias("recent_avg"),
        F.max(F.when(F.col("recent"), F.col("produce_mb_s_peak"))).alias("recent_peak"),
        F.max("produce_mb_s_peak").alias("max_peak"),
        F.max("consumer_groups").alias("consumer_groups"),
        F.max("retention_hours").alias("retention_hours"),
        F.max("replication_factor").alias("replication_factor"),
        F.min("min_insync_replicas").alias("min_insync_replicas"),
        F.max("partitions").alias("pinned_partitions"),
        F.max("compression_ratio").alias("compression_ratio"),
    )
    growth = F.when(
        (F.col("recent_avg") > 0) & F.col("slope").isNotNull(),
        F.greatest(
            F.lit(1.0),
            (F.col("recent_avg") + F.col("slope") * F.lit(float(horizon_months)))
            / F.col("recent_avg"),
        ),
    ).otherwise(F.lit(1.0))
    return per_topic.withColumn("growth_factor", growth).select(
        "topic",
        F.greatest(F.col("max_peak"), F.col("recent_peak") * F.col("growth_factor")).alias(
            "peak_ingress_mb_s"
        ),
        (F.col("recent_avg") * F.col("growth_factor")).alias("avg_ingress_mb_s"),
        "consumer_groups",
        "retention_hours",
        "replication_factor",
        "min_insync_replicas",
        "pinned_partitions",
        "compression_ratio",
        "growth_factor",
    )


def monthly_totals(df: DataFrame) -> DataFrame:
    """Cluster-wide ingress and egress per calendar month, for the report's time series."""
    per_topic_month = (
        df.withColumn("month", F.date_trunc("month", F.col("period_start")))
        .groupBy("topic", "month")
        .agg(
            F.avg("produce_mb_s").alias("avg_mb_s"),
            F.max("produce_mb_s_peak").alias("peak_mb_s"),
            F.max("consumer_groups").alias("consumer_groups"),
        )
    )
    return (
        per_topic_month.groupBy("month")
        .agg(
            F.sum("avg_mb_s").alias("avg_ingress_mb_s"),
            F.sum("peak_mb_s").alias("peak_ingress_mb_s"),
            F.sum(F.col("peak_mb_s") * F.col("consumer_groups")).alias("peak_egress_mb_s"),
        )
        .orderBy("month")
    )
