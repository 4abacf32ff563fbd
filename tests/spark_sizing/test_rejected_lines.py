"""rejected.csv rows find their input file and line again (no Spark: a file as Spark writes it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_sizing import rejected_lines
from spark_sizing.rejected_lines import InputFile, add_sources

HEADER = "topic,period_start,produce_mb_s,consumer_groups,retention_hours"


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_each_rejected_row_gets_its_file_and_line(tmp_path: Path) -> None:
    first = write(tmp_path / "a.csv", HEADER, "a,2026-01-01,1,1,24", "b,2026-01-01,NaN,1,24")
    second = write(
        tmp_path / "b.csv",
        HEADER,
        'c,2026-01-01,"1",1,24',
        "a,2026-01-01,1,1,24",  # the same text as a.csv line 2: taken in order
        "d,2026-01-01,1,1,24,extra",
    )
    rejected = write(
        tmp_path / "rejected.csv",
        HEADER + ",reason",
        "b,2026-01-01,NaN,1,24,produce_mb_s: not a number: 'NaN'",
        'd,2026-01-01,1,1,24,"6 fields where the header has 5: d,2026-01-01,1,1,24,extra"',
        "a,2026-01-01,1,1,24,duplicate",
        "a,2026-01-01,1,1,24,duplicate",
        "c,2026-01-01,1,1,24,retention_hours: whatever",  # its input line quotes a field
        "z,2026-01-01,1,1,24,not in any input",
    )
    add_sources(rejected, [InputFile(first, "a.csv"), InputFile(second, "s3://bkt/b.csv")])
    lines = rejected.read_text().splitlines()
    assert lines[0] == HEADER + ",reason,source_file,line"
    assert [line.rsplit(",", 2)[1:] for line in lines[1:]] == [
        ["a.csv", "3"],
        ["s3://bkt/b.csv", "4"],
        ["a.csv", "2"],
        ["s3://bkt/b.csv", "3"],
        ["s3://bkt/b.csv", "2"],
        ["", ""],
    ]
    # The rows themselves are left exactly as Spark wrote them.
    assert lines[2].startswith('d,2026-01-01,1,1,24,"6 fields where the header has 5: d,')


def test_an_input_too_large_to_rescan_leaves_the_cells_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write(tmp_path / "in.csv", HEADER, "b,2026-01-01,NaN,1,24")
    rejected = write(tmp_path / "rejected.csv", HEADER + ",reason", "b,2026-01-01,NaN,1,24,bad")
    monkeypatch.setattr(rejected_lines, "SCAN_LIMIT_BYTES", 10)
    add_sources(rejected, [InputFile(data, "in.csv")])
    assert rejected.read_text().splitlines()[1] == "b,2026-01-01,NaN,1,24,bad,,"


def test_a_rejected_file_with_only_its_header_gets_the_new_columns(tmp_path: Path) -> None:
    rejected = write(tmp_path / "rejected.csv", HEADER + ",reason")
    add_sources(rejected, [])
    assert rejected.read_text() == HEADER + ",reason,source_file,line\n"
