"""Where each rejected row came from: its input file and line number, found again by the driver.

Spark's CSV reader keeps no line numbers, so once the job has written `rejected.csv` (a few rows,
normally) the driver reads the CSV inputs once more with Python's csv module and matches each
rejected row to the line it was read from: by the line's text for a line the reader could not
split into the header's fields (its reason quotes the line), else by its fields. Of identical
lines, rows take them in order. The input is read line by line as Spark reads it (no field spans
lines); only the lines that match are kept.

Inputs that are not CSV, that s3a read (nothing on the driver's disk), or that total more than
`SCAN_LIMIT_BYTES` get empty cells: finding the lines would cost more than the sizing itself.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SOURCE_FILE = "source_file"
LINE = "line"
SCAN_LIMIT_BYTES = 64 * 1024 * 1024
# The reasons of validation.malformed_reason: they end with the line as read.
_MALFORMED = re.compile(
    r"^(?:\d+ fields where the header has \d+|not the header's \d+ fields "
    r"\(or an unclosed quote\)): (?P<line>.*)$"
)


@dataclass(frozen=True)
class InputFile:
    path: Path
    shown_as: str  # the name a reader knows: the local path, or the S3 URL it was downloaded from


def _fields(line: str) -> tuple[str, ...]:
    # Spark's CSV defaults: '"' quotes, '\' escapes a quote inside quotes.
    return tuple(next(csv.reader([line], escapechar="\\"), []))


def _scan(
    inputs: Sequence[InputFile], by_line: set[str], by_fields: set[tuple[str, ...]]
) -> tuple[dict[str, deque[tuple[str, int]]], dict[tuple[str, ...], deque[tuple[str, int]]]]:
    lines: dict[str, deque[tuple[str, int]]] = defaultdict(deque)
    fields: dict[tuple[str, ...], deque[tuple[str, int]]] = defaultdict(deque)
    for source in inputs:
        with source.path.open(encoding="utf-8", newline="") as handle:
            next(handle, None)  # the header
            for number, raw in enumerate(handle, start=2):
                line = raw.rstrip("\r\n")
                if line in by_line:
                    lines[line].append((source.shown_as, number))
                elif line:
                    parsed = _fields(line)
                    if parsed in by_fields:
                        fields[parsed].append((source.shown_as, number))
    return lines, fields


def add_sources(rejected: Path, inputs: Sequence[InputFile]) -> None:
    """Append `source_file` and `line` to every row of the `rejected` CSV (written by Spark, one
    record per line); cells stay empty where the line cannot be found or is not looked for."""
    text = rejected.read_text(encoding="utf-8").splitlines()
    if not text:
        return
    header, records = text[0], text[1:]
    rows = [_fields(r) for r in records]
    reason_at = len(_fields(header)) - 1
    size = sum(i.path.stat().st_size for i in inputs)
    located: list[tuple[str, int] | None] = [None] * len(rows)
    if rows and inputs and size <= SCAN_LIMIT_BYTES:
        malformed = [_MALFORMED.match(r[reason_at]) if len(r) > reason_at else None for r in rows]
        by_line = {m.group("line") for m in malformed if m}
        by_fields = {r[:reason_at] for r, m in zip(rows, malformed, strict=True) if not m}
        lines, fields = _scan(inputs, by_line, by_fields)
        for i, (row, match) in enumerate(zip(rows, malformed, strict=True)):
            found = lines.get(match.group("line")) if match else fields.get(row[:reason_at])
            located[i] = found.popleft() if found else None
    out = [f"{header},{SOURCE_FILE},{LINE}"]
    for record, where in zip(records, located, strict=True):
        out.append(f"{record},{_cell(where[0])},{where[1]}" if where else f"{record},,")
    rejected.write_text("\n".join(out) + "\n", encoding="utf-8")


def _cell(value: str) -> str:
    """A CSV cell: quoted when it holds a comma or a quote (a path may)."""
    if any(c in value for c in ',"\n'):
        return '"' + value.replace('"', '""') + '"'
    return value
