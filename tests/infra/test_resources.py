"""Pod requests fit what a node of the sized profile can allocate; the limits policy.

m5.2xlarge by hand: 8 vCPUs − EKS kube-reserved (0.06 + 0.01 + 2 × 0.005 + 4 × 0.0025 = 0.09)
= 7.91 allocatable, 0.5 to daemon sets, 0.05 to each sidecar in the pod (a broker beside
dedicated controllers has one, its keystore-reloader): a broker may request 7.36.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import load_stack, parse_stack_config
from infra.errors import ConfigError
from infra.model import resources, workloads
from infra.model.cluster import ClusterModel
from infra.model.desired import desired_state
from infra.model.resources import cpu_quantity, memory_quantity
from infra.verify import pods as verify_pods
from spark_sizing.allocatable import SIDECAR_CPU, SIDECAR_MEMORY_GIB
from tests.infra.conftest import base_values, config_of, sizing_cluster


def sizing(**cluster: Any) -> dict[str, Any]:
    return {"schema_version": "1.1", "source": "t", "cluster": sizing_cluster(**cluster)}


def refusal(environment: str = "staging", **overrides: Any) -> str:
    with pytest.raises(ConfigError) as err:
        parse_stack_config(base_values(**overrides), environment)
    return str(err.value)


BROKER = sizing_cluster()["broker"]


def test_a_broker_requesting_every_vcpu_of_its_node_is_refused() -> None:
    message = refusal(sizing=sizing(broker={**BROKER, "cpu": 8.0}))
    assert message.startswith("kafkastack:sizing.cluster.broker.cpu:")
    assert "allocates 7.91 of its 8" in message and "at most 7.36" in message


def test_memory_beyond_allocatable_is_refused() -> None:
    # 32 GiB × (1 − 0.075) − (255 + 11 × 58 + 100) MiB = 28.63 GiB; 1 GiB to daemon sets and
    # 0.375 to the keystore-reloader: 27.255, said rounded down so that it fits.
    message = refusal(sizing=sizing(broker={**BROKER, "memory_gib": 28.0}))
    assert message.startswith("kafkastack:sizing.cluster.broker.memory_gib:")
    assert "at most 27.25 " in message


def test_an_override_is_named_when_it_does_not_fit() -> None:
    message = refusal(resources={"broker_cpu": 8})
    assert message.startswith("kafkastack:resources.broker_cpu:")


def test_heap_must_leave_room_for_the_jvm() -> None:
    message = refusal(resources={"broker_memory_gib": 4, "broker_heap_gib": 4})
    assert message.startswith("kafkastack:resources.broker_heap_gib:") and "at most 3" in message


def test_the_sized_node_wins_over_the_profile_table() -> None:
    node = {
        "cpu": 8.0,
        "memory_gib": 32.0,
        "allocatable_cpu": 6.0,
        "allocatable_memory_gib": 28.0,
        "daemonset_cpu": 0.5,
        "daemonset_memory_gib": 1.0,
    }
    message = refusal(sizing=sizing(node=node))
    # 6.0 − 0.5 − 0.05: the sized 7.3 vCPUs do not fit.
    assert "kafkastack:sizing.cluster.broker.cpu" in message and "at most 5.45" in message


def test_a_custom_profile_needs_its_node_figures() -> None:
    message = refusal(sizing=sizing(profile="onprem"))
    assert message.startswith("kafkastack:sizing.cluster.node:")


def test_memory_limit_equals_request_and_cpu_is_limited_to_what_the_node_leaves() -> None:
    model = ClusterModel.from_config(parse_stack_config(base_values(), "staging"))
    container = workloads.kafka_statefulset(model, model.brokers[0], "fast")["spec"]["template"][
        "spec"
    ]["containers"][0]
    # The fixture's sizing: 7.3 vCPUs, 26.75 GiB = 27,392 MiB. The limit is what an m5.2xlarge
    # leaves to pods, 7.91 allocatable − 0.5 to daemon sets (the broker is alone on its node,
    # and its sidecars mostly sleep).
    assert container["resources"] == {
        "requests": {"cpu": "7300m", "memory": "27392Mi"},
        "limits": {"cpu": "7410m", "memory": "27392Mi"},
    }


def _containers(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    pod = manifest["spec"]["template"]["spec"]
    return [*pod.get("initContainers", []), *pod["containers"]]


@pytest.mark.parametrize("environment", ["local", "dev", "staging", "prod"])
def test_every_container_has_requests_and_limits(environment: str, repo_root: Path) -> None:
    # A namespace whose ResourceQuota caps limits refuses a pod with one container without them
    # (tests/cluster/test_resource_quota.py shows the real API server doing so).
    config = load_stack(repo_root / "stacks", environment)
    model = ClusterModel.from_config(config)
    seen: set[str] = set()
    for concern in desired_state(model):
        for declared in concern.objects:
            if declared.kind not in ("StatefulSet", "Deployment", "Job"):
                continue
            for container in _containers(declared.manifest):
                seen.add(container["name"])
                resources = container.get("resources", {})
                for side in ("requests", "limits"):
                    assert set(resources.get(side, {})) == {"cpu", "memory"}, (
                        declared.logical,
                        container["name"],
                    )
                assert resources["limits"]["memory"] == resources["requests"]["memory"]
    assert {"kafka", "keystore-reloader", "kafka-dynamic-settings"} <= seen
    if environment == "dev":  # ZooKeeper mode: its servers and their init containers too
        assert {"zookeeper", "myid", "scram-users"} <= seen
    if environment == "prod":
        assert {"haproxy", "jmx-agent", "format-storage"} <= seen


def test_quantities_are_written_as_the_api_server_stores_them() -> None:
    # The real provider hands back "7300m" for 7.3: any other spelling is a diff on every preview
    # (tests/engine/test_render.py compares the two renders). 26.75 × 1024 = 27,392 MiB.
    assert [cpu_quantity(c) for c in (2, 7.3, 0.05)] == ["2", "7300m", "50m"]
    assert [memory_quantity(m) for m in (4, 26.75, 0.375)] == ["4Gi", "27392Mi", "384Mi"]


def test_on_openshift_the_node_keeps_its_system_reserved_share() -> None:
    # OpenShift: 8 − 500m system-reserved = 7.5 vCPUs, 0.5 to daemon sets, 0.05 to the
    # keystore-reloader; the sizing's EKS figures (7.91) would have let 7.3 through, and the
    # pod would stay Pending.
    message = refusal(platform="openshift", external={"mode": "route"})
    assert message.startswith("kafkastack:sizing.cluster.broker.cpu:")
    assert "on openshift allocates 7.5 of its 8" in message and "at most 6.95" in message


def test_on_openshift_memory_is_what_system_reserved_and_eviction_leave() -> None:
    # 32 GiB × 0.925 − 1 GiB − 100 MiB = 28.502 GiB; 1 GiB to daemon sets, 0.375 to the
    # keystore-reloader: 27.127.
    message = refusal(
        platform="openshift",
        external={"mode": "route"},
        resources={"broker_cpu": 6.9, "broker_memory_gib": 27.5},
    )
    assert message.startswith("kafkastack:resources.broker_memory_gib:")
    assert "at most 27.12 " in message


def test_the_daemon_sets_share_is_a_stack_setting() -> None:
    message = refusal(resources={"daemonset_cpu": 1.0})
    assert message.startswith("kafkastack:sizing.cluster.broker.cpu:")
    assert "1 of them to daemon sets (resources.daemonset_cpu)" in message
    # 7.91 − 1 − 0.05 for the keystore-reloader.
    assert "at most 6.86" in message


@pytest.mark.parametrize("environment", ["staging", "prod"])
def test_the_production_stacks_fit_their_platforms_nodes(environment: str, repo_root: Path) -> None:
    config = load_stack(repo_root / "stacks", environment)
    n = resources.node(config)
    assert n is not None
    request = resources.broker_request(config)
    count = resources.sidecars(config, "broker")
    assert count == 1  # dedicated KRaft controllers: the keystore-reloader only
    assert request.cpu <= n.allocatable_cpu - n.daemonset_cpu - count * SIDECAR_CPU
    free_memory = n.allocatable_memory_gib - n.daemonset_memory_gib - count * SIDECAR_MEMORY_GIB
    assert request.memory_gib <= free_memory


def test_a_request_that_fits_only_without_the_sidecars_is_refused() -> None:
    # The sizing before the sidecars: 7.4 vCPUs and 27.5 GiB fit 7.91 − 0.5 = 7.41 and
    # 28.63 − 1 = 27.63, not what the broker's keystore-reloader (0.05, 0.375) leaves.
    message = refusal(sizing=sizing(broker={**BROKER, "cpu": 7.4}))
    assert message.startswith("kafkastack:sizing.cluster.broker.cpu: 7.4 vCPUs per broker")
    assert "and 0.05 to the pod's sidecars (1 × 0.05); request at most 7.36" in message
    message = refusal(sizing=sizing(broker={**BROKER, "memory_gib": 27.5}))
    assert message.startswith("kafkastack:sizing.cluster.broker.memory_gib: 27.5 GiB per broker")
    assert "and 0.375 to the pod's sidecars (1 × 0.375); request at most 27.25 " in message


def test_a_combined_broker_leaves_room_for_both_sidecars() -> None:
    # Also a voter: keystore-reloader and quorum-membership. 7.35 fits beside one (7.36), not
    # beside two (7.91 − 0.5 − 0.1 = 7.31).
    message = refusal("dev", quorum={"combined": True}, resources={"broker_cpu": 7.35})
    assert message.startswith("kafkastack:resources.broker_cpu:")
    assert "and 0.1 to the pod's sidecars (2 × 0.05); request at most 7.31" in message


def test_a_controller_has_two_sidecars_and_a_zookeeper_server_none() -> None:
    quorum = {**sizing_cluster()["quorum"], "cpu": 7.4}
    message = refusal(sizing=sizing(quorum=quorum))
    assert message.startswith("kafkastack:sizing.cluster.quorum.cpu: 7.4 vCPUs per kraft")
    assert "(2 × 0.05); request at most 7.31" in message
    # The same 7.4 vCPUs fit a ZooKeeper server's pod, which has no sidecar: 7.91 − 0.5.
    zookeeper = config_of(
        quorum={"kind": "zookeeper", "nodes": 3},
        kafka_version="3.9.1",
        sizing=sizing(quorum=quorum),
    )
    assert resources.sidecars(zookeeper, "zookeeper") == 0
    assert resources.sidecars(zookeeper, "broker") == 1


@pytest.mark.parametrize("environment", ["local", "dev", "prod"])
def test_every_container_running_a_kafka_tool_starts_it_as_a_tool(
    environment: str, repo_root: Path
) -> None:
    """Init containers, sidecars and admin Jobs start one tool JVM per action: without the C2
    compiler and G1 (`TOOL_JVM_OPTIONS`). The broker's and controller's own JVM takes the
    stack's `resources.server_jvm_options` (the local stack's: C1 alone), else the image's
    defaults."""
    config = load_stack(repo_root / "stacks", environment)
    model = ClusterModel.from_config(config)
    servers = 0
    tools: set[str] = set()
    for concern in desired_state(model):
        for declared in concern.objects:
            if declared.kind not in ("StatefulSet", "Job"):
                continue
            for container in _containers(declared.manifest):
                env = {e["name"]: e.get("value") for e in container.get("env", [])}
                options = env.get("KAFKA_JVM_PERFORMANCE_OPTS")
                if container["name"] == "kafka":
                    assert options == config.resources.server_jvm_options, declared.logical
                    servers += 1
                elif "/opt/kafka/bin/" in " ".join(container["command"]):
                    tools.add(container["name"])
                    assert options == resources.TOOL_JVM_OPTIONS, container["name"]
    assert servers == len(model.brokers) + len([n for n in model.quorum if n.role == "controller"])
    assert (config.resources.server_jvm_options is None) == (environment != "local")
    assert {"keystore-reloader", "kafka-dynamic-settings"} <= tools
    if environment == "dev":  # ZooKeeper mode writes its SCRAM users with Kafka's tools
        assert "scram-users" in tools
    else:  # KRaft formats its storage
        assert "format-storage" in tools
    if environment == "local":  # combined brokers are voters: their membership sidecar
        assert "quorum-membership" in tools


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ("-XX:+UseG1GC -Xmx4g", "-Xmx4g sizes the heap, which follows the sizing"),
        ("-XX:MaxRAMPercentage=75", "sizes the heap"),
        ("-XX:+UseG1GC UseSerialGC", "'UseSerialGC' is not a JVM option"),
        ("-Dname='a b'", "without quotes, $ or backslashes"),
        ("-Dhome=$HOME", "without quotes, $ or backslashes"),
        ("  ", "is empty"),
    ],
)
def test_server_jvm_options_the_start_script_cannot_pass_as_meant_are_refused(
    options: str, words: str
) -> None:
    message = refusal(resources={"server_jvm_options": options})
    assert message.startswith("kafkastack:resources.server_jvm_options:"), message
    assert words in message, message


@pytest.mark.parametrize("environment", ["local", "prod"])
def test_the_harness_starts_a_server_with_the_jvm_options_its_pod_sets(
    environment: str, repo_root: Path
) -> None:
    """The kafka tier's servers take their JVM options from the rendered pod, as the image's
    start script does (infra/verify/pods.py): the local stack's, or the image's collector."""
    config = load_stack(repo_root / "stacks", environment)
    model = ClusterModel.from_config(config)
    broker = next(
        declared.manifest
        for concern in desired_state(model)
        for declared in concern.objects
        if declared.kind == "StatefulSet" and declared.logical == model.brokers[0].workload
    )
    options = verify_pods.performance_options(broker["spec"]["template"]["spec"])
    assert options == (config.resources.server_jvm_options or verify_pods.IMAGE_PERFORMANCE_OPTIONS)
