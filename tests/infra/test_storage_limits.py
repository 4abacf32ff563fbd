"""StorageClasses provision what was sized, in the provider's unit, within its documented limits.

Hand-worked figures: 1 MiB/s = 1.048576 MB/s, so 125 MB/s = 119.21 MiB/s (below gp3's 125 MiB/s
floor), 208 MB/s = 198.36 MiB/s (rounded up: 199), 1,000 MB/s = 953.67 MiB/s (954, needing
954 / 0.25 = 3,816 IOPS on gp3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import load_stack, parse_stack_config
from infra.errors import ConfigError
from infra.model import storage, workloads
from infra.model.cluster import ClusterModel
from tests.infra.conftest import base_values, sizing_cluster


def sized(storage_class: dict[str, Any] | None = None, **cluster: Any) -> dict[str, Any]:
    sc = {"type": "gp3", "iops": 3000, "throughput_mb_s": 125.0, **(storage_class or {})}
    return {
        "schema_version": "1.0",
        "source": "t",
        "cluster": sizing_cluster(storage_class=sc, **cluster),
    }


def model(environment: str = "staging", **overrides: Any) -> ClusterModel:
    return ClusterModel.from_config(parse_stack_config(base_values(**overrides), environment))


def params(role: str = "broker", **overrides: Any) -> dict[str, str]:
    parameters: dict[str, str] = storage.storage_class(model(**overrides), role)["parameters"]
    return parameters


def refusal(**overrides: Any) -> str:
    with pytest.raises(ConfigError) as err:
        parse_stack_config(base_values(**overrides), "staging")
    return str(err.value)


def test_gp3_throughput_is_never_below_its_floor() -> None:
    # 125 MB/s is 119.21 MiB/s: truncated to "119" every claim would stay Pending.
    assert params() == {"type": "gp3", "encrypted": "true", "iops": "3000", "throughput": "125"}


def test_mb_s_to_mib_s_rounds_up_never_below_the_need() -> None:
    assert params(sizing=sized({"throughput_mb_s": 208.0}))["throughput"] == "199"


def test_gp3_iops_are_raised_to_carry_the_throughput() -> None:
    got = params(sizing=sized({"throughput_mb_s": 1000.0}))
    assert (got["throughput"], got["iops"]) == ("954", "3816")


def test_throughput_above_the_gp3_ceiling_is_refused_with_the_jbod_fix() -> None:
    # 2,200 MB/s = 2,098.1 MiB/s > 2,000 MiB/s per gp3 volume.
    message = refusal(sizing=sized({"throughput_mb_s": 2200.0}))
    assert message.startswith("kafkastack:sizing.cluster.storage_class.throughput_mb_s:")
    assert "2000 MiB/s" in message and "volumes_per_broker to 2" in message


def test_more_volumes_per_broker_share_the_throughput() -> None:
    got = params(sizing=sized({"throughput_mb_s": 2200.0}), storage={"volumes_per_broker": 2})
    # 1,100 MB/s per volume = 1,049.04 MiB/s → 1,050 MiB/s and 4,200 IOPS.
    assert (got["throughput"], got["iops"]) == ("1050", "4200")


def test_a_volume_above_the_type_size_is_refused() -> None:
    message = refusal(storage={"size_gib": 70000})
    assert message.startswith("kafkastack:storage.size_gib:") and "65536 GiB" in message


def test_io2_provisions_iops_for_the_throughput_and_no_throughput_parameter() -> None:
    got = params(sizing=sized({"type": "io2", "iops": 100, "throughput_mb_s": 1000.0}))
    # 954 MiB/s at io2's 0.256 MiB/s per IOPS needs 3,727 IOPS.
    assert got == {"type": "io2", "encrypted": "true", "iops": "3727"}


def test_gcp_gets_hyperdisk_with_its_own_floors() -> None:
    got = params(platform="gcp")
    assert got == {
        "type": "hyperdisk-balanced",
        "provisioned-iops-on-create": "3000",
        "provisioned-throughput-on-create": "140Mi",
    }


def test_azure_premium_v2_is_provisioned_in_mb_s() -> None:
    got = params(platform="azure", sizing=sized({"throughput_mb_s": 208.0}))
    assert got == {
        "skuName": "PremiumV2_LRS",
        "DiskIOPSReadWrite": "3000",
        "DiskMBpsReadWrite": "208",
    }


def test_pd_ssd_too_small_for_its_throughput_is_refused() -> None:
    # pd-ssd delivers 0.48 MiB/s per GiB: 125 MiB/s (the 131.072 MB/s floor) needs 261 GiB.
    message = refusal(
        platform="gcp",
        storage={"type": "pd-ssd", "size_gib": 500},
        sizing=sized({"throughput_mb_s": 131.072 * 2}),
    )
    assert message.startswith("kafkastack:sizing.cluster.storage_class.throughput_mb_s:")
    assert "at least 521 GiB" in message


def test_a_type_the_provisioner_lacks_is_refused() -> None:
    message = refusal(storage={"type": "pd-ssd"})
    assert message.startswith("kafkastack:storage.type:") and "gp3, io2" in message


def test_quorum_class_gets_the_floors_and_broker_metadata_fits_the_iops() -> None:
    fast = {"sizing": sized({"throughput_mb_s": 1500.0})}
    assert params("quorum", **fast) == params()  # floors: 3,000 IOPS, 125 MiB/s
    # 1,431 MiB/s needs 5,724 IOPS; gp3 allows 500 per GiB, so the metadata claim is 12 GiB.
    m = model(**fast)
    claims = workloads.kafka_statefulset(m, m.brokers[0], "fast")["spec"]["volumeClaimTemplates"]
    sizes = {c["metadata"]["name"]: c["spec"]["resources"]["requests"]["storage"] for c in claims}
    assert sizes["metadata"] == "12Gi"


def test_claims_round_sizes_up() -> None:
    m = model(storage={"size_gib": 600.5})
    claims = workloads.kafka_statefulset(m, m.brokers[0], "fast")["spec"]["volumeClaimTemplates"]
    assert claims[0]["spec"]["resources"]["requests"]["storage"] == "601Gi"


def test_local_volumes_provision_nothing() -> None:
    assert "parameters" not in storage.storage_class(model("local", platform="local"), "broker")


def test_prod_renders_the_worked_example_of_docs_sizing(repo_root: Path) -> None:
    # docs/sizing.md: 84 MB/s per broker = 80.1 MiB/s, below gp3's floors: 125 MiB/s, 3,000 IOPS.
    prod = ClusterModel.from_config(load_stack(repo_root / "stacks", "prod"))
    assert storage.storage_class(prod, "broker")["parameters"] == {
        "type": "gp3",
        "encrypted": "true",
        "iops": "3000",
        "throughput": "125",
    }
    container = workloads.kafka_statefulset(prod, prod.brokers[0], "fast")["spec"]["template"][
        "spec"
    ]["containers"][0]
    # docs/sizing.md's node: 7.3 vCPUs and 26.75 GiB = 27,392 MiB, room left for two sidecars.
    assert container["resources"]["requests"] == {"cpu": "7300m", "memory": "27392Mi"}
