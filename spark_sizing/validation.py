"""Row validation: typed values and a reason for every row that breaks the input contract.

Pure DataFrame → DataFrame functions (no I/O). A good row costs a few comparisons: the reason text
is only built for rows that fail, and columns that arrive already typed (Parquet) are never turned
into text to be checked.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from spark_sizing.schema import (
    CORRUPT_RECORD,
    DEFAULT_REPLICATION_FACTOR,
    MAX_PRODUCE_MB_S,
    MAX_REPLICATION_FACTOR,
    MAX_RETENTION_HOURS,
    OPTIONAL,
    PERIOD_YEARS,
    REQUIRED,
    TOPIC_NAME_CHARACTERS,
    TOPIC_NAME_MAX_LENGTH,
    TOPIC_NAME_RESERVED,
)

REASON = "reason"
TYPED_PREFIX = "t_"
INFINITY = float("inf")

# Spark type each contract column is checked as.
SPARK_TYPES = {
    "period_start": "timestamp",
    "produce_mb_s": "double",
    "consumer_groups": "int",
    "retention_hours": "double",
    "produce_mb_s_peak": "double",
    "avg_message_bytes": "double",
    "replication_factor": "int",
    "min_insync_replicas": "int",
    "partitions": "int",
    "compression_ratio": "double",
    "consumers_per_group": "int",
}


# How a reason names the kind of value a column wants, by its Spark type.
UNPARSED_KIND = {"timestamp": "a date or timestamp", "double": "a number", "int": "an integer"}


def with_optional_columns(raw: DataFrame) -> DataFrame:
    """Absent optional columns become null text columns so later steps see one shape."""
    absent = [name for name in (*OPTIONAL, CORRUPT_RECORD) if name not in raw.columns]
    return raw.withColumns({name: F.lit(None).cast("string") for name in absent})


@dataclass(frozen=True)
class _Field:
    """One input column: its raw value, its typed value and whether it arrived as text."""

    name: str
    typed: Column
    is_text: bool

    @property
    def raw(self) -> Column:
        return F.col(self.name)

    def blank(self) -> Column:
        # Trimming is for text; a typed column is blank only when null (casting numbers to text
        # for this check cost more than the rest of validation together).
        if self.is_text:
            return self.raw.isNull() | (F.trim(self.raw) == "")
        return self.raw.isNull()

    def quoted(self) -> Column:
        return F.concat(F.lit("'"), self.raw.cast("string"), F.lit("'"))


def _fields(df: DataFrame) -> dict[str, _Field]:
    text = {f.name for f in df.schema.fields if isinstance(f.dataType, StringType)}
    return {
        name: _Field(
            name,
            # try_cast yields null instead of failing the job under Spark's ANSI mode.
            F.expr(f"try_cast(`{name}` as {to})"),
            name in text,
        )
        for name, to in SPARK_TYPES.items()
    }


@dataclass(frozen=True)
class _Check:
    """A value rule: `problem` is the reason text, or null when the value is fine."""

    ok: Column
    problem: Column


Rule = tuple[Column, str]  # holds over the typed value; how the reason words it


def _value_check(field: _Field, rules: list[Rule]) -> _Check:
    """Missing (if required), unparseable, or breaking one of `rules` (the first one broken is
    the reason)."""
    typed = field.typed
    unparsed, kind = typed.isNull(), UNPARSED_KIND[SPARK_TYPES[field.name]]
    if SPARK_TYPES[field.name] == "double":
        unparsed = unparsed | F.isnan(typed) | (F.abs(typed) == F.lit(INFINITY))
    required = field.name in REQUIRED
    blank = field.blank()
    missing = F.lit(f"{field.name}: missing") if required else F.lit(None)
    problem = F.when(blank, missing).when(
        unparsed, F.concat(F.lit(f"{field.name}: not {kind}: "), field.quoted())
    )
    rules_hold = F.lit(True)
    for holds, rule in rules:
        broken = F.concat(F.lit(f"{field.name}: must be {rule}, got "), field.raw.cast("string"))
        problem = problem.when(~holds, broken)
        rules_hold = rules_hold & holds
    fine = ~unparsed & rules_hold
    return _Check(ok=(fine if required else blank | fine), problem=problem)


def _value_rules(t: dict[str, Column]) -> dict[str, list[Rule]]:
    """Each typed column's rules (spark_sizing/schema.py gives the bounds and why)."""
    rf_or_default = F.coalesce(t["replication_factor"], F.lit(DEFAULT_REPLICATION_FACTOR))
    isr = t["min_insync_replicas"]
    first_year, last_year = PERIOD_YEARS
    at_most_max_mb_s = f"≤ {MAX_PRODUCE_MB_S} (1 TB/s)"
    return {
        "period_start": [
            (
                F.year(t["period_start"]).between(first_year, last_year),
                f"in the years {first_year} to {last_year}",
            )
        ],
        "produce_mb_s": [
            (t["produce_mb_s"] >= 0, "≥ 0"),
            (t["produce_mb_s"] <= MAX_PRODUCE_MB_S, at_most_max_mb_s),
        ],
        "consumer_groups": [(t["consumer_groups"] >= 0, "≥ 0")],
        "retention_hours": [
            (t["retention_hours"] > 0, "> 0"),
            (
                t["retention_hours"] <= MAX_RETENTION_HOURS,
                f"≤ {MAX_RETENTION_HOURS} (a century; give it for a topic kept forever)",
            ),
        ],
        "produce_mb_s_peak": [
            (
                t["produce_mb_s_peak"] >= F.coalesce(t["produce_mb_s"], F.lit(0.0)),
                "≥ produce_mb_s",
            ),
            (t["produce_mb_s_peak"] <= MAX_PRODUCE_MB_S, at_most_max_mb_s),
        ],
        "avg_message_bytes": [(t["avg_message_bytes"] > 0, "> 0")],
        "replication_factor": [
            (t["replication_factor"] >= 1, "≥ 1"),
            (
                t["replication_factor"] <= MAX_REPLICATION_FACTOR,
                f"≤ {MAX_REPLICATION_FACTOR} (the most Kafka can create)",
            ),
        ],
        "min_insync_replicas": [
            ((isr >= 1) & (isr <= rf_or_default), "between 1 and replication_factor")
        ],
        "partitions": [(t["partitions"] >= 1, "≥ 1")],
        "compression_ratio": [
            ((t["compression_ratio"] > 0) & (t["compression_ratio"] <= 1), "in (0, 1]")
        ],
        "consumers_per_group": [(t["consumers_per_group"] >= 1, "≥ 1")],
    }


