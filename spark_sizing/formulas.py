"""The sizing arithmetic, in plain Python: from per-topic demand to a cluster shape.

Spark reduces the projections to one `TopicDemand` per topic (spark_sizing/transforms.py); all
rules live here so they are tested in milliseconds. Every constant names its public source; the
full list with links is in docs/sizing.md.

Traffic accounting (AWS, Google Cloud, Redpanda agree), for produce rate P, replication factor r
and c consumer groups reading from the tip:
    disk writes = P·r      network in  = P·r (clients + replication)
    replication = P·(r−1) network out = P·(r−1) + P·c
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel, ConfigDict, Field

from spark_sizing.allocatable import node_sizing
from spark_sizing.contract import (
    BrokerResources,
    ClusterSizing,
    NodeSizing,
    QuorumSizing,
    RouterSizing,
    StorageClassSizing,
    TopicSizing,
)
from spark_sizing.profiles import HardwareProfile
from spark_sizing.units import BYTES_PER_GIB, BYTES_PER_MB
from spark_sizing.volume_types import DEFAULT_VOLUME_HEADROOM, volume_layout, volume_type

SECONDS_PER_HOUR = 3600


class SizingParameters(BaseModel):
    """Knobs of the model, each with its default and where the default comes from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    zones: int = Field(default=3, ge=1, description="availability zones (racks)")
    horizon_months: int = Field(default=12, ge=0, description="how far growth is extrapolated")
    peak_factor: float = Field(
        default=2.0, ge=1.0, description="peak/average when produce_mb_s_peak is absent"
    )
    # MSK sizes every broker resource for 50% target utilisation.
    target_utilisation: float = Field(default=0.5, gt=0, le=1)
    # Confluent: producers reach "10s of MB/s" per partition; consumers are faster per partition.
    producer_mb_s_per_partition: float = Field(default=10.0, gt=0)
    consumer_mb_s_per_partition: float = Field(default=20.0, gt=0)
    # Segment files, indexes and time indexes add about a tenth on top of the payload.
    storage_overhead: float = Field(default=0.10, ge=0)
    # AKalculator / MSK: keep disks at most half full (MSK's "2x headroom").
    disk_fill_target: float = Field(default=0.5, gt=0, le=1)
    # Confluent: a 6 GB heap is enough; page cache for ~30 s of writes.
    heap_gib: float = Field(default=6.0, gt=0)
    page_cache_seconds: float = Field(default=30.0, ge=0)
    quorum_kind: str = Field(default="kraft", pattern="^(kraft|zookeeper)$")
    # One OpenShift router saturates a 1 Gbit NIC (~125 MB/s); shard once past half of it.
    router_capacity_mb_s: float = Field(default=125.0, gt=0)
    router_target_utilisation: float = Field(default=0.5, gt=0, le=1)
    # Every node also runs daemon sets (CNI, kube-proxy, CSI node plugin, log and metrics agents);
    # the broker gets what is left of the node's allocatable.
    daemonset_cpu: float = Field(default=0.5, ge=0, description="vCPUs per node for daemon sets")
    daemonset_memory_gib: float = Field(default=1.0, ge=0, description="GiB per node, same")
    # Each data volume stays within this share of its type's size/IOPS/throughput ceilings.
    volume_headroom: float = Field(default=DEFAULT_VOLUME_HEADROOM, gt=0, le=1)


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


def raw_partitions(topic: TopicDemand, params: SizingParameters) -> int:
    """Confluent's rule: partitions ≥ max(t/p, t/c); a pinned count always wins."""
    if topic.pinned_partitions is not None:
        return topic.pinned_partitions
    needed = max(
        topic.peak_ingress_mb_s / params.producer_mb_s_per_partition,
        topic.peak_ingress_mb_s / params.consumer_mb_s_per_partition,
    )
    return max(1, math.ceil(needed))


def spread_partitions(count: int, brokers: int, pinned: bool) -> int:
    """Round up to a multiple of the broker count so leaders spread evenly; pinned are kept."""
    if pinned or count >= brokers * 8:
        # Past a few partitions per broker the imbalance of one extra is negligible, and
        # inflating large topics further only costs failover time.
        return count
    return math.ceil(count / brokers) * brokers


