"""The job's own plumbing that needs no Spark session: waiting for observed row counts."""

from __future__ import annotations

from typing import Any, cast

import pytest
from pyspark.sql import Observation

from spark_sizing import session


class _Future:
    def __init__(self, done: bool) -> None:
        self.done = done

    def isCompleted(self) -> bool:  # the JVM method's name
        return self.done


class _JavaObservation:
    def __init__(self, done: bool) -> None:
        self._future = _Future(done)

    def future(self) -> _Future:
        return self._future


class _StubObservation:
    """Stands in for pyspark's Observation around a JVM one whose metrics did or did not come."""

    def __init__(self, done: bool, metrics: dict[str, int]) -> None:
        self._jo = _JavaObservation(done)
        self.get = metrics


def test_counts_are_read_once_spark_reported_them() -> None:
    observation = cast(Observation, _StubObservation(True, {"read": 7, "invalid": 2}))
    assert session.observed_counts(observation, "read", "invalid") == (7, 2)


def test_counts_that_never_arrive_fail_clearly_instead_of_hanging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(session, "OBSERVATION_WAIT_S", 0.2)
    never: Any = _StubObservation(False, {})
    with pytest.raises(RuntimeError, match="did not report the row counts within 0 s"):
        session.observed_counts(never, "read")
