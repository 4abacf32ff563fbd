"""The input contract: projected throughput, one row per topic per period.

docs/input-schema.json is the machine-readable twin of this module; a test keeps them in step.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.types import StringType, StructField, StructType


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # "string" | "timestamp" | "number" | "integer"
    required: bool
    description: str


# Kafka's rule for a topic name (org.apache.kafka.common.internals.Topic): 1 to 249 of these
# characters, and neither "." nor "..". A name Kafka refuses cannot be sized for.
TOPIC_NAME_MAX_LENGTH = 249
TOPIC_NAME_CHARACTERS = "a-zA-Z0-9._-"
TOPIC_NAME_RESERVED = (".", "..")
# Upper bounds that catch a unit slip or a typo before it sizes a cluster, and keep every
# product the model forms finite (with spark_sizing/model_inputs.py's MAX_DEMAND_MB_S):
# - 1 TB/s for one topic's produce rate, far past any real topic;
MAX_PRODUCE_MB_S = 1_000_000
# - a century of retention, which sizes a topic kept forever (retention.ms -1) too; a
#   retention given in ms or seconds by mistake lands above it;
MAX_RETENTION_HOURS = 876_600
# - the replication factor Kafka can create: CreateTopics carries it as a 16-bit integer.
MAX_REPLICATION_FACTOR = 32_767
# Periods lie from the Unix epoch (Kafka's timestamps count from it) to before 2200: a year
# like 9999 is a typo or a placeholder, and the report's charts end past the last period.
PERIOD_YEARS = (1970, 2199)

COLUMNS: tuple[Column, ...] = (
    Column(
        "topic",
        "string",
        True,
        f"Kafka topic name: 1–{TOPIC_NAME_MAX_LENGTH} characters of {TOPIC_NAME_CHARACTERS}, "
        "not '.' or '..' (spaces around it are trimmed)",
    ),
    Column(
        "period_start",
        "timestamp",
        True,
        "start of the period (date or timestamp, ISO 8601), in the years "
        f"{PERIOD_YEARS[0]}–{PERIOD_YEARS[1]}",
    ),
    Column(
        "produce_mb_s",
        "number",
        True,
        f"average produce throughput in the period, MB/s (10^6 B), 0..{MAX_PRODUCE_MB_S}",
    ),
    Column("consumer_groups", "integer", True, "consumer groups reading the topic (fan-out), ≥ 0"),
    Column(
        "retention_hours",
        "number",
        True,
        f"retention.ms of the topic in hours, > 0 and ≤ {MAX_RETENTION_HOURS} (a century; "
        "use it for a topic kept forever)",
    ),
    Column(
        "produce_mb_s_peak",
        "number",
        False,
        f"peak produce MB/s in the period, ≥ average, ≤ {MAX_PRODUCE_MB_S}",
    ),
    Column("avg_message_bytes", "number", False, "average record size in bytes, > 0"),
    Column(
        "replication_factor",
        "integer",
        False,
        f"replication factor, 1..{MAX_REPLICATION_FACTOR} (default 3)",
    ),
    Column("min_insync_replicas", "integer", False, "min.insync.replicas, 1..RF (default RF−1)"),
    Column("partitions", "integer", False, "pinned partition count that sizing must keep, ≥ 1"),
    Column("compression_ratio", "number", False, "bytes stored per byte produced, (0, 1]"),
    Column(
        "consumers_per_group",
        "integer",
        False,
        "most consumers one group runs in parallel on the topic; partitions ≥ this, ≥ 1",
    ),
)

REQUIRED = tuple(c.name for c in COLUMNS if c.required)
OPTIONAL = tuple(c.name for c in COLUMNS if not c.required)
ALL_COLUMNS = tuple(c.name for c in COLUMNS)
DEFAULT_REPLICATION_FACTOR = 3

# CSV is read with every column as text so that a bad value is quarantined with a reason
# instead of becoming a silent null; malformed lines land in this column.
CORRUPT_RECORD = "_corrupt_record"


def raw_csv_schema(header: list[str]) -> StructType:
    """All-string schema in the file's own column order, plus the corrupt-record column."""
    fields = [StructField(name, StringType(), True) for name in header]
    return StructType([*fields, StructField(CORRUPT_RECORD, StringType(), True)])


def json_schema() -> dict[str, object]:
    """JSON Schema (draft 2020-12) of one input row; written to docs/input-schema.json."""
    types: dict[str, dict[str, object]] = {
        "string": {"type": "string", "minLength": 1},
        "timestamp": {"type": "string", "format": "date-time"},
        "number": {"type": "number"},
        "integer": {"type": "integer"},
    }
    properties = {c.name: {**types[c.kind], "description": c.description} for c in COLUMNS}
    properties["topic"].update(
        {
            "maxLength": TOPIC_NAME_MAX_LENGTH,
            "pattern": f"^[{TOPIC_NAME_CHARACTERS}]+$",
            "not": {"enum": list(TOPIC_NAME_RESERVED)},
        }
    )
    properties["produce_mb_s"].update({"minimum": 0, "maximum": MAX_PRODUCE_MB_S})
    properties["consumer_groups"]["minimum"] = 0
    properties["retention_hours"].update({"exclusiveMinimum": 0, "maximum": MAX_RETENTION_HOURS})
    properties["produce_mb_s_peak"].update({"minimum": 0, "maximum": MAX_PRODUCE_MB_S})
    properties["avg_message_bytes"]["exclusiveMinimum"] = 0
    properties["replication_factor"].update({"minimum": 1, "maximum": MAX_REPLICATION_FACTOR})
    properties["min_insync_replicas"]["minimum"] = 1
    properties["partitions"]["minimum"] = 1
    properties["compression_ratio"].update({"exclusiveMinimum": 0, "maximum": 1})
    properties["consumers_per_group"]["minimum"] = 1
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://kafkastack.dev/schemas/projection-row.json",
        "title": "kafkastack projected throughput row",
        "type": "object",
        "required": list(REQUIRED),
        "properties": properties,
        "additionalProperties": False,
    }
