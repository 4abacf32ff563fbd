"""How the node-loss proof (infra/localcluster/node_loss.py) tells that the control plane has
taken a lost node's pods out of its Services; the proof itself runs on real nodes."""

from __future__ import annotations

import pytest

from infra.localcluster import node_loss
from infra.localcluster.control_plane import LocalClusterError
from infra.localcluster.node_loss import endpoint_serving
from infra.localcluster.pod_client import Acked


def test_a_not_ready_pod_behind_a_service_publishing_not_ready_addresses_is_not_serving() -> None:
    # What the brokers' headless Service showed for the lost node's broker (2026-11-26).
    headless = {"ready": True, "serving": False, "terminating": False}
    assert not endpoint_serving({"conditions": headless})
    assert endpoint_serving({"conditions": {"ready": True, "serving": True}})
    assert not endpoint_serving({"conditions": {"ready": False}})  # no `serving`: as ready says


class Resolving:
    """A pod client whose first producers fail as VerifiableProducer does when the bootstrap
    name resolves nowhere (the CI run's words), then one that writes."""

    def __init__(self, failures: int, words: str = node_loss.UNRESOLVED) -> None:
        self.failures = failures
        self.words = words
        self.calls = 0

    def produce(self, topic: str, count: int) -> tuple[list[Acked], list[str]]:
        self.calls += 1
        if self.calls <= self.failures:
            raise LocalClusterError(
                f"in kafkastack-proof-client: ... ConfigException: {self.words} given in "
                "bootstrap.servers"
            )
        return [Acked(f"key-{n}", f"value-{n}", 0, n, 0.0) for n in range(count)], []


def test_a_new_producer_that_resolves_nothing_yet_is_started_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(node_loss.time, "sleep", lambda _: None)
    client = Resolving(failures=2)
    acked, errors = node_loss.produce_once_resolved(client, "t", count=3)  # type: ignore[arg-type]
    assert (len(acked), errors, client.calls) == (3, [], 3)


def test_any_other_producer_failure_is_raised_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_loss.time, "sleep", lambda _: None)
    client = Resolving(failures=1, words="Authentication failed")
    with pytest.raises(LocalClusterError, match="Authentication failed"):
        node_loss.produce_once_resolved(client, "t", count=3)  # type: ignore[arg-type]
    assert client.calls == 1
