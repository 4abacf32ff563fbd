"""Kafka 4 / KRaft, started from the rendered configs: each test fails if its property breaks."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from infra.toolchain import kafka_class_archive
from infra.verify.processes import ProcessCluster
from tests.kafka.checks import (
    FAILOVER_TRIALS,
    assert_exactly_once_in_order,
    check_leader_sigkill,
    check_min_isr_two,
    create,
    create_led_by_every_broker,
    report_failover,
)

pytestmark = pytest.mark.kafka


def _jvm_maps(group: int) -> str:
    """The memory maps of the JVM in this process group (a node's `sh`, mounts, then `java`)."""
    for entry in Path("/proc").iterdir():
        try:
            in_group = entry.name.isdigit() and os.getpgid(int(entry.name)) == group
            if in_group and (entry / "cmdline").read_bytes().startswith(b"java\0"):
                return (entry / "maps").read_text()
        except (ProcessLookupError, FileNotFoundError):
            continue  # exited while we looked
    raise AssertionError(f"no java in process group {group}")


def test_every_node_maps_the_class_archive_of_its_jars(kraft: ProcessCluster) -> None:
    """The harness starts brokers and controllers on the cached jars as the image's runner does
    (jars in name order, scripts/kafka/class-archive.sh's archive): a classpath the archive was
    not dumped for, or a JDK it was not dumped by, and the JVM drops it without a word."""
    archive = kafka_class_archive(kraft.lib)
    assert archive.is_file(), f"no {archive}: run scripts/kafka/class-archive.sh"
    for node in kraft.nodes:
        assert node.process is not None, node.name
        assert str(archive) in _jvm_maps(node.process.pid), node.name


def test_replicas_of_every_partition_sit_on_three_racks(kraft: ProcessCluster) -> None:
    described = create(kraft, "racks", partitions=10)
    assert described["brokers"] == [0, 1, 2, 3, 4]
    racks = described["racks"]
    assert sorted(set(racks.values())) == ["a", "b", "c"]
    for partition in described["partitions"].values():
        assert len({racks[str(b)] for b in partition["replicas"]}) == 3, partition


def test_min_isr_two_survives_one_broker_and_refuses_at_two(restore: ProcessCluster) -> None:
    check_min_isr_two(restore, "durable")


def test_leader_sigkill_loses_no_acknowledged_record(restore: ProcessCluster) -> None:
    elapsed = check_leader_sigkill(restore, "failover", trials=FAILOVER_TRIALS)
    assert len(elapsed) == FAILOVER_TRIALS
    report_failover("KRaft", elapsed)


def test_quorum_loses_one_controller_keeps_working_loses_majority_stops(
    restore: ProcessCluster,
) -> None:
    cluster = restore
    controllers = [n.name for n in cluster.quorum]
    cluster.stop_node(controllers[0])
    assert cluster.client("create_topic", topic="q-one-down", partitions=1, rf=3)["ok"]
    cluster.stop_node(controllers[1])
    refused = cluster.client(
        "create_topic", topic="q-majority-down", partitions=1, rf=3, timeout=200
    )
    assert not refused["ok"]
    cluster.start_node(controllers[0])
    cluster.start_node(controllers[1])
    deadline = time.monotonic() + 90
    while not cluster.client(
        "create_topic", topic=f"q-back-{int(time.time())}", partitions=1, rf=3
    )["ok"]:
        assert time.monotonic() < deadline, "metadata changes did not resume"
        time.sleep(2)
    cluster.wait_for_brokers(len(cluster.brokers))  # and every broker is unfenced again


def test_replication_stays_on_the_replication_network(kraft: ProcessCluster) -> None:
    create(kraft, "netsplit", partitions=1)
    described = kraft.client("describe", topic="netsplit")
    leader = described["partitions"]["0"]["leader"]
    followers = [
        kraft.broker_by_id(b) for b in described["partitions"]["0"]["replicas"] if b != leader
    ]
    before = {f.name: kraft.network.byte_counters(f.host) for f in followers}
    payload = 4000 * 1000  # 4000 records of ~1 kB
    reply = kraft.client("produce", topic="netsplit", count=4000, value_bytes=1000)
    assert len(reply["acked"]) == 4000
    for follower in followers:
        # acks=all means the followers fetched it; poll until their counters show it.
        deadline = time.monotonic() + 30
        while True:
            after = kraft.network.byte_counters(follower.host)
            replication = after["eth-repl"] - before[follower.name]["eth-repl"]
            if replication > payload * 0.9 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        client = after["eth-client"] - before[follower.name]["eth-client"]
        assert replication > payload * 0.9, (follower.name, replication)
        assert client < payload * 0.1, (follower.name, client)
    assert set(kraft.network.byte_counters(kraft.client_host)) == {"eth-client"}


def test_external_clients_reach_every_broker_through_haproxy(kraft: ProcessCluster) -> None:
    described = create_led_by_every_broker(kraft, "external", partitions=10)
    leaders = {p["leader"] for p in described["partitions"].values()}
    assert leaders == {0, 1, 2, 3, 4}
    produced = kraft.client("produce", external=True, topic="external", count=500, keys=50)
    assert len(produced["acked"]) == 500 and not produced["errors"]
    assert {a[2] for a in produced["acked"]} == set(range(10))
    consumed = kraft.client("consume", external=True, topic="external", expect=500)["records"]
    assert_exactly_once_in_order(produced["acked"], consumed)
    probe = kraft.client(
        "plaintext_probe",
        host=kraft.topology["external"]["bootstrap_host"],
        port=kraft.topology["ports"]["external_advertised"],
    )
    assert probe["answered"] is False


def test_controller_readiness_probe_sees_its_second_network_listener(
    restore: ProcessCluster,
) -> None:
    """A dual-mode controller listens only on its second-network address, where the kubelet's
    tcpSocket probe cannot dial. Its rendered exec probe, run in the controller's own network
    namespace, says ready while the controller listens there and not once it has stopped."""
    controller = restore.quorum[0]
    rendered = restore.render_dir / "kubernetes" / "StatefulSet" / f"{controller.name}.yaml"
    container = yaml.safe_load(rendered.read_text())["spec"]["template"]["spec"]["containers"][0]
    command = container["readinessProbe"]["exec"]["command"]

    def ready() -> bool:
        netns = ["ip", "netns", "exec", controller.host.namespace]
        return subprocess.run([*netns, *command], check=False).returncode == 0

    assert controller.host.listening(restore.topology["ports"]["controller"])
    assert ready()
    restore.stop_node(controller.name)
    assert not ready()
