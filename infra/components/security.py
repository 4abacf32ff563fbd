"""Certificates for the TLS listeners and SCRAM user secrets from Pulumi secrets."""

from __future__ import annotations

import pulumi

from infra.components.kubernetes import declare
from infra.model import security
from infra.model.cluster import ClusterModel


class Security(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        model: ClusterModel,
        passwords: dict[str, pulumi.Output[str]],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("kafkastack:security:Security", name, {}, opts)
        for cert in security.certificates(model):
            # One certificate per node: pod DNS name, replication address, external host.
            declare("Certificate", f"{name}-{cert['metadata']['name']}", cert, self)
        for user, password in passwords.items():
            # The password stays a Pulumi secret end to end (encrypted in state).
            declare(
                "Secret",
                f"{name}-user-{user}",
                {
                    "metadata": {
                        "name": security.scram_secret_name(model, user),
                        "namespace": model.config.namespace,
                    },
                    "stringData": {"username": user, "password": password},
                },
                self,
                additional_secret_outputs=["stringData", "data"],
            )
        self.register_outputs({"users": sorted(passwords)})
