"""What the sizing job writes: rejected rows, sizing.json and the reports, and where they go."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_sizing import s3, transforms, validation
from spark_sizing.charts import MonthTotal
from spark_sizing.contract import SizingReport
from spark_sizing.report import html_report, markdown

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


def write_reports(report: SizingReport, months: list[MonthTotal], out: Path) -> None:
    (out / "sizing.json").write_text(
        json.dumps(report.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
    )
    (out / "report.md").write_text(markdown(report), encoding="utf-8")
    (out / "report.html").write_text(html_report(report, months), encoding="utf-8")


def publish(local_out: Path, out: str) -> None:
    if s3.is_s3(out):
        s3.upload_tree(local_out, out)
    elif Path(out).resolve() != local_out.resolve():
        shutil.copytree(local_out, out, dirs_exist_ok=True)
