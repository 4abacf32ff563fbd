"""Reading projections: CSV, Parquet or JSON Lines from a file, directory, glob or s3:// prefix."""

from __future__ import annotations

import csv
import glob
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from spark_sizing import s3
from spark_sizing.schema import CORRUPT_RECORD, REQUIRED, raw_csv_schema

FORMATS = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".jsonl": "json",
    ".json": "json",
    ".ndjson": "json",
}


class InputError(RuntimeError):
    """Input that cannot be read at all; the message names the path or column and the fix."""


@dataclass(frozen=True)
class InputFiles:
    paths: list[str]
    format: str


def resolve(location: str, staging: Path) -> InputFiles:
    """Local paths of the input files, fetching s3:// prefixes into `staging` first."""
    if s3.is_s3(location):
        try:
            files = [str(p) for p in s3.download_prefix(location, staging)]
        except s3.S3Error as err:
            raise InputError(str(err)) from None
    else:
        files = _local_files(location)
    return InputFiles(paths=sorted(files), format=_single_format(location, files))


def _local_files(location: str) -> list[str]:
    path = Path(location)
    if path.is_file():
        return [str(path)]
    if path.is_dir():
        files = [str(p) for p in path.rglob("*") if p.suffix.lower() in FORMATS and p.is_file()]
        if not files:
            raise InputError(f"--input {location}: directory has no .csv, .parquet or .jsonl files")
        return files
    matches = [m for m in glob.glob(location, recursive=True) if Path(m).is_file()]
    if matches:
        return matches
    raise InputError(f"--input {location}: no such file, directory or glob match; check the path")


def _single_format(location: str, files: list[str]) -> str:
    kinds = {FORMATS.get(Path(f).suffix.lower()) for f in files}
    if None in kinds:
        bad = next(f for f in files if Path(f).suffix.lower() not in FORMATS)
        raise InputError(f"--input {location}: {bad} is not .csv, .parquet or .jsonl")
    if len(kinds) > 1:
        raise InputError(
            f"--input {location}: mixes formats {sorted(k or '' for k in kinds)}; use one"
        )
    return kinds.pop() or "csv"


def read(spark: SparkSession, files: InputFiles) -> DataFrame:
    """The raw rows, text-typed where the format allows, with missing required columns refused."""
    if files.format == "csv":
        df = _read_csv(spark, files.paths)
    elif files.format == "json":
        df = (
            spark.read.option("primitivesAsString", "true")
            .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
            .json(files.paths)
        )
    else:
        df = spark.read.parquet(*files.paths)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise InputError(
            f"input is missing required column(s) {', '.join(missing)}; "
            f"add them (see docs/input-schema.json). Columns found: {', '.join(df.columns)}"
        )
    return df


def _read_csv(spark: SparkSession, paths: list[str]) -> DataFrame:
    with open(paths[0], newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle), [])
    if not header:
        raise InputError(f"--input {paths[0]}: empty file, expected a header row")
    return (
        spark.read.option("header", "true")
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
        .schema(raw_csv_schema([h.strip() for h in header]))
        .csv(paths)
    )
