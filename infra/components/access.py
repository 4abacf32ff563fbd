"""Services inside the cluster and external access through HAProxy or OpenShift Routes."""

from __future__ import annotations

import hashlib

import pulumi

from infra.components.kubernetes import declare
from infra.model import access, templating
from infra.model.cluster import ClusterModel


class Services(pulumi.ComponentResource):
    def __init__(
        self, name: str, model: ClusterModel, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kafkastack:access:Services", name, {}, opts)
        for service in access.services(model):
            # Headless services give every pod the DNS name its CLIENT listener advertises.
            declare("Service", f"{name}-{service['metadata']['name']}", service, self)
        self.bootstrap = f"{model.names.bootstrap_dns}:{model.ports.client}"
        self.register_outputs({"bootstrap": self.bootstrap})


class ExternalAccess(pulumi.ComponentResource):
    def __init__(
        self, name: str, model: ClusterModel, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kafkastack:access:ExternalAccess", name, {}, opts)
        ext = model.config.external
        self.bootstrap = (
            f"{model.names.external_bootstrap}:{model.ports.route}" if ext.mode != "none" else ""
        )
        if ext.mode == "haproxy":
            config = templating.haproxy_config(model)
            digest = hashlib.sha256(config.encode()).hexdigest()[:16]
            # SNI routing table rendered from templates/haproxy.
            declare(
                "ConfigMap",
                f"{name}-haproxy-config",
                {
                    "metadata": {
                        "name": f"{model.names.haproxy}-config",
                        "namespace": model.config.namespace,
                    },
                    "data": {"haproxy.cfg": config},
                },
                self,
            )
            declare("Deployment", f"{name}-haproxy", access.haproxy_deployment(model, digest), self)
            declare("Service", f"{name}-haproxy-service", access.haproxy_service(model), self)
        elif ext.mode == "route":
            for route in access.routes(model):
                # Passthrough: TLS ends at the broker, so SNI picks the broker.
                declare("Route", f"{name}-{route['metadata']['name']}", route, self)
        self.register_outputs({"bootstrap": self.bootstrap})


class DisruptionBudgets(pulumi.ComponentResource):
    def __init__(
        self, name: str, model: ClusterModel, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kafkastack:access:DisruptionBudgets", name, {}, opts)
        for budget in access.disruption_budgets(model):
            # Voluntary evictions (node drains) take one broker and a quorum minority at a time.
            declare("PodDisruptionBudget", f"{name}-{budget['metadata']['name']}", budget, self)
        self.register_outputs({})