def topic_storage_gib(topic: TopicDemand, params: SizingParameters) -> float:
    """Average ingress × retention × RF × compression, plus segment/index overhead."""
    payload_bytes = topic.avg_ingress_mb_s * BYTES_PER_MB * topic.retention_hours * SECONDS_PER_HOUR
    stored = payload_bytes * topic.replication_factor * topic.compression_ratio
    return stored * (1 + params.storage_overhead) / BYTES_PER_GIB


@dataclass(frozen=True)
class ClusterLoad:
    """Cluster-wide peak traffic, MB/s."""

    ingress: float
    disk_writes: float
    replication: float
    consumer_egress: float

    @property
    def network_in(self) -> float:
        return self.ingress + self.replication

    @property
    def network_out(self) -> float:
        return self.replication + self.consumer_egress


def cluster_load(topics: Sequence[TopicDemand]) -> ClusterLoad:
    return ClusterLoad(
        ingress=sum(t.peak_ingress_mb_s for t in topics),
        disk_writes=sum(t.peak_ingress_mb_s * t.replication_factor for t in topics),
        replication=sum(t.peak_ingress_mb_s * (t.replication_factor - 1) for t in topics),
        consumer_egress=sum(t.peak_ingress_mb_s * t.consumer_groups for t in topics),
    )


def surviving_share(zones: int) -> float:
    """Share of brokers left with one zone down; one zone of one means no zone to lose."""
    return 1.0 if zones <= 1 else (zones - 1) / zones


def brokers_for_throughput(load_mb_s: float, per_broker_mb_s: float, p: SizingParameters) -> int:
    """Brokers so that peak load fits at target utilisation with one zone down."""
    usable = per_broker_mb_s * p.target_utilisation * surviving_share(p.zones)
    return math.ceil(load_mb_s / usable) if load_mb_s > 0 else 0


def round_up_to_multiple(value: int, step: int) -> int:
    return math.ceil(value / step) * step


def broker_constraints(
    load: ClusterLoad,
    storage_gib: float,
    partition_replicas: int,
    max_rf: int,
    profile: HardwareProfile,
    params: SizingParameters,
) -> dict[str, int]:
    """Broker count each constraint alone would need."""
    return {
        "ingress": max(
            brokers_for_throughput(load.disk_writes, profile.disk_mb_s, params),
            brokers_for_throughput(load.network_in, profile.network_mb_s, params),
        ),
        "egress": brokers_for_throughput(load.network_out, profile.network_mb_s, params),
        "storage": math.ceil(storage_gib / (profile.max_disk_gib * params.disk_fill_target)),
        "partitions": math.ceil(partition_replicas / profile.recommended_partitions),
        "minimum": max(3, max_rf),
    }


def binding_constraint(constraints: dict[str, int]) -> str:
    """The constraint that sets the count; ties go to the traffic constraints, listed first."""
    return max(constraints, key=lambda name: constraints[name])


def brokers_per_zone(brokers: int, zones: int) -> list[int]:
    base, extra = divmod(brokers, zones)
    return [base + (1 if z < extra else 0) for z in range(zones)]


def _floor_to(value: float, step: float) -> float:
    return math.floor(round(value / step, 6)) * step


