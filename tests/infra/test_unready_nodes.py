"""No change is applied while a Kafka node of the stack is not Ready, unless the stack says the
change repairs it; a preview says so and still shows the change."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from infra.config_base import NAMESPACE
from infra.engine import Engine, Preview
from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.preview import StackPreview, markdown, run
from infra.stack_config import StackConfig
from infra.unready_nodes import OVERRIDE_KEY, PREVIEW_WARNING, unready_nodes, unready_refusal
from tests.infra.conftest import config_of


def listing(config: StackConfig, ready: dict[str, int] | None = None) -> dict[str, Any]:
    """The stack's StatefulSets as the API server lists them, each with `ready[name]` ready
    replicas (1 by default; absent from `status` when 0, as the controller leaves it)."""
    model = ClusterModel.from_config(config)
    parts = [(b.workload, labels.BROKER) for b in model.brokers]
    parts += [(q.workload, labels.CONTROLLER) for q in model.quorum if q not in model.brokers]
    found = {}
    for name, component in parts:
        count = (ready or {}).get(name, 1)
        found[name] = {
            "metadata": {"name": name, "labels": {labels.COMPONENT: component}},
            "spec": {"replicas": 1},
            "status": {"replicas": 1, **({"readyReplicas": count} if count else {})},
        }
    return found


def test_every_node_ready_lets_the_change_through() -> None:
    config = config_of()
    assert unready_nodes(listing(config)) == []
    assert unready_refusal(config, listing(config)) is None


def test_a_broker_or_controller_not_ready_refuses_the_change_naming_it_and_the_fix() -> None:
    config = config_of()
    model = ClusterModel.from_config(config)
    broker = model.brokers[1].workload
    controller = next(q.workload for q in model.quorum if q not in model.brokers)
    running = listing(config, {broker: 0, controller: 0})
    assert unready_nodes(running) == sorted([f"{broker} (0/1 Ready)", f"{controller} (0/1 Ready)"])
    refusal = unready_refusal(config, running)
    assert refusal is not None
    message = str(refusal)
    assert message.startswith(f"{NAMESPACE}:{OVERRIDE_KEY}: not applying this change while ")
    assert f"{broker} (0/1 Ready)" in message and f"{controller} (0/1 Ready)" in message
    assert f"set {NAMESPACE}:{OVERRIDE_KEY}: true for the one change that repairs it" in message


def test_the_repair_goes_through_when_the_stack_says_so() -> None:
    config = config_of(**{OVERRIDE_KEY: True})
    running = listing(config, {ClusterModel.from_config(config).brokers[0].workload: 0})
    assert unready_nodes(running) != []
    assert unready_refusal(config, running) is None


@pytest.mark.parametrize("running", [None, "The connection to the server was refused", {}])
def test_no_listing_and_the_first_creation_are_not_refused(running: Any) -> None:
    assert unready_refusal(config_of(), running) is None


def test_other_workloads_of_the_stack_are_not_kafka_nodes() -> None:
    config = config_of()
    running = listing(config)
    running["kafka-haproxy"] = {
        "metadata": {"name": "kafka-haproxy", "labels": {labels.COMPONENT: labels.HAPROXY}},
        "spec": {"replicas": 2},
        "status": {},
    }
    assert unready_nodes(running) == []


def test_the_pull_request_preview_shows_the_change_and_says_not_now() -> None:
    config = config_of()
    running = listing(config, {ClusterModel.from_config(config).brokers[2].workload: 0})
    reason = str(unready_refusal(config, running))
    comment = markdown(StackPreview("prod", [], None, {}, [], not_now=(reason,)))
    assert "> **Not now**: the cluster is not ready for `pulumi up` at this moment" in comment
    assert f"> - {reason}" in comment
    assert "Not now" not in markdown(StackPreview("prod", [], None, {}, []))


class WarningEngine:
    """An engine whose preview carries the program's warning among others."""

    def __init__(self, warnings: list[str]) -> None:
        self.warnings = warnings

    def select(self, *args: Any) -> None:
        return None

    def preview(self, stack: str) -> Preview:
        return Preview([], {}, [], [], self.warnings)

    def outputs(self, stack: str) -> dict[str, Any]:
        return {}


def test_the_preview_picks_the_programs_warning_out_of_the_engines() -> None:
    config = config_of()
    running = listing(config, {ClusterModel.from_config(config).brokers[0].workload: 0})
    reason = str(unready_refusal(config, running))
    engine = WarningEngine(["a provider's deprecation", f"warning: {PREVIEW_WARNING}{reason}"])
    found = run(cast(Engine, engine), Path("Pulumi.staging.yaml"), config)
    assert found.not_now == (reason,)
    assert run(cast(Engine, WarningEngine([])), Path("Pulumi.staging.yaml"), config).not_now == ()
