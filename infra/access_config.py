"""Stack config of external access (`kafkastack:external`): HAProxy or OpenShift Routes."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from infra.config_base import StrictModel

# The version the harness (`kafkastack verify`, the Kafka tier) runs the rendered haproxy.cfg
# with: Debian bookworm's haproxy 2.6.12. A tag naming the exact release, never a moving one.
DEFAULT_HAPROXY_IMAGE = "haproxy:2.6.12"
_PINNED = re.compile(r".+(@sha256:[0-9a-f]{64}|:\d+\.\d+\.\d+(-[A-Za-z0-9.]+)?)")


class ExternalConfig(StrictModel):
    mode: Literal["route", "haproxy", "none"] = "haproxy"
    domain: str = "kafka.example.com"
    tls: bool = True
    router_shard: str | None = Field(default=None, description="OpenShift router shard label")
    replicas: int | None = Field(default=None, ge=1, description="HAProxy replicas; default sizing")
    haproxy_image: str = Field(
        default=DEFAULT_HAPROXY_IMAGE, description="exact version tag or @sha256 digest"
    )
    load_balancer_scheme: Literal["internet-facing", "internal"] = Field(
        default="internet-facing", description="AWS NLB scheme of the HAProxy Service"
    )

    @field_validator("haproxy_image")
    @classmethod
    def _pinned(cls, value: str) -> str:
        if not _PINNED.fullmatch(value):
            raise ValueError(
                f"{value!r} can change under a running stack; pin an exact release "
                "(haproxy:2.6.12) or a digest (haproxy@sha256:…)"
            )
        return value
