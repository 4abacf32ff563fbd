"""The sizing arithmetic: worked examples computed by hand, and invariants over random inputs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_sizing.formulas import (
    SizingParameters,
    TopicDemand,
    brokers_per_zone,
    raw_partitions,
    size_cluster,
    topic_storage_gib,
)
from spark_sizing.model_inputs import MAX_DEMAND_MB_S, DemandError
from spark_sizing.partitions import rounded
from spark_sizing.profiles import BUILT_IN_PROFILES, load_profile
from spark_sizing.schema import MAX_REPLICATION_FACTOR, MAX_RETENTION_HOURS

M5_2XL = BUILT_IN_PROFILES["m5.2xlarge"]


def demand(**overrides: object) -> TopicDemand:
    base: dict[str, object] = dict(
        topic="t",
        peak_ingress_mb_s=10.0,
        avg_ingress_mb_s=5.0,
        consumer_groups=2,
        retention_hours=24.0,
        replication_factor=3,
        min_insync_replicas=2,
    )
    base.update(overrides)
    return TopicDemand(**base)  # type: ignore[arg-type]


def test_storage_is_avg_ingress_times_retention_times_rf_plus_overhead() -> None:
    # 5 MB/s × 24 h × 3600 s × 3 replicas = 1,296,000 MB; +10 % overhead = 1,425,600 MB.
    expected_gib = 1_425_600 * 1_000_000 / 1024**3
    assert topic_storage_gib(demand(), SizingParameters()) == pytest.approx(expected_gib)


def test_partitions_follow_the_slower_of_producer_and_consumer_rates() -> None:
    # 95 MB/s: producers at 10 MB/s per partition need 10, consumers at 20 need 5.
    assert raw_partitions(demand(peak_ingress_mb_s=95.0), SizingParameters()) == 10


def test_pinned_partitions_are_kept_even_when_throughput_wants_more() -> None:
    assert (
        raw_partitions(demand(peak_ingress_mb_s=500.0, pinned_partitions=7), SizingParameters())
        == 7
    )


def test_partitions_are_rounded_only_to_a_configured_multiple() -> None:
    assert rounded(4, 1, brokers=6) == 4
    assert rounded(4, 3, brokers=6) == 6
    assert rounded(4, "brokers", brokers=6) == 6
    assert rounded(60, "brokers", brokers=6) == 60  # ≥ 8 per broker: even enough already


def test_consumer_parallelism_is_a_floor_for_partitions() -> None:
    # 5 MB/s needs 1 partition, but a group of 12 consumers keeps only as many busy as there are.
    topic = demand(peak_ingress_mb_s=5.0, consumers_per_group=12)
    assert raw_partitions(topic, SizingParameters()) == 12


def test_brokers_per_zone_differ_by_at_most_one() -> None:
    assert brokers_per_zone(7, 3) == [3, 2, 2]


def test_replication_and_consumer_traffic_are_accounted_apart() -> None:
    result = size_cluster(
        [demand(peak_ingress_mb_s=10.0, consumer_groups=4)], M5_2XL, SizingParameters()
    )
    assert result.cluster.replication_mb_s == pytest.approx(20.0)  # P·(r−1)
    assert result.cluster.peak_egress_mb_s == pytest.approx(40.0)  # P·c


def test_quorum_grows_to_five_controllers_for_large_clusters() -> None:
    big = [demand(topic=f"t{i}", peak_ingress_mb_s=200.0) for i in range(5)]
    assert size_cluster(big, M5_2XL, SizingParameters()).cluster.quorum.nodes == 5
    small = size_cluster([demand()], M5_2XL, SizingParameters())
    assert (small.cluster.quorum.kind, small.cluster.quorum.nodes) == ("kraft", 3)


def test_zookeeper_quorum_when_asked() -> None:
    result = size_cluster([demand()], M5_2XL, SizingParameters(quorum_kind="zookeeper"))
    assert result.cluster.quorum.kind == "zookeeper"
    assert result.cluster.quorum.nodes % 2 == 1


def test_memory_warning_when_profile_is_too_small_for_page_cache() -> None:
    heavy = [demand(peak_ingress_mb_s=3000.0)]
    result = size_cluster(heavy, BUILT_IN_PROFILES["m5.large"], SizingParameters())
    assert any(w.startswith("memory:") for w in result.warnings)


def test_no_topics_is_refused() -> None:
    with pytest.raises(ValueError, match="no topics"):
        size_cluster([], M5_2XL, SizingParameters())


def test_custom_profile_from_yaml(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "onprem.yaml"
    path.write_text(
        "cpu: 16\nmemory_gib: 64\ndisk_mb_s: 500\ndisk_iops: 20000\nnetwork_mb_s: 1250\n"
        "max_disk_gib: 8000\n"
    )
    profile = load_profile(str(path))
    assert (profile.name, profile.network_mb_s) == ("onprem", 1250)


def test_custom_profile_error_names_the_field(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.yaml"
    path.write_text(
        "cpu: 16\nmemory_gib: 64\ndisk_mb_s: -1\ndisk_iops: 1\nnetwork_mb_s: 1\nmax_disk_gib: 1\n"
    )
    with pytest.raises(ValueError, match="disk_mb_s"):
        load_profile(str(path))


def test_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"m7g\.large"):
        load_profile("m9.huge")


topics_strategy = st.lists(
    st.builds(
        TopicDemand,
        topic=st.text(alphabet="abcdef", min_size=1, max_size=6),
        peak_ingress_mb_s=st.floats(0, 2000),
        avg_ingress_mb_s=st.floats(0, 1000),
        consumer_groups=st.integers(0, 10),
        retention_hours=st.floats(1, 24 * 30),
        replication_factor=st.integers(1, 5),
        min_insync_replicas=st.integers(1, 4),
        pinned_partitions=st.none() | st.integers(1, 500),
    ),
    min_size=1,
    max_size=8,
    unique_by=lambda t: t.topic,
)
zones_strategy = st.integers(1, 5)
profile_strategy = st.sampled_from(sorted(BUILT_IN_PROFILES))


@settings(max_examples=150, deadline=None)
@given(topics=topics_strategy, zones=zones_strategy, profile=profile_strategy)
def test_cluster_invariants(topics: list[TopicDemand], zones: int, profile: str) -> None:
    result = size_cluster(topics, BUILT_IN_PROFILES[profile], SizingParameters(zones=zones))
    c = result.cluster
    max_rf = max(t.replication_factor for t in topics)
    assert c.brokers >= max(3, max_rf)
    assert c.brokers % zones == 0
    assert c.brokers >= max(c.constraints.values())
    # The count is the binding constraint rounded to the zones, never more (no feedback loop).
    assert c.brokers == -(-max(c.constraints.values()) // zones) * zones
    assert c.constraints[c.binding_constraint] == max(c.constraints.values())
    assert sum(c.brokers_per_zone) == c.brokers
    assert max(c.brokers_per_zone) - min(c.brokers_per_zone) <= 1
    by_name = {t.topic: t for t in result.topics}
    for t in topics:
        if t.pinned_partitions is not None:
            assert by_name[t.topic].partitions == t.pinned_partitions
        else:
            assert by_name[t.topic].partitions >= raw_partitions(t, SizingParameters(zones=zones))


@settings(max_examples=100, deadline=None)
@given(
    topic=topics_strategy.map(lambda ts: ts[0]),
    extra_hours=st.floats(0, 1000),
    extra_rf=st.integers(0, 3),
)
def test_storage_is_monotone_in_retention_and_rf(
    topic: TopicDemand, extra_hours: float, extra_rf: int
) -> None:
    params = SizingParameters()
    base = topic_storage_gib(topic, params)
    longer = TopicDemand(
        **{**topic.__dict__, "retention_hours": topic.retention_hours + extra_hours}
    )
    more_replicas = TopicDemand(
        **{**topic.__dict__, "replication_factor": topic.replication_factor + extra_rf}
    )
    assert topic_storage_gib(longer, params) >= base
    assert topic_storage_gib(more_replicas, params) >= base


def test_many_small_topics_do_not_inflate_the_broker_count() -> None:
    # 10k tiny topics: rounding each to a multiple of the brokers once diverged.
    topics = [
        demand(topic=f"t{i}", peak_ingress_mb_s=0.01, avg_ingress_mb_s=0.005, consumer_groups=0)
        for i in range(10_000)
    ]
    result = size_cluster(topics, M5_2XL, SizingParameters())
    c = result.cluster
    assert c.binding_constraint == "partitions"
    assert c.brokers == 15  # 10k partitions × RF 3 / 2000 per broker, rounded to 3 zones
    assert c.partitions_total == 30_000
    assert not any(w.startswith("partitions:") for w in result.warnings)
    # Asked to round to the broker count, they would pass 2000 per broker: left as needed.
    rounded_up = size_cluster(topics, M5_2XL, SizingParameters(partition_multiple="brokers"))
    assert rounded_up.cluster.partitions_total == 30_000
    assert any(w.startswith("partitions:") for w in rounded_up.warnings)


def test_demand_at_every_bound_the_input_allows_sizes_to_finite_figures() -> None:
    # Each figure at the most the contract and the model accept (spark_sizing/schema.py,
    # model_inputs.MAX_DEMAND_MB_S): every product the model forms stays finite.
    int32 = 2**31 - 1
    extreme = demand(
        peak_ingress_mb_s=MAX_DEMAND_MB_S,
        avg_ingress_mb_s=MAX_DEMAND_MB_S,
        consumer_groups=int32,
        retention_hours=float(MAX_RETENTION_HOURS),
        replication_factor=MAX_REPLICATION_FACTOR,
        min_insync_replicas=MAX_REPLICATION_FACTOR - 1,
        pinned_partitions=int32,
        consumers_per_group=int32,
    )
    result = size_cluster([extreme, demand()], M5_2XL, SizingParameters(horizon_months=120))
    assert result.cluster.brokers > 0
    assert math.isfinite(result.cost.total_monthly)
    assert all(math.isfinite(u.per_broker) for u in result.utilisation)


@pytest.mark.parametrize("peak", [float("inf"), float("nan"), 2 * 1e308, MAX_DEMAND_MB_S * 2])
def test_a_runaway_projection_is_refused_naming_its_topic(peak: float) -> None:
    with pytest.raises(DemandError, match=r"topic orders: projected peak_ingress_mb_s is"):
        demand(topic="orders", peak_ingress_mb_s=peak)


def test_the_horizon_is_at_most_ten_years() -> None:
    with pytest.raises(ValueError, match="horizon_months"):
        SizingParameters(horizon_months=121)
