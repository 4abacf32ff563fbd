"""Fast StorageClasses for broker data and quorum volumes."""

from __future__ import annotations

import pulumi

from infra.components.kubernetes import declare
from infra.model import storage
from infra.model.cluster import ClusterModel

ROLES = ("broker", "quorum")


class StorageClasses(pulumi.ComponentResource):
    def __init__(
        self, name: str, model: ClusterModel, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kafkastack:storage:StorageClasses", name, {}, opts)
        self.names = {role: model.names.storage_class(role) for role in ROLES}
        for role in ROLES:
            # Stable names: renaming a StorageClass is a replacement, and claims refer to it.
            declare("StorageClass", f"{name}-{role}", storage.storage_class(model, role), self)
        self.register_outputs({"names": self.names})
