"""The metadata quorum: KRaft controllers or a ZooKeeper ensemble (one concept, two kinds)."""

from __future__ import annotations

import pulumi

from infra.components.workloads import declare_node
from infra.model.cluster import ClusterModel


class MetadataQuorum(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        model: ClusterModel,
        storage_class: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("kafkastack:quorum:MetadataQuorum", name, {}, opts)
        self.kind = model.config.quorum.kind
        for node in model.quorum:
            declare_node(self, name, model, node, storage_class)
        self.nodes = {n.workload: n.zone for n in model.quorum}
        self.register_outputs({"kind": self.kind, "nodes": self.nodes})
