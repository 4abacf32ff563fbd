"""The second network through real Multus: the local stack's real-node variant in `network.mode:
dual` (a subnet per zone, static addresses through the `ips` capability, the `bridge` plugin on
the nodes' shared host bridge) comes up Ready through `pulumi up`; every broker has the
interface and address the model planned, REPLICATION and CONTROLLER listen there, and under a
replicated produce the followers receive the replicated bytes on that interface, not on the pod
network's."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import yaml

from infra.config import load_stack
from infra.localcluster.node_config import replication_bridge
from infra.localcluster.nodes import RealNodes
from infra.localcluster.provision import local_engine, provision
from infra.localcluster.real_stack import write_real_node_stack
from infra.model import admin_client, labels, networks
from infra.model.cluster import ClusterModel
from infra.model.paths import KAFKA_BIN
from infra.model.probes import listening_command
from infra.model.storage import storage_class_names
from infra.stack_config import StackConfig
from tests.nodes.pods import second_network_addresses

POD_INTERFACE = "eth0"
RECORDS = 20_000
RECORD_BYTES = 1_000
TOPIC = "second-network-load"
# The local image ships only the scripts its manifests run; the tools run through its classpath,
# without the broker's KAFKA_OPTS (its JMX agent would bind the broker's metrics port) and with a
# small heap beside the broker's in the pod's memory limit.
TOOL = ("env", "KAFKA_OPTS=", "KAFKA_HEAP_OPTS=-Xmx256m", f"{KAFKA_BIN}/kafka-run-class.sh")
TOPICS = (*TOOL, "org.apache.kafka.tools.TopicCommand")
PERF_TEST = (*TOOL, "org.apache.kafka.tools.ProducerPerformance")


def _ready(pod: dict[str, Any]) -> bool:
    conditions = pod.get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _exec(nodes: RealNodes, ns: str, pod: str, *argv: str, timeout: float = 300) -> str:
    result = nodes.kube.kubectl(
        "exec", "-n", ns, pod, "-c", "kafka", f"--request-timeout={timeout:.0f}s", "--", *argv,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, f"{argv[:3]} in {pod}: {result.stdout}\n{result.stderr}"
    return str(result.stdout)


def _counters(nodes: RealNodes, ns: str, pod: str) -> dict[str, int]:
    """rx/tx bytes of the pod's interface and of its second network's, read inside the pod."""
    paths = [
        f"/sys/class/net/{iface}/statistics/{way}_bytes"
        for iface in (POD_INTERFACE, networks.SECOND_INTERFACE)
        for way in ("rx", "tx")
    ]
    values = _exec(nodes, ns, pod, "cat", *paths).split()
    keys = [p.split("/")[4] + "." + p.rsplit("/", 1)[1].split("_")[0] for p in paths]
    return dict(zip(keys, map(int, values), strict=True))


def _client_properties(nodes: RealNodes, config: StackConfig, model: ClusterModel) -> str:
    """The admin's client config as the program filled it for the admin Jobs (its Secret), which
    the broker pods' tools can use as it is: the local stack's CLIENT listener has no TLS here."""
    assert not config.client_tls and config.security.client_auth == "scram-sha-512"
    key = admin_client.ADMIN_PROPERTIES.replace(".", "\\.")
    raw = nodes.kube.kubectl(
        "get", "secret", "-n", config.namespace, model.names.admin_client_secret,
        "-o", f"jsonpath={{.data.{key}}}",
    ).stdout  # fmt: skip
    return base64.b64decode(raw).decode()


def _leader(nodes: RealNodes, ns: str, pod: str, bootstrap: str) -> tuple[int, list[int]]:
    described = _exec(
        nodes, ns, pod, *TOPICS, "--bootstrap-server", bootstrap,
        "--command-config", "/tmp/client.properties", "--describe", "--topic", TOPIC,
    )  # fmt: skip
    line = next(x for x in described.splitlines() if "Leader:" in x)
    fields = dict(zip(line.split()[::2], line.split()[1::2], strict=False))
    return int(fields["Leader:"]), [int(r) for r in fields["Isr:"].split(",")]


def test_replication_runs_on_the_multus_network(
    released_nodes: RealNodes, repo_root: Path, tmp_path: Path
) -> None:
    real_nodes = released_nodes
    kube = real_nodes.kube
    stack_file = write_real_node_stack(
        repo_root / "stacks" / "Pulumi.local.yaml",
        tmp_path / "stacks" / "Pulumi.local.yaml",
        replication_bridge=replication_bridge(kube.name),
    )
    # The committed local stack's in-cluster protocol (SCRAM without TLS), which the broker-pod
    # tools below log in with; the shared variant turns TLS on for the client-pod proofs.
    document = yaml.safe_load(stack_file.read_text(encoding="utf-8"))
    document["config"]["kafkastack:security"]["client_tls"] = False
    stack_file.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    config = load_stack(stack_file.parent, "local")
    try:
        _dual_network_proof(real_nodes, stack_file, config, tmp_path)
    finally:
        kube.release_stack(
            config.namespace, list(storage_class_names(ClusterModel.from_config(config)).values())
        )


def _dual_network_proof(
    real_nodes: RealNodes, stack_file: Path, config: StackConfig, tmp_path: Path
) -> None:
    kube = real_nodes.kube
    assert real_nodes.multus
    model = ClusterModel.from_config(config)
    assert config.network.mode == "dual" and model.address_plan and model.address_plan.zoned
    ns = config.namespace
    started = time.monotonic()
    provision(kube, stack_file, config, engine=local_engine(kube, tmp_path / "state"))
    print(f"\ndual-network stack Ready on real nodes in {time.monotonic() - started:.0f} s")

    # The workloads' pods (a Job's pod, the dynamic settings, completes instead of being Ready).
    every_pod = [
        p
        for p in kube.objects("pods", ns)
        if all(o["kind"] != "Job" for o in p["metadata"].get("ownerReferences", []))
    ]
    assert [p["metadata"]["name"] for p in every_pod if not _ready(p)] == []
    pods = {p["metadata"]["labels"].get(labels.NAME): p for p in every_pod}
    broker_pods = {}
    for broker in model.brokers:
        pod = pods[broker.workload]
        name = pod["metadata"]["name"]
        broker_pods[broker.node_id] = name
        # Multus's own account of the attachment, then the kernel's inside the pod.
        attached = second_network_addresses(pod, networks.SECOND_INTERFACE)
        assert attached == [[broker.replication_ip]], pod["metadata"]["annotations"]
        for port in (model.ports.replication, model.ports.controller):
            assert broker.replication_ip is not None
            _exec(real_nodes, ns, name, *listening_command(broker.replication_ip, port))

    # A replicated produce: one partition on every broker (RF 3, acks=all), from a follower.
    any_pod = broker_pods[model.brokers[0].node_id]
    bootstrap = f"{model.names.bootstrap_dns}:{model.ports.client}"
    properties = _client_properties(real_nodes, config, model)
    write = f"cat > /tmp/client.properties <<'EOF'\n{properties}\nEOF"
    for pod in broker_pods.values():
        _exec(real_nodes, ns, pod, "sh", "-c", write)
    _exec(
        real_nodes, ns, any_pod, *TOPICS, "--bootstrap-server", bootstrap,
        "--command-config", "/tmp/client.properties", "--create", "--topic", TOPIC,
        "--partitions", "1", "--replication-factor", "3",
    )  # fmt: skip
    leader, isr = _leader(real_nodes, ns, any_pod, bootstrap)
    assert sorted(isr) == sorted(broker_pods), isr
    followers = [broker_pods[i] for i in broker_pods if i != leader]
    before = {pod: _counters(real_nodes, ns, pod) for pod in broker_pods.values()}
    _exec(
        real_nodes, ns, followers[0], *PERF_TEST,
        "--topic", TOPIC, "--num-records", str(RECORDS), "--record-size", str(RECORD_BYTES),
        "--throughput", "-1", "--producer.config", "/tmp/client.properties",
        "--producer-props", f"bootstrap.servers={bootstrap}", "acks=all",
        "compression.type=none",
    )  # fmt: skip
    # acks=all with every replica in sync: both followers hold every record.
    assert sorted(_leader(real_nodes, ns, any_pod, bootstrap)[1]) == sorted(broker_pods)
    after = {pod: _counters(real_nodes, ns, pod) for pod in broker_pods.values()}
    grown = {pod: {key: after[pod][key] - before[pod][key] for key in after[pod]} for pod in after}
    payload = RECORDS * RECORD_BYTES
    print(f"payload {payload} B; interface byte growth per broker pod: {grown}")
    for pod in followers:
        # A follower fetches the whole payload from the leader over the second network...
        assert grown[pod][f"{networks.SECOND_INTERFACE}.rx"] >= payload, grown
        # ...and receives far less on the pod network (produce responses, metadata, probes).
        assert grown[pod][f"{POD_INTERFACE}.rx"] < payload / 10, grown
    leader_pod = broker_pods[leader]
    # The leader sends the payload to both followers over the second network.
    assert grown[leader_pod][f"{networks.SECOND_INTERFACE}.tx"] >= 2 * payload, grown
