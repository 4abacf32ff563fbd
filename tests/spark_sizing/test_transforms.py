"""Transforms on small hand-made frames; expected rows are written by hand, not computed."""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from spark_sizing import transforms, validation
from spark_sizing.schema import ALL_COLUMNS

HEADER = ["topic", "period_start", "produce_mb_s", "consumer_groups", "retention_hours"]


def raw(
    spark: SparkSession, rows: list[tuple[str | None, ...]], header: list[str] = HEADER
) -> DataFrame:
    return spark.createDataFrame(rows, schema=", ".join(f"{h} string" for h in header))


def reasons(
    spark: SparkSession, rows: list[tuple[str | None, ...]], header: list[str] = HEADER
) -> list[str | None]:
    validated = validation.validate(raw(spark, rows, header))
    return [r[validation.REASON] for r in validated.select(validation.REASON).collect()]


def test_good_row_has_no_reason_and_typed_values(spark: SparkSession) -> None:
    validated = validation.validate(raw(spark, [("orders", "2026-01-01", "1.5", "2", "24")]))
    accepted = validation.accepted_rows(validated).select(
        "topic",
        "period_start",
        "produce_mb_s",
        "consumer_groups",
        "retention_hours",
        "replication_factor",
    )
    expected = spark.createDataFrame(
        [("orders", datetime(2026, 1, 1), 1.5, 2, 24.0, None)],
        "topic string, period_start timestamp, produce_mb_s double, consumer_groups int, "
        "retention_hours double, replication_factor int",
    )
    assertDataFrameEqual(accepted, expected)


def test_every_bad_value_gets_a_reason_naming_its_column(spark: SparkSession) -> None:
    got = reasons(
        spark,
        [
            ("", "2026-01-01", "1", "1", "24"),
            ("a", "not-a-date", "1", "1", "24"),
            ("a", "2026-01-01", "-3", "1", "24"),
            ("a", "2026-01-01", "NaN", "1", "24"),
            ("a", "2026-01-01", "fast", "1", "24"),
            ("a", "2026-01-01", "1", "-1", "24"),
            ("a", "2026-01-01", "1", "1", "0"),
            ("a", "2026-01-01", None, "1", "24"),
        ],
    )
    assert got == [
        "topic: missing or empty",
        "period_start: not a date or timestamp: 'not-a-date'",
        "produce_mb_s: must be ≥ 0, got -3",
        "produce_mb_s: not a number: 'NaN'",
        "produce_mb_s: not a number: 'fast'",
        "consumer_groups: must be ≥ 0, got -1",
        "retention_hours: must be > 0, got 0",
        "produce_mb_s: missing",
    ]


def test_topic_names_follow_kafkas_rule(spark: SparkSession) -> None:
    names = ["bad topic!", "x" * 300, ".", "..", "ok.name_1-2", " padded ", "a" * 249, "ünï"]
    got = reasons(spark, [(name, "2026-01-01", "1", "1", "24") for name in names])
    kafka_rule = "topic: must be only letters, digits, '.', '_' and '-' (Kafka's rule), got "
    assert got == [
        kafka_rule + "'bad topic!'",
        "topic: must be at most 249 characters, got 300",
        "topic: Kafka refuses the name '.'",
        "topic: Kafka refuses the name '..'",
        None,
        None,
        None,
        kafka_rule + "'ünï'",
    ]


