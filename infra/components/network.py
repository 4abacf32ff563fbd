"""The replication network attachment and the NetworkPolicies of every component."""

from __future__ import annotations

import pulumi

from infra.components.kubernetes import declare
from infra.model import networks
from infra.model.cluster import ClusterModel


class Networks(pulumi.ComponentResource):
    def __init__(
        self, name: str, model: ClusterModel, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kafkastack:network:Networks", name, {}, opts)
        if model.dual_network:
            # Multus network carrying replication and quorum traffic, static address per pod.
            declare(
                "NetworkAttachmentDefinition",
                f"{name}-replication",
                networks.network_attachment(model),
                self,
            )
        for policy in networks.network_policies(model):
            # Each port open only to the peers that need it.
            declare("NetworkPolicy", f"{name}-{policy['metadata']['name']}", policy, self)
        self.register_outputs(
            {"replication_network": model.names.replication_network if model.dual_network else ""}
        )
