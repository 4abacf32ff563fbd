"""Stack config of TLS, authentication and authorization (`kafkastack:security`), and its rules.

Outside local/dev the defaults are the safe ones: every listener encrypted and authenticated,
an authorizer that denies what no ACL allows. Turning one of them off there is refused unless
`security.allow_insecure_listeners` says it is meant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from infra.config_base import StrictModel, refuse
from infra.errors import ConfigError

if TYPE_CHECKING:
    from infra.config import StackConfig

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


def _refuse(key: str, message: str) -> ConfigError:
    return refuse(f"security.{key}", message)


def check_security(c: StackConfig) -> None:
    """Listeners, users and grants that would leave a cluster open or an ACL dangling."""
    s = c.security
    if s.admin_user not in s.users:
        raise _refuse(
            "admin_user", f"{s.admin_user!r} is not in security.users; add it or name another"
        )
    if c.quorum.kind == "zookeeper" and "zookeeper" in s.users:
        raise _refuse(
            "users",
            "'zookeeper' names the brokers' ZooKeeper password (password-zookeeper); "
            "call the user something else",
        )
    for grant in s.acls:
        if grant.user not in s.users:
            raise _refuse(
                "acls", f"grant for {grant.user!r}, who is not in security.users; add the user"
            )
    if not (c.small or s.allow_insecure_listeners):
        _refuse_open_listeners(c)
    if c.authorization and not s.replication_tls:
        raise _refuse(
            "replication_tls",
            "authorization needs it: brokers and controllers are super users by their "
            "certificate; turn it on, or turn security.authorization off",
        )


def _refuse_open_listeners(c: StackConfig) -> None:
    s = c.security
    insecure = {
        "client_tls": not c.client_tls,
        "replication_tls": not s.replication_tls,
        "authorization": not c.authorization,
    }
    for key, off in insecure.items():
        if off:
            raise _refuse(
                key,
                f"off in {c.environment}: a listener would carry data or credentials unencrypted "
                "or unchecked; remove the setting, or set security.allow_insecure_listeners: true "
                "to accept it",
            )
