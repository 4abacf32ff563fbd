"""KRaft nodes log in to the CONTROLLER listener with SASL/PLAIN over TLS instead of a client
certificate, so no raft client depends on the certificate its process started with (the kafka
tier restarts nodes after their start certificates expired: test_certificate_rotation.py)."""

from __future__ import annotations

from typing import Any

import pytest

from infra import render
from infra.config import secret_keys
from infra.errors import ConfigError
from infra.model import certificate_reload, controller_login, membership, own_listener
from infra.model.broker_config import broker_properties, controller_properties
from infra.model.paths import CONTROLLER_LOGIN_DIR, KEYSTORE_FILE
from tests.infra.conftest import config_of
from tests.infra.test_certificate_reload import pod_of
from tests.infra.test_secret_text import SPECIAL
from tests.infra.test_security import model_of

ZOOKEEPER: dict[str, Any] = {"kafka_version": "3.9.1", "quorum": {"kind": "zookeeper", "nodes": 3}}
SERVER_OPTION = f"-Djava.security.auth.login.config={CONTROLLER_LOGIN_DIR}/server.conf"
TOOL_OPTION = f"-Djava.security.auth.login.config={CONTROLLER_LOGIN_DIR}/client.conf"


def env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container["env"]}


def test_every_kraft_node_reaches_the_controllers_with_a_login_not_a_certificate() -> None:
    model = model_of()
    for broker in model.brokers:
        flat = broker_properties(model, broker).flat()
        assert "CONTROLLER:SASL_SSL" in flat["listener.security.protocol.map"].split(",")
        assert flat["sasl.mechanism.controller.protocol"] == "PLAIN"
        assert "listener.name.controller.ssl.client.auth" not in flat  # not served here
        # Replication stays mTLS: Kafka reloads the replica fetchers' keystore.
        assert "REPLICATION:SSL" in flat["listener.security.protocol.map"].split(",")
        assert flat["listener.name.replication.ssl.client.auth"] == "required"
    for controller in model.quorum:
        flat = controller_properties(model, controller).flat()
        assert flat["listener.security.protocol.map"] == "CONTROLLER:SASL_SSL,REPLICATION:SSL"
        assert flat["sasl.mechanism.controller.protocol"] == "PLAIN"
        assert flat["listener.name.controller.sasl.enabled.mechanisms"] == "PLAIN"
        # The listener asks no client certificate; it still serves (and reloads) its own.
        assert flat["listener.name.controller.ssl.client.auth"] == "none"
        assert "ssl.client.auth" not in flat
        assert flat["ssl.keystore.location"] == KEYSTORE_FILE


def test_a_combined_node_serves_the_listener_with_the_login() -> None:
    model = model_of("dev", brokers=3, quorum={"kind": "kraft", "combined": True})
    flat = broker_properties(model, model.brokers[0]).flat()
    assert "CONTROLLER:SASL_SSL" in flat["listener.security.protocol.map"].split(",")
    assert flat["listener.name.controller.sasl.enabled.mechanisms"] == "PLAIN"
    assert flat["listener.name.controller.ssl.client.auth"] == "none"


def test_the_login_is_the_nodes_super_user_principal() -> None:
    model = model_of()
    files = controller_login.jaas_files(model)
    user = model.names.node_principal
    assert files["server.conf"].startswith("controller.KafkaServer {")
    assert f'username="{user}"' in files["server.conf"]
    assert f"user_{user}=" in files["server.conf"]
    assert files["client.conf"].startswith("KafkaClient {")
    authorization = controller_properties(model, model.quorum[0]).flat()
    assert f"User:{user}" in authorization["super.users"].split(";")


def test_the_password_comes_from_secret_config_into_a_secret_and_no_config_map() -> None:
    config = config_of()
    assert "password-controller" in secret_keys(config)
    objects = render.manifests(config, {"password-controller": SPECIAL})
    quoted = '"pa\\"ss\\\\word $HOME \'x\' =y"'
    login = objects[("Secret", "kafka-controller-login")]["stringData"]
    assert f"password={quoted}" in login["server.conf"]
    assert f"password={quoted};" in login["client.conf"]
    for (kind, name), obj in objects.items():
        if kind == "ConfigMap":
            assert 'pa\\"ss' not in str(obj) and 'pa"ss' not in str(obj), name


def test_every_kraft_pod_mounts_the_login_and_its_server_reads_it() -> None:
    model = model_of()
    for node in (*model.brokers, *model.quorum):
        pod = pod_of(model, node)
        (volume,) = [v for v in pod["volumes"] if v["name"] == controller_login.VOLUME]
        assert volume["secret"]["secretName"] == "kafka-controller-login"
        server = pod["containers"][0]
        assert SERVER_OPTION in env(server)["KAFKA_OPTS"].split()
        assert {
            "name": "controller-login",
            "mountPath": CONTROLLER_LOGIN_DIR,
            "readOnly": True,
        } in (server["volumeMounts"])


def test_the_tools_reaching_the_controller_listener_log_in_and_only_they_mount_it() -> None:
    model = model_of()
    controller, broker = model.quorum[0], model.brokers[0]
    sidecars = {c["name"]: c for c in pod_of(model, controller)["containers"][1:]}
    for name in (certificate_reload.CONTAINER, membership.CONTAINER):
        assert env(sidecars[name])["KAFKA_OPTS"] == TOOL_OPTION, name
        assert controller_login.VOLUME in {m["name"] for m in sidecars[name]["volumeMounts"]}
    properties = own_listener.client_properties(model, controller)
    assert {"security.protocol=SASL_SSL", "sasl.mechanism=PLAIN"} <= set(properties)
    assert not [line for line in properties if "keystore" in line]
    script = sidecars[membership.CONTAINER]["command"][2]
    assert "echo security.protocol=SASL_SSL; echo sasl.mechanism=PLAIN;" in script
    # A broker's reloader reaches its own REPLICATION listener with its certificate.
    (reloader,) = pod_of(model, broker)["containers"][1:]
    assert "KAFKA_OPTS" not in env(reloader)
    assert controller_login.VOLUME not in {m["name"] for m in reloader["volumeMounts"]}
    assert f"ssl.keystore.location={KEYSTORE_FILE}" in own_listener.client_properties(model, broker)


@pytest.mark.parametrize(
    ("environment", "overrides"),
    [
        ("dev", ZOOKEEPER),  # no raft client, no CONTROLLER listener
        ("dev", {"security": {"replication_tls": False, "authorization": False}}),
    ],
)
def test_without_kraft_over_tls_there_is_no_login(
    environment: str, overrides: dict[str, Any]
) -> None:
    config = config_of(environment, **overrides)
    assert "password-controller" not in secret_keys(config)
    objects = render.manifests(config)
    assert ("Secret", "kafka-controller-login") not in objects
    assert "controller-login" not in str(objects)
    model = model_of(environment, **overrides)
    flat = broker_properties(model, model.brokers[0]).flat()
    protocols = dict(p.split(":") for p in flat["listener.security.protocol.map"].split(","))
    assert protocols["CONTROLLER"] in ("SSL", "PLAINTEXT")
    assert "sasl.mechanism.controller.protocol" not in flat


def test_a_user_named_like_the_controller_password_is_refused() -> None:
    with pytest.raises(ConfigError, match="'controller' names the KRaft nodes' password"):
        config_of(security={"users": ["admin", "controller"]})
    config_of(security={"users": ["admin", "controller"]}, **ZOOKEEPER)
