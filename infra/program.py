"""The Pulumi program: config → model → `KafkaCluster`, with stack outputs."""

from __future__ import annotations

import pulumi

from infra.components.cluster import KafkaCluster
from infra.config import NAMESPACE, StackConfig, password_config_key, sizing_summary
from infra.model.cluster import ClusterModel


def passwords_from_config(config: StackConfig) -> dict[str, pulumi.Output[str]]:
    """Each SCRAM user's password from secret stack config (`pulumi config set --secret`)."""
    if config.security.client_auth != "scram-sha-512":
        return {}
    secrets = pulumi.Config(NAMESPACE)
    return {
        user: secrets.require_secret(password_config_key(user)) for user in config.security.users
    }


def provision(config: StackConfig, passwords: dict[str, pulumi.Output[str]]) -> KafkaCluster:
    model = ClusterModel.from_config(config)
    cluster = KafkaCluster(config.cluster_name, model, passwords)
    pulumi.export("bootstrap", cluster.bootstrap)
    pulumi.export("external_bootstrap", cluster.external_bootstrap)
    pulumi.export("broker_zones", cluster.broker_zones)
    pulumi.export("brokers", len(model.brokers))
    # What the pull-request preview compares a proposed sizing with.
    pulumi.export("sizing", sizing_summary(config))
    return cluster
