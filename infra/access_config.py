"""Stack config of external access (`kafkastack:external`): HAProxy or OpenShift Routes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from infra.config_base import DnsName, StrictModel


class ExternalConfig(StrictModel):
    mode: Literal["route", "haproxy", "none"] = "haproxy"
    domain: DnsName = "kafka.example.com"
    tls: bool = True
    router_shard: str | None = Field(default=None, description="OpenShift router shard label")
    replicas: int | None = Field(default=None, ge=1, description="HAProxy replicas; default sizing")
    # Internal unless the stack says otherwise: an internet-facing NLB publishes every broker's
    # EXTERNAL listener to the whole internet, a choice someone must write down on purpose.
    load_balancer_scheme: Literal["internet-facing", "internal"] = Field(
        default="internal",
        description="AWS NLB scheme of the HAProxy Service: internal (reachable from the VPC and "
        "what is peered or routed to it) or internet-facing (a public address)",
    )
