"""Kafka 3.9 with a ZooKeeper ensemble, started from the rendered configs (tests 1-3 again),
every login on a password with JAAS-special characters (tests/kafka/conftest.py)."""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.config import ZOOKEEPER_QUORUM_PASSWORD_KEY
from infra.model.paths import KEYSTORE_FILE, TRUSTSTORE_FILE
from infra.model.secret_text import jaas_quoted
from infra.verify.processes import ProcessCluster
from tests.kafka.checks import (
    FAILOVER_TRIALS,
    check_leader_sigkill,
    check_min_isr_two,
    check_renewal_reaches_every_listener,
    check_stop_where_waiting_cannot_help,
    create,
    report_failover,
    restart_stopped,
    wait_full_isr,
)
from tests.kafka.conftest import ZOOKEEPER_PASSWORDS

pytestmark = pytest.mark.kafka


@pytest.fixture(autouse=True)
def _whole_again(zookeeper_cluster: ProcessCluster) -> Iterator[None]:
    """Every server and broker running again after each test, whatever it stopped or left
    stopped when it failed: one failure is then one, not the first of four."""
    yield
    restart_stopped(zookeeper_cluster)


def test_replicas_on_three_racks(zookeeper_cluster: ProcessCluster) -> None:
    described = create(zookeeper_cluster, "zk-racks", partitions=6)
    assert described["brokers"] == [0, 1, 2]
    racks = described["racks"]
    for partition in described["partitions"].values():
        assert len({racks[str(b)] for b in partition["replicas"]}) == 3
    # Every broker holds a replica of each partition, all in sync: the rendered readiness
    # probe reads Kafka 3.9's describe and says ready (a line it could not read: not ready).
    wait_full_isr(zookeeper_cluster, "zk-racks", 6)
    for broker in zookeeper_cluster.brokers:
        assert zookeeper_cluster.ready(broker.name, "kafka"), broker.name


def test_a_brokers_stop_hook_reads_kafka_39s_partitions_at_min_isr(
    zookeeper_cluster: ProcessCluster, tmp_path: Path
) -> None:
    """The brokers' preStop hook (infra/model/stop_gate.py) on Kafka 3.9's describe."""
    check_stop_where_waiting_cannot_help(zookeeper_cluster, "zk-gate", tmp_path / "hook")


def test_the_admin_logs_in_with_the_password_its_scram_users_step_wrote(
    zookeeper_cluster: ProcessCluster,
) -> None:
    """The brokers logged in to the ensemble through both JAAS files (they serve), and the
    admin's SCRAM credential that each broker's scram-users step wrote into ZooKeeper takes the
    password as the rendered Secret holds it."""
    assert zookeeper_cluster.password == ZOOKEEPER_PASSWORDS["password-admin"]
    created = zookeeper_cluster.client("create_topic", topic="zk-login", partitions=3, rf=3)
    assert created["ok"], created
    assert len(zookeeper_cluster.client("produce", topic="zk-login", count=5)["acked"]) == 5


def test_min_isr_and_nothing_acknowledged_lost(zookeeper_cluster: ProcessCluster) -> None:
    check_min_isr_two(zookeeper_cluster, "zk-durable")


def test_leader_sigkill_loses_nothing(zookeeper_cluster: ProcessCluster) -> None:
    elapsed = check_leader_sigkill(zookeeper_cluster, "zk-failover", trials=FAILOVER_TRIALS)
    assert len(elapsed) == FAILOVER_TRIALS
    report_failover("ZooKeeper mode", elapsed)


REFUSED = ("Failed to authenticate using SASL", "Authentication failed against server addr")


