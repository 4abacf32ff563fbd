"""Values an audit found accepted, silently replaced or refused under the wrong key: each is
refused naming its own key and the fix, in words a stack's author reads (no pydantic internals)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from infra.config import parse_stack_config
from infra.errors import ConfigError
from tests.infra.conftest import base_values

INJECTION = "abc; touch /tmp/pwned #"


def refusal(stack: str, **overrides: Any) -> str:
    with pytest.raises(ConfigError) as err:
        parse_stack_config(base_values(**overrides), stack)
    return str(err.value)


@pytest.mark.parametrize(
    ("stack", "overrides", "key", "hint"),
    [
        # Counts and sizes: never zero, negative, NaN, infinite or a yes/no value.
        ("dev", {"replication_factor": 0}, "replication_factor", "must be at least 1"),
        ("staging", {"brokers": 0}, "brokers", "must be at least 1"),
        ("staging", {"brokers": True}, "brokers", "yes/no value; write a number"),
        ("staging", {"resources": {"broker_cpu": -3}}, "resources.broker_cpu", "above 0"),
        ("staging", {"resources": {"broker_heap_gib": 0}}, "resources.broker_heap_gib", "above 0"),
        ("staging", {"resources": {"broker_memory_gib": -1}}, "resources.broker_memory_gib", "0"),
        ("staging", {"resources": {"broker_cpu": math.nan}}, "resources.broker_cpu", "finite"),
        ("staging", {"storage": {"size_gib": math.inf}}, "storage.size_gib", "not .nan or .inf"),
        ("staging", {"storage": {"provisioner": ""}}, "storage.provisioner", "not be empty"),
        ("dev", {"quorum": {"combined": True, "nodes": 7}}, "quorum.nodes", "remove it"),
        # Replicas: min ISR above RF stops every acks=all write, in any environment.
        ("dev", {"replication_factor": 1, "min_insync_replicas": 2}, "min_insync_replicas", "1"),
        ("staging", {"replication_factor": 1, "min_insync_replicas": 1}, "replication_factor", "3"),
        # Zones.
        ("dev", {"zones": []}, "zones", "must list at least 1"),
        ("staging", {"zones": ["a", "", "c"]}, "zones.1", "must not be empty"),
        ("staging", {"zones": "a,b,c"}, "zones", "must be a list"),
        # Names that end up in commands, object names and host names.
        ("staging", {"cluster_id": INJECTION}, "cluster_id", "not a Kafka cluster id"),
        ("staging", {"cluster_id": "A" * 22}, "cluster_id", "random-uuid"),
        ("staging", {"security": {"users": ["admin", INJECTION]}}, "security.users.1", "DNS"),
        ("staging", {"security": {"users": ["admin", "admin"]}}, "security.users", "twice"),
        ("staging", {"external": {"domain": "not a domain!"}}, "external.domain", "DNS name"),
        ("staging", {"network": {"cluster_domain": ""}}, "network.cluster_domain", "DNS name"),
        (
            "staging",
            {"network": {"client_namespaces": ["Bad NS"]}},
            "network.client_namespaces.0",
            "not a DNS label",
        ),
        ("staging", {"external": {"mode": "route"}}, "external.mode", "OpenShift's"),
        # Images and versions.
        ("staging", {"kafka_version": "99.0.0"}, "kafka_version", "not supported yet"),
        ("staging", {"kafka_version": 4.3}, "kafka_version", "in quotes"),
        (
            "staging",
            {"images": {"kafka": {"repository": "apache/kafka:latest"}}},
            "images.kafka.repository",
            "its tag is kafkastack:kafka_version",
        ),
        (
            "staging",
            {"images": {"kafka": {"repository": ""}}},
            "images.kafka.repository",
            "not an image repository",
        ),
        ("staging", {"images": {"haproxy": {"image": " :1.2.3"}}}, "images.haproxy.image", "pin"),
        (
            "staging",
            {"images": {"kafka": {"maven_repository": "ftp://x"}}},
            "images.kafka.maven_repository",
            "https://",
        ),
        # Sections of the wrong shape, and a key the stack's name decides.
        ("staging", {"quorum": "kraft"}, "quorum", "must be a mapping of keys"),
        ("staging", {"environment": "dev"}, "environment", "remove the key"),
    ],
)
def test_a_bad_value_is_refused_naming_its_key_and_the_fix(
    stack: str, overrides: dict[str, Any], key: str, hint: str
) -> None:
    message = refusal(stack, **overrides)
    assert message.startswith(f"kafkastack:{key}: "), message
    assert hint in message, message
    for internal in ("list[", "constrained-", "Input should", "instance of"):
        assert internal not in message, message


def test_daemon_sets_that_leave_a_node_nothing_are_blamed_not_the_broker() -> None:
    message = refusal("staging", resources={"daemonset_cpu": 100})
    assert message.startswith("kafkastack:resources.daemonset_cpu: "), message
    assert "nothing for Kafka" in message


def test_a_volume_no_broker_could_carry_asks_for_brokers_not_thousands_of_volumes() -> None:
    message = refusal("staging", storage={"size_gib": 1e12})
    assert message.startswith("kafkastack:storage.size_gib: "), message
    assert "add brokers" in message and "volumes_per_broker to" not in message, message


def test_a_cluster_id_kafka_would_format_with_is_accepted() -> None:
    config = parse_stack_config(base_values(cluster_id="MkU3OEVBNTcwNTJENDM2Qk"), "staging")
    assert config.cluster_id == "MkU3OEVBNTcwNTJENDM2Qk"
