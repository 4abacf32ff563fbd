"""`KafkaCluster`: declares the model's desired state, one component per concern.

No rules live here: `infra/model/desired.py` decides every object, its options and what must
exist first; this turns each into a Pulumi resource, filling in secrets from stack config.
"""

from __future__ import annotations

from typing import Any

import pulumi

from infra.components.kubernetes import declare
from infra.model.cluster import ClusterModel
from infra.model.declared import Concern, Declared, SecretValue
from infra.model.desired import desired_state


def _with_secrets(value: Any, secrets: dict[str, pulumi.Output[str]]) -> Any:
    if isinstance(value, SecretValue):
        return pulumi.Output.all(*(secrets[key] for key in value.keys)).apply(
            lambda values: value.value(*values)
        )
    if isinstance(value, dict):
        return {k: _with_secrets(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_secrets(v, secrets) for v in value]
    return value


class ConcernResources(pulumi.ComponentResource):
    """One concern of the cluster (storage, network, brokers, …) and its objects."""

    def __init__(
        self,
        name: str,
        concern: Concern,
        secrets: dict[str, pulumi.Output[str]],
        opts: pulumi.ResourceOptions,
    ) -> None:
        super().__init__(concern.type_token, name, {}, opts)
        by_logical: dict[str, pulumi.CustomResource] = {}
        for obj in concern.objects:
            first = [by_logical[logical] for logical in obj.after]
            by_logical[obj.logical] = _declare(f"{name}-{obj.logical}", obj, secrets, self, first)
        self.resources = list(by_logical.values())
        self.register_outputs(concern.outputs)


def _declare(
    name: str,
    obj: Declared,
    secrets: dict[str, pulumi.Output[str]],
    parent: pulumi.Resource,
    after: list[pulumi.CustomResource] | None = None,
) -> pulumi.CustomResource:
    options: dict[str, Any] = {}
    if after:
        options["depends_on"] = after
    if obj.protect:
        options["protect"] = True
    if obj.retain_on_delete:
        options["retain_on_delete"] = True
    if obj.ignore_changes:
        options["ignore_changes"] = list(obj.ignore_changes)
    if obj.secret_outputs:
        options["additional_secret_outputs"] = list(obj.secret_outputs)
    return declare(obj.kind, name, _with_secrets(obj.manifest, secrets), parent, **options)


class KafkaCluster(pulumi.ComponentResource):
    bootstrap: pulumi.Output[str]
    external_bootstrap: pulumi.Output[str]
    broker_zones: pulumi.Output[dict[str, str]]
    issuer: pulumi.Output[dict[str, Any]]

    def __init__(
        self,
        name: str,
        model: ClusterModel,
        secrets: dict[str, pulumi.Output[str]],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`secrets`: secret stack config by key (`password-<user>`), as the model asks for it."""
        super().__init__("kafkastack:index:KafkaCluster", name, {}, opts)
        declared: dict[str, list[pulumi.Resource]] = {}
        outputs: dict[str, dict[str, Any]] = {}
        for concern in desired_state(model):
            after = [r for key in concern.after for r in declared[key]]
            child = pulumi.ResourceOptions(parent=self, depends_on=after or None)
            outputs[concern.key] = concern.outputs
            if not concern.type_token:  # the cluster's own objects (its namespace)
                declared[concern.key] = [
                    _declare(f"{name}-{obj.logical}", obj, secrets, self) for obj in concern.objects
                ]
                continue
            component = ConcernResources(f"{name}-{concern.key}", concern, secrets, child)
            declared[concern.key] = [component]
        self.bootstrap = pulumi.Output.from_input(outputs["services"]["bootstrap"])
        self.external_bootstrap = pulumi.Output.from_input(outputs["external"]["bootstrap"])
        self.broker_zones = pulumi.Output.from_input(outputs["brokers"]["zones"])
        self.issuer = pulumi.Output.from_input(outputs["issuer"]["issuer"])
        self.register_outputs(
            {
                "bootstrap": self.bootstrap,
                "external_bootstrap": self.external_bootstrap,
                "broker_zones": self.broker_zones,
                "issuer": self.issuer,
            }
        )
