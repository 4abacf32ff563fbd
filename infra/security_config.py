"""Stack config of TLS, authentication and authorization (`kafkastack:security`), and its rules.

Outside local/dev the defaults are the safe ones: every listener encrypted and authenticated,
an authorizer that denies what no ACL allows. Turning one of them off there is refused unless
`security.allow_insecure_listeners` says it is meant.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from infra.config_base import StrictModel, refuse
from infra.errors import ConfigError
from infra.model.naming import DNS_NAME_MAX, MAX_CLUSTER_NAME, dns_name_problem

# The longest user whose Secret name (`<cluster>-user-<user>`) is still a DNS name.
MAX_USER_NAME = DNS_NAME_MAX - MAX_CLUSTER_NAME - len("-user-")
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


def duration_minutes(text: str) -> int:
    """Minutes in a cert-manager duration written in hours and/or minutes (`2160h`, `1h30m`)."""
    match = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?", text)
    if not text or match is None:
        raise ValueError(f"{text!r} is not a duration: write hours and minutes, e.g. 2160h or 90m")
    return int(match.group(1) or 0) * 60 + int(match.group(2) or 0)


# cert-manager refuses a Certificate shorter than this, and a renewal closer to expiry than that.
CERT_MANAGER_MINIMUM_MINUTES = 60
CERT_MANAGER_MINIMUM_RENEW_MINUTES = 5


class CertificatesConfig(StrictModel):
    """The nodes' certificates: how long they live and when cert-manager renews them. Each
    Kafka pod's keystore reloader makes the running node serve a renewed one within a minute or
    two of the renewal (infra/model/certificate_reload.py), without a restart."""

    duration: str = Field(default="2160h", description="lifetime; cert-manager's minimum is 1h")
    renew_before: str = Field(
        default="360h",
        description="cert-manager renews this long before the certificate expires (at least 5m)",
    )

    @property
    def duration_minutes(self) -> int:
        return duration_minutes(self.duration)

    @property
    def renew_before_minutes(self) -> int:
        return duration_minutes(self.renew_before)

    @model_validator(mode="after")
    def _renewed_before_expiry(self) -> CertificatesConfig:
        if self.duration_minutes < CERT_MANAGER_MINIMUM_MINUTES:
            raise ValueError(
                f"duration {self.duration} is under cert-manager's minimum: use 1h or more"
            )
        if (
            not CERT_MANAGER_MINIMUM_RENEW_MINUTES
            <= self.renew_before_minutes
            < self.duration_minutes
        ):
            raise ValueError(
                f"renew_before {self.renew_before} must be at least 5m (cert-manager's minimum) "
                f"and shorter than duration {self.duration}"
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
    certificates: CertificatesConfig = CertificatesConfig()
    allow_insecure_listeners: bool = Field(
        default=False,
        description="outside local/dev, accept a plaintext or unauthenticated listener anyway",
    )

    @field_validator("users")
    @classmethod
    def _each_once(cls, users: list[str]) -> list[str]:
        for at, user in enumerate(users):
            # Its Secret is `<cluster>-user-<user>` (a DNS name), and the name goes into the
            # commands that create the user (`--add-scram name=…`): DNS characters carry both.
            problem = dns_name_problem(user)
            if problem or len(user) > MAX_USER_NAME:
                raise ValueError(
                    f"user {at}: {problem or f'{user!r} is longer than {MAX_USER_NAME}'} (its "
                    "Secret is named <cluster>-user-<user>, so no '_' or capitals)"
                )
        twice = sorted({u for u in users if users.count(u) > 1})
        if twice:
            raise ValueError(f"{', '.join(twice)} listed twice; list each user once")
        return users


def refuse_security(key: str, message: str) -> ConfigError:
    """A refusal of `security.<key>`, shared with `infra/security_rules.py`."""
    return refuse(f"security.{key}", message)
