"""`kafkastack sample-projections`: what it refuses; a refusal or a failure leaves no file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from kafkastack.cli import app
from spark_sizing import samples

runner = CliRunner()
SMALL = ["--topics", "2", "--months", "1"]


def sample(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["sample-projections", *args])
    return result.exit_code, result.output


def test_an_existing_file_is_kept_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "p.csv"
    out.write_text("mine\n")
    code, output = sample("--out", str(out), *SMALL)
    assert code == 2
    assert f"kafkastack: --out {out}: already exists" in output and "--force" in output
    assert out.read_text() == "mine\n"
    code, output = sample("--out", str(out), "--force", *SMALL)
    assert code == 0, output
    assert "(replaced the file there)" in output
    assert out.read_text().startswith("topic,period_start,")


@pytest.mark.parametrize(
    ("name", "fmt", "reads_as"),
    [("p.parquet", None, "parquet"), ("p.jsonl", None, "jsonl"), ("p.json", "jsonl", "jsonl")],
)
def test_the_extension_sets_the_format(
    tmp_path: Path, name: str, fmt: str | None, reads_as: str
) -> None:
    out = tmp_path / name
    code, output = sample("--out", str(out), *SMALL, *(["--format", fmt] if fmt else []))
    assert code == 0, output
    frame = pd.read_parquet(out) if reads_as == "parquet" else pd.read_json(out, lines=True)
    assert len(frame) == 60 and "topic" in frame.columns


def test_a_format_that_disagrees_with_the_extension_is_refused(tmp_path: Path) -> None:
    code, output = sample("--out", str(tmp_path / "c.csv"), "--format", "jsonl")
    assert code == 2
    assert "the extension says csv but --format is jsonl; name the file c.jsonl" in output
    assert list(tmp_path.iterdir()) == []


def test_an_extension_size_cannot_read_is_refused(tmp_path: Path) -> None:
    code, output = sample("--out", str(tmp_path / "c.txt"))
    assert code == 2
    assert f"--out {tmp_path / 'c.txt'}: size reads .csv, .parquet or .jsonl" in output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("out", "says"),
    [
        ("{tmp}", "is a directory; name a file in it"),
        ("/proc/nope.csv", "cannot write it (No such file or directory)"),
    ],
)
def test_an_unwritable_out_is_one_line_naming_it(tmp_path: Path, out: str, says: str) -> None:
    target = out.format(tmp=tmp_path)
    code, output = sample("--out", target, *SMALL)
    assert code == 2
    assert output == output.strip() + "\n" and output.count("\n") == 1
    assert f"kafkastack: --out {target}: {says}" in output


def test_a_negative_seed_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    code, output = sample("--out", str(tmp_path / "s.csv"), "--seed", "-5")
    assert code == 2 and "--seed" in output
    assert list(tmp_path.iterdir()) == []


def test_a_failure_while_writing_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    with pytest.raises(ValueError, match="non-negative"):
        samples.write(out, 2, 1, "daily", seed=-5, file_format="csv")
    assert list(tmp_path.iterdir()) == []