def test_values_past_the_contracts_bounds_are_rejected(spark: SparkSession) -> None:
    header = [*HEADER, "produce_mb_s_peak", "replication_factor"]
    got = reasons(
        spark,
        [
            ("a", "2026-01-01", "1e308", "1", "24", None, None),
            ("a", "2026-01-01", "1000000", "1", "24", "1000000", "32767"),
            ("a", "2026-01-01", "1", "1", "24", "2000000", None),
            ("a", "2026-01-01", "1", "1", "876601", None, "32768"),
            ("a", "9999-01-01", "1", "1", "24", None, None),
            ("a", "1969-12-31T23:59:59", "1", "1", "24", None, None),
            ("a", "1970-01-01", "1", "1", "876600", None, None),
            ("a", "2199-12-31T23:59:59", "1", "1", "24", None, None),
        ],
        header,
    )
    assert got == [
        "produce_mb_s: must be ≤ 1000000 (1 TB/s), got 1e308",
        None,
        "produce_mb_s_peak: must be ≤ 1000000 (1 TB/s), got 2000000",
        "retention_hours: must be ≤ 876600 (a century; give it for a topic kept forever), got "
        "876601; replication_factor: must be ≤ 32767 (the most Kafka can create), got 32768",
        "period_start: must be in the years 1970 to 2199, got 9999-01-01",
        "period_start: must be in the years 1970 to 2199, got 1969-12-31T23:59:59",
        None,
        None,
    ]


def test_optional_columns_are_checked_when_present(spark: SparkSession) -> None:
    header = [
        *HEADER,
        "replication_factor",
        "min_insync_replicas",
        "partitions",
        "compression_ratio",
    ]
    got = reasons(
        spark,
        [
            ("a", "2026-01-01", "1", "1", "24", "0", None, None, None),
            ("a", "2026-01-01", "1", "1", "24", "3", "3", None, None),
            ("a", "2026-01-01", "1", "1", "24", "3", "4", None, None),
            ("a", "2026-01-01", "1", "1", "24", None, None, "2.5", "1.5"),
        ],
        header,
    )
    assert got == [
        "replication_factor: must be ≥ 1, got 0",
        None,
        "min_insync_replicas: must be between 1 and replication_factor, got 4",
        "partitions: not an integer: '2.5'; compression_ratio: must be in (0, 1], got 1.5",
    ]


def test_typed_columns_are_checked_without_text_casts(spark: SparkSession) -> None:
    # Parquet delivers numbers as numbers: null is "missing", NaN is "not a number".
    typed = spark.createDataFrame(
        [
            ("a", datetime(2026, 1, 1), 1.5, 2, 24.0),
            ("a", datetime(2026, 1, 2), None, 2, 24.0),
            ("a", datetime(2026, 1, 3), float("nan"), 2, 24.0),
            ("a", None, 1.0, 3_000_000_000, -1.0),
        ],
        "topic string, period_start timestamp, produce_mb_s double, consumer_groups long, "
        "retention_hours double",
    )
    got = [r[validation.REASON] for r in validation.validate(typed).collect()]
    assert got == [
        None,
        "produce_mb_s: missing",
        "produce_mb_s: not a number: 'NaN'",
        "period_start: missing; consumer_groups: not an integer: '3000000000'; "
        "retention_hours: must be > 0, got -1.0",
    ]


def test_rejected_rows_keep_their_original_text(spark: SparkSession) -> None:
    validated = validation.validate(raw(spark, [("a", "2026-01-01", "oops", "1", "24")]))
    rejected = validation.rejected_rows(validated, HEADER)
    expected = spark.createDataFrame(
        [("a", "2026-01-01", "oops", "1", "24", "produce_mb_s: not a number: 'oops'")],
        ", ".join(f"{c} string" for c in [*HEADER, validation.REASON]),
    )
    assertDataFrameEqual(rejected, expected)


def marked(spark: SparkSession, rows: list[tuple[str | None, ...]]) -> DataFrame:
    return transforms.mark_duplicates(
        validation.accepted_rows(validation.validate(raw(spark, rows)))
    )


