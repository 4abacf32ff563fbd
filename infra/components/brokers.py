"""The broker pool: one StatefulSet per broker, each pinned to its zone (its rack)."""

from __future__ import annotations

import pulumi

from infra.components.workloads import declare_node
from infra.model.cluster import ClusterModel


class BrokerPool(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        model: ClusterModel,
        storage_class: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("kafkastack:brokers:BrokerPool", name, {}, opts)
        for broker in model.brokers:
            declare_node(self, name, model, broker, storage_class)
        self.zones = {b.workload: b.zone for b in model.brokers}
        self.register_outputs({"zones": self.zones})
