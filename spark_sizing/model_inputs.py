"""What the sizing model reads: one `TopicDemand` per topic (from the Spark job) and the
`SizingParameters` (from the command line), each knob with its default and where it comes from."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from pydantic import BaseModel, Field, field_validator

from spark_sizing.contract import STRICT_CONFIG
from spark_sizing.partitions import PartitionMultiple
from spark_sizing.routers import HAPROXY_MB_S_PER_REPLICA
from spark_sizing.volume_types import DEFAULT_VOLUME_HEADROOM


class SizingParameters(BaseModel):
    """Knobs of the model, each with its default and where the default comes from."""

    model_config = STRICT_CONFIG

    zones: int = Field(default=3, ge=1, description="availability zones (racks)")
    # A straight line fitted to the projections says little a decade on; the bound also keeps
    # the report's charts, which run to the horizon, inside the calendar matplotlib draws.
    horizon_months: int = Field(
        default=12, ge=0, le=120, description="how far growth is extrapolated"
    )
    peak_factor: float = Field(
        default=2.0, ge=1.0, description="peak/average when produce_mb_s_peak is absent"
    )
    # MSK sizes every broker resource for 50% target utilisation in normal operation.
    target_utilisation: float = Field(default=0.5, gt=0, le=1)
    # With a zone down (hours, until it is back) survivors may run hotter, not saturated: 20 %
    # stays for bursts above the modelled peak and for the followers' catch-up afterwards.
    zone_down_utilisation: float = Field(default=0.8, gt=0, le=1)
    # MSK: keep CPU (user + system) under 60 % so a broker's loss or a rolling restart has room.
    cpu_target: float = Field(default=0.6, gt=0, le=1, description="share of vCPUs used normally")
    # Re-replicating one lost broker's data must finish within this (spark_sizing/recovery.py).
    recovery_hours: float = Field(default=4.0, gt=0, description="hours to re-replicate a broker")
    # A replication throttle (leader/follower.replication.throttled.rate), MB/s per broker; none:
    # the headroom of disk and network under the zone-down limit.
    recovery_mb_s: float | None = Field(default=None, gt=0, description="recovery throttle, MB/s")
    # Share of consumer bytes served by a replica in the consumer's own zone (KIP-392 follower
    # fetching with client.rack); the rest crosses zones for (z−1)/z of the consumers.
    follower_fetching_share: float = Field(default=0.0, ge=0, le=1)
    # Confluent: producers reach "10s of MB/s" per partition; consumers are faster per partition.
    producer_mb_s_per_partition: float = Field(default=10.0, gt=0)
    consumer_mb_s_per_partition: float = Field(default=20.0, gt=0)
    # 1: partitions as throughput and consumers need them; N: a multiple of N; "brokers": a
    # multiple of the broker count (leaders spread evenly, small topics multiplied).
    partition_multiple: PartitionMultiple = Field(default=1)
    # Segment files, indexes and time indexes add about a tenth on top of the payload.
    storage_overhead: float = Field(default=0.10, ge=0)
    # AKalculator / MSK: keep disks at most half full (MSK's "2x headroom").
    disk_fill_target: float = Field(default=0.5, gt=0, le=1)
    # Confluent: a 6 GB heap is enough; page cache for ~30 s of writes.
    heap_gib: float = Field(default=6.0, gt=0)
    page_cache_seconds: float = Field(default=30.0, ge=0)
    quorum_kind: str = Field(default="kraft", pattern="^(kraft|zookeeper)$")
    # HAProxy's starter guide: one core forwards 10 Gbps of 41 kB+ objects (spark_sizing/routers).
    router_capacity_mb_s: float = Field(default=HAPROXY_MB_S_PER_REPLICA, gt=0)
    router_target_utilisation: float = Field(default=0.5, gt=0, le=1)
    # Share of client traffic from outside the cluster: only that goes through the routers.
    router_external_share: float = Field(default=1.0, ge=0, le=1)
    # Every node also runs daemon sets (CNI, kube-proxy, CSI node plugin, log and metrics agents);
    # the broker gets what is left of the node's allocatable.
    daemonset_cpu: float = Field(default=0.5, ge=0, description="vCPUs per node for daemon sets")
    daemonset_memory_gib: float = Field(default=1.0, ge=0, description="GiB per node, same")
    # Each data volume stays within this share of its type's size/IOPS/throughput ceilings.
    volume_headroom: float = Field(default=DEFAULT_VOLUME_HEADROOM, gt=0, le=1)

    @field_validator("partition_multiple")
    @classmethod
    def _positive_multiple(cls, value: PartitionMultiple) -> PartitionMultiple:
        if value != "brokers" and value < 1:
            raise ValueError("must be an integer ≥ 1 or 'brokers'")
        return value


# The most one topic's projected rate may reach, MB/s. Input rows stop at 1 TB/s
# (spark_sizing/schema.py); growth may multiply that, but a fit scaled from a last-month average
# near zero can run away to infinity, and every product the model forms from a figure below this
# ceiling (× RF, × consumer groups, × a century of retention) stays a finite float.
MAX_DEMAND_MB_S = 1e12


class DemandError(ValueError):
    """A topic's projected demand the model cannot size; the message names the topic."""


@dataclass(frozen=True)
class TopicDemand:
    """One topic's projected demand at the end of the horizon (output of the Spark job)."""

    topic: str
    peak_ingress_mb_s: float
    avg_ingress_mb_s: float
    consumer_groups: int
    retention_hours: float
    replication_factor: int
    min_insync_replicas: int
    pinned_partitions: int | None = None
    compression_ratio: float = 1.0
    consumers_per_group: int | None = None

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            rate = field.name.endswith("_mb_s")
            if isinstance(value, float) and not (
                math.isfinite(value) and (not rate or value <= MAX_DEMAND_MB_S)
            ):
                raise DemandError(
                    f"topic {self.topic}: projected {field.name} is {value:.3g}, beyond what the "
                    f"model sizes (finite, rates ≤ {MAX_DEMAND_MB_S:.0e} MB/s): its rows' growth "
                    "fit ran away (a last month averaging near zero under a steep trend?); "
                    "check them"
                )
