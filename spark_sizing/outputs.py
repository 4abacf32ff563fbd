"""What the sizing job writes: rejected rows, sizing.json and the reports, and where they go."""

from __future__ import annotations

import csv
import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_sizing import s3, transforms, validation
from spark_sizing.charts import MonthTotal
from spark_sizing.contract import SizingReport
from spark_sizing.report import html_report, markdown
from spark_sizing.sources import InputError

REJECTED_FILE = "rejected.csv"


def write_rejected(
    validated: DataFrame,
    columns: list[str],
    counts: tuple[int, int],
    scratch: Path,
    target: Path,
) -> None:
    """Invalid rows and duplicates in one CSV file, `target`: the input's `columns` as read and
    a `reason`.

    `counts` are the invalid rows and the duplicates. Only a run that rejected something pays
    for the pass that finds those rows again; otherwise the file holds just the header. Spark
    writes a directory of part files, so the one part is written under `scratch` and moved."""
    invalid_count, duplicate_count = counts
    if not invalid_count and not duplicate_count:
        with target.open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerow([*columns, validation.REASON])
        return
    rows = validation.rejected_rows(validated, columns)
    if not invalid_count:
        rows = rows.limit(0)
    if duplicate_count:
        rows = rows.unionByName(_duplicates_as_read(validated, columns))
    parts = scratch / "rejected-parts"
    (
        rows.coalesce(1)
        .write.mode("overwrite")
        .option("header", "true")
        # Values go out as read: no quotes added where the input had none, empty stays empty.
        .option("quoteAll", "false")
        .option("emptyValue", "")
        .csv(str(parts))
    )
    (part,) = parts.glob("part-*.csv")
    shutil.move(part, target)
    shutil.rmtree(parts)


def _duplicates_as_read(validated: DataFrame, columns: list[str]) -> DataFrame:
    """The copies the job dropped, found again with the same ranking, in the input's text.

    The model's columns come first in the model's order, so the ranking that picks the kept
    copy is the job's; the text only orders copies the model cannot tell apart."""
    accepted = validation.accepted_rows_as_read(validated, columns)
    marked = transforms.mark_duplicates(
        accepted.select(*transforms.MODEL_COLUMNS, validation.AS_READ)
    )
    duplicates = transforms.duplicate_rows(marked)
    return duplicates.select(
        *[F.col(validation.AS_READ).getField(c).alias(c) for c in columns], validation.REASON
    )


SIZING_FILE = "sizing.json"


def write_reports(report: SizingReport, months: list[MonthTotal], out: Path) -> None:
    # Every text is rendered before any is written: the charts are the likeliest part to fail.
    texts = {
        "report.md": markdown(report),
        "report.html": html_report(report, months),
        SIZING_FILE: json.dumps(report.model_dump(mode="json"), indent=2) + "\n",
    }
    for name, text in texts.items():
        (out / name).write_text(text, encoding="utf-8")


def check_out(out: str) -> None:
    """A local --out must be a directory, or not there yet (it is created)."""
    if not s3.is_s3(out) and Path(out).exists() and not Path(out).is_dir():
        raise InputError(f"--out {out}: is a file; name a directory (created if missing)")


@contextmanager
def staged(out: str, scratch: Path) -> Iterator[Path]:
    """A folder for a run's outputs until `publish` moves them to `out`; removed on the way out.

    For a local `out` it is a hidden folder inside it: a rename within one file system is
    atomic, so `out` never holds a half-written file, and a run that fails leaves `out` as it
    was, with no sizing.json that looks finished (`kafkastack apply-sizing` would take it).
    Inside, not beside: `out` may be a mount point (a container's volume), whose parent is
    another file system or not writable. An S3 `out` is staged under `scratch` and uploaded."""
    if s3.is_s3(out):
        staging = scratch / "out"
        staging.mkdir()
        created = None
    else:
        target = Path(out)
        created = None if target.exists() else target
        try:
            target.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".kafkastack-", suffix=".partial", dir=target))
        except OSError as err:
            raise _unwritable(out, err) from None
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created is not None and not any(created.iterdir()):
            created.rmdir()  # made for a run that published nothing: gone again


def publish(staging: Path, out: str) -> None:
    """The staged files into `out`, sizing.json last: whoever sees it sees every other output of
    the same run beside it."""
    if s3.is_s3(out):
        s3.upload_tree(staging, out, last=SIZING_FILE)
        return
    for path in sorted(staging.iterdir(), key=lambda p: p.name == SIZING_FILE):
        try:
            path.replace(Path(out) / path.name)
        except OSError as err:
            raise _unwritable(out, err) from None


def _unwritable(out: str, err: OSError) -> InputError:
    return InputError(
        f"--out {out}: cannot write there ({err.strerror}); name a folder you can write to"
    )
