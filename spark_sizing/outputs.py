"""What the sizing job writes: rejected rows, sizing.json and the reports, and where they go."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_sizing import s3, transforms, validation
from spark_sizing.contract import SizingReport
from spark_sizing.profiles import HardwareProfile
from spark_sizing.report import MonthTotal, html_report, markdown


def write_rejected(
    validated: DataFrame, invalid_count: int, duplicate_count: int, target: Path
) -> None:
    """Invalid rows and duplicates in one CSV with the input's columns and a reason.

    Only a run that rejected something pays for the pass that finds those rows again; otherwise
    the file holds just the header."""
    invalid = validation.rejected_rows(validated)  # the input's columns as text, and reason
    rows = invalid if invalid_count else invalid.limit(0)
    if duplicate_count:
        duplicates = transforms.duplicate_rows(
            transforms.mark_duplicates(validation.accepted_rows(validated))
        )
        as_text = duplicates.select(
            *[
                (
                    F.col(c).cast("string")
                    if c in duplicates.columns
                    else F.lit(None).cast("string")
                ).alias(c)
                for c in invalid.columns
                if c != validation.REASON
            ],
            validation.REASON,
        )
        rows = rows.unionByName(as_text)
    rows.coalesce(1).write.mode("overwrite").option("header", "true").csv(str(target))


def write_reports(
    report: SizingReport, months: list[MonthTotal], profile: HardwareProfile, out: Path
) -> None:
    (out / "sizing.json").write_text(
        json.dumps(report.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
    )
    (out / "report.md").write_text(markdown(report), encoding="utf-8")
    (out / "report.html").write_text(
        html_report(report, months, profile.network_mb_s), encoding="utf-8"
    )


def publish(local_out: Path, out: str) -> None:
    if s3.is_s3(out):
        s3.upload_tree(local_out, out)
    elif Path(out).resolve() != local_out.resolve():
        shutil.copytree(local_out, out, dirs_exist_ok=True)
