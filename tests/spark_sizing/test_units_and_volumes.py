"""Units end to end, node allocatable and volume layout: hand-worked numbers and invariants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infra.config import parse_stack_config
from infra.model import workloads
from infra.model.broker_config import broker_properties
from infra.model.cluster import ClusterModel
from spark_sizing.allocatable import (
    SIDECAR_CPU,
    SIDECARS_PER_KAFKA_POD,
    node_allocatable,
    reserved_cpu,
)
from spark_sizing.formulas import SizingParameters, TopicDemand, size_cluster
from spark_sizing.profiles import BUILT_IN_PROFILES, HardwareProfile, ProfileError, load_profile
from spark_sizing.units import ceil_whole, gbps_to_mb_s, mb_s_to_mib_s, mbps_to_mb_s, mib_s_to_mb_s
from spark_sizing.volume_types import provision, volume_layout, volume_type, volume_types
from tests.infra.conftest import base_values

M5_2XL = BUILT_IN_PROFILES["m5.2xlarge"]


def test_conversions_by_hand() -> None:
    assert gbps_to_mb_s(2.5) == 312.5  # 2.5 × 10^9 bit/s ÷ 8 ÷ 10^6
    assert mbps_to_mb_s(2300) == 287.5  # EBS-optimised baseline of m5.2xlarge
    assert mib_s_to_mb_s(125) == pytest.approx(131.072)
    assert mb_s_to_mib_s(125) == pytest.approx(119.209, abs=1e-3)
    # The floor converted there and back is the floor, not one more.
    assert ceil_whole(mb_s_to_mib_s(mib_s_to_mb_s(125))) == 125
    assert ceil_whole(mb_s_to_mib_s(208)) == 199


def test_built_in_figures_are_ec2_baselines_in_mb_s() -> None:
    # EC2: m5.2xlarge 2.5 Gbps network baseline (not 2.5 × 128 "MiB/s" = 335.5 MB/s),
    # 2,300 Mbps / 12,000 IOPS EBS baseline.
    assert (M5_2XL.network_mb_s, M5_2XL.disk_mb_s, M5_2XL.disk_iops) == (312.5, 287.5, 12000)
    assert BUILT_IN_PROFILES["m7g.large"].network_mb_s == pytest.approx(117.125)
    assert BUILT_IN_PROFILES["r6i.8xlarge"].disk_mb_s == 1250.0


def test_m5_2xlarge_allocatable_by_hand() -> None:
    assert reserved_cpu(8) == pytest.approx(0.09)
    allocatable = node_allocatable(8, 32, 58)
    assert allocatable.cpu == pytest.approx(7.91)
    # 32 × 0.925 = 29.6 GiB seen by the kernel, less 255 + 11 × 58 + 100 = 993 MiB.
    assert allocatable.memory_gib == pytest.approx(29.6 - 993 / 1024)


def demand(**overrides: object) -> TopicDemand:
    base: dict[str, object] = dict(
        topic="t",
        peak_ingress_mb_s=300.0,
        avg_ingress_mb_s=100.0,
        consumer_groups=2,
        retention_hours=72.0,
        replication_factor=3,
        min_insync_replicas=2,
    )
    base.update(overrides)
    return TopicDemand(**base)  # type: ignore[arg-type]


def test_sized_broker_requests_fit_the_node() -> None:
    result = size_cluster([demand()], M5_2XL, SizingParameters())
    cluster = result.cluster
    assert cluster.node is not None
    # 7.91 − 0.5 to daemon sets − 2 sidecars × 0.05 = 7.31 → 7.3 (0.1 steps);
    # 28.63 − 1 − 2 × 0.375 = 26.88 → 26.75 (0.25 steps).
    assert (cluster.broker.cpu, cluster.broker.memory_gib) == (7.3, 26.75)
    # The CPU constraint's capacity is the same figure, not 73 × 0.1 = 7.300000000000001.
    cpu = next(u for u in result.utilisation if u.resource == "cpu")
    assert str(cpu.capacity_per_broker) == "7.3"
    node, sidecars = cluster.node, SIDECARS_PER_KAFKA_POD * SIDECAR_CPU
    assert cluster.broker.cpu <= node.allocatable_cpu - node.daemonset_cpu - sidecars
    assert cluster.broker.heap_gib + 1 <= cluster.broker.memory_gib


def test_volume_layout_splits_a_fast_broker_over_volumes() -> None:
    gp3 = volume_type("gp3")
    assert volume_layout(gp3, 12000, 225, 0.8).volumes == 1
    # 3,500 MB/s = 3,337.9 MiB/s: three volumes keep each under 80 % of 2,000 MiB/s.
    fast = volume_layout(gp3, 12000, 3500, 0.8)
    assert fast.volumes == 3 and fast.throughput_mb_s == 1167
    # Size alone: 60 TiB over volumes of at most 80 % of 64 TiB.
    assert volume_layout(gp3, 60 * 1024, 225, 0.8).volumes == 2


def test_every_volume_type_has_its_source_and_date() -> None:
    for vt in volume_types().values():
        assert vt.source.startswith("https://") and vt.as_of


FAST_DISKS = HardwareProfile(
    name="fast-disks",
    cpu=32,
    memory_gib=128,
    disk_mb_s=5000,
    disk_iops=80000,
    network_mb_s=12500,
    max_disk_gib=16384,
    # Disks are the point here: CPU must not spread the load over more brokers first.
    mb_s_per_vcpu=1000,
)


def test_a_sizing_that_needs_jbod_renders_one_claim_and_log_dir_per_volume() -> None:
    result = size_cluster(
        [demand(peak_ingress_mb_s=2000.0, avg_ingress_mb_s=1.0)], FAST_DISKS, SizingParameters()
    )
    cluster = result.cluster
    volumes = cluster.data_volumes_per_broker
    assert volumes > 1 and cluster.storage_class.type == "gp3"
    stack = {
        "schema_version": "1.1",
        "source": "t",
        "cluster": json.loads(cluster.model_dump_json()),
    }
    model = ClusterModel.from_config(parse_stack_config(base_values(sizing=stack), "staging"))
    broker = model.brokers[0]
    log_dirs = broker_properties(model, broker).flat()["log.dirs"].split(",")
    assert log_dirs == [f"/var/lib/kafka/data-{i}" for i in range(volumes)]
    spec = workloads.kafka_statefulset(model, broker, "fast")["spec"]
    claims = [c["metadata"]["name"] for c in spec["volumeClaimTemplates"]]
    assert claims == [f"data-{i}" for i in range(volumes)] + ["metadata"]
    mounts = {m["mountPath"] for m in spec["template"]["spec"]["containers"][0]["volumeMounts"]}
    assert set(log_dirs) <= mounts


topics = st.lists(
    st.builds(
        demand,
        topic=st.text(alphabet="abcdef", min_size=1, max_size=6),
        peak_ingress_mb_s=st.floats(0, 5000),
        avg_ingress_mb_s=st.floats(0, 2000),
        retention_hours=st.floats(1, 24 * 30),
    ),
    min_size=1,
    max_size=5,
    unique_by=lambda t: t.topic,
)


@settings(max_examples=100, deadline=None)
@given(topics=topics, profile=st.sampled_from([*sorted(BUILT_IN_PROFILES), "fast"]))
def test_sized_volumes_stay_within_their_type_with_headroom(
    topics: list[TopicDemand], profile: str
) -> None:
    hardware = FAST_DISKS if profile == "fast" else BUILT_IN_PROFILES[profile]
    params = SizingParameters()
    cluster = size_cluster(topics, hardware, params).cluster
    vt = volume_type(cluster.storage_class.type)
    per_volume_gib = cluster.storage_per_broker_gib / cluster.data_volumes_per_broker
    assert vt.size_gib.max is not None and vt.throughput.max is not None
    assert per_volume_gib <= vt.size_gib.max * params.volume_headroom + 1
    assert vt.in_unit(cluster.storage_class.throughput_mb_s) <= vt.throughput.max * 0.8 + 1
    # And the StorageClass can be rendered from it: no limit is crossed.
    provision(vt, per_volume_gib, cluster.storage_class.throughput_mb_s, cluster.storage_class.iops)


def test_a_custom_profile_with_an_unknown_volume_type_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "onprem.yaml"
    path.write_text(
        "cpu: 16\nmemory_gib: 64\ndisk_mb_s: 500\ndisk_iops: 20000\nnetwork_mb_s: 1250\n"
        "max_disk_gib: 8000\nvolume_type: gp9\n"
    )
    with pytest.raises(ProfileError, match=r"volume_type.*gp3, io2"):
        load_profile(str(path))


def test_packaged_data_files_are_the_ones_read(repo_root: Path) -> None:
    data = repo_root / "spark_sizing" / "data"
    assert {p.name for p in data.glob("*.yaml")} == {
        "volume_types.yaml",
        "node_reservations.yaml",
        "prices.yaml",
    }