def test_duplicates_keep_the_highest_throughput_and_are_quarantined(spark: SparkSession) -> None:
    rows = marked(
        spark,
        [
            ("a", "2026-01-01", "1.0", "1", "24"),
            ("a", "2026-01-01", "3.0", "1", "24"),
            ("a", "2026-01-02", "2.0", "1", "24"),
            ("b", "2026-01-01", "1.0", "1", "24"),  # same period, other topic: not a copy
        ],
    )
    assertDataFrameEqual(
        transforms.kept_rows(rows).select("topic", "period_start", "produce_mb_s"),
        spark.createDataFrame(
            [
                ("a", datetime(2026, 1, 1), 3.0),
                ("a", datetime(2026, 1, 2), 2.0),
                ("b", datetime(2026, 1, 1), 1.0),
            ],
            "topic string, period_start timestamp, produce_mb_s double",
        ),
    )
    assertDataFrameEqual(
        transforms.duplicate_rows(rows).select("produce_mb_s", validation.REASON),
        spark.createDataFrame(
            [(1.0, transforms.DUPLICATE_REASON)], "produce_mb_s double, reason string"
        ),
    )


def test_equal_throughput_copies_are_ranked_by_peak_then_retention(spark: SparkSession) -> None:
    header = [*HEADER, "produce_mb_s_peak", "replication_factor"]
    accepted = validation.accepted_rows(
        validation.validate(
            raw(
                spark,
                [
                    ("a", "2026-01-01", "2", "1", "24", "4", "2"),
                    ("a", "2026-01-01", "2", "1", "24", "5", "3"),  # higher peak wins
                    ("a", "2026-01-01", "2", "1", "48", "4", "1"),
                    ("a", "2026-01-02", "2", "1", "24", "4", "2"),
                    ("a", "2026-01-02", "2", "1", "48", "4", "1"),  # same peak, longer retention
                ],
                header,
            )
        )
    )
    kept = transforms.kept_rows(transforms.mark_duplicates(accepted))
    assertDataFrameEqual(
        kept.select("produce_mb_s_peak", "retention_hours", "replication_factor"),
        spark.createDataFrame(
            [(5.0, 24.0, 3), (4.0, 48.0, 1)],
            "produce_mb_s_peak double, retention_hours double, replication_factor int",
        ),
    )


def test_identical_copies_keep_one_and_count_the_rest(spark: SparkSession) -> None:
    row = ("a", "2026-01-01", "2.0", "1", "24")
    rows = marked(spark, [row, row, row])
    pieces = transforms.topic_month_pieces(transforms.with_defaults(rows, 2.0))
    assert transforms.row_counts(pieces) == (1, 2)
    accepted = validation.accepted_rows(validation.validate(raw(spark, [row])))
    assert transforms.kept_rows(rows).columns == accepted.columns
    assertDataFrameEqual(
        transforms.duplicate_rows(rows).select("topic", "produce_mb_s"),
        spark.createDataFrame([("a", 2.0), ("a", 2.0)], "topic string, produce_mb_s double"),
    )


def test_defaults_fill_rf_min_isr_peak_and_compression(spark: SparkSession) -> None:
    df = validation.accepted_rows(
        validation.validate(raw(spark, [("a", "2026-01-01", "2", "1", "24")]))
    )
    filled = transforms.with_defaults(df, peak_factor=2.5).select(
        "replication_factor", "min_insync_replicas", "produce_mb_s_peak", "compression_ratio"
    )
    assertDataFrameEqual(
        filled,
        spark.createDataFrame(
            [(3, 2, 5.0, 1.0)],
            "replication_factor int, min_insync_replicas int, produce_mb_s_peak double, "
            "compression_ratio double",
        ),
    )


def pieces(spark: SparkSession, rows: list[tuple[str | None, ...]]) -> DataFrame:
    return transforms.topic_month_pieces(transforms.with_defaults(marked(spark, rows), 2.0))


