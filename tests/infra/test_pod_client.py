"""The in-cluster client pod of the proofs, and what its Kafka tools print, parsed."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Literal

import pytest

from infra.config import load_stack
from infra.localcluster.client_pod import (
    CLIENT_PROPERTIES,
    PRODUCER_PROPERTIES,
    client_pod,
    client_script,
    external_host_names,
)
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.disruptions import longest_stall
from infra.localcluster.host_clients import HostAdmin
from infra.localcluster.pod_client import (
    Acked,
    Consumed,
    PartitionState,
    PodClient,
    lost,
    out_of_order,
    parse_acked,
    parse_consumed,
)
from infra.localcluster.real_stack import write_real_node_stack
from infra.model.cluster import ClusterModel


def _model(
    repo_root: Path, tmp_path: Path, quorum: Literal["kraft", "zookeeper"] = "kraft"
) -> ClusterModel:
    stack = write_real_node_stack(
        repo_root / "stacks" / "Pulumi.local.yaml",
        tmp_path / "stacks" / "Pulumi.local.yaml",
        quorum=quorum,
    )
    return ClusterModel.from_config(load_stack(stack.parent, "local"))


def test_producer_and_consumer_name_their_config_as_the_stacks_kafka_release_does(
    repo_root: Path, tmp_path: Path
) -> None:
    """Kafka 3.9's VerifiableProducer and ConsoleConsumer refuse 4.x's --command-config and
    --formatter-property (the ZooKeeper-mode proof on real nodes failed on that)."""
    kube = LocalKubernetes("options-test")
    kraft = PodClient(kube, _model(repo_root, tmp_path / "4"), "client", CannedAdmin({}))
    zookeeper_model = _model(repo_root, tmp_path / "3", "zookeeper")
    zookeeper = PodClient(kube, zookeeper_model, "client", CannedAdmin({}))
    assert kraft.model.config.kafka_major == 4 and zookeeper.model.config.kafka_major == 3
    produce_4 = kraft.producer_args("t", 10, 2, -1)
    produce_3 = zookeeper.producer_args("t", 10, 2, -1)
    assert "--command-config" in produce_4 and "--command-config" not in produce_3
    assert produce_3[produce_3.index("--producer.config") + 1] == PRODUCER_PROPERTIES
    consume_3 = zookeeper.consumer_args("t", 10, 5)
    assert consume_3[consume_3.index("--consumer.config") + 1] == CLIENT_PROPERTIES
    assert "--formatter-property" not in consume_3 and consume_3.count("--property") == 3
    consume_4 = kraft.consumer_args("t", 10, 5)
    assert consume_4.count("--formatter-property") == 3 and "--command-config" in consume_4


def test_client_pod_runs_the_stacks_image_with_its_admin_secret_and_ca(
    repo_root: Path, tmp_path: Path
) -> None:
    model = _model(repo_root, tmp_path)
    pod = client_pod(model, "client", {"10.96.0.9": external_host_names(model)})
    container = pod["spec"]["containers"][0]
    assert container["image"] == "localhost/kafkastack/kafka:4.3.1"  # the brokers' image
    ca = next(v for v in pod["spec"]["volumes"] if v["name"] == "ca")
    assert ca["secret"]["secretName"] == model.names.tls_secret(model.brokers[0].workload)
    # External names resolve to HAProxy's Service, as a client's DNS would to its balancer.
    aliases = pod["spec"]["hostAliases"][0]
    assert aliases["ip"] == "10.96.0.9"
    assert aliases["hostnames"][0] == "bootstrap.kafka.local.kafkastack.dev"
    assert len(aliases["hostnames"]) == 1 + len(model.brokers)
    # The login is the admin Jobs' own: their client config Secret, the password quoted in.
    script = client_script(model)
    admin = next(v for v in pod["spec"]["volumes"] if v["name"] == "admin-client")
    assert admin["secret"]["secretName"] == model.names.admin_client_secret
    assert f"cp /etc/kafka/admin-client/admin.properties {CLIENT_PROPERTIES}" in script


class CannedAdmin(HostAdmin):
    """The host's admin answering from `replies` (op → reply), recording what was asked."""

    def __init__(self, replies: dict[str, dict[str, Any]]) -> None:
        self.replies = replies
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        self.asked.append((op, fields))
        return self.replies[op]


def _client(repo_root: Path, tmp_path: Path, admin: HostAdmin) -> PodClient:
    return PodClient(LocalKubernetes("client-test"), _model(repo_root, tmp_path), "client", admin)


def test_the_admins_metadata_becomes_leaders_and_in_sync_sets(
    repo_root: Path, tmp_path: Path
) -> None:
    partitions = {
        "0": {"leader": 1, "replicas": [1, 2, 0], "isrs": [1, 0]},
        "1": {"leader": -1, "replicas": [2, 0, 1], "isrs": [2]},
    }
    admin = CannedAdmin({"describe_topics": {"topics": {"t": partitions}}})
    client = _client(repo_root, tmp_path, admin)
    assert client.describe("t") == {
        "t": {
            0: PartitionState(leader=1, replicas=(1, 2, 0), isr=(1, 0)),
            1: PartitionState(leader=-1, replicas=(2, 0, 1), isr=(2,)),
        }
    }
    client.describe()
    assert [fields["topics"] for _, fields in admin.asked] == [["t"], None]