def broker_resources(
    load: ClusterLoad, brokers: int, node: NodeSizing, profile: HardwareProfile, p: SizingParameters
) -> tuple[BrokerResources, list[str]]:
    """The node's allocatable less its daemon sets, on a node of its own; heap plus ~30 s of
    each broker's writes in page cache (Confluent): what the heap does not use is page cache.

    Requests are rounded down (0.1 vCPU, 0.25 GiB) so they always fit what they came from.
    """
    warnings: list[str] = []
    cpu = _floor_to(node.allocatable_cpu - node.daemonset_cpu, 0.1)
    memory = _floor_to(node.allocatable_memory_gib - node.daemonset_memory_gib, 0.25)
    if cpu <= 0 or memory <= 1.0:
        raise ValueError(
            f"profile {profile.name}: {node.allocatable_cpu:g} vCPUs / "
            f"{node.allocatable_memory_gib:g} GiB allocatable leave nothing for a broker after the "
            "daemon sets; choose a larger profile"
        )
    writes_per_broker = load.disk_writes / brokers
    page_cache_gib = writes_per_broker * BYTES_PER_MB * p.page_cache_seconds / BYTES_PER_GIB
    wanted = math.ceil(p.heap_gib + page_cache_gib + 1.0)  # +1 GiB for the JVM itself
    if wanted > memory:
        warnings.append(
            f"memory: brokers want {wanted} GiB (heap + 30 s page cache) but {profile.name} can "
            f"give a broker {memory:g} GiB; choose a larger or memory-optimised profile (r6i)"
        )
    heap = min(p.heap_gib, max(1.0, memory / 4))
    # MSK's thread table: num.io.threads = vCPUs, num.network.threads = vCPUs / 2.
    resources = BrokerResources(
        cpu=round(cpu, 1),
        memory_gib=round(memory, 2),
        heap_gib=heap,
        num_network_threads=max(3, int(profile.cpu // 2)),
        num_io_threads=max(8, int(profile.cpu)),
    )
    return resources, warnings


def per_broker_disk_mb_s(load: ClusterLoad, brokers: int, p: SizingParameters) -> float:
    """Disk writes each broker must sustain with one zone down, at target utilisation."""
    surviving_brokers = max(1, math.floor(brokers * surviving_share(p.zones)))
    return load.disk_writes / surviving_brokers / p.target_utilisation


def storage_class(
    per_broker_gib: float, per_broker_mb_s: float, profile: HardwareProfile, p: SizingParameters
) -> tuple[int, float, StorageClassSizing]:
    """Data volumes per broker, GiB per broker, and what each volume must carry: several volumes
    (JBOD) once one would pass `volume_headroom` of its type's size, throughput or IOPS ceiling;
    never smaller than the type allows for the IOPS it needs."""
    layout = volume_layout(
        volume_type(profile.volume_type), per_broker_gib, per_broker_mb_s, p.volume_headroom
    )
    sized = StorageClassSizing(
        type=profile.volume_type,
        iops=layout.provisioned.iops or 0,
        throughput_mb_s=layout.throughput_mb_s,
    )
    return layout.volumes, max(per_broker_gib, layout.size_gib * layout.volumes), sized


def quorum(brokers: int, partition_replicas: int, params: SizingParameters) -> QuorumSizing:
    """KRaft: 3 controllers, 5 for large clusters; ZooKeeper: 3/5/7 (2F+1 tolerates F).

    Five voters tolerate two failures, which matters once a cluster is big enough that a
    controller failover during a broker outage is likely: 10+ brokers or 20k+ replicas.
    """
    large = brokers >= 10 or partition_replicas >= 20000
    if params.quorum_kind == "zookeeper":
        nodes = 7 if brokers >= 30 else 5 if large else 3
        # Confluent: ZooKeeper 2-4 CPU, 4 GB, 100 GB; heap 2-4 GB.
        return QuorumSizing(
            kind="zookeeper", nodes=nodes, cpu=2, memory_gib=4, heap_gib=2, storage_gib=100
        )
    # Confluent / Apache: KRaft controllers 4 GB RAM, 64 GB SSD, 1 GB heap.
    return QuorumSizing(
        kind="kraft", nodes=5 if large else 3, cpu=2, memory_gib=4, heap_gib=1, storage_gib=64
    )


def router(load: ClusterLoad, params: SizingParameters) -> RouterSizing:
    """Routers carry client produce and consume, never replication; keep each under half load."""
    client = load.ingress + load.consumer_egress
    per_replica = params.router_capacity_mb_s * params.router_target_utilisation
    return RouterSizing(
        replicas=max(2, math.ceil(client / per_replica)),
        client_mb_s=round(client, 3),
        capacity_mb_s_per_replica=params.router_capacity_mb_s,
    )


@dataclass(frozen=True)
class SizingResult:
    cluster: ClusterSizing
    topics: list[TopicSizing]
    warnings: list[str]


def size_cluster(
    topics: Sequence[TopicDemand], profile: HardwareProfile, params: SizingParameters
) -> SizingResult:
    """The whole cluster: broker count from the binding constraint, then per-broker resources."""
    if not topics:
        raise ValueError("no topics to size: every input row was rejected or the input is empty")
    load = cluster_load(topics)
    storage = sum(topic_storage_gib(t, params) for t in topics)
    max_rf = max(t.replication_factor for t in topics)
    raw = {t.topic: raw_partitions(t, params) for t in topics}

    # The partition constraint counts the partitions throughput needs. Rounding each topic up to a
    # multiple of the broker count must not feed back into the count: with many small topics it
    # would raise the count, which raises the rounding, without end.
    raw_replicas = sum(raw[t.topic] * t.replication_factor for t in topics)
    constraints = broker_constraints(load, storage, raw_replicas, max_rf, profile, params)
    brokers = round_up_to_multiple(max(constraints.values()), params.zones)
    spread = {
        t.topic: spread_partitions(raw[t.topic], brokers, t.pinned_partitions is not None)
        for t in topics
    }
    spread_replicas = sum(spread[t.topic] * t.replication_factor for t in topics)
    rounding_fits = spread_replicas <= brokers * profile.recommended_partitions
    partitions = spread if rounding_fits else raw
    replicas = spread_replicas if rounding_fits else raw_replicas

    warnings: list[str] = []
    if not rounding_fits:
        warnings.append(
            "partitions: left at what throughput needs instead of a multiple of the broker count, "
            f"which would exceed {profile.recommended_partitions} replicas per broker"
        )
    node = node_sizing(profile, params.daemonset_cpu, params.daemonset_memory_gib)
    resources, memory_warnings = broker_resources(load, brokers, node, profile, params)
    warnings += memory_warnings
    per_broker_gib = storage / brokers / params.disk_fill_target
    volumes, per_broker_gib, volume_sizing = storage_class(
        per_broker_gib, per_broker_disk_mb_s(load, brokers, params), profile, params
    )
    min_isr = min(t.min_insync_replicas for t in topics)
    warnings += _topic_warnings(topics, brokers, params)

    cluster = ClusterSizing(
        brokers=brokers,
        zones=params.zones,
        brokers_per_zone=brokers_per_zone(brokers, params.zones),
        binding_constraint=binding_constraint(constraints),  # type: ignore[arg-type]
        constraints=constraints,
        profile=profile.name,
        peak_ingress_mb_s=round(load.ingress, 3),
        peak_egress_mb_s=round(load.consumer_egress, 3),
        replication_mb_s=round(load.replication, 3),
        storage_per_broker_gib=math.ceil(per_broker_gib * 10) / 10,
        data_volumes_per_broker=volumes,
        partitions_total=replicas,
        replication_factor=max_rf,
        min_insync_replicas=max(1, min_isr),
        broker=resources,
        node=node,
        storage_class=volume_sizing,
        quorum=quorum(brokers, replicas, params),
        router=router(load, params),
    )
    topic_rows = [
        TopicSizing(
            topic=t.topic,
            partitions=partitions[t.topic],
            replication_factor=t.replication_factor,
            peak_ingress_mb_s=round(t.peak_ingress_mb_s, 3),
            peak_egress_mb_s=round(t.peak_ingress_mb_s * t.consumer_groups, 3),
            storage_gib=round(topic_storage_gib(t, params), 3),
            partitions_pinned=t.pinned_partitions is not None,
        )
        for t in topics
    ]
    return SizingResult(cluster=cluster, topics=topic_rows, warnings=warnings)


def _topic_warnings(
    topics: Sequence[TopicDemand], brokers: int, params: SizingParameters
) -> list[str]:
    warnings = []
    for t in topics:
        if t.replication_factor > brokers:
            warnings.append(f"topic {t.topic}: replication_factor {t.replication_factor} > brokers")
        if t.min_insync_replicas >= t.replication_factor and t.replication_factor > 1:
            warnings.append(
                f"topic {t.topic}: min_insync_replicas {t.min_insync_replicas} ≥ RF "
                f"{t.replication_factor}: one broker down stops acks=all writes; use RF−1"
            )
        if t.pinned_partitions is not None:
            needed = raw_partitions(replace(t, pinned_partitions=None), params)
            if needed > t.pinned_partitions:
                warnings.append(
                    f"topic {t.topic}: pinned partitions {t.pinned_partitions} are below the "
                    f"{needed} its peak throughput needs; per-partition throughput will cap it"
                )
    return warnings
