"""Broker settings Kafka applies while it runs: a change needs no restart.

Kafka's broker config reference marks each setting's "dynamic update mode"; the ones below are
`cluster-wide`: an AlterConfigs on the default broker resource (`kafka-configs.sh --entity-type
brokers --entity-default`) reaches every running broker, which resizes its thread pools or
uses the new log default at once, and the value lives in the metadata log (or ZooKeeper), where
it takes precedence over server.properties. So these settings are left out of the config hash
on the brokers' pod templates (a change of one alone rolls nothing) and a Job sets them, as
rendered, on every `pulumi up` that changes one. server.properties keeps them too: a broker
formatted from scratch starts with the same values before the Job has run.

Once set dynamically a value stays until it is deleted: removing a key from this list needs a
`kafka-configs.sh --entity-default --alter --delete-config KEY` for the file's value to count.
"""

from __future__ import annotations

from typing import Any

from infra.model.admin_client import admin_job, admin_script
from infra.model.broker_config import broker_properties
from infra.model.cluster import ClusterModel
from infra.model.paths import KAFKA_BIN

# Each `cluster-wide` in Kafka 3.9's and 4.x's broker config reference; the kafka tier runs the
# Job against real brokers, which refuse a setting that is not dynamic.
CLUSTER_WIDE = frozenset(
    {
        "min.insync.replicas",
        "unclean.leader.election.enable",
        "num.io.threads",
        "num.network.threads",
        "num.replica.fetchers",
        "num.recovery.threads.per.data.dir",
    }
)
WORK_DIR = "/etc/kafka/dynamic-settings-job"  # the admin's client config (memory emptyDir)


def dynamic_settings(model: ClusterModel) -> dict[str, str]:
    """The cluster-wide dynamic settings as server.properties renders them (the same on every
    broker: they come from cluster config and sizing), in a stable order."""
    rendered = broker_properties(model, model.brokers[0]).flat()
    return {key: rendered[key] for key in sorted(CLUSTER_WIDE) if key in rendered}


def settings_script(model: ClusterModel) -> str:
    values = ",".join(f"{k}={v}" for k, v in dynamic_settings(model).items())
    command = [
        f"{KAFKA_BIN}/kafka-configs.sh",
        "--bootstrap-server",
        "{bootstrap}",
        "--command-config",
        "{admin}",
        "--entity-type",
        "brokers",
        "--entity-default",
        "--alter",
        "--add-config",
        values,
    ]
    return admin_script(model, WORK_DIR, [command])


def settings_job(model: ClusterModel) -> dict[str, Any]:
    """The Job; a changed value changes its pod template, which Pulumi applies by replacing it."""
    name = model.names.settings_job
    return admin_job(model, name, "kafka-dynamic-settings", WORK_DIR, settings_script(model))
