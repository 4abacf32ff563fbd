"""The Pulumi program: config → model → `KafkaCluster`, with stack outputs."""

from __future__ import annotations

import pulumi

from infra.active_controller import RunningQuorum, read_running_quorum
from infra.broker_removal import check_broker_removal
from infra.certificate_restarts import certificate_restarts
from infra.components.kafka_cluster import KafkaCluster
from infra.config import NAMESPACE, secret_keys, sizing_summary
from infra.model.cluster import ClusterModel
from infra.stack_config import StackConfig
from infra.stack_workloads import stack_workloads
from infra.unready_nodes import PREVIEW_WARNING, unready_refusal
from infra.voter_removal import check_voter_removal


def secrets_from_config(config: StackConfig) -> dict[str, pulumi.Output[str]]:
    """Each secret the model asks for (SCRAM passwords, ZooKeeper's, the KRaft nodes' controller
    login) from secret stack config (`pulumi config set --secret`), by its key
    (`password-<user>`, `password-zookeeper`, `password-zookeeper-quorum`,
    `password-controller`)."""
    stack_config = pulumi.Config(NAMESPACE)
    return {key: stack_config.require_secret(key) for key in secret_keys(config)}


def provision(
    config: StackConfig, secrets: dict[str, pulumi.Output[str]], ask_cluster: bool = True
) -> KafkaCluster:
    # The active controller, if the running cluster says which, rolls last. A render to files
    # (`kubernetes:renderYamlToDirectory`: previews, `kafkastack render`) has no cluster to ask.
    rendering = pulumi.Config("kubernetes").get("renderYamlToDirectory") or not ask_cluster
    # What already runs orders the nodes (the first creation, ZooKeeper's chain), says which
    # node still serves a certificate older than its renewal, and which brokers would go.
    listing = None if rendering else stack_workloads(config)
    if listing is not None:
        # Before anything is declared: fewer brokers only once the ones that go are drained,
        # fewer KRaft voters only once the ones that go have left the voter set.
        check_broker_removal(config, listing)
        check_voter_removal(config)
        # Then no change while a node is down elsewhere; a preview still shows the change.
        refusal = unready_refusal(config, listing)
        if refusal is not None:
            if not pulumi.runtime.is_dry_run():
                raise refusal
            pulumi.log.warn(f"{PREVIEW_WARNING}{refusal}")
    workloads = listing if isinstance(listing, dict) else None
    existing = None if workloads is None else frozenset(workloads)
    running = RunningQuorum() if rendering else read_running_quorum(config, existing)
    model = ClusterModel.from_config(
        config,
        active_controller=running.active,
        quorum_running=running.running,
        existing_workloads=existing,
        certificate_restarts=certificate_restarts(config, workloads),
    )
    cluster = KafkaCluster(config.cluster_name, model, secrets)
    pulumi.export("bootstrap", cluster.bootstrap)
    pulumi.export("external_bootstrap", cluster.external_bootstrap)
    pulumi.export("broker_zones", cluster.broker_zones)
    # Which cert-manager issuer signs the certificates, and the Secret whose ca.crt to trust.
    pulumi.export("issuer", cluster.issuer)
    pulumi.export("brokers", len(model.brokers))
    # What the pull-request preview compares a proposed sizing with.
    pulumi.export("sizing", sizing_summary(config))
    return cluster
