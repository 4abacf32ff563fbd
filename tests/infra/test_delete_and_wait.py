"""`LocalKubernetes.delete_and_wait`: kubectl deletes without its own wait (which came back up to
30 s after the objects had gone), and the objects are polled until none is left."""

from __future__ import annotations

import subprocess

import pytest

from infra.localcluster import control_plane
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes


class FakeKubectl:
    """Answers `get` with the objects still there for the first `polls_left` calls."""

    def __init__(self, left: str, polls_left: int) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.left = left
        self.polls_left = polls_left

    # Set on the class, an instance is not bound: it is called without the LocalKubernetes.
    def __call__(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        self.calls.append(args)
        out = ""
        if args[0] == "get" and self.polls_left:
            self.polls_left -= 1
            out = self.left
        return subprocess.CompletedProcess(["kubectl", *args], 0, out, "")


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(control_plane.time, "sleep", lambda _s: None)


def test_named_objects_are_deleted_without_kubectls_wait_and_polled_until_gone(
    monkeypatch: pytest.MonkeyPatch, no_sleep: None
) -> None:
    fake = FakeKubectl("persistentvolume/pv-a\n", polls_left=2)
    monkeypatch.setattr(LocalKubernetes, "kubectl", fake)
    LocalKubernetes("t").delete_and_wait("pv", "pv-a", "pv-b")
    delete, *gets = fake.calls
    assert delete[:4] == ("delete", "pv", "pv-a", "pv-b")
    assert "--wait=false" in delete and "--all" not in delete
    assert len(gets) == 3  # two answers naming pv-a, then none
    assert all(g[:4] == ("get", "pv", "pv-a", "pv-b") for g in gets)


def test_every_object_of_a_kind_in_a_namespace_with_the_options_given(
    monkeypatch: pytest.MonkeyPatch, no_sleep: None
) -> None:
    fake = FakeKubectl("", polls_left=0)
    monkeypatch.setattr(LocalKubernetes, "kubectl", fake)
    LocalKubernetes("t").delete_and_wait("pods", namespace="kafka", options=("--grace-period=1",))
    delete, get = fake.calls
    assert delete[:5] == ("delete", "pods", "-n", "kafka", "--all")
    assert "--grace-period=1" in delete
    assert get[:4] == ("get", "pods", "-n", "kafka") and "--all" not in get


def test_objects_still_there_after_the_timeout_are_named(
    monkeypatch: pytest.MonkeyPatch, no_sleep: None
) -> None:
    monkeypatch.setattr(LocalKubernetes, "kubectl", FakeKubectl("namespace/kafka", 10**6))
    with pytest.raises(LocalClusterError, match=r"namespace still there 0 s.*namespace/kafka"):
        LocalKubernetes("t").delete_and_wait("namespace", "kafka", timeout=0)
