"""A failed proof's report carries how its servers were then (each tier's conftest.py says what
it looks at): CI keeps a failed run's output, not the machine it ran on."""

from __future__ import annotations

from collections.abc import Callable

import pytest


def add_diagnosis(report: pytest.TestReport, title: str, describe: Callable[[], str]) -> None:
    """Append `describe()` to a failed setup's or call's report under `title`."""
    if not (report.failed and report.when in ("setup", "call")):
        return
    try:
        report.sections.append((title, describe()))
    except Exception as err:  # the report must not hide the failure it is about
        report.sections.append((title, f"no diagnosis: {err!r}"))
