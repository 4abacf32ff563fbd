"""The stack's `polling`: how often idle Kafka servers wake each other, rendered where each
setting applies and refused where it cannot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import load_stack, parse_stack_config
from infra.errors import ConfigError
from infra.model.broker_config import broker_properties, controller_properties
from infra.model.cluster import ClusterModel
from tests.infra.conftest import base_values

FETCH = "replica.fetch.wait.max.ms"
METADATA = "metadata.max.idle.interval.ms"
POLLING = {"replica_fetch_wait_ms": 4000, "metadata_idle_interval_ms": 3000}


def model_of(environment: str = "staging", **overrides: Any) -> ClusterModel:
    return ClusterModel.from_config(parse_stack_config(base_values(**overrides), environment))


def refusal(environment: str = "staging", **overrides: Any) -> str:
    with pytest.raises(ConfigError) as err:
        parse_stack_config(base_values(**overrides), environment)
    return str(err.value)


def test_unset_polling_leaves_kafkas_defaults() -> None:
    model = model_of()
    for node in model.brokers:
        assert not {FETCH, METADATA} & broker_properties(model, node).flat().keys()
    for node in model.quorum:
        assert METADATA not in controller_properties(model, node).flat()


def test_brokers_take_the_fetch_wait_and_controllers_the_no_op_interval() -> None:
    model = model_of(polling=POLLING)
    for node in model.brokers:
        props = broker_properties(model, node).flat()
        assert props[FETCH] == "4000"
        assert METADATA not in props  # a broker alone writes no metadata log
    for node in model.quorum:
        props = controller_properties(model, node).flat()
        assert props[METADATA] == "3000"
        assert FETCH not in props  # a controller has no replica fetchers


def test_combined_nodes_take_both() -> None:
    model = model_of("local", platform="local", quorum={"combined": True}, polling=POLLING)
    props = broker_properties(model, model.brokers[0]).flat()
    assert (props[FETCH], props[METADATA]) == ("4000", "3000")


def test_zookeeper_mode_takes_the_fetch_wait_and_refuses_the_no_op_interval() -> None:
    zookeeper = {"kafka_version": "3.9.1", "quorum": {"kind": "zookeeper"}}
    model = model_of(**zookeeper, polling={"replica_fetch_wait_ms": 4000})
    assert broker_properties(model, model.brokers[0]).flat()[FETCH] == "4000"
    message = refusal(**zookeeper, polling=POLLING)
    assert message.startswith("kafkastack:polling.metadata_idle_interval_ms:"), message
    assert "only KRaft controllers write a metadata log" in message, message


@pytest.mark.parametrize(
    ("polling", "key", "words"),
    [
        ({"replica_fetch_wait_ms": 20_000}, "replica_fetch_wait_ms", "must be at most 10000"),
        ({"replica_fetch_wait_ms": 0}, "replica_fetch_wait_ms", "must be at least 1"),
        ({"metadata_idle_interval_ms": 0}, "metadata_idle_interval_ms", "must be at least 1"),
        ({"metadata_idle_interval_ms": "often"}, "metadata_idle_interval_ms", "not a whole number"),
        ({"replica_fetch_ms": 5000}, "replica_fetch_ms", "unknown key; check its spelling"),
    ],
)
def test_bad_polling_is_refused_naming_the_key(
    polling: dict[str, Any], key: str, words: str
) -> None:
    message = refusal(polling=polling)
    assert message.startswith(f"kafkastack:polling.{key}:"), message
    assert words in message.lower(), message


def test_the_local_stack_polls_idle_servers_less_often(repo_root: Path) -> None:
    """The committed local stack sets both (many JVMs on a few cores); the others keep Kafka's
    defaults."""
    for environment in ("dev", "staging", "prod"):
        polling = load_stack(repo_root / "stacks", environment).polling
        assert polling.model_dump() == {
            "replica_fetch_wait_ms": None,
            "metadata_idle_interval_ms": None,
        }, environment
    local = load_stack(repo_root / "stacks", "local").polling
    assert local.replica_fetch_wait_ms and local.replica_fetch_wait_ms > 500
    assert local.metadata_idle_interval_ms and local.metadata_idle_interval_ms > 500
