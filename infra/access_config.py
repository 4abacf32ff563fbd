"""Stack config of external access (`kafkastack:external`): HAProxy or OpenShift Routes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from infra.config_base import StrictModel


class ExternalConfig(StrictModel):
    mode: Literal["route", "haproxy", "none"] = "haproxy"
    domain: str = "kafka.example.com"
    tls: bool = True
    router_shard: str | None = Field(default=None, description="OpenShift router shard label")
    replicas: int | None = Field(default=None, ge=1, description="HAProxy replicas; default sizing")
    load_balancer_scheme: Literal["internet-facing", "internal"] = Field(
        default="internet-facing", description="AWS NLB scheme of the HAProxy Service"
    )
