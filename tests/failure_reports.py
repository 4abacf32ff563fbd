"""A failed proof's report carries how its servers were then: CI keeps a failed run's output,
not the machine it ran on. The real nodes (infra/localcluster/node_health.py) for a test given
them or a stack deployed on them; the kafka tier's servers (infra/verify/process_health.py) for
a test given a cluster of them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import pytest


def add_diagnosis(report: pytest.TestReport, title: str, describe: Callable[[], str]) -> None:
    """Append `describe()` to a failed setup's or call's report under `title`."""
    if not (report.failed and report.when in ("setup", "call")):
        return
    try:
        report.sections.append((title, describe()))
    except Exception as err:  # the report must not hide the failure it is about
        report.sections.append((title, f"no diagnosis: {err!r}"))


def describe_failure(report: pytest.TestReport, fixtures: Iterable[Any]) -> None:
    """The diagnosis of the first servers among a test's fixture values, if any."""
    if not report.failed:
        return
    # Imported here, on failure only: at every pytest start they would cost about 1.2 s.
    from infra.localcluster import node_health
    from infra.localcluster.deployed import DeployedStack
    from infra.localcluster.nodes import RealNodes
    from infra.verify import process_health
    from infra.verify.processes import ProcessCluster

    for value in fixtures:
        if isinstance(value, DeployedStack):
            value = value.nodes
        if isinstance(value, RealNodes):
            add_diagnosis(report, "real nodes", partial(node_health.diagnosis, value))
            return
        if isinstance(value, ProcessCluster):
            add_diagnosis(report, "servers", partial(process_health.diagnosis, value.nodes))
            return