def _topic_check() -> _Check:
    """Kafka's rule for a topic name, on the name as sized: spaces around it trimmed."""
    name = F.trim(F.col("topic").cast("string"))
    blank = F.col("topic").isNull() | (name == "")
    too_long = F.length(name) > TOPIC_NAME_MAX_LENGTH
    bad_characters = ~name.rlike(f"^[{TOPIC_NAME_CHARACTERS}]+$")
    reserved = name.isin(*TOPIC_NAME_RESERVED)
    quoted = F.concat(F.lit("'"), name, F.lit("'"))
    problem = (
        F.when(blank, F.lit("topic: missing or empty"))
        .when(
            too_long,
            F.concat(
                F.lit(f"topic: must be at most {TOPIC_NAME_MAX_LENGTH} characters, got "),
                F.length(name).cast("string"),
            ),
        )
        .when(
            bad_characters,
            F.concat(
                F.lit("topic: must be only letters, digits, '.', '_' and '-' (Kafka's rule), got "),
                quoted,
            ),
        )
        .when(reserved, F.concat(F.lit("topic: Kafka refuses the name "), quoted))
    )
    return _Check(ok=~(blank | too_long | bad_characters | reserved), problem=problem)


def _checks(df: DataFrame) -> list[_Check]:
    f = _fields(df)
    rules = _value_rules({name: field.typed for name, field in f.items()})
    return [_topic_check(), *(_value_check(f[name], rules[name]) for name in rules)]