def test_a_server_without_the_quorum_password_cannot_join(
    zookeeper_cluster: ProcessCluster,
) -> None:
    """Quorum SASL as rendered: the last server restarted with a wrong quorum password (its
    client login unchanged) is refused by its peers and never follows; the other two keep
    serving; back with the rendered credentials, it rejoins."""
    cluster = zookeeper_cluster
    jaas = (f"{cluster.topology['cluster_name']}-zookeeper-jaas", "server.conf")
    rendered = cluster.secrets[jaas]
    # Only the quorum logins (from QuorumServer on) change; with none rendered, nothing does.
    clients, section, peers = rendered.partition("QuorumServer")
    rogue = cluster.quorum[-1]
    cluster.stop_node(rogue.name)
    quorum_password = jaas_quoted(ZOOKEEPER_PASSWORDS[ZOOKEEPER_QUORUM_PASSWORD_KEY])
    assert quorum_password in peers and quorum_password not in clients
    cluster.secrets[jaas] = clients + section + peers.replace(quorum_password, jaas_quoted("wrong"))
    try:
        cluster.start_node(rogue.name, wait=False)
        deadline = time.monotonic() + 90
        while not any(m in rogue.log_since_start() for m in REFUSED):
            assert time.monotonic() < deadline, f"no SASL refusal logged; see {rogue.log}"
            assert rogue.process is not None and rogue.process.poll() is None
            time.sleep(0.5)
        assert not any(m in rogue.log_since_start() for m in ("FOLLOWING", "LEADING"))
        # The two servers with the password still serve. If the stopped server led, they elect
        # a leader first and the brokers' sessions move to it: on two busy cores one create
        # request's 30 s did not always cover that, so the create is asked again (a request that
        # timed out may still have created the topic) until it is done or two minutes pass.
        deadline = time.monotonic() + 120
        while not (
            created := cluster.client(
                "create_topic", topic="zk-quorum-auth", partitions=3, rf=3, if_not_exists=True
            )
        )["ok"]:
            assert time.monotonic() < deadline, created
            time.sleep(1)  # a refusal may come at once; the election takes seconds
        assert not any(m in rogue.log_since_start() for m in ("FOLLOWING", "LEADING"))
    finally:
        # Back with the rendered credentials, whatever failed above: the module's later tests
        # share this ensemble (a failure here once left it a server short for the next one).
        cluster.stop_node(rogue.name)
        cluster.secrets[jaas] = rendered
        cluster.start_node(rogue.name)  # waits for FOLLOWING or LEADING: it joins


def test_renewed_certificates_reach_the_brokers_without_a_restart(
    zookeeper_cluster: ProcessCluster,
) -> None:
    # In ZooKeeper mode the broker a per-node AlterConfigs reaches reloads its files itself.
    renewed = check_renewal_reaches_every_listener(zookeeper_cluster)
    assert {f"{b.name} replication" for b in zookeeper_cluster.brokers} <= set(renewed)


# Asks a server `ruok` from a broker's pod: in plain text, over TLS with the broker's node
# certificate, and over TLS with none. Prints one answer per line ("" when the server dropped
# or refused the connection).
ASK = """
import socket, ssl, sys
host, port, keystore, truststore = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def ask(wrap):
    try:
        with wrap(socket.create_connection((host, port), timeout=10)) as s:
            s.settimeout(5)
            s.sendall(b"ruok\\n")  # longer than a TLS record header: a TLS port drops it at once
            return s.recv(64).decode()
    except (OSError, ssl.SSLError):
        return ""
def tls(certificate):
    context = ssl.create_default_context(cafile=truststore)
    if certificate:
        context.load_cert_chain(keystore)
    return lambda s: context.wrap_socket(s, server_hostname=host)
print(repr(ask(lambda s: s)))
print(repr(ask(tls(True))))
print(repr(ask(tls(False))))
"""


def test_brokers_reach_the_ensemble_over_tls_only(zookeeper_cluster: ProcessCluster) -> None:
    """Every server's client port on the network answers TLS with a certificate of the stack's
    CA only (plaintext is dropped, no client certificate is refused), while its kubelet probe
    asks the plaintext port on the pod's loopback."""
    cluster = zookeeper_cluster
    broker = cluster.brokers[0].name
    port = cluster.topology["ports"]["zookeeper_client"]
    for server in cluster.quorum:
        host = server.entry["replication_ip"] or server.entry["client_host"]
        args = shlex.join([host, str(port), KEYSTORE_FILE, TRUSTSTORE_FILE])
        answers = cluster.exec_in(broker, f"python3 -c {shlex.quote(ASK)} {args}").splitlines()
        assert answers == ["''", "'imok'", "''"], (server.name, answers)
        assert cluster.ready(server.name, "zookeeper")
