"""The kafka tier's ISR poll on a stand-in cluster (no server: the fast tier): a describe that
fails while the ZooKeeper-mode controller moves is asked again, not the end of the proof."""

from __future__ import annotations

from typing import Any, cast

import pytest

from infra.verify.errors import VerifyError
from infra.verify.processes import ProcessCluster
from tests.kafka import checks

MOVING = (
    'client describe failed: KafkaError{code=_TIMED_OUT,str="Timed out waiting for controller"}'
)


class Answers:
    """`client("describe")` answering from a script: an exception is raised, a dict returned."""

    def __init__(self, *answers: dict[str, Any] | Exception) -> None:
        self.answers = list(answers)
        self.asked = 0

    def client(self, op: str, **request: Any) -> dict[str, Any]:
        assert op == "describe", op
        answer = self.answers[min(self.asked, len(self.answers) - 1)]
        self.asked += 1
        if isinstance(answer, Exception):
            raise answer
        return answer


def isr(*replicas: int) -> dict[str, Any]:
    return {
        "partitions": {"0": {"leader": replicas[0], "replicas": [0, 1, 2], "isrs": list(replicas)}}
    }


@pytest.fixture(autouse=True)
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks.time, "sleep", lambda _seconds: None)


def test_a_describe_failing_while_the_controller_moves_is_asked_again() -> None:
    cluster = Answers(VerifyError(MOVING), VerifyError(MOVING), isr(1, 2), isr(1))
    described = checks.wait_for_isr(cast(ProcessCluster, cluster), "t", 1, 1)
    assert described == isr(1) and cluster.asked == 4


def test_a_describe_that_keeps_failing_ends_the_poll_at_its_deadline_naming_why() -> None:
    cluster = Answers(VerifyError(MOVING))
    with pytest.raises(
        AssertionError, match=r"t: the ISR could not be read: .*waiting for controller"
    ):
        checks.wait_for_isr(cast(ProcessCluster, cluster), "t", 1, 1, timeout=0)
    assert cluster.asked == 1
