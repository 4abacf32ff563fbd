"""The sizing arithmetic, in plain Python: from per-topic demand to a cluster shape.

Spark reduces the projections to one `TopicDemand` per topic (spark_sizing/transforms.py); all
rules live here and in the modules `size_cluster` composes (constraints.py, zone_loss.py,
partitions.py, routers.py), so they are tested in milliseconds. Every constant names its public
source; the full list with links is in docs/sizing.md.

Traffic accounting (AWS, Google Cloud, Redpanda agree), for produce rate P, replication factor r
and c consumer groups reading from the tip:
    disk writes = P·r      network in  = P·r (clients + replication)
    replication = P·(r−1) network out = P·(r−1) + P·c
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from spark_sizing.constraints import (
    binding_constraint,
    broker_constraints,
    partition_resource,
    partitions_before_brokers,
    raw_partitions,
    round_up_to_multiple,
    spread_over_brokers,
    storage_resource,
    throughput,
    utilisation,
)
from spark_sizing.contract import (
    BrokerResources,
    ClusterSizing,
    QuorumSizing,
    ResourceUtilisation,
    RouterSizing,
    StorageClassSizing,
    TopicSizing,
    ZoneLoss,
)
from spark_sizing.model_inputs import SizingParameters, TopicDemand
from spark_sizing.profiles import EBS_MAX_VOLUME_GIB, HardwareProfile
from spark_sizing.routers import router_replicas
from spark_sizing.zone_loss import zone_loss_verdict

# The model's inputs and per-topic partitions have their own modules; callers that import them
# from here keep working.
__all__ = ["SizingParameters", "TopicDemand", "raw_partitions", "size_cluster"]

BYTES_PER_MB = 1_000_000
BYTES_PER_GIB = 1024**3
SECONDS_PER_HOUR = 3600


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


def brokers_per_zone(brokers: int, zones: int) -> list[int]:
    base, extra = divmod(brokers, zones)
    return [base + (1 if z < extra else 0) for z in range(zones)]


def broker_resources(
    load: ClusterLoad, brokers: int, profile: HardwareProfile, params: SizingParameters
) -> tuple[BrokerResources, list[str]]:
    """Heap plus page cache for ~30 s of each broker's writes (Confluent), on a dedicated node.

    The broker gets the node's memory less a tenth for the kubelet and the OS: whatever the heap
    does not use becomes page cache, which serves consumers at the tip without disk reads.
    """
    warnings: list[str] = []
    writes_per_broker = load.disk_writes / brokers
    page_cache_gib = writes_per_broker * BYTES_PER_MB * params.page_cache_seconds / BYTES_PER_GIB
    wanted = math.ceil(params.heap_gib + page_cache_gib + 1.0)  # +1 GiB for the JVM itself
    available = math.floor(profile.memory_gib * 0.9)
    memory = float(available)
    if wanted > available:
        warnings.append(
            f"memory: brokers want {wanted} GiB (heap + 30 s page cache) but {profile.name} leaves "
            f"{available} GiB; choose a larger or memory-optimised profile (r6i)"
        )
    heap = min(params.heap_gib, max(1.0, memory / 4))
    cpu = profile.cpu
    # MSK's thread table: num.io.threads = vCPUs, num.network.threads = vCPUs / 2.
    resources = BrokerResources(
        cpu=cpu,
        memory_gib=memory,
        heap_gib=heap,
        num_network_threads=max(3, int(cpu // 2)),
        num_io_threads=max(8, int(cpu)),
    )
    return resources, warnings


def storage_class(
    load: ClusterLoad, brokers: int, volumes: int, profile: HardwareProfile, p: SizingParameters
) -> StorageClassSizing:
    """Provisioned volume performance that carries each broker's disk traffic with one zone down.

    gp3 needs IOPS ≥ 4 × MiB/s (0.25 MiB/s per IOPS) and tops out at 1000 MiB/s and 16k IOPS;
    beyond that the volume must be io2.
    """
    surviving_brokers = max(1, math.floor(brokers * surviving_share(p.zones)))
    per_volume_mb_s = load.disk_writes / surviving_brokers / volumes / p.target_utilisation
    throughput = max(125.0, math.ceil(per_volume_mb_s))
    iops = max(3000, math.ceil(throughput / 1.048576 * 4))
    if profile.volume_type == "gp3" and (throughput > 1000 * 1.048576 or iops > 16000):
        return StorageClassSizing(type="io2", iops=min(256000, iops), throughput_mb_s=throughput)
    return StorageClassSizing(type=profile.volume_type, iops=iops, throughput_mb_s=throughput)


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
    """Routers for the external share of client produce + consume (spark_sizing/routers.py)."""
    plan = router_replicas(
        load.ingress + load.consumer_egress,
        params.router_external_share,
        params.router_capacity_mb_s,
        params.router_target_utilisation,
        params.zone_down_utilisation,
        params.zones,
    )
    return RouterSizing(
        replicas=plan.replicas,
        client_mb_s=round(plan.external_mb_s, 3),
        capacity_mb_s_per_replica=params.router_capacity_mb_s,
    )


@dataclass(frozen=True)
class SizingResult:
    cluster: ClusterSizing
    topics: list[TopicSizing]
    warnings: list[str]
    utilisation: list[ResourceUtilisation]
    zone_loss: ZoneLoss


def size_cluster(
    topics: Sequence[TopicDemand], profile: HardwareProfile, params: SizingParameters
) -> SizingResult:
    """The whole cluster: broker count from the binding constraint, then per-broker resources."""
    if not topics:
        raise ValueError("no topics to size: every input row was rejected or the input is empty")
    load = cluster_load(topics)
    storage = storage_resource(sum(topic_storage_gib(t, params) for t in topics), profile, params)
    max_rf = max(t.replication_factor for t in topics)
    needed = {t.topic: partitions_before_brokers(t, params) for t in topics}
    traffic = throughput(topics, profile, params)

    # Rounding each topic to a multiple of the broker count must not feed back into the count:
    # with many small topics it would raise the count, which raises the rounding, without end.
    replicas = sum(needed[t.topic] * t.replication_factor for t in topics)
    partition_load = partition_resource(replicas, profile, params.zones)
    constraints = broker_constraints(traffic, storage, partition_load, max_rf, params.zones)
    brokers = round_up_to_multiple(max(constraints.values()), params.zones)
    partitions, warnings = spread_over_brokers(topics, needed, brokers, profile, params)
    replicas = sum(partitions[t.topic] * t.replication_factor for t in topics)
    partition_load = partition_resource(replicas, profile, params.zones)
    used = [utilisation(r, brokers, params.zones) for r in (*traffic, storage, partition_load)]
    verdict = zone_loss_verdict(
        [(t.topic, t.replication_factor, t.min_insync_replicas) for t in topics], params.zones
    )
    if not verdict.writes_survive and params.zones > 1:
        warnings.append(f"zone loss: {verdict.detail}")

    resources, memory_warnings = broker_resources(load, brokers, profile, params)
    warnings += memory_warnings
    per_broker_gib = storage.normal / brokers / params.disk_fill_target
    volumes = max(1, math.ceil(per_broker_gib / EBS_MAX_VOLUME_GIB))
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
        storage_per_broker_gib=round(per_broker_gib, 1),
        data_volumes_per_broker=volumes,
        partitions_total=replicas,
        replication_factor=max_rf,
        min_insync_replicas=max(1, min_isr),
        broker=resources,
        storage_class=storage_class(load, brokers, volumes, profile, params),
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
    return SizingResult(
        cluster=cluster,
        topics=topic_rows,
        warnings=warnings,
        utilisation=used,
        zone_loss=verdict,
    )


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
