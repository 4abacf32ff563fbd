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


COLUMNS: tuple[Column, ...] = (
    Column("topic", "string", True, "Kafka topic name, non-empty"),
    Column("period_start", "timestamp", True, "start of the period (date or timestamp, ISO 8601)"),
    Column(
        "produce_mb_s", "number", True, "average produce throughput in the period, MB/s (10^6 B)"
    ),
    Column("consumer_groups", "integer", True, "consumer groups reading the topic (fan-out), ≥ 0"),
    Column("retention_hours", "number", True, "retention.ms of the topic in hours, > 0"),
    Column("produce_mb_s_peak", "number", False, "peak produce MB/s in the period, ≥ average"),
    Column("avg_message_bytes", "number", False, "average record size in bytes, > 0"),
    Column("replication_factor", "integer", False, "replication factor, ≥ 1 (default 3)"),
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
    properties["produce_mb_s"]["minimum"] = 0
    properties["consumer_groups"]["minimum"] = 0
    properties["retention_hours"]["exclusiveMinimum"] = 0
    properties["produce_mb_s_peak"]["minimum"] = 0
    properties["avg_message_bytes"]["exclusiveMinimum"] = 0
    properties["replication_factor"]["minimum"] = 1
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
