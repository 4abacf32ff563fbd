"""Every unsafe stack config is refused before any resource exists, naming the key and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import load_stack, parse_stack_config
from infra.errors import ConfigError
from tests.infra.conftest import base_values, config_of, sizing_cluster


def refused(environment: str = "staging", **overrides: Any) -> str:
    with pytest.raises(ConfigError) as err:
        parse_stack_config(base_values(**overrides), environment)
    return str(err.value)


def test_valid_config_parses(staging) -> None:  # type: ignore[no-untyped-def]
    assert staging.zones == ["a", "b", "c"]
    assert staging.quorum.kind == "kraft"


@pytest.mark.parametrize(
    ("environment", "overrides", "key", "hint"),
    [
        (
            "staging",
            {
                "brokers": 2,
                "sizing": {
                    "schema_version": "1.0",
                    "source": "t",
                    "cluster": sizing_cluster(brokers=2),
                },
            },
            "brokers",
            "at least 3",
        ),
        ("staging", {"replication_factor": 5}, "replication_factor", "lower it or add brokers"),
        ("staging", {"min_insync_replicas": 3}, "min_insync_replicas", "use 2"),
        ("staging", {"min_insync_replicas": 0}, "min_insync_replicas", "at least 1"),
        ("staging", {"quorum": {"nodes": 4}}, "quorum.nodes", "odd"),
        ("staging", {"quorum": {"nodes": 7}}, "quorum.nodes", "3, 5"),
        ("staging", {"quorum": {"kind": "zookeeper", "nodes": 3}}, "quorum.kind", "3.9"),
        (
            "staging",
            {"quorum": {"kind": "zookeeper", "nodes": 4}, "kafka_version": "3.9.1"},
            "quorum.nodes",
            "3, 5, 7",
        ),
        ("staging", {"kafka_version": "3.7.0"}, "kafka_version", "3.9.x or 4.x"),
        ("staging", {"cluster_name": "Orders_Kafka"}, "cluster_name", "lowercase letters"),
        ("staging", {"cluster_name": "orders-"}, "cluster_name", "ending with a letter"),
        ("staging", {"cluster_name": "o" * 31}, "cluster_name", "at most 30"),
        ("staging", {"namespace": "Kafka"}, "namespace", "not a DNS label"),
        ("staging", {"namespace": "k" * 64}, "namespace", "at most 63"),
        ("staging", {"zones": ["a"]}, "zones", "at least 2"),
        ("prod", {"zones": ["a", "b"]}, "zones", "at least 3"),
        ("staging", {"zones": ["a", "b", "c", "d"]}, "zones", "add brokers or list fewer zones"),
        ("staging", {"zones": ["a", "a", "b"]}, "zones", "list each once"),
        (
            "staging",
            {"external": {"mode": "haproxy", "tls": False}},
            "external.tls",
            "set it to true",
        ),
        ("staging", {"storage": {"size_gib": 100}}, "storage.size_gib", "below the 500 GiB"),
        (
            "staging",
            {"storage": {"provisioner": "kafkastack.io/loop"}},
            "storage.provisioner",
            "the local cluster's provisioner for its real nodes; remove it (platform aws uses "
            "ebs.csi.aws.com)",
        ),
        ("staging", {"quorum": {"combined": True}}, "quorum.combined", "local/dev only"),
        ("staging", {"brokerz": 3}, "brokerz", "unknown key"),
        (
            "staging",
            {"external": {"mode": "haproxy", "domian": "x"}},
            "external.domian",
            "unknown key",
        ),
        (
            "staging",
            {
                "platform": "local",
                "network": {"mode": "dual", "replication": {"cidr": "10.0.0.0/30"}},
            },
            "network.replication.cidr",
            "use /28 or larger",
        ),
        (
            "staging",
            {"network": {"mode": "dual", "replication": {"cidr": "10.0.0.1/24"}}},
            "network.replication.cidr",
            "host bits",
        ),
        ("staging", {"zones": "auto"}, "zones", "list the zones"),
        ("staging", {"zones": ["a", "b"]}, "zones", "a zone outage leaves 1 of 3 replicas"),
        ("staging", {"kafka_version": "latest"}, "kafka_version", "not a Kafka release"),
        ("staging", {"kafka_version": "3.10"}, "kafka_version", "not a Kafka release"),
        ("staging", {"kafka_version": "3.8.1"}, "kafka_version", "use 3.9.x or 4.x"),
        ("staging", {"platform": "vsphere"}, "platform", "'aws'"),
        ("staging", {"images": {"kafka": {"user": 0}}}, "images.kafka.user", "non-root uid"),
        ("staging", {"images": {"haproxy": {"group": 0}}}, "images.haproxy.group", "restricted"),
        (
            "staging",
            {"images": {"kafka": {"jmx_agent": "copy"}}},
            "images.kafka.jmx_agent",
            "'bundled'",
        ),
    ],
)
def test_unsafe_config_is_refused(
    environment: str, overrides: dict[str, Any], key: str, hint: str
) -> None:
    message = refused(environment, **overrides)
    assert f"kafkastack:{key}" in message
    assert hint in message


def test_unknown_sizing_schema_version_is_refused() -> None:
    sizing = {"schema_version": "9.9", "source": "t", "cluster": sizing_cluster()}
    message = refused(sizing=sizing)
    assert "kafkastack:sizing.schema_version" in message and "re-run `kafkastack size`" in message


def test_missing_sizing_is_refused() -> None:
    values = base_values()
    del values["sizing"]
    with pytest.raises(ConfigError, match="kafkastack:sizing: required"):
        parse_stack_config(values, "staging")


def test_two_zones_are_enough_when_a_zone_outage_keeps_min_isr() -> None:
    config = config_of(zones=["a", "b"], replication_factor=2, min_insync_replicas=1)
    assert config.zones == ["a", "b"]


def test_kafka_versions_compare_as_numbers() -> None:
    # As text "3.10.0" < "3.9.0"; as a release it is newer and supported.
    assert config_of(kafka_version="3.10.0", quorum={"kind": "kraft"}).kafka_release == (3, 10, 0)


def test_small_environments_may_be_small() -> None:
    config = config_of(
        "dev",
        brokers=1,
        zones=["a"],
        replication_factor=1,
        min_insync_replicas=1,
        quorum={"combined": True},
        sizing={"schema_version": "1.0", "source": "t", "cluster": sizing_cluster(brokers=1)},
    )
    assert config.quorum.combined


def test_sizing_raises_the_broker_count_above_the_stack_minimum() -> None:

    config = config_of(
        sizing={"schema_version": "1.0", "source": "t", "cluster": sizing_cluster(brokers=6)}
    )
    assert config.broker_count == 6


@pytest.mark.parametrize("environment", ["local", "dev", "staging", "prod"])
def test_committed_stacks_are_valid(repo_root: Path, environment: str) -> None:
    config = load_stack(repo_root / "stacks", environment)
    assert config.environment == environment


def test_prod_is_a_real_ha_layout(repo_root: Path) -> None:
    from infra.model.cluster import ClusterModel

    model = ClusterModel.from_config(load_stack(repo_root / "stacks", "prod"))
    assert len(model.brokers) >= 5 and len(model.zones) == 3 and len(model.quorum) == 5


def test_stack_file_with_a_foreign_key_is_refused(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.x.yaml").write_text("config:\n  zones: [a]\n")
    with pytest.raises(ConfigError, match="outside the kafkastack: namespace"):
        load_stack(tmp_path, "x")
