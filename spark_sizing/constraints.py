"""Broker count per constraint, and each resource's use at the chosen count.

Each broker resource (disk writes, network in and out, CPU, storage, partition replicas) is a
`zone_loss.Resource`: its load normally and with one zone down, its capacity and limits. The
constraints are what each alone needs; partitions per topic are settled here too, since rounding
them to the broker count depends on that count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from spark_sizing.contract import ResourceUtilisation
from spark_sizing.model_inputs import SizingParameters, TopicDemand
from spark_sizing.partitions import partitions_needed, rounded
from spark_sizing.profiles import HardwareProfile
from spark_sizing.zone_loss import Limits, Resource, TopicTraffic, throughput_resources

# The fewest brokers sized, whatever the load; a topic's replication factor above it raises it:
# Kafka puts each replica of a partition on a broker of its own.
MINIMUM_BROKERS = 3


def raw_partitions(topic: TopicDemand, params: SizingParameters) -> int:
    """What throughput and consumer parallelism need (spark_sizing/partitions.py); a pinned
    count always wins."""
    if topic.pinned_partitions is not None:
        return topic.pinned_partitions
    return partitions_needed(
        topic.peak_ingress_mb_s,
        params.producer_mb_s_per_partition,
        params.consumer_mb_s_per_partition,
        topic.consumers_per_group,
    )


def round_up_to_multiple(value: int, step: int) -> int:
    return math.ceil(value / step) * step


def _held(
    total: float, name: str, unit: str, capacity: float, target: float, zones: int
) -> Resource:
    """A resource a broker holds (storage, partition replicas): nothing moves while a zone is
    away, so each survivor keeps its share and the lost zone's share is simply gone."""
    down = total * (zones - 1) / zones if zones > 1 else None
    return Resource(name, unit, capacity, target, target, total, down)


def storage_resource(storage_gib: float, profile: HardwareProfile, p: SizingParameters) -> Resource:
    return _held(storage_gib, "storage", "GiB", profile.max_disk_gib, p.disk_fill_target, p.zones)


def partition_resource(replicas: int, profile: HardwareProfile, zones: int) -> Resource:
    """Partition replicas against the profile's recommended count per broker (MSK)."""
    return _held(
        float(replicas),
        "partition replicas",
        "replicas",
        profile.recommended_partitions,
        1.0,
        zones,
    )


def throughput(
    topics: Sequence[TopicDemand], profile: HardwareProfile, p: SizingParameters
) -> list[Resource]:
    """Disk writes, network in and out, normally and with one zone down (spark_sizing/zone_loss)."""
    traffic = [
        TopicTraffic(t.peak_ingress_mb_s, t.replication_factor, t.consumer_groups) for t in topics
    ]
    limits = Limits(
        profile.disk_mb_s, profile.network_mb_s, p.target_utilisation, p.zone_down_utilisation
    )
    return throughput_resources(traffic, p.zones, limits)


def cpu_resource(
    traffic: Sequence[Resource], vcpus: float, mb_s_per_vcpu: float, p: SizingParameters
) -> Resource:
    """vCPUs the broker traffic keeps busy: everything a broker receives (client produce and
    replication in) and sends (replication out and consumers), ÷ what one vCPU carries at 100 %
    (the profile's `mb_s_per_vcpu`); a broker may use `cpu_target` of its vCPUs (MSK: 60 %).
    With a zone down each survivor moves what its network in and out then carry."""
    moved = [r for r in traffic if r.name in ("network in", "network out")]
    normal = sum(r.normal for r in moved) / mb_s_per_vcpu
    down: float | None = None
    if all(r.zone_down is not None for r in moved):
        down = sum(r.zone_down or 0.0 for r in moved) / mb_s_per_vcpu
    return Resource("cpu", "vCPU", vcpus, p.cpu_target, p.zone_down_utilisation, normal, down)


def broker_constraints(
    traffic: Sequence[Resource],
    cpu: Resource,
    storage: Resource,
    recovery: int,
    partitions: Resource,
    max_rf: int,
    zones: int,
) -> dict[str, int]:
    """Broker count each constraint alone would need (`recovery`: spark_sizing/recovery.py)."""
    need = {r.name: r.brokers_needed(zones) for r in traffic}
    return {
        "ingress": max(need["disk writes"], need["network in"]),
        "egress": need["network out"],
        "cpu": cpu.brokers_needed(zones),
        "storage": storage.brokers_needed(zones),
        "recovery": recovery,
        "partitions": partitions.brokers_needed(zones),
        "minimum": max(MINIMUM_BROKERS, max_rf),
    }


def utilisation(resource: Resource, brokers: int, zones: int) -> ResourceUtilisation:
    """The resource at the chosen broker count, normally and with one zone down."""
    per_broker = resource.per_broker(brokers)
    down = resource.zone_down_per_broker(brokers, zones)
    return ResourceUtilisation(
        resource=resource.name,
        unit=resource.unit,
        capacity_per_broker=resource.capacity_per_broker,
        target=resource.target,
        zone_down_limit=resource.zone_down_limit,
        brokers_needed=resource.brokers_needed(zones),
        per_broker=round(per_broker, 3),
        utilisation=round(per_broker / resource.capacity_per_broker, 4),
        zone_down_per_broker=None if down is None else round(down, 3),
        zone_down_utilisation=None
        if down is None
        else round(down / resource.capacity_per_broker, 4),
    )


def binding_constraint(constraints: dict[str, int]) -> str:
    """The constraint that sets the count; ties go to the traffic constraints, listed first."""
    return max(constraints, key=lambda name: constraints[name])


def partitions_before_brokers(topic: TopicDemand, params: SizingParameters) -> int:
    """What the topic needs, rounded to a fixed multiple (not yet to the broker count)."""
    needed = raw_partitions(topic, params)
    if topic.pinned_partitions is not None or params.partition_multiple == "brokers":
        return needed
    return rounded(needed, params.partition_multiple, brokers=0)


def spread_over_brokers(
    topics: Sequence[TopicDemand],
    needed: dict[str, int],
    brokers: int,
    profile: HardwareProfile,
    params: SizingParameters,
) -> tuple[dict[str, int], list[str]]:
    """With `partition_multiple` "brokers", counts rounded to the broker count when that stays
    within the profile's replicas per broker; otherwise the counts as needed."""
    if params.partition_multiple != "brokers":
        return needed, []
    spread = {
        t.topic: needed[t.topic]
        if t.pinned_partitions is not None
        else rounded(needed[t.topic], "brokers", brokers)
        for t in topics
    }
    replicas = sum(spread[t.topic] * t.replication_factor for t in topics)
    if replicas <= brokers * profile.recommended_partitions:
        return spread, []
    return needed, [
        "partitions: left at what throughput needs instead of a multiple of the broker count, "
        f"which would exceed {profile.recommended_partitions} replicas per broker"
    ]
