"""Stack config of TLS, authentication and authorization (`kafkastack:security`), and its rules.

Outside local/dev the defaults are the safe ones: every listener encrypted and authenticated,
an authorizer that denies what no ACL allows. Turning one of them off there is refused unless
`security.allow_insecure_listeners` says it is meant.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from infra.config_base import StrictModel, refuse
from infra.errors import ConfigError

AclResource = Literal["topic", "group", "cluster", "transactional-id"]
AclOperation = Literal[
    "All",
    "Read",
    "Write",
    "Create",
    "Delete",
    "Alter",
    "Describe",
    "ClusterAction",
    "DescribeConfigs",
    "AlterConfigs",
    "IdempotentWrite",
]


class IssuerConfig(StrictModel):
    """Who signs the nodes' certificates (cert-manager)."""

    create: bool = Field(
        default=True,
        description="the stack creates a self-signed bootstrap Issuer, a CA Certificate and a "
        "CA Issuer in its namespace; false: name an existing Issuer or ClusterIssuer",
    )
    kind: Literal["Issuer", "ClusterIssuer"] = "Issuer"
    name: str | None = Field(
        default=None, description="existing issuer; required when create=false"
    )

    @model_validator(mode="after")
    def _named_when_existing(self) -> IssuerConfig:
        if not self.create and not self.name:
            raise ValueError("create is false: name the existing issuer in issuer.name")
        if self.create and (self.kind != "Issuer" or self.name):
            raise ValueError(
                "create is true: the stack names its own namespaced Issuer; "
                "remove issuer.kind/name, or set create: false to use an existing one"
            )
        return self


class AclConfig(StrictModel):
    """One grant for a declared user, applied by the ACL Job with kafka-acls.sh."""

    user: str
    resource: AclResource
    name: str = Field(default="*", description="resource name, or its prefix; `*` for any")
    pattern: Literal["literal", "prefixed"] = "literal"
    operations: list[AclOperation] = Field(min_length=1)


class SecurityConfig(StrictModel):
    client_auth: Literal["scram-sha-512", "mtls"] = "scram-sha-512"
    client_tls: bool | None = Field(
        default=None, description="in-cluster CLIENT listener over TLS; default: on but local/dev"
    )
    replication_tls: bool = Field(default=True, description="mTLS between brokers, controllers")
    authorization: bool | None = Field(
        default=None,
        description="authorizer, super.users, deny without an ACL; default: on but local/dev",
    )
    users: list[str] = Field(default_factory=lambda: ["admin"])
    admin_user: str = Field(default="admin", description="super user the ACL Job acts as")
    acls: list[AclConfig] = Field(default_factory=list)
    issuer: IssuerConfig = IssuerConfig()
    allow_insecure_listeners: bool = Field(
        default=False,
        description="outside local/dev, accept a plaintext or unauthenticated listener anyway",
    )


def refuse_security(key: str, message: str) -> ConfigError:
    """A refusal of `security.<key>`, shared with `infra/security_rules.py`."""
    return refuse(f"security.{key}", message)
