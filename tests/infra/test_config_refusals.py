"""Values an audit found accepted, silently replaced or refused under the wrong key: each is
refused naming its own key and the fix, in words a stack's author reads (no pydantic internals)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from infra.config import parse_stack_config
from infra.errors import ConfigError
from infra.model.cluster import derived_cluster_id
from tests.infra.conftest import base_values, sizing_cluster

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
        ("staging", {"brokers": "true"}, "brokers", "'true' is not a whole number"),
        ("staging", {"resources": {"daemonset_cpu": True}}, "resources.daemonset_cpu", "yes/no"),
        (
            "staging",
            {"polling": {"replica_fetch_wait_ms": True}},
            "polling.replica_fetch_wait_ms",
            "yes/no",
        ),
        ("staging", {"images": {"kafka": {"user": True}}}, "images.kafka.user", "yes/no"),
        ("staging", {"skip_await": "maybe"}, "skip_await", "'maybe' is not true or false"),
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
        ("staging", {"cluster_id": "AAAAAAAAAAAAAAAAAAAAAQ"}, "cluster_id", "random-uuid"),
        ("staging", {"cluster_id": "-" + "A" * 21}, "cluster_id", "random-uuid"),
        ("staging", {"security": {"users": ["admin", INJECTION]}}, "security.users", "user 1"),
        ("staging", {"security": {"users": ["admin", "Bob_Smith"]}}, "security.users", "no '_'"),
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


def test_a_per_volume_size_above_the_types_ceiling_is_told_the_ceiling() -> None:
    message = refusal("staging", storage={"size_gib": 1e12})
    assert message.startswith("kafkastack:storage.size_gib: "), message
    assert "lower it to at most 65536 GiB (it is per volume)" in message, message
    assert "volumes_per_broker to" not in message, message


def test_a_sizing_no_broker_could_carry_on_16_volumes_asks_for_brokers() -> None:
    huge = sizing_cluster(storage_per_broker_gib=1e7)
    message = refusal("staging", sizing={"schema_version": "1.0", "source": "t", "cluster": huge})
    assert message.startswith("kafkastack:sizing.cluster.storage_per_broker_gib: "), message
    assert "no broker carries that on 16 volumes or fewer; add brokers" in message, message


def test_a_cluster_id_kafka_would_format_with_is_accepted() -> None:
    config = parse_stack_config(base_values(cluster_id="MkU3OEVBNTcwNTJENDM2Qk"), "staging")
    assert config.cluster_id == "MkU3OEVBNTcwNTJENDM2Qk"


def test_a_derived_cluster_id_never_starts_with_a_dash_kafkas_tools_read_as_an_option() -> None:
    # kafka16 in kafka/staging derives -aruQ6dCWR-55D0567wmxA, formatted as `-t -aruQ…`.
    config = parse_stack_config(base_values(cluster_name="kafka16"), "staging")
    assert derived_cluster_id(config) == "AaruQ6dCWR-55D0567wmxA"


@pytest.mark.parametrize(
    "image",
    [
        f"haproxy:2.6.12@sha256:{'a' * 64}",  # tag and digest, as Renovate pins
        "[fd00::1]:5000/haproxy:2.6.12",
        "123456789012.dkr.ecr.eu-west-1.amazonaws.com/haproxy:2.6.12",
        "image-registry.openshift-image-registry.svc:5000/kafka/haproxy:2.6.12",
    ],
)
def test_images_pinned_as_registries_write_them_are_accepted(image: str) -> None:
    config = parse_stack_config(base_values(images={"haproxy": {"image": image}}), "staging")
    assert config.images.haproxy.image == image


def test_user_names_with_dots_are_accepted() -> None:
    users = ["admin", "svc.orders", "orders-app"]
    config = parse_stack_config(base_values(security={"users": users}), "staging")
    assert config.security.users == users


def test_a_zone_outage_below_min_isr_is_told_the_fewest_zones_that_suffice() -> None:
    # RF 6 over 2 zones loses 3 replicas with a zone; over 3 it loses 2, leaving min ISR 4.
    values = {"brokers": 6, "zones": ["a", "b"], "replication_factor": 6}
    message = refusal("staging", min_insync_replicas=4, **values)
    assert message.startswith("kafkastack:zones: "), message
    assert "list at least 3 zones, or lower min_insync_replicas to 3" in message, message


def test_rf_1_with_the_default_min_isr_is_told_to_raise_rf_first() -> None:
    message = refusal("staging", replication_factor=1)
    assert message.startswith("kafkastack:replication_factor: "), message
