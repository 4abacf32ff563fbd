"""`kafkastack verify` fails when a check the stack calls for fails."""

from __future__ import annotations

import pytest

from infra.verify.smoke import SmokeResult, passed


def result(**changes: object) -> SmokeResult:
    values: dict[str, object] = {
        "brokers": {0: "a", 1: "b", 2: "c"},
        "internal_acked": 200,
        "external_expected": True,
        "external_acked": 200,
        "partitions_on_distinct_racks": True,
        "plaintext_refused": True,
    }
    values.update(changes)
    return SmokeResult(**values)  # type: ignore[arg-type]


def test_a_healthy_stack_passes() -> None:
    assert passed(result())
    assert passed(result(external_expected=False, external_acked=0))


@pytest.mark.parametrize(
    "failure",
    [
        {"external_acked": 0},  # HAProxy in front, yet nothing got through it
        {"internal_acked": 0},
        {"partitions_on_distinct_racks": False},
        {"plaintext_refused": False},
    ],
)
def test_any_failed_check_fails_verify(failure: dict[str, object]) -> None:
    assert not passed(result(**failure))
