"""What every part of the stack-config reader shares: the key namespace, the strict base model
and the shape of a refusal."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from infra.errors import ConfigError

NAMESPACE = "kafkastack"


class StrictModel(BaseModel):
    # extra="forbid": a typo in a key is refused rather than silently ignored.
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def refuse(key: str, message: str) -> ConfigError:
    """A refusal naming the stack key (without the namespace) and, in `message`, the fix."""
    return ConfigError(f"{NAMESPACE}:{key}: {message}")
