"""What every part of the stack-config reader shares: the key namespace, the strict base model
and the shape of a refusal."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict

from infra.errors import ConfigError
from infra.model.naming import DNS_LABEL_MAX, dns_name_problem, name_problem

NAMESPACE = "kafkastack"


class StrictModel(BaseModel):
    # extra="forbid": a typo in a key is refused rather than silently ignored. No NaN or
    # infinity: YAML writes them as .nan and .inf, and no size, count or share can be either.
    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, allow_inf_nan=False
    )


def refuse(key: str, message: str) -> ConfigError:
    """A refusal naming the stack key (without the namespace) and, in `message`, the fix."""
    return ConfigError(f"{NAMESPACE}:{key}: {message}")


def _dns_label(value: str) -> str:
    problem = name_problem(value, DNS_LABEL_MAX)
    if problem:
        raise ValueError(problem)
    return value


def _dns_name(value: str) -> str:
    problem = dns_name_problem(value)
    if problem:
        raise ValueError(problem)
    return value


# Names that end up in Kubernetes object names, namespaces or host names: refused here, before
# the engine creates anything, rather than by the apiserver halfway through `pulumi up`.
DnsLabel = Annotated[str, AfterValidator(_dns_label)]
DnsName = Annotated[str, AfterValidator(_dns_name)]