def test_topic_demand_extrapolates_linear_growth(spark: SparkSession) -> None:
    # 10, 12, 14 MB/s exactly one and two mean months (30 d 10:29:06) apart: slope is 2 MB/s per
    # month. The recent window (31 days back from the last period) holds the last two: average
    # 13. Horizon 6 months: (13 + 2·6) / 13 = 25/13. Peaks 2× average: recent peak 28 → 28·25/13.
    rows = [
        ("a", "2026-01-01T00:00:00", "10", "3", "24"),
        ("a", "2026-01-31T10:29:06", "12", "3", "24"),
        ("a", "2026-03-02T20:58:12", "14", "3", "24"),
    ]
    demand = transforms.topic_demand(pieces(spark, rows), horizon_months=6).select(
        "topic",
        F.round("growth_factor", 6).alias("growth"),
        F.round("avg_ingress_mb_s", 6).alias("avg"),
        F.round("peak_ingress_mb_s", 6).alias("peak"),
        "consumer_groups",
    )
    assertDataFrameEqual(
        demand,
        spark.createDataFrame(
            [("a", round(25 / 13, 6), 25.0, round(28 * 25 / 13, 6), 3)],
            "topic string, growth double, avg double, peak double, consumer_groups int",
        ),
    )


def test_dropped_copies_do_not_count_in_demand(spark: SparkSession) -> None:
    header = [*HEADER, "produce_mb_s_peak"]
    rows = [
        ("a", "2026-01-01", "10", "3", "24", "20"),
        ("a", "2026-01-01", "9", "5", "48", "90"),  # a lower copy: its peak, fan-out, retention go
    ]
    accepted = validation.accepted_rows(validation.validate(raw(spark, rows, header)))
    kept = transforms.with_defaults(transforms.mark_duplicates(accepted), 2.0)
    row = transforms.topic_demand(transforms.topic_month_pieces(kept), horizon_months=12).first()
    assert row is not None
    assert (row["peak_ingress_mb_s"], row["consumer_groups"], row["retention_hours"]) == (
        20.0,
        3,
        24.0,
    )


def test_recent_rows_are_the_last_31_days(spark: SparkSession) -> None:
    # Back from Mar 1st, Jan 29th 00:00 is exactly 31 days and recent, a second earlier is not:
    # the recent average is that of 12, 20 and 16. The older row's peak (2x 100) still counts.
    rows = [
        ("a", "2026-01-28T23:59:59", "100", "1", "24"),
        ("a", "2026-01-29T00:00:00", "12", "1", "24"),
        ("a", "2026-02-01T00:00:00", "20", "1", "24"),
        ("a", "2026-03-01T00:00:00", "16", "1", "24"),
    ]
    row = transforms.topic_demand(pieces(spark, rows), horizon_months=0).first()
    assert row is not None
    assert (row["avg_ingress_mb_s"], row["peak_ingress_mb_s"]) == (16.0, 200.0)


def test_a_single_period_topic_does_not_grow(spark: SparkSession) -> None:
    row = transforms.topic_demand(
        pieces(spark, [("b", "2026-01-01", "4", "0", "1")]), horizon_months=12
    ).first()
    assert row is not None
    assert (row["growth_factor"], row["peak_ingress_mb_s"]) == (1.0, 8.0)


def test_monthly_totals_sum_topics_per_month(spark: SparkSession) -> None:
    rows = [
        ("a", "2026-01-01", "1", "2", "24"),
        ("a", "2026-01-15", "3", "2", "24"),
        ("b", "2026-01-10", "5", "1", "24"),
    ]
    assertDataFrameEqual(
        transforms.monthly_totals(pieces(spark, rows)),
        spark.createDataFrame(
            # avg: a 2 + b 5; peak: a 6 + b 10; egress: a 6·2 + b 10·1.
            [(datetime(2026, 1, 1), 7.0, 16.0, 22.0)],
            "month timestamp, avg_ingress_mb_s double, peak_ingress_mb_s double, "
            "peak_egress_mb_s double",
        ),
    )


def test_schema_columns_cover_the_contract() -> None:
    assert ALL_COLUMNS[:5] == tuple(HEADER)
