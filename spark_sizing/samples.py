"""Seeded synthetic projections: realistic growth, weekly and daily seasonality.

Each topic gets a base rate (log-normal: a few hot topics, a long tail), a monthly growth rate,
a fan-out, a retention and, for some, a pinned partition count or a non-default RF. Hourly rows
carry the daily cycle in `produce_mb_s`; daily and monthly rows carry it in `produce_mb_s_peak`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

from spark_sizing.file_formats import EXTENSIONS_TEXT, format_of

STEP_HOURS = {"hourly": 1, "daily": 24, "monthly": 24 * 30}
RETENTION_CHOICES_H = np.array([6, 24, 72, 168])
HOURS_PER_MONTH = 24 * 30


def _topic_traits(topics: int, rng: np.random.Generator) -> pd.DataFrame:
    n = np.arange(topics)
    rf = np.where(rng.random(topics) < 0.1, 2, 3)
    pinned = np.where(rng.random(topics) < 0.15, rng.choice([12, 24, 48], topics), 0)
    return pd.DataFrame(
        {
            "topic": [
                f"orders.events.{i:05d}" if i % 3 == 0 else f"svc{i % 17}.stream.{i:05d}" for i in n
            ],
            "base": rng.lognormal(mean=0.0, sigma=1.2, size=topics),
            "growth": rng.uniform(0.0, 0.06, size=topics),  # per month
            "consumer_groups": rng.integers(1, 6, size=topics),
            "retention_hours": rng.choice(RETENTION_CHOICES_H, size=topics),
            "replication_factor": rf,
            "partitions": pinned,
            "avg_message_bytes": rng.choice([200, 512, 1024, 4096], size=topics),
        }
    )


def generate(
    topics: int,
    months: int,
    granularity: str = "daily",
    seed: int = 7,
    start: datetime = datetime(2026, 1, 1),
) -> Iterator[pd.DataFrame]:
    """Chunks of rows (one chunk per period) so 50M-row datasets never sit in memory at once."""
    rng = np.random.default_rng(seed)
    traits = _topic_traits(topics, rng)
    step = STEP_HOURS[granularity]
    periods = max(1, months * HOURS_PER_MONTH // step)
    for p in range(periods):
        hour = p * step
        when = start + timedelta(hours=hour)
        trend = (1 + traits["growth"].to_numpy()) ** (hour / HOURS_PER_MONTH)
        weekly = 1.0 - 0.15 * (when.weekday() >= 5)
        daily = 1.0 + 0.5 * np.sin(2 * np.pi * ((when.hour - 6) % 24) / 24) if step == 1 else 1.0
        noise = rng.normal(1.0, 0.05, size=topics).clip(0.7, 1.3)
        avg = traits["base"].to_numpy() * trend * weekly * daily * noise
        peak_factor = 1.2 if step == 1 else 1.8  # hourly rows already carry the daily cycle
        yield pd.DataFrame(
            {
                "topic": traits["topic"],
                "period_start": when.isoformat(),
                "produce_mb_s": avg.round(4),
                "produce_mb_s_peak": (avg * peak_factor).round(4),
                "consumer_groups": traits["consumer_groups"],
                "retention_hours": traits["retention_hours"],
                "replication_factor": traits["replication_factor"],
                "partitions": traits["partitions"].replace(0, pd.NA).astype("Int64"),
                "avg_message_bytes": traits["avg_message_bytes"],
            }
        )


class SampleError(ValueError):
    """An --out or --format that cannot be written; the message names the option and the fix."""


def target_format(out: Path, requested: str | None, force: bool) -> str:
    """The format to write `out` in: its extension's (the one `size` reads it by), which
    --format, when given, must agree with. An existing file is replaced only with --force."""
    if out.is_dir():
        raise SampleError(
            f"--out {out}: is a directory; name a file in it, e.g. {out / 'projections.csv'}"
        )
    by_extension = format_of(out)
    if by_extension is None:
        wanted = f"{out.stem}.{requested}" if requested else f"{out.stem}.csv"
        raise SampleError(
            f"--out {out}: size reads {EXTENSIONS_TEXT} files and knows the format by the "
            f"extension; name the file like {wanted}"
        )
    if requested is not None and requested != by_extension:
        raise SampleError(
            f"--out {out}: the extension says {by_extension} but --format is {requested}; "
            f"name the file {out.stem}.{requested}, or drop --format"
        )
    if out.exists() and not force:
        raise SampleError(
            f"--out {out}: already exists; choose another path, or pass --force to replace it"
        )
    return by_extension


def write(
    out: Path, topics: int, months: int, granularity: str, seed: int, file_format: str
) -> int:
    """Write the dataset as one csv/jsonl/parquet file; returns the row count.

    The rows go to a hidden file beside `out` that is renamed to `out` once complete: a rename
    within one directory is atomic, so a reader never sees half a file, and a failure (a bad
    seed, a full disk) leaves no file behind and any earlier `out` as it was."""
    # Named by this process: the writers create it with the usual permissions (a mkstemp file
    # would stay readable by its owner only).
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        rows = _write_rows(partial, generate(topics, months, granularity, seed), file_format)
        partial.replace(out)
    except OSError as err:
        raise SampleError(
            f"--out {out}: cannot write it ({err.strerror or err}); choose a writable path"
        ) from None
    finally:
        partial.unlink(missing_ok=True)
    return rows


def _write_rows(out: Path, chunks: Iterator[pd.DataFrame], file_format: str) -> int:
    if file_format == "parquet":
        return _write_parquet(out, chunks)
    rows = 0
    with out.open("w", encoding="utf-8", newline="") as handle:
        for i, chunk in enumerate(chunks):
            if file_format == "csv":
                chunk.to_csv(handle, index=False, header=i == 0)
            else:
                chunk.to_json(handle, orient="records", lines=True)
            rows += len(chunk)
    return rows


PARQUET_ROW_GROUP = 1_000_000


def _write_parquet(out: Path, chunks: Iterator[pd.DataFrame]) -> int:
    """Row groups of about a million rows, as real exports have: a row group per period (a few
    hundred rows each) would make every reader's per-group overhead the benchmark."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows, pending, pending_rows = 0, [], 0
    writer: pq.ParquetWriter | None = None
    for chunk in chunks:
        # Typed as exports from a warehouse are: period_start a UTC timestamp, not text.
        typed = chunk.assign(period_start=pd.to_datetime(chunk["period_start"], utc=True))
        table = pa.Table.from_pandas(typed, preserve_index=False)
        # Microseconds: Spark reads no nanosecond timestamps from Parquet.
        writer = writer or pq.ParquetWriter(out, table.schema, coerce_timestamps="us")
        pending.append(table)
        pending_rows += len(chunk)
        rows += len(chunk)
        if pending_rows >= PARQUET_ROW_GROUP:
            writer.write_table(pa.concat_tables(pending))
            pending, pending_rows = [], 0
    if writer is not None:
        if pending:
            writer.write_table(pa.concat_tables(pending))
        writer.close()
    return rows
