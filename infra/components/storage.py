"""Fast StorageClasses for broker data and quorum volumes."""

from __future__ import annotations

import pulumi

from infra.components.kubernetes import declare
from infra.model import storage
from infra.model.cluster import ClusterModel


class StorageClasses(pulumi.ComponentResource):
    def __init__(
        self, name: str, model: ClusterModel, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kafkastack:storage:StorageClasses", name, {}, opts)
        self.names = storage.storage_class_names(model)
        for role in storage.ROLES:
            # Stable names: renaming a StorageClass is a replacement, and claims refer to it.
            declare(
                "StorageClass",
                f"{name}-{role}",
                storage.storage_class(model, role),
                self,
                protect=model.config.protected,
            )
        self.register_outputs({"names": self.names})
