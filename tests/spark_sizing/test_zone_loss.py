"""Zone loss per resource, partitions, routers: docs/sizing.md's worked example, by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_sizing.formulas import SizingParameters, TopicDemand, size_cluster
from spark_sizing.profiles import HardwareProfile
from spark_sizing.routers import router_replicas
from spark_sizing.zone_loss import Limits, TopicTraffic, throughput_resources

# The worked example's broker: round figures a reader can divide by hand.
WORKED = HardwareProfile(
    name="worked",
    cpu=8,
    memory_gib=64,
    disk_mb_s=250,
    disk_iops=8000,
    network_mb_s=500,
    max_disk_gib=10_000,
    recommended_partitions=2000,
    mb_s_per_vcpu=100,
)


def worked_params(**overrides: object) -> SizingParameters:
    """The worked example's parameters: defaults, but 12 h to re-replicate a lost broker (at the
    default 4 h recovery binds at 24 brokers: tests/spark_sizing/test_recovery_cpu_cost.py)."""
    return SizingParameters.model_validate({"recovery_hours": 12, **overrides})


ORDERS = TopicDemand(
    topic="orders",
    peak_ingress_mb_s=600.0,
    avg_ingress_mb_s=300.0,
    consumer_groups=3,
    retention_hours=12.0,
    replication_factor=3,
    min_insync_replicas=2,
)


def test_worked_example_of_docs_sizing_md() -> None:
    result = size_cluster([ORDERS], WORKED, worked_params())
    c = result.cluster
    # disk writes = network in = 600 × 3 = 1800; network out = 600 × (2 + 3) = 3000.
    # Normally each broker may use 50 %: disk 125, network 250 MB/s.
    #   disk 1800 / 125 = 14.4 → 15; network in 1800 / 250 = 7.2 → 8; out 3000 / 250 = 12.
    # One zone down (survivors: 2/3 of the brokers, each may use 80 %: disk 200, network 400):
    #   writes 600 × (3 − 1) = 1200: disk 1200 / 200 = 6 survivors → 9 brokers; in 3 → 5.
    #   out: 600 × (3 − 1 − 1) + 600 × 3 = 2400: 2400 / 400 = 6 survivors → 9 brokers.
    # Storage 300 MB/s × 43,200 s × 3 × 1.1 = 42,768,000 MB = 39,830.7 GiB; at half of
    # 10,000 GiB per broker → 8. Partitions max(600/10, 600/20) = 60 × RF 3 = 180 → 1.
    # CPU: (1800 in + 3000 out) / 100 MB/s per vCPU = 48 vCPUs; a broker gets 7.3 of its node's
    # 8 (8 − 0.09 kube-reserved − 0.5 daemon sets − 2 sidecars × 0.05 = 7.31 → 7.3) at 60 %:
    # 48 / 4.38 = 10.96 → 11 (zone down: 3600 / 100 / (7.3 × 0.8) / (2/3) = 9.2 → 10).
    # Recovery in 12 h: 42,768,000 MB / 43,200 s = 990 MB/s; disk (990 + 1800) / 200 = 13.95
    # → 14, network in (990 + 1800) / 400 = 6.98 → 7.
    assert c.constraints == {
        "ingress": 15,
        "egress": 12,
        "cpu": 11,
        "storage": 8,
        "recovery": 14,
        "partitions": 1,
        "minimum": 3,
    }
    assert (c.brokers, c.binding_constraint, c.partitions_total) == (15, "ingress", 180)
    used = {
        u.resource: (u.brokers_needed, u.per_broker, u.utilisation, u.zone_down_per_broker)
        for u in result.utilisation
    }
    # At 15 brokers (10 survive a zone loss): disk and network in do not move, network out does.
    assert used["disk writes"] == (15, 120.0, 0.48, 120.0)
    assert used["network in"] == (8, 120.0, 0.24, 120.0)
    assert used["network out"] == (12, 200.0, 0.4, 240.0)
    # 48 vCPUs over 15 brokers, 36 over the 10 survivors.
    # 3.2 of a broker's 7.3 vCPUs: 43.84 %.
    assert used["cpu"] == (11, 3.2, 0.4384, 3.6)
    # One broker's 2,851,200 MB at 200 − 1800/15 = 80 MB/s of spare disk writes: 9.9 h.
    assert (result.recovery.rate_mb_s, result.recovery.hours) == (80.0, 9.9)
    assert result.recovery.limited_by == "disk writes"
    assert used["partition replicas"][:3] == (1, 12.0, 0.006)
    assert used["storage"][0] == 8
    assert used["storage"][1] == pytest.approx(39_830.7 / 15, abs=0.01)
    assert result.zone_loss.writes_survive


@settings(max_examples=100, deadline=None)
@given(
    topics=st.lists(
        st.builds(
            TopicTraffic,
            produce_mb_s=st.floats(0.1, 500),
            replication_factor=st.integers(1, 5),
            consumer_groups=st.integers(0, 8),
        ),
        min_size=1,
        max_size=6,
    ),
    zones=st.integers(2, 5),
    per_zone=st.integers(1, 6),
)
def test_a_zone_loss_leaves_disk_writes_and_network_in_per_broker_unchanged(
    topics: list[TopicTraffic], zones: int, per_zone: int
) -> None:
    brokers = zones * per_zone
    for r in throughput_resources(topics, zones, Limits(250, 500, 0.5, 0.8)):
        down = r.zone_down_per_broker(brokers, zones)
        assert down is not None
        if r.name in ("disk writes", "network in"):
            assert down == pytest.approx(r.per_broker(brokers))


def test_two_zones_with_rf3_min_isr2_are_not_reported_as_surviving_a_zone_loss() -> None:
    result = size_cluster([ORDERS], WORKED, worked_params(zones=2))
    assert not result.zone_loss.writes_survive
    assert result.zone_loss.topics_losing_writes == 1
    assert "one zone holds 2 of its replicas and 1 stay, below min.insync.replicas 2" in (
        result.zone_loss.detail
    )
    assert any(w.startswith("zone loss: acks=all writes stop") for w in result.warnings)
    three = size_cluster([ORDERS], WORKED, worked_params(zones=3))
    assert three.zone_loss.writes_survive and not any("zone loss" in w for w in three.warnings)


def test_partitions_follow_throughput_not_the_broker_count() -> None:
    # 21 topics of 100 MB/s need 10 partitions each (210); rounding each to the 30 brokers the
    # traffic needs once planned 630, and its constraint row did not show the figure.
    topics = [
        TopicDemand(
            topic=f"t{i}",
            peak_ingress_mb_s=100.0,
            avg_ingress_mb_s=1.0,
            consumer_groups=1,
            retention_hours=1.0,
            replication_factor=3,
            min_insync_replicas=2,
        )
        for i in range(21)
    ]
    result = size_cluster(topics, WORKED, SizingParameters())
    assert sum(t.partitions for t in result.topics) == 210
    assert result.cluster.partitions_total == 630
    row = next(u for u in result.utilisation if u.resource == "partition replicas")
    assert row.per_broker == pytest.approx(630 / result.cluster.brokers, abs=0.001)
    assert row.capacity_per_broker == 2000
    by_brokers = size_cluster(topics, WORKED, SizingParameters(partition_multiple="brokers"))
    brokers = by_brokers.cluster.brokers
    assert all(t.partitions % brokers == 0 for t in by_brokers.topics)


def test_routers_carry_the_external_share_at_haproxys_documented_rate() -> None:
    # 1.8 GB/s of client traffic at 1250 MB/s per replica and 50 %: 3 replicas, one per zone;
    # with a zone down the other 2 carry 1800 ≤ 2 × 1250 × 0.8 = 2000.
    assert router_replicas(1800, 1.0, 1250, 0.5, 0.8, zones=3).replicas == 3
    # A quarter of it from outside: 450 MB/s, and still 2 replicas for availability.
    plan = router_replicas(1800, 0.25, 1250, 0.5, 0.8, zones=3)
    assert (plan.replicas, plan.external_mb_s) == (2, 450)
    # 2 replicas over 3 zones that must each carry it all with a zone down: 1 survivor is
    # enough at 900 ≤ 1000, 1200 needs 3.
    assert router_replicas(1800, 0.5, 1250, 0.5, 0.8, zones=3).replicas == 2
    assert router_replicas(2400, 0.5, 1250, 0.5, 0.8, zones=3).replicas == 3


def test_sizing_parameters_refuse_a_partition_multiple_below_one() -> None:
    with pytest.raises(ValueError, match="partition_multiple"):
        SizingParameters(partition_multiple=0)
