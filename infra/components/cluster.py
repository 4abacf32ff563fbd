"""`KafkaCluster`: the whole cluster as one component, composed of one component per concern."""

from __future__ import annotations

import pulumi

from infra.components.access import DisruptionBudgets, ExternalAccess, Services
from infra.components.brokers import BrokerPool
from infra.components.kubernetes import declare
from infra.components.network import Networks
from infra.components.quorum import MetadataQuorum
from infra.components.security import Security
from infra.components.storage import StorageClasses
from infra.model.cluster import ClusterModel


class KafkaCluster(pulumi.ComponentResource):
    bootstrap: pulumi.Output[str]
    external_bootstrap: pulumi.Output[str]
    broker_zones: pulumi.Output[dict[str, str]]

    def __init__(
        self,
        name: str,
        model: ClusterModel,
        passwords: dict[str, pulumi.Output[str]],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("kafkastack:index:KafkaCluster", name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        # The namespace everything else lives in. Deleting a namespace deletes the data claims
        # in it, so `pulumi destroy` forgets it instead of deleting it.
        namespace = declare(
            "Namespace",
            f"{name}-namespace",
            {"metadata": {"name": model.config.namespace}},
            self,
            retain_on_delete=True,
            protect=model.config.protected,
        )
        after_ns = pulumi.ResourceOptions(parent=self, depends_on=[namespace])
        storage = StorageClasses(f"{name}-storage", model, child)
        Networks(f"{name}-network", model, after_ns)
        security = Security(f"{name}-security", model, passwords, after_ns)
        workloads = pulumi.ResourceOptions(parent=self, depends_on=[namespace, storage, security])
        MetadataQuorum(f"{name}-quorum", model, storage.names["quorum"], workloads)
        brokers = BrokerPool(f"{name}-brokers", model, storage.names["broker"], workloads)
        services = Services(f"{name}-services", model, after_ns)
        external = ExternalAccess(f"{name}-external", model, after_ns)
        DisruptionBudgets(f"{name}-budgets", model, after_ns)
        self.bootstrap = pulumi.Output.from_input(services.bootstrap)
        self.external_bootstrap = pulumi.Output.from_input(external.bootstrap)
        self.broker_zones = pulumi.Output.from_input(brokers.zones)
        self.register_outputs(
            {
                "bootstrap": self.bootstrap,
                "external_bootstrap": self.external_bootstrap,
                "broker_zones": self.broker_zones,
            }
        )