def test_topics_are_created_with_the_stacks_replication_and_min_isr_unless_they_exist(
    repo_root: Path, tmp_path: Path
) -> None:
    admin = CannedAdmin({"create_topic": {"ok": True}})
    client = _client(repo_root, tmp_path, admin)
    client.create_topic("t", partitions=3)
    config = client.model.config
    assert admin.asked == [
        (
            "create_topic",
            {
                "topic": "t",
                "partitions": 3,
                "rf": config.replication_factor,
                "config": {"min.insync.replicas": config.min_insync_replicas},
                "if_not_exists": True,
            },
        )
    ]


def test_verifiable_producer_lines_become_acknowledged_records_and_errors() -> None:
    output = (
        '{"timestamp":1700000000000,"name":"startup_complete"}\n'
        "[2026-11-23 19:00:00,000] WARN some log line\n"
        '{"timestamp":1700000000500,"name":"producer_send_success","key":"3",'
        '"value":"42.7","offset":9,"topic":"t","partition":2}\n'
        '{"timestamp":1700000000600,"name":"producer_send_error","key":"4","value":"42.8",'
        '"exception":"class org.apache.kafka.common.errors.TimeoutException","topic":"t"}\n'
    )
    acked, errors = parse_acked(output)
    assert acked == [Acked("3", "42.7", 2, 9, 1700000000.5)]
    assert errors == ["class org.apache.kafka.common.errors.TimeoutException"]


def test_a_send_refused_by_the_producers_own_stop_is_no_send_error() -> None:
    """SIGTERM closes the producer while its loop may send once more: that record never left,
    so it is neither acknowledged nor an error. Another IllegalStateException still is."""
    refused = (
        '{"timestamp":1700000000700,"name":"producer_send_error","key":"5","value":"42.9",'
        '"topic":"t","exception":"class java.lang.IllegalStateException",'
        '"message":"Cannot perform operation after producer has been closed"}\n'
    )
    other = refused.replace("after producer has been closed", "in this state")
    assert parse_acked(refused) == ([], [])
    assert parse_acked(other) == ([], ["class java.lang.IllegalStateException"])


def test_console_consumer_lines_become_records() -> None:
    output = "Partition:2\tOffset:9\t3\t42.7\nProcessed a total of 1 messages\n"
    assert parse_consumed(output) == [Consumed("3", "42.7", 2, 9)]


def test_end_offsets_come_by_partition(repo_root: Path, tmp_path: Path) -> None:
    admin = CannedAdmin({"end_offsets": {"offsets": {"0": 4123, "2": 17, "1": 0}}})
    assert _client(repo_root, tmp_path, admin).end_offsets("t") == {0: 4123, 1: 0, 2: 17}


def test_lost_and_out_of_order_records_are_named() -> None:
    acked = [Acked("1", "5.0", 0, 0, 0.0), Acked("1", "5.1", 0, 1, 0.0)]
    assert lost(acked, [Consumed("1", "5.0", 0, 0)]) == [acked[1]]
    assert lost(acked, [Consumed("1", "5.1", 0, 1), Consumed("1", "5.0", 0, 0)]) == []
    in_order = [Consumed("1", "5.0", 0, 0), Consumed("1", "5.1", 0, 1)]
    assert out_of_order(in_order) == []
    assert out_of_order(in_order[::-1]) == ["partition 0 key 1: 0 after 1"]
    assert out_of_order([*in_order, in_order[1]]) != []  # read twice


def test_longest_stall_counts_from_the_disruption_to_the_next_acknowledgement() -> None:
    acked = [Acked("k", f"1.{i}", 0, i, at) for i, at in enumerate([9.0, 10.1, 13.1, 13.2])]
    assert longest_stall(acked, start=10.0, end=14.0) == 3.0
    assert longest_stall([], start=10.0, end=14.0) == 4.0


def test_throttles_are_each_brokers_rates_by_its_id(repo_root: Path, tmp_path: Path) -> None:
    rate = {"follower.replication.throttled.rate": "250000"}
    admin = CannedAdmin({"throttles": {"0": {}, "3": rate}})
    client = _client(repo_root, tmp_path, admin)
    assert client.throttles([0, 3]) == {0: {}, 3: rate}
    assert admin.asked == [("throttles", {"brokers": [0, 3]})]


class SilentConsumerPod(PodClient):
    """The client pod whose consumer gave up before its first record, saying why on stderr."""

    def exec_sh(self, script: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        said = "org.apache.kafka.common.errors.TimeoutException: no record in 60000 ms"
        return subprocess.CompletedProcess(["sh", "-c", script], 1, "", said)


def test_a_consumer_that_read_nothing_says_why_instead_of_every_record_looking_lost(
    repo_root: Path, tmp_path: Path
) -> None:
    model = _model(repo_root, tmp_path)
    client = SilentConsumerPod(LocalKubernetes("client-test"), model, "client", CannedAdmin({}))
    with pytest.raises(LocalClusterError, match=r"consumer of t read nothing of 600 .*Timeout"):
        client.consume("t", expect=600)
