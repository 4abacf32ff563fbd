"""Reading projections: CSV, Parquet or JSON Lines from a file, directory, glob or s3:// prefix.

An `s3://` prefix is listed with boto3, then either downloaded to the driver or handed to Spark
as `s3a://` paths (`S3Read`): downloading needs nothing beyond boto3, s3a spares the driver's
disk and lets executors read in parallel.
"""

from __future__ import annotations

import csv
import difflib
import glob
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pyspark.sql import DataFrame, SparkSession

from spark_sizing import s3, s3a
from spark_sizing.file_formats import EXTENSIONS_TEXT, FORMATS, format_of
from spark_sizing.schema import ALL_COLUMNS, CORRUPT_RECORD, REQUIRED, raw_csv_schema


class InputError(RuntimeError):
    """Input that cannot be read at all; the message names the path or column and the fix."""


MIB = 1024 * 1024
S3ReadMode = Literal["auto", "download", "s3a"]
Reader = Literal["local", "download", "s3a"]


@dataclass(frozen=True)
class S3Read:
    """How an `s3://` input reaches Spark (`kafkastack size --s3-read`, `--s3a-threshold-mib`)."""

    mode: S3ReadMode = "auto"
    """download: boto3 to the driver; s3a: Spark reads S3 itself; auto: s3a above the threshold
    when the connector is loaded, else download."""
    threshold_bytes: int = 256 * MIB
    """auto uses s3a when the listed objects total more than this (default 256 MiB)."""


DEFAULT_S3_READ = S3Read()


@dataclass(frozen=True)
class InputFiles:
    paths: list[str]
    format: str
    reader: Reader = "local"
    # The listed objects behind s3a paths: a CSV header is fetched from the first by byte range.
    s3_objects: tuple[s3.S3Object, ...] = ()


def resolve(
    location: str, staging: Path, spark: SparkSession, s3_read: S3Read = DEFAULT_S3_READ
) -> InputFiles:
    """The input files: local paths, or for s3:// prefixes downloads into `staging` or s3a URLs."""
    if not s3.is_s3(location):
        return local_input(location)
    try:
        objects = sorted(s3.list_prefix(location), key=lambda o: o.key)
        # Checked before anything is fetched: a mixed prefix fails at once.
        file_format = _single_format(location, [o.url for o in objects])
        if use_s3a(s3_read, sum(o.size for o in objects), lambda: s3a.connector_loaded(spark)):
            s3a.configure(spark)
            return InputFiles([o.s3a_url for o in objects], file_format, "s3a", tuple(objects))
        local = [str(p) for p in s3.download(objects, staging)]
    except s3.S3Error as err:
        raise InputError(str(err)) from None
    return InputFiles(local, file_format, "download")


def local_input(location: str) -> InputFiles:
    """Local input files and their one format; needs no Spark, so a wrong path fails early."""
    files = sorted(_local_files(location))
    return InputFiles(paths=files, format=_single_format(location, files))


def use_s3a(policy: S3Read, total_bytes: int, connector_loaded: Callable[[], bool]) -> bool:
    """Whether to read through s3a; `connector_loaded` is asked only when it matters."""
    if policy.mode == "download":
        return False
    if policy.mode == "s3a":
        if not connector_loaded():
            raise InputError(
                "--s3-read s3a: Spark's s3a connector (hadoop-aws) is not on this session's "
                f"classpath; {s3a.missing_fix()}, or use --s3-read download"
            )
        return True
    return total_bytes > policy.threshold_bytes and connector_loaded()


def _local_files(location: str) -> list[str]:
    path = Path(location)
    if path.is_file():
        return [str(path)]
    if path.is_dir():
        files = [str(p) for p in path.rglob("*") if p.suffix.lower() in FORMATS and p.is_file()]
        if not files:
            raise InputError(f"--input {location}: directory has no {EXTENSIONS_TEXT} files")
        return files
    matches = [m for m in glob.glob(location, recursive=True) if Path(m).is_file()]
    if matches:
        return matches
    raise InputError(f"--input {location}: no such file, directory or glob match; check the path")


def _single_format(location: str, files: list[str]) -> str:
    kinds = {format_of(f) for f in files}
    if None in kinds:
        bad = next(f for f in files if format_of(f) is None)
        raise InputError(f"--input {location}: {bad} is not {EXTENSIONS_TEXT}")
    if len(kinds) > 1:
        raise InputError(
            f"--input {location}: mixes formats {sorted(k or '' for k in kinds)}; use one"
        )
    return kinds.pop() or "csv"


@dataclass(frozen=True)
class RawRows:
    """The rows as read, and how many fields a CSV line must have (None for other formats)."""

    frame: DataFrame
    csv_fields: int | None = None


