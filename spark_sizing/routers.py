"""External access routers (HAProxy, or OpenShift's HAProxy router): how many replicas.

Routers carry the client traffic of clients outside the cluster only: produce and consume, never
replication. Kafka goes through in TCP mode with TLS passed through by SNI, so a router forwards
bytes without decrypting them: HAProxy's starter guide measures 10 Gbps (1250 MB/s) on one core
for objects of 41 kB and more in clear text (20 Gbps from 256 kB), where Kafka's produce batches
and fetch responses sit. The node a replica runs on must carry the same: set
`--router-capacity-mb-s` to the node's network when that is smaller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# HAProxy starter guide (doc/intro.txt, "Sizing"): 10 Gbps on one core for 41 kB+ objects.
HAPROXY_MB_S_PER_REPLICA = 1250.0
# Two replicas, so that one can restart or fail without cutting external clients off.
MIN_REPLICAS = 2


@dataclass(frozen=True)
class RouterPlan:
    replicas: int
    external_mb_s: float


def router_replicas(
    client_mb_s: float,
    external_share: float,
    capacity_mb_s: float,
    target: float,
    zone_down_limit: float,
    zones: int,
) -> RouterPlan:
    """Replicas for the external share of client traffic: each under `target` normally, the
    survivors under `zone_down_limit` with one zone down, at least two; past two, a multiple of
    the zone count so that every zone holds the same share (replicas are spread over zones)."""
    external = client_mb_s * external_share
    replicas = max(MIN_REPLICAS, math.ceil(external / (capacity_mb_s * target)))
    if replicas > MIN_REPLICAS and zones > 1:
        replicas = math.ceil(replicas / zones) * zones
    while zones > 1 and _survivors(replicas, zones) * capacity_mb_s * zone_down_limit < external:
        replicas += zones if replicas >= zones else 1
    return RouterPlan(replicas=replicas, external_mb_s=external)


def _survivors(replicas: int, zones: int) -> int:
    """Replicas left when the zone holding the most of them is lost."""
    return replicas - math.ceil(replicas / zones)