def malformed_reason(csv_fields: int | None) -> Column:
    """Why a line the reader could not split into the row's fields is refused, with its text.

    For CSV that is a field count other than the header's (or an unclosed quote, which makes the
    count meaningless); for JSON Lines a line that is not one JSON object."""
    line = F.col(CORRUPT_RECORD)
    if csv_fields is None:
        return F.concat(F.lit("not a JSON object: "), line)
    counted = F.concat(
        F.size(F.split(line, ",")).cast("string"),
        F.lit(f" fields where the header has {csv_fields}: "),
        line,
    )
    quoted = F.concat(F.lit(f"not the header's {csv_fields} fields (or an unclosed quote): "), line)
    return F.when(line.contains('"'), quoted).otherwise(counted)


def validate(raw: DataFrame, csv_fields: int | None = None) -> DataFrame:
    """Adds typed `t_*` columns and `reason` (null when the row is good) to every input row.

    `csv_fields` is the header's field count for CSV input (None for other formats): it words
    the reason of a line with another count."""
    df = with_optional_columns(raw)
    checks = _checks(df)
    all_ok = F.col(CORRUPT_RECORD).isNull()
    for check in checks:
        all_ok = all_ok & check.ok
    typed = [field.typed.alias(TYPED_PREFIX + name) for name, field in _fields(df).items()]
    # The reason text is assembled only for rows that fail a check. A null verdict would let a
    # row through unchecked, so it counts as a failure. A malformed line's fields are whatever
    # the reader could split, so its one reason is the line itself.
    failed = ~F.coalesce(all_ok, F.lit(False))
    reason = F.when(F.col(CORRUPT_RECORD).isNotNull(), malformed_reason(csv_fields)).when(
        failed, F.concat_ws("; ", *(c.problem for c in checks))
    )
    return df.select("*", *typed, reason.alias(REASON))


def input_columns(raw: DataFrame) -> list[str]:
    """The columns the input itself has, in its order (the reader's internal one left out)."""
    return [c for c in raw.columns if c != CORRUPT_RECORD]


def rejected_rows(validated: DataFrame, columns: list[str]) -> DataFrame:
    """Bad rows with the input's `columns` as read (text stays text) and the reason."""
    return validated.where(F.col(REASON).isNotNull()).select(
        *[F.col(n).cast("string").alias(n) for n in columns], REASON
    )


# The input's own columns, as read, packed in one struct: aliasing each text column next to its
# typed twin made Spark's constraint propagation blow up the driver's heap when planning.
AS_READ = "as_read"


def _typed_columns(validated: DataFrame) -> list[Column]:
    typed = [c for c in validated.columns if c.startswith(TYPED_PREFIX)]
    return [
        F.trim(F.col("topic").cast("string")).alias("topic"),
        *[F.col(c).alias(c[len(TYPED_PREFIX) :]) for c in typed],
    ]


def accepted_rows(validated: DataFrame) -> DataFrame:
    """Good rows with typed columns under their contract names."""
    return validated.where(F.col(REASON).isNull()).select(*_typed_columns(validated))


def accepted_rows_as_read(validated: DataFrame, columns: list[str]) -> DataFrame:
    """Good rows with typed columns (as `accepted_rows`) plus the input's `columns` as read in
    the `as_read` struct: a copy quarantined as a duplicate is written the way it was read."""
    as_read = F.struct(*[F.col(n).cast("string").alias(n) for n in columns]).alias(AS_READ)
    return validated.where(F.col(REASON).isNull()).select(*_typed_columns(validated), as_read)
