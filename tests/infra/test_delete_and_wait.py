"""`LocalKubernetes.delete_and_wait`: kubectl deletes named objects in concurrent batches within
its rate limit's burst, without its own wait (a stack's 96 volumes took 34 s through `--wait`),
and one listing of the kind per poll says when none of them is left."""

from __future__ import annotations

import subprocess
import threading

import pytest

from infra.localcluster import control_plane
from infra.localcluster.control_plane import KUBECTL_BURST, LocalClusterError, LocalKubernetes


class FakeKubectl:
    """Lists `listed` for the first `polls_left` `get` calls, then only `others`."""

    def __init__(self, listed: list[str], polls_left: int, others: tuple[str, ...] = ()) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.lock = threading.Lock()  # batches are deleted from several threads
        self.listed = listed
        self.others = list(others)
        self.polls_left = polls_left

    # Set on the class, an instance is not bound: it is called without the LocalKubernetes.
    def __call__(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        with self.lock:
            self.calls.append(args)
            names = self.others
            if args[0] == "get" and self.polls_left:
                self.polls_left -= 1
                names = self.listed + self.others
        out = "".join(f"{args[1]}/{n}\n" for n in names) if args[0] == "get" else ""
        return subprocess.CompletedProcess(["kubectl", *args], 0, out, "")

    def of(self, verb: str) -> list[tuple[str, ...]]:
        return [c for c in self.calls if c[0] == verb]


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(control_plane.time, "sleep", lambda _s: None)


def test_many_names_are_deleted_in_batches_and_polled_by_one_listing_until_gone(
    monkeypatch: pytest.MonkeyPatch, no_sleep: None
) -> None:
    names = [f"pv-{i}" for i in range(25)]
    fake = FakeKubectl(names[:3], polls_left=2, others=("another-stacks-pv",))
    monkeypatch.setattr(LocalKubernetes, "kubectl", fake)
    LocalKubernetes("t").delete_and_wait("pv", *names)
    deletes = fake.of("delete")
    batches = [[a for a in d[2:] if not a.startswith("--")] for d in deletes]
    assert sorted(n for b in batches for n in b) == sorted(names)
    assert max(len(b) for b in batches) <= KUBECTL_BURST and len(batches) == 3
    assert all("--wait=false" in d for d in deletes)
    # Two listings still naming some of them, then one naming only another stack's volume.
    assert fake.of("get") == [("get", "pv", "-o", "name")] * 3


def test_every_object_of_a_kind_in_a_namespace_with_the_options_given(
    monkeypatch: pytest.MonkeyPatch, no_sleep: None
) -> None:
    fake = FakeKubectl(["broker-0"], polls_left=1)
    monkeypatch.setattr(LocalKubernetes, "kubectl", fake)
    LocalKubernetes("t").delete_and_wait("pods", namespace="kafka", options=("--grace-period=1",))
    [delete] = fake.of("delete")
    assert delete[:5] == ("delete", "pods", "--all", "-n", "kafka")
    assert "--grace-period=1" in delete
    assert fake.of("get") == [("get", "pods", "-n", "kafka", "-o", "name")] * 2


def test_objects_still_there_after_the_timeout_are_named(
    monkeypatch: pytest.MonkeyPatch, no_sleep: None
) -> None:
    monkeypatch.setattr(LocalKubernetes, "kubectl", FakeKubectl(["kafka"], 10**6))
    with pytest.raises(LocalClusterError, match=r"namespace left 0 s after deletion: kafka"):
        LocalKubernetes("t").delete_and_wait("namespace", "kafka", timeout=0)
