"""Certificates that follow cert-manager's renewals: the Secret mounted as it is, Kafka reading
cert-manager's CombinedPEM key, and a keystore reloader in every Kafka pod (the kafka tier
shows real brokers and controllers serving a renewed certificate through it)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from infra import pki
from infra.errors import ConfigError
from infra.model import certificate_reload, own_listener, workloads
from infra.model.broker_config import broker_properties, controller_properties
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node
from infra.model.paths import COMBINED_PEM, KEYSTORE_FILE, TLS_DIR, TRUSTSTORE_FILE
from tests.infra.conftest import config_of
from tests.infra.test_security import by_kind, model_of


def pod_of(model: ClusterModel, node: Node) -> dict[str, Any]:
    spec: dict[str, Any] = workloads.kafka_statefulset(model, node, "fast")["spec"]["template"][
        "spec"
    ]
    return spec


def test_node_certificates_ask_for_the_combined_pem_with_the_stack_s_lifetime() -> None:
    model = model_of(security={"certificates": {"duration": "720h", "renew_before": "240h"}})
    nodes = [c for name, c in by_kind(model, "Certificate").items() if name != model.names.ca]
    assert len(nodes) == len(model.brokers) + len(model.quorum)
    for certificate in nodes:
        spec = certificate["spec"]
        assert pki.asks_combined_pem(spec)
        assert (spec["duration"], spec["renewBefore"]) == ("720h", "240h")


def test_kafka_reads_the_mounted_secret_itself_so_a_renewal_reaches_the_files() -> None:
    # Before: an init container copied the key and chain into an emptyDir once per pod start,
    # so a renewed Secret never reached the files Kafka reads.
    model = model_of()
    for node in (*model.brokers, *model.quorum):
        pod = pod_of(model, node)
        assert "keystore" not in [c["name"] for c in pod["initContainers"]]
        assert not [v for v in pod["volumes"] if v["name"] != "tls" and "tls" in v["name"]]
        (volume,) = [v for v in pod["volumes"] if v["name"] == "tls"]
        assert volume["secret"]["secretName"] == model.names.tls_secret(node.workload)
        mounts = [m for c in pod["containers"] for m in c["volumeMounts"] if m["name"] == "tls"]
        assert mounts and all(m["mountPath"] == TLS_DIR and "subPath" not in m for m in mounts)
    broker = broker_properties(model, model.brokers[0]).flat()
    controller = controller_properties(model, model.quorum[0]).flat()
    for properties in (broker, controller):
        assert properties["ssl.keystore.location"] == KEYSTORE_FILE
        assert properties["ssl.truststore.location"] == TRUSTSTORE_FILE
    assert KEYSTORE_FILE.endswith(COMBINED_PEM)


def test_each_node_s_reloader_asks_its_own_node_to_reload_every_tls_listener() -> None:
    model = model_of()
    broker, controller = model.brokers[1], model.quorum[1]
    broker_script = certificate_reload.reload_script(model, broker)
    for listener in ("client", "replication", "external"):
        assert f"listener.name.{listener}.ssl.keystore.location={KEYSTORE_FILE}" in broker_script
    assert f"--bootstrap-server {broker.replication_host}:{model.ports.replication}" in (
        broker_script
    )
    assert f"--entity-name {broker.node_id} " in broker_script
    controller_script = certificate_reload.reload_script(model, controller)
    assert f"--bootstrap-controller {controller.replication_host}:{model.ports.controller}" in (
        controller_script
    )
    assert f"listener.name.controller.ssl.keystore.location={KEYSTORE_FILE}" in controller_script
    assert "listener.name.client" not in controller_script
    # A broker's own certificate is its login (the nodes' principal is a super user); on the
    # CONTROLLER listener the nodes log in with the same principal's password
    # (tests/infra/test_controller_login.py).
    assert f"ssl.keystore.location={KEYSTORE_FILE}" in own_listener.client_properties(model, broker)
    assert "sasl.mechanism=PLAIN" in own_listener.client_properties(model, controller)
    # No node is told to restart for a renewal any more.
    assert "restart" not in broker_script and "restart" not in controller_script


def test_every_kafka_pod_runs_a_reloader_and_no_zookeeper_server_does() -> None:
    model = model_of("dev", kafka_version="3.9.1", quorum={"kind": "zookeeper", "nodes": 3})
    for node in model.brokers:
        names = [c["name"] for c in pod_of(model, node)["containers"]]
        assert certificate_reload.CONTAINER in names
    for server in model.quorum:
        pod = workloads.zookeeper_statefulset(model, server, "fast")["spec"]["template"]["spec"]
        assert [c["name"] for c in pod["containers"]] == ["zookeeper"]


def test_controllers_that_cannot_reload_before_kafka_4_3_get_no_reloader() -> None:
    # Kafka 3.9.1's controllers refuse the per-node request (BrokerIdNotRegisteredException):
    # a reloader there would only fail until it crash-looped.
    old = model_of("dev", kafka_version="3.9.1")
    assert {n.role for n in old.quorum} == {"controller"}  # dedicated KRaft controllers
    assert [certificate_reload.reloads(old, n) for n in (*old.brokers, *old.quorum)] == [
        True
    ] * len(old.brokers) + [False] * len(old.quorum)
    current = model_of("dev", kafka_version="4.3.1")
    assert all(certificate_reload.reloads(current, n) for n in current.quorum)


def test_without_tls_between_nodes_the_reloader_speaks_plaintext_to_its_node() -> None:
    model = model_of("dev", security={"replication_tls": False, "authorization": False})
    broker = model.brokers[0]
    assert "security.protocol=PLAINTEXT" in own_listener.client_properties(model, broker)
    # The brokers' external listener still serves a certificate; dedicated controllers none.
    assert certificate_reload.reloads(model, broker)
    assert not any(certificate_reload.reloads(model, c) for c in model.quorum)


def _script_run(
    tmp_path: Path, configs_body: str
) -> tuple[subprocess.Popen[bytes], Path, Path, Path]:
    """The rendered script of broker 0, run by sh with stand-ins for Kafka's tool
    (`configs_body`) and for `sleep` (counts the rounds): process, keystore, calls, rounds."""
    model = model_of()
    keystore, state, tools = tmp_path / "tls-combined.pem", tmp_path / "state", tmp_path / "bin"
    calls, rounds = tmp_path / "calls", tmp_path / "rounds"
    state.mkdir()
    tools.mkdir()
    for tool, body in (
        ("kafka-configs.sh", f'echo "$@" >> {calls}; {configs_body}'),
        ("sleep", f"echo round >> {rounds}; exec /bin/sleep 0.05"),
    ):
        (tools / tool).write_text(f"#!/bin/sh\n{body}\n")
        (tools / tool).chmod(0o755)
    keystore.write_text("first")
    script = (
        certificate_reload.reload_script(model, model.brokers[0])
        .replace(KEYSTORE_FILE, str(keystore))
        .replace(certificate_reload.STATE_DIR, str(state))
        .replace("/opt/kafka/bin", str(tools))
    )
    process = subprocess.Popen(["sh", "-c", script], env={"PATH": f"{tools}:/usr/bin:/bin"})
    return process, keystore, calls, rounds


def test_the_reload_script_reloads_only_when_the_mounted_file_changes(tmp_path: Path) -> None:
    """Nothing while the file stays, one add-and-delete when it changes, then nothing again."""
    process, keystore, calls, rounds = _script_run(tmp_path, "exit 0")

    def after_rounds(count: int) -> list[str]:
        """The tool's calls once `count` more rounds have passed."""
        target = _lines(rounds) + count
        _wait_for(lambda: _lines(rounds) >= target)
        return calls.read_text().splitlines() if calls.exists() else []

    try:
        assert after_rounds(3) == []  # the file the node started with is the one it loaded
        keystore.write_text("renewed")
        added, deleted = after_rounds(3)
        assert "--add-config" in added and "--delete-config" in deleted
        assert after_rounds(3) == [added, deleted]
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_reload_that_keeps_failing_ends_the_container_so_its_restarts_show(
    tmp_path: Path,
) -> None:
    process, keystore, calls, _ = _script_run(tmp_path, "exit 1")
    try:
        _wait_for(lambda: _lines(tmp_path / "rounds") >= 1)
        keystore.write_text("renewed")
        assert process.wait(timeout=30) == 1
        # One attempt a round (the delete is not tried once the add failed), the limit's worth.
        assert _lines(calls) == certificate_reload.FAILURES_BEFORE_EXIT
    finally:
        if process.poll() is None:
            process.kill()


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _wait_for(condition: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("certificates", "problem"),
    [
        ({"duration": "30m"}, "duration 30m is under cert-manager's minimum"),
        ({"renew_before": "2160h"}, "renew_before 2160h must be at least 5m"),
        ({"renew_before": "1m"}, "renew_before 1m must be at least 5m"),
        ({"duration": "90 days"}, "'90 days' is not a duration"),
    ],
)
def test_certificate_lifetimes_cert_manager_would_refuse_are_refused(
    certificates: dict[str, str], problem: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        config_of("prod", security={"certificates": certificates})
    assert str(refused.value).startswith("kafkastack:security.certificates: " + problem)
