"""The cloud shape (`network.mode: single`), started from the rendered configs: one network, with
replication and the quorum on listeners of their own (docs/networks.md)."""

from __future__ import annotations

import subprocess

import pytest

from infra.verify.processes import ProcessCluster
from tests.kafka.checks import create

pytestmark = pytest.mark.kafka


@pytest.fixture
def single(one_network_mtls: ProcessCluster) -> ProcessCluster:
    """Kafka 4 (KRaft) on one network: 3 controllers and 3 brokers over zones a, b, c (their
    clients log in with certificates, which the mTLS proofs check)."""
    return one_network_mtls


def established_to(namespace: str, port: int) -> str:
    shown = subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            namespace,
            "ss",
            "-Htn",
            "state",
            "established",
            f"dport = :{port}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return shown.stdout.strip()


def test_followers_replicate_over_the_replication_listener_on_the_one_network(
    single: ProcessCluster,
) -> None:
    """No host has a second interface; followers fetch from the leader's REPLICATION listener
    (9091, bound on every interface, advertised by DNS name), and acks=all writes succeed."""
    ports = single.topology["ports"]
    for node in single.nodes:
        assert set(single.network.byte_counters(node.host)) == {"eth-client"}
    described = create(single, "one-network", partitions=3)
    reply = single.client("produce", topic="one-network", count=300, value_bytes=1000)
    assert len(reply["acked"]) == 300 and not reply["errors"]
    for broker in single.brokers:
        assert broker.host.listening(ports["replication"])
        # Every broker follows some partition, so it holds a fetch connection to a leader's 9091.
        assert established_to(broker.host.namespace, ports["replication"]), broker.name
    assert len(described["partitions"]) == 3


def test_controllers_answer_where_the_kubelet_probe_dials(single: ProcessCluster) -> None:
    """In single mode a controller binds every interface, so a TCP connection to its pod
    address (what the tcpSocket readiness probe opens) is accepted."""
    port = single.topology["ports"]["controller"]
    for controller in single.quorum:
        dial = (
            f"import socket; socket.create_connection(({controller.host.client_ip!r}, {port}), 5)"
        )
        connected = single.python_on_client_host("-c", dial)
        assert connected.returncode == 0, (controller.name, connected.stderr)
