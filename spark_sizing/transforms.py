"""Pure DataFrame → DataFrame transforms of the sizing job (no I/O here).

accepted rows (validation.py) → the model's columns → duplicates marked → defaults → pieces per
(topic, month) → per-topic demand and per-month totals.

The heavy part is one shuffle: rows are grouped by topic once, sorted by period within the topic,
and one window pass both marks duplicate periods and finds each topic's first and last period.
Everything after that is a small table of additive pieces per (topic, month), which both the
per-topic projection and the monthly series roll up.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from spark_sizing.schema import DEFAULT_REPLICATION_FACTOR
from spark_sizing.validation import REASON

DUPLICATE_REASON = "duplicate (topic, period_start): kept the row with the highest produce_mb_s"
KEY = ("topic", "period_start")
# Among duplicates the winner is the highest of these, in order, then of the other values (so the
# choice never depends on input order); a null ranks below any value.
RANKING = ("produce_mb_s", "produce_mb_s_peak", "retention_hours", "consumer_groups")
DUPLICATE = "_duplicate"
TOPIC_FIRST = "_topic_first"
TOPIC_LAST = "_topic_last"
MARKS = (DUPLICATE, TOPIC_FIRST, TOPIC_LAST)
# The columns the model reads (avg_message_bytes is validated, not used). Only these travel through
# the shuffle; copies of a (topic, period_start) that agree on all of them size the same whichever
# one is kept.
MODEL_COLUMNS = (
    "topic",
    "period_start",
    "produce_mb_s",
    "produce_mb_s_peak",
    "consumer_groups",
    "retention_hours",
    "replication_factor",
    "min_insync_replicas",
    "partitions",
    "compression_ratio",
    "consumers_per_group",
)


def _best_first(columns: list[str]) -> list[Column]:
    # Column by column rather than one struct: a struct sort key has no sort prefix and sorted
    # 10M rows 4x slower.
    rest = [c for c in columns if c not in (*KEY, *RANKING)]
    return [F.col(c).desc_nulls_last() for c in (*RANKING, *rest)]


def model_rows(accepted: DataFrame) -> DataFrame:
    """Accepted rows cut to the columns the model reads."""
    return accepted.select(*MODEL_COLUMNS)


def mark_duplicates(accepted: DataFrame) -> DataFrame:
    """Every accepted row, with `_duplicate` (true for each copy of a (topic, period_start) but the
    best one) and the topic's first and last period.

    One window per topic, ordered by period and then best row first: a copy is a row whose
    predecessor has the same period. (A window per (topic, period) costs a window group per row:
    about 2.5x slower on 10M rows.)"""
    by_topic = Window.partitionBy("topic").orderBy(
        F.col("period_start"), *_best_first(accepted.columns)
    )
    whole_topic = by_topic.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    same_period = F.lag("period_start").over(by_topic) == F.col("period_start")
    return accepted.select(
        "*",
        F.coalesce(same_period, F.lit(False)).alias(DUPLICATE),
        F.min("period_start").over(whole_topic).alias(TOPIC_FIRST),
        F.max("period_start").over(whole_topic).alias(TOPIC_LAST),
    )


def kept_rows(marked: DataFrame) -> DataFrame:
    """The best row of every (topic, period_start), in the accepted rows' shape."""
    return marked.where(~F.col(DUPLICATE)).drop(*MARKS)


def duplicate_rows(marked: DataFrame) -> DataFrame:
    """Every copy but the best, with `reason`; quarantined, never dropped."""
    return marked.where(F.col(DUPLICATE)).drop(*MARKS).withColumn(REASON, F.lit(DUPLICATE_REASON))


def with_defaults(df: DataFrame, peak_factor: float) -> DataFrame:
    """Fill optional columns with their documented defaults."""
    rf = F.coalesce(F.col("replication_factor"), F.lit(DEFAULT_REPLICATION_FACTOR))
    filled = {
        "replication_factor": rf,
        "min_insync_replicas": F.coalesce(
            F.col("min_insync_replicas"), F.greatest(F.lit(1), rf - 1)
        ),
        "produce_mb_s_peak": F.coalesce(
            F.col("produce_mb_s_peak"), F.col("produce_mb_s") * F.lit(peak_factor)
        ),
        "compression_ratio": F.coalesce(F.col("compression_ratio"), F.lit(1.0)),
    }
    # One projection: each withColumn would analyse the whole plan above it again.
    return df.withColumns(filled)


# x counts months of the mean Gregorian length, so a month's growth is one number whatever the
# calendar month, and x is one subtraction per row (Spark's months_between cost a quarter of the
# whole job on 10M rows).
MEAN_MONTH_MICROS = 2_629_746_000_000  # 365.2425 / 12 days
# Rows within the longest calendar month of a topic's last period are its recent rows: a monthly
# projection's last two months, an hourly one's last 31 days.
RECENT_MICROS = 31 * 86_400 * 1_000_000


def month_index(period: Column) -> Column:
    """Months since year 0 of the period's calendar month in the session time zone (an integer
    key: cheaper per row than date_trunc's timestamp)."""
    return F.year(period) * 12 + F.month(period) - 1


def month_start(index: Column) -> Column:
    """The first instant of the calendar month `index` counts (see month_index)."""
    return F.make_timestamp(
        F.floor(index / 12), index % 12 + 1, F.lit(1), F.lit(0), F.lit(0), F.lit(0)
    )