def check_columns(columns: list[str], allow_unknown: bool, source: str) -> None:
    """Refuses a column named twice, a missing required column and, unless allowed, a column the
    contract does not know (a misspelt optional column would otherwise be ignored without a
    word). `source` names where the columns came from: the CSV file, or the --input location."""
    _refuse_repeated(columns, source)
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise InputError(
            f"--input {source}: missing required column(s) {', '.join(missing)}; "
            f"add them (see docs/input-schema.json). Columns found: {', '.join(columns)}"
        )
    unknown = [c for c in columns if c not in ALL_COLUMNS and c != CORRUPT_RECORD]
    if unknown and not allow_unknown:
        name = unknown[0]
        close = difflib.get_close_matches(name, ALL_COLUMNS, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        others = f" (and {', '.join(repr(u) for u in unknown[1:])})" if unknown[1:] else ""
        raise InputError(
            f"--input {source}: unknown column {name!r}{hint}{others}; rename it to one of "
            f"{', '.join(ALL_COLUMNS)}, or pass --allow-unknown-columns to ignore it"
        )


def _refuse_repeated(columns: list[str], source: str) -> None:
    # Spark resolves column names ignoring case (spark.sql.caseSensitive is off), so `Topic` and
    # `topic` are one column to it: it stops with COLUMN_ALREADY_EXISTS once the JVM is up, or
    # with an ambiguous reference halfway through the job.
    first_at: dict[str, int] = {}
    for at, name in enumerate(columns, start=1):
        earlier = first_at.setdefault(name.casefold(), at)
        if earlier != at:
            spelt = f"{columns[earlier - 1]!r} and {name!r}"
            raise InputError(
                f"--input {source}: column {name!r} appears twice ({spelt} are columns "
                f"{earlier} and {at}; names are compared ignoring case); keep one of them"
            )


def check_local_header(files: InputFiles, allow_unknown: bool) -> None:
    """A local CSV's columns are checked from its header before Spark starts."""
    if files.format == "csv" and files.reader == "local" and files.paths:
        check_columns(csv_header(files), allow_unknown, files.paths[0])


def read(spark: SparkSession, files: InputFiles, allow_unknown: bool = False) -> RawRows:
    """The raw rows, text-typed where the format allows; missing required columns and unknown
    ones (unless allowed) are refused."""
    try:
        df = _dataframe(spark, files)
    except InputError:
        raise
    except Exception as err:
        if files.reader != "s3a":
            raise
        raise InputError(
            f"--input {files.paths[0]}: Spark's s3a reader failed ({_root_cause(err)}); check the "
            "endpoint and region (shared with boto3) and the AWS credentials in Spark's "
            "environment, or use --s3-read download"
        ) from None
    check_columns(df.columns, allow_unknown, _described(files))
    if files.format != "csv":
        return RawRows(df)
    # A line whose field count differs from the header's is malformed, and Spark flags it only
    # when it splits every column: with pruning on, a line with extra fields passes when a column
    # goes unread (an allowed unknown one). The session setting is read when the scan runs.
    spark.conf.set("spark.sql.csv.parser.columnPruning.enabled", "false")
    return RawRows(df, csv_fields=len(df.columns) - 1)


def _described(files: InputFiles) -> str:
    """The input in a message: a CSV's columns are its first file's header; JSON Lines and
    Parquet columns are those of every file together."""
    if files.format == "csv" or len(files.paths) == 1:
        return files.paths[0]
    return f"{files.paths[0]} (and {len(files.paths) - 1} more files)"


def _root_cause(err: Exception) -> str:
    """One line for a Spark failure: the innermost Java cause names it (missing class, 403…)."""
    java = getattr(err, "java_exception", None)  # py4j's error for a failed JVM call
    while java is not None and java.getCause() is not None:
        java = java.getCause()
    lines = str(java.toString() if java is not None else err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def _dataframe(spark: SparkSession, files: InputFiles) -> DataFrame:
    if files.format == "csv":
        return _read_csv(spark, files)
    if files.format == "jsonl":
        return (
            spark.read.option("primitivesAsString", "true")
            .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
            .json(files.paths)
        )
    return spark.read.parquet(*files.paths)


def _read_csv(spark: SparkSession, files: InputFiles) -> DataFrame:
    return (
        spark.read.option("header", "true")
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
        .schema(raw_csv_schema(csv_header(files)))
        .csv(files.paths)
    )


def csv_header(files: InputFiles) -> list[str]:
    """The files' column names, with the spaces around each name trimmed (` topic ` is
    `topic`; docs/sizing.md); an empty file, or one whose first line is blank, is refused.

    Every file must name the same columns in the same order: Spark applies one schema to all
    of them by position and skips each file's header, so a file with two numeric columns
    swapped would be sized with the wrong figures. s3a files stay in S3, so only their first
    lines are fetched."""
    count = len(files.s3_objects) if files.s3_objects else len(files.paths)
    first = _header(files, 0)
    for index in range(1, count):
        other = _header(files, index, empty_allowed=True)
        if other and other != first:
            raise InputError(
                f"--input {_name(files, index)}: its columns ({','.join(other)}) differ from "
                f"{_name(files, 0)}'s ({','.join(first)}); every CSV file of one input must "
                "name the same columns in the same order"
            )
    return first


def _name(files: InputFiles, index: int) -> str:
    return files.s3_objects[index].url if files.s3_objects else files.paths[index]


def _header(files: InputFiles, index: int, empty_allowed: bool = False) -> list[str]:
    """A file's column names; none for an empty file where `empty_allowed` (a file of a
    directory that has no rows, as Spark leaves one for an empty partition)."""
    try:
        if files.s3_objects:
            header = next(csv.reader([s3.first_line(files.s3_objects[index])]), [])
        else:
            with open(files.paths[index], newline="", encoding="utf-8") as handle:
                header = next(csv.reader(handle), [])
    except UnicodeDecodeError:
        raise InputError(
            f"--input {_name(files, index)}: not UTF-8 text; save it as UTF-8"
        ) from None
    except s3.S3Error as err:
        raise InputError(str(err)) from None
    if not header and empty_allowed and _size(files, index) == 0:
        return []
    if not header:
        raise InputError(
            f"--input {_name(files, index)}: the file is empty (or its first line is blank); its "
            f"first line must be the header, naming at least {','.join(REQUIRED)}"
        )
    return [name.strip() for name in header]


def _size(files: InputFiles, index: int) -> int:
    if files.s3_objects:
        return files.s3_objects[index].size
    return Path(files.paths[index]).stat().st_size
