"""The projection file formats, known by their extension: what `size` reads and
`sample-projections` writes. Importable without pyspark."""

from __future__ import annotations

from pathlib import Path

FORMATS = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
}
EXTENSIONS_TEXT = ".csv, .parquet or .jsonl (also .json, .ndjson)"


def format_of(path: str | Path) -> str | None:
    """csv, parquet or jsonl from the file's extension (any case); None for another one."""
    return FORMATS.get(Path(path).suffix.lower())