def topic_month_pieces(marked: DataFrame) -> DataFrame:
    """Additive pieces per (topic, calendar month) of the kept rows (defaults applied), plus the
    number of rows kept and of copies dropped.

    x is mean months (MEAN_MONTH_MICROS) since the topic's first period; recent rows lie within
    RECENT_MICROS of its last period. Sums of x, y, xy and x² let the per-topic rollup compute
    the least-squares slope without seeing rows again."""
    at = F.unix_micros(F.col("period_start"))
    # x and the flags become columns first: written inline, each aggregate that reads them
    # would evaluate them again.
    rows = marked.select(
        "*",
        month_index(F.col("period_start")).alias("month"),
        ((at - F.unix_micros(F.col(TOPIC_FIRST))) / F.lit(float(MEAN_MONTH_MICROS))).alias("x"),
        (at >= F.unix_micros(F.col(TOPIC_LAST)) - F.lit(RECENT_MICROS)).alias("recent"),
        (~F.col(DUPLICATE)).alias("kept"),
    )
    x, y, peak = F.col("x"), F.col("produce_mb_s"), F.col("produce_mb_s_peak")
    recent, kept = F.col("recent"), F.col("kept")

    def of_kept(value: Column) -> Column:
        return F.when(kept, value)  # aggregates skip the nulls this leaves for copies

    return rows.groupBy("topic", "month").agg(
        F.count_if(kept).alias("rows"),
        F.count_if(~kept).alias("duplicates"),
        F.sum(of_kept(x)).alias("sum_x"),
        F.sum(of_kept(y)).alias("sum_y"),
        F.sum(of_kept(x * y)).alias("sum_xy"),
        F.sum(of_kept(x * x)).alias("sum_xx"),
        F.count_if(kept & recent).alias("recent_rows"),
        F.sum(of_kept(F.when(recent, y))).alias("recent_sum_y"),
        F.max(of_kept(F.when(recent, peak))).alias("recent_peak"),
        F.max(of_kept(peak)).alias("max_peak"),
        F.max(of_kept(F.col("consumer_groups"))).alias("consumer_groups"),
        F.max(of_kept(F.col("retention_hours"))).alias("retention_hours"),
        F.max(of_kept(F.col("replication_factor"))).alias("replication_factor"),
        F.min(of_kept(F.col("min_insync_replicas"))).alias("min_insync_replicas"),
        F.max(of_kept(F.col("partitions"))).alias("pinned_partitions"),
        F.max(of_kept(F.col("compression_ratio"))).alias("compression_ratio"),
        F.max(of_kept(F.col("consumers_per_group"))).alias("consumers_per_group"),
    )


def row_counts(pieces: DataFrame) -> tuple[int, int]:
    """Rows kept and copies dropped, over all pieces."""
    row = pieces.agg(F.sum("rows").alias("kept"), F.sum("duplicates").alias("dups")).first()
    assert row is not None  # a global aggregate always yields one row
    return int(row["kept"] or 0), int(row["dups"] or 0)


def topic_demand(pieces: DataFrame, horizon_months: int) -> DataFrame:
    """One row per topic: demand projected to the end of the horizon.

    Growth is the least-squares slope of produce_mb_s over months, added for `horizon_months`
    to the topic's last month's average (a robust base; a fitted intercept swings with noise).
    Peaks scale by the same factor; an older, higher peak is never projected away.
    """
    per_topic = pieces.groupBy("topic").agg(
        F.sum("rows").alias("n"),
        F.sum("sum_x").alias("sx"),
        F.sum("sum_y").alias("sy"),
        F.sum("sum_xy").alias("sxy"),
        F.sum("sum_xx").alias("sxx"),
        (F.sum("recent_sum_y") / F.sum("recent_rows")).alias("recent_avg"),
        F.max("recent_peak").alias("recent_peak"),
        F.max("max_peak").alias("max_peak"),
        F.max("consumer_groups").alias("consumer_groups"),
        F.max("retention_hours").alias("retention_hours"),
        F.max("replication_factor").alias("replication_factor"),
        F.min("min_insync_replicas").alias("min_insync_replicas"),
        F.max("pinned_partitions").alias("pinned_partitions"),
        F.max("compression_ratio").alias("compression_ratio"),
        F.max("consumers_per_group").alias("consumers_per_group"),
    )
    n, sx = F.col("n"), F.col("sx")
    spread = n * F.col("sxx") - sx * sx  # n² · variance of x: zero for a single period
    slope = F.when(spread > 0, (n * F.col("sxy") - sx * F.col("sy")) / spread)
    growth = F.when(
        (F.col("recent_avg") > 0) & slope.isNotNull(),
        F.greatest(
            F.lit(1.0),
            (F.col("recent_avg") + slope * F.lit(float(horizon_months))) / F.col("recent_avg"),
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
        "consumers_per_group",
        "growth_factor",
    )


def monthly_totals(pieces: DataFrame) -> DataFrame:
    """Cluster-wide ingress and egress per calendar month, for the report's time series."""
    return (
        pieces.where(F.col("rows") > 0)
        .groupBy("month")
        .agg(
            F.sum(F.col("sum_y") / F.col("rows")).alias("avg_ingress_mb_s"),
            F.sum("max_peak").alias("peak_ingress_mb_s"),
            F.sum(F.col("max_peak") * F.col("consumer_groups")).alias("peak_egress_mb_s"),
        )
        .orderBy("month")
        .withColumn("month", month_start(F.col("month")))
    )
