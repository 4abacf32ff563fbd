"""The sizing arithmetic, in plain Python: from per-topic demand to a cluster shape.

Spark reduces the projections to one `TopicDemand` per topic (spark_sizing/transforms.py); all
rules live here and in the modules `size_cluster` composes (constraints.py, zone_loss.py,
recovery.py, partitions.py, routers.py, costs.py), so they are tested in milliseconds. Every
constant names its public source; the full list with links is in docs/sizing.md.

Traffic accounting (AWS, Google Cloud, Redpanda agree), for produce rate P, replication factor r
and c consumer groups reading from the tip:
    disk writes = P·r      network in  = P·r (clients + replication)
    replication = P·(r−1) network out = P·(r−1) + P·c
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from spark_sizing.allocatable import (
    SIDECAR_CPU,
    SIDECAR_MEMORY_GIB,
    SIDECARS_PER_KAFKA_POD,
    node_sizing,
)
from spark_sizing.constraints import (
    binding_constraint,
    broker_constraints,
    cpu_resource,
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
    CostEstimate,
    NodeSizing,
    QuorumSizing,
    Recovery,
    ResourceUtilisation,
    RouterSizing,
    StorageClassSizing,
    TopicSizing,
    ZoneLoss,
)
from spark_sizing.costs import BrokerFleet, PriceTable, built_in_prices, monthly_cost
from spark_sizing.model_inputs import SizingParameters, TopicDemand
from spark_sizing.profiles import HardwareProfile
from spark_sizing.recovery import recovery_at, recovery_brokers
from spark_sizing.routers import router_replicas
from spark_sizing.units import BYTES_PER_GIB, BYTES_PER_MB
from spark_sizing.volume_types import ProvisionedVolume, volume_layout, volume_type
from spark_sizing.zone_loss import zone_loss_verdict

# The model's inputs and per-topic partitions have their own modules; callers that import them
# from here keep working.
__all__ = ["SizingParameters", "TopicDemand", "raw_partitions", "size_cluster"]

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


def _floor_to(value: float, step: float) -> float:
    # The outer round: 73 × 0.1 is 7.300000000000001 in binary, which sizing.json would show.
    return round(math.floor(round(value / step, 6)) * step, 6)


def broker_cpu(node: NodeSizing) -> float:
    """vCPUs a broker requests: its node's allocatable less the daemon sets and the pod's
    sidecars, rounded down to 0.1 so it always fits (m5.2xlarge: 7.91 − 0.5 − 2 × 0.05 = 7.31
    → 7.3)."""
    sidecars = SIDECARS_PER_KAFKA_POD * SIDECAR_CPU
    return _floor_to(node.allocatable_cpu - node.daemonset_cpu - sidecars, 0.1)


def broker_memory_gib(node: NodeSizing) -> float:
    """GiB a broker requests: its node's allocatable less the daemon sets and the pod's
    sidecars, rounded down to 0.25 (m5.2xlarge: 28.63 − 1 − 2 × 0.375 = 26.88 → 26.75)."""
    sidecars = SIDECARS_PER_KAFKA_POD * SIDECAR_MEMORY_GIB
    return _floor_to(node.allocatable_memory_gib - node.daemonset_memory_gib - sidecars, 0.25)


def broker_resources(
    load: ClusterLoad, brokers: int, node: NodeSizing, profile: HardwareProfile, p: SizingParameters
) -> tuple[BrokerResources, list[str]]:
    """The node's allocatable less its daemon sets and the pod's sidecars, on a node of its own;
    heap plus ~30 s of each broker's writes in page cache (Confluent): what the heap does not
    use is page cache. The sidecars are containers of their own with their own memory, so the
    broker container's memory (heap and page cache) is what is left after them.

    Requests are rounded down (0.1 vCPU, 0.25 GiB) so they always fit what they came from.
    """
    warnings: list[str] = []
    cpu = broker_cpu(node)
    memory = broker_memory_gib(node)
    if cpu <= 0 or memory <= 1.0:
        raise ValueError(
            f"profile {profile.name}: {node.allocatable_cpu:g} vCPUs / "
            f"{node.allocatable_memory_gib:g} GiB allocatable leave nothing for a broker after the "
            "daemon sets and the pod's sidecars; choose a larger profile"
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
) -> tuple[int, float, StorageClassSizing, ProvisionedVolume]:
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
    per_broker = max(per_broker_gib, layout.size_gib * layout.volumes)
    return layout.volumes, per_broker, sized, layout.provisioned


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
    recovery: Recovery
    cost: CostEstimate
    # Why the profile cannot do the job as sized (memory too small): `--profile auto` skips it.
    shortfalls: list[str]


def size_cluster(
    topics: Sequence[TopicDemand],
    profile: HardwareProfile,
    params: SizingParameters,
    prices: PriceTable | None = None,
) -> SizingResult:
    """The whole cluster: broker count from the binding constraint, then per-broker resources,
    and the monthly cost at `prices` (the built-in table if none)."""
    if not topics:
        raise ValueError("no topics to size: every input row was rejected or the input is empty")
    load = cluster_load(topics)
    storage = storage_resource(sum(topic_storage_gib(t, params) for t in topics), profile, params)
    max_rf = max(t.replication_factor for t in topics)
    needed = {t.topic: partitions_before_brokers(t, params) for t in topics}
    traffic = throughput(topics, profile, params)
    node = node_sizing(profile, params.daemonset_cpu, params.daemonset_memory_gib)
    cpu = cpu_resource(traffic, broker_cpu(node), profile.mb_s_per_vcpu, params)
    # The replacement of a lost broker fills its disk and its network in (spark_sizing/recovery).
    receivers = [r for r in traffic if r.name in ("disk writes", "network in")]
    recovery_args = (
        storage.normal,
        receivers,
        params.recovery_hours,
        params.zone_down_utilisation,
        params.recovery_mb_s,
    )

    # Rounding each topic to a multiple of the broker count must not feed back into the count:
    # with many small topics it would raise the count, which raises the rounding, without end.
    replicas = sum(needed[t.topic] * t.replication_factor for t in topics)
    partition_load = partition_resource(replicas, profile, params.zones)
    constraints = broker_constraints(
        traffic,
        cpu,
        storage,
        recovery_brokers(*recovery_args),
        partition_load,
        max_rf,
        params.zones,
    )
    brokers = round_up_to_multiple(max(constraints.values()), params.zones)
    partitions, warnings = spread_over_brokers(topics, needed, brokers, profile, params)
    replicas = sum(partitions[t.topic] * t.replication_factor for t in topics)
    partition_load = partition_resource(replicas, profile, params.zones)
    used = [utilisation(r, brokers, params.zones) for r in (*traffic, cpu, storage, partition_load)]
    verdict = zone_loss_verdict(
        [(t.topic, t.replication_factor, t.min_insync_replicas) for t in topics], params.zones
    )
    if not verdict.writes_survive and params.zones > 1:
        warnings.append(f"zone loss: {verdict.detail}")

    resources, memory_warnings = broker_resources(load, brokers, node, profile, params)
    warnings += memory_warnings
    volumes, per_broker_gib, volume_sizing, provisioned = storage_class(
        storage.normal / brokers / params.disk_fill_target,
        per_broker_disk_mb_s(load, brokers, params),
        profile,
        params,
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
    fleet = BrokerFleet(brokers, profile.name, volumes, provisioned)
    return SizingResult(
        cluster=cluster,
        topics=topic_rows,
        warnings=warnings,
        utilisation=used,
        zone_loss=verdict,
        recovery=recovery_at(brokers, *recovery_args),
        cost=monthly_cost(topics, fleet, prices or built_in_prices(), params),
        shortfalls=memory_warnings,
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
