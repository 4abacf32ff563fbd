"""Rendered config files against golden copies; KAFKASTACK_UPDATE_GOLDEN=1 rewrites them."""

from __future__ import annotations

import os
from pathlib import Path

import jinja2
import pytest

from infra.config import load_stack
from infra.model import templating
from infra.model.cluster import ClusterModel

GOLDEN = Path(__file__).parent / "golden"
CASES = [
    ("local", "broker-0.server.properties", lambda m: templating.broker_config(m, m.brokers[0])),
    ("local", "controller-9000.properties", lambda m: templating.controller_config(m, m.quorum[0])),
    ("local", "haproxy.cfg", templating.haproxy_config),
    ("local", "log4j2.yaml", templating.logging_config),
    ("dev", "broker-0.server.properties", lambda m: templating.broker_config(m, m.brokers[0])),
    ("dev", "zookeeper-1.zoo.cfg", lambda m: templating.zookeeper_config(m, m.quorum[0])),
    ("dev", "log4j.properties", templating.logging_config),
]


@pytest.mark.parametrize(("stack", "name", "produce"), CASES, ids=[f"{s}/{n}" for s, n, _ in CASES])
def test_rendered_file_matches_golden(repo_root: Path, stack: str, name: str, produce) -> None:  # type: ignore[no-untyped-def]
    model = ClusterModel.from_config(load_stack(repo_root / "stacks", stack))
    text = produce(model)
    golden = GOLDEN / stack / name
    if os.environ.get("KAFKASTACK_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert text == golden.read_text()


def test_templates_refuse_missing_values() -> None:
    with pytest.raises(jinja2.UndefinedError):
        templating.render("zookeeper/zoo.cfg.j2", environment="x")
