"""What every part of the stack-config reader shares: the key namespace, the strict base model
and the shape of a refusal."""

from __future__ import annotations

from typing import Annotated, Any, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationInfo, field_validator

from infra.errors import ConfigError
from infra.model.naming import DNS_LABEL_MAX, dns_name_problem, name_problem
from spark_sizing.contract import STRICT_CONFIG

NAMESPACE = "kafkastack"


class StrictModel(BaseModel):
    # Strict as every model read from a file (unknown keys refused, no .nan or .inf).
    model_config = ConfigDict(**STRICT_CONFIG, populate_by_name=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_yes_no_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        # Validation turns the engine's text ("3") into numbers, as it should; it would also
        # turn `true` into 1 (one broker, 1 ms, uid 1).
        field = cls.model_fields.get(info.field_name or "")
        if isinstance(value, bool) and field is not None and _numeric(field.annotation):
            raise ValueError(f"{str(value).lower()} is a yes/no value; write a number")
        return value


def _numeric(annotation: Any) -> bool:
    """Whether a field takes a number and no yes/no value (`int | None`, not `bool | int`)."""
    leaves: set[Any] = set()
    pending = [annotation]
    while pending:
        current = pending.pop()
        args = get_args(current)
        if args:
            pending.extend(args)
        else:
            leaves.add(current)
    return bool(leaves & {int, float}) and bool not in leaves


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
