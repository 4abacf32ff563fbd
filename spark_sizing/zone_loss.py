"""What losing one availability zone does to each broker resource, and whether writes survive it.

Replicas are placed rack-aware (one `broker.rack` per zone), so a partition with RF r over z zones
has r/z of its replicas in any one zone on average, and nothing is re-replicated while the zone
is away (the lost replicas just wait). For each surviving broker, with produce rate P, consumer
groups c and B brokers (B(z−1)/z survive):

- disk writes and network in do not change: a survivor hosts the same replicas, and a follower
  promoted to leader receives from producers the bytes it used to fetch from the old leader.
  Cluster-wide both shrink to P·r·(1 − 1/z), spread over B(z−1)/z brokers: the same per broker.
- network out does change: leaders of the lost zone move to survivors, consumers that read from
  them re-point there, and one follower fewer fetches from each partition that lost a replica.
  Cluster-wide it becomes P·max(0, r − 1 − r/z) + P·c (consumers keep reading in full), spread
  over B(z−1)/z brokers instead of B.

docs/sizing.md works one example through by hand; tests/spark_sizing/test_zone_loss.py computes
the same one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spark_sizing.contract import ZoneLoss


def surviving_fraction(zones: int) -> float:
    """Share of brokers left with one zone down (brokers are a multiple of the zone count)."""
    return (zones - 1) / zones


def replicas_in_a_zone(replication_factor: int, zones: int) -> float:
    """Average replicas of one partition held by one zone under rack-aware placement."""
    return replication_factor / zones


def replicas_left(replication_factor: int, zones: int) -> int:
    """Replicas a partition keeps in the worst case: its most crowded zone is the one lost."""
    return replication_factor - math.ceil(replication_factor / zones)


def writes_survive(replication_factor: int, min_insync_replicas: int, zones: int) -> bool:
    """acks=all writes continue when any one zone is lost: enough replicas stay in sync."""
    return zones > 1 and replicas_left(replication_factor, zones) >= min_insync_replicas


@dataclass(frozen=True)
class Resource:
    """One broker resource: its cluster-wide load normally and with one zone down.

    `zone_down` is the load the surviving brokers share; None when there is no zone to lose."""

    name: str
    unit: str
    capacity_per_broker: float
    target: float
    zone_down_limit: float
    normal: float
    zone_down: float | None

    def brokers_needed(self, zones: int) -> int:
        """Brokers so that each stays under `target` normally and, with a zone down, each of
        the brokers of the other z−1 zones stays under `zone_down_limit`."""
        needed = _whole(self.normal / (self.capacity_per_broker * self.target))
        if self.zone_down is not None:
            survivor = self.capacity_per_broker * self.zone_down_limit
            needed = max(needed, _whole(self.zone_down / (survivor * surviving_fraction(zones))))
        return needed

    def per_broker(self, brokers: int) -> float:
        return self.normal / brokers

    def zone_down_per_broker(self, brokers: int, zones: int) -> float | None:
        if self.zone_down is None:
            return None
        survivors = max(1, brokers - math.ceil(brokers / zones))
        return self.zone_down / survivors


def _whole(brokers: float) -> int:
    """Brokers rounded up, forgiving float noise (6.0000000001 is 6)."""
    return max(0, math.ceil(brokers - 1e-9))


@dataclass(frozen=True)
class TopicTraffic:
    """What zone loss needs to know of one topic: peak produce, RF, consumer groups."""

    produce_mb_s: float
    replication_factor: int
    consumer_groups: int


@dataclass(frozen=True)
class Limits:
    """Per-broker capacities (MB/s) and the utilisation allowed normally and with a zone down."""

    disk_mb_s: float
    network_mb_s: float
    target: float
    zone_down_limit: float


def throughput_resources(topics: list[TopicTraffic], zones: int, limits: Limits) -> list[Resource]:
    """Disk writes, network in and network out, each normally and with one zone down."""
    writes = sum(t.produce_mb_s * t.replication_factor for t in topics)
    sent = sum(t.produce_mb_s * (t.replication_factor - 1 + t.consumer_groups) for t in topics)
    writes_down: float | None = None
    sent_down: float | None = None
    if zones > 1:
        writes_down = sum(t.produce_mb_s * (t.replication_factor - _lost(t, zones)) for t in topics)
        sent_down = sum(
            t.produce_mb_s
            * (max(0.0, t.replication_factor - 1 - _lost(t, zones)) + t.consumer_groups)
            for t in topics
        )

    def resource(name: str, capacity: float, normal: float, down: float | None) -> Resource:
        return Resource(name, "MB/s", capacity, limits.target, limits.zone_down_limit, normal, down)

    return [
        resource("disk writes", limits.disk_mb_s, writes, writes_down),
        resource("network in", limits.network_mb_s, writes, writes_down),
        resource("network out", limits.network_mb_s, sent, sent_down),
    ]


def _lost(topic: TopicTraffic, zones: int) -> float:
    return replicas_in_a_zone(topic.replication_factor, zones)


def zone_loss_verdict(topics: list[tuple[str, int, int]], zones: int) -> ZoneLoss:
    """Whether acks=all writes go on with any one zone down, for (topic, RF, min ISR) rows."""
    if zones == 1:
        return ZoneLoss(
            zones=1,
            writes_survive=False,
            topics_losing_writes=len(topics),
            detail="one zone: losing it stops the cluster; nothing here survives a zone loss",
        )
    stopped = [t for t in topics if not writes_survive(t[1], t[2], zones)]
    if not stopped:
        return ZoneLoss(
            zones=zones,
            writes_survive=True,
            topics_losing_writes=0,
            detail=f"every topic keeps min.insync.replicas in sync with any one of {zones} "
            "zones down",
        )
    name, rf, min_isr = stopped[0]
    crowded = math.ceil(rf / zones)
    return ZoneLoss(
        zones=zones,
        writes_survive=False,
        topics_losing_writes=len(stopped),
        detail=(
            f"acks=all writes stop for {len(stopped)} of {len(topics)} topics when a zone is "
            f"lost: {name} has RF {rf} over {zones} zones, so one zone holds {crowded} of its "
            f"replicas and {rf - crowded} stay, below min.insync.replicas {min_isr}; "
            f"use at least {rf} zones or lower min.insync.replicas"
        ),
    )
