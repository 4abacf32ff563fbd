"""ZooKeeper mode (Kafka 3.9): logins, znode ACLs, probes, SCRAM users: all in the manifests."""

from __future__ import annotations

from typing import Any

from infra import render
from infra.model import workloads
from infra.model.broker_config import broker_properties
from infra.model.cluster import ClusterModel
from infra.model.declared import SecretValue
from infra.model.desired import desired_state
from infra.model.templating import zookeeper_config
from tests.infra.conftest import config_of

ZOOKEEPER = {"kafka_version": "3.9.1", "quorum": {"kind": "zookeeper", "nodes": 3}}


def model_of(environment: str = "dev", **overrides: Any) -> ClusterModel:
    return ClusterModel.from_config(config_of(environment, **{**ZOOKEEPER, **overrides}))


def test_zookeeper_refuses_sessions_that_do_not_log_in() -> None:
    model = model_of()
    zoo = zookeeper_config(model, model.quorum[0])
    for line in (
        "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
        "enforce.auth.enabled=true",
        "enforce.auth.schemes=sasl",
        "sessionRequireClientSASLAuth=true",
    ):
        assert line in zoo.splitlines()
    pod = workloads.zookeeper_statefulset(model, model.quorum[0], "fast")["spec"]["template"]
    container = pod["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert (
        "-Djava.security.auth.login.config=/etc/zookeeper/jaas/server.conf"
        in env["SERVER_JVMFLAGS"]
    )
    assert any(m["mountPath"] == "/etc/zookeeper/jaas" for m in container["volumeMounts"])


def test_zookeeper_has_probes_on_whitelisted_four_letter_words() -> None:
    model = model_of()
    zoo = zookeeper_config(model, model.quorum[0])
    whitelist = next(line for line in zoo.splitlines() if line.startswith("4lw.commands"))
    container = workloads.zookeeper_statefulset(model, model.quorum[0], "fast")["spec"]["template"][
        "spec"
    ]["containers"][0]
    settings = dict(line.split("=", 1) for line in zoo.splitlines() if "=" in line)
    plain = f"{settings['clientPortAddress']}/{settings['clientPort']}"
    for probe, word in (("readinessProbe", "srvr"), ("livenessProbe", "ruok")):
        script = container[probe]["exec"]["command"][2]
        assert f"printf {word}" in script and word in whitelist
        # Four-letter words in plain text: on the plaintext port, wherever zoo.cfg binds it.
        assert f"/dev/tcp/{plain} " in script


def test_brokers_log_in_to_zookeeper_and_acl_their_znodes() -> None:
    model = model_of()
    broker = model.brokers[0]
    assert broker_properties(model, broker).flat()["zookeeper.set.acl"] == "true"
    container = workloads.kafka_statefulset(model, broker, "fast")["spec"]["template"]["spec"][
        "containers"
    ][0]
    opts = next(e["value"] for e in container["env"] if e["name"] == "KAFKA_OPTS")
    assert "-Djava.security.auth.login.config=/etc/kafka/zookeeper-jaas/client.conf" in opts


def test_each_broker_creates_the_scram_users_before_it_starts() -> None:
    model = model_of(security={"users": ["admin", "orders"]})
    init = workloads.kafka_statefulset(model, model.brokers[0], "fast")["spec"]["template"]["spec"][
        "initContainers"
    ]
    users = next(c for c in init if c["name"] == "scram-users")
    script = users["command"][2]
    connect = ",".join(f"{q.replication_host}:2181" for q in model.quorum)
    tls = "zk-tls-config-file /etc/kafka/config/server.properties"
    assert f"zookeeper-shell.sh {connect} -{tls} create /kafka" in script
    for i, user in enumerate(["admin", "orders"]):
        assert (
            f"kafka-configs.sh --zookeeper {connect}/kafka --{tls} --alter "
            f'--add-config "SCRAM-SHA-512=[password=$SCRAM_PASSWORD_{i}]" '
            f"--entity-type users --entity-name {user}"
        ) in script
    refs = {e["name"]: e.get("valueFrom") for e in users["env"]}
    assert refs["SCRAM_PASSWORD_1"] == {
        "secretKeyRef": {"name": "kafka-user-orders", "key": "password"}
    }


def test_the_jaas_files_come_from_secret_config_never_from_the_render() -> None:
    model = model_of()
    security = next(c for c in desired_state(model) if c.key == "security")
    jaas = next(o for o in security.objects if o.logical == "zookeeper-jaas")
    files = jaas.manifest["stringData"]
    assert set(files) == {"server.conf", "client.conf"}
    for value in files.values():
        assert isinstance(value, SecretValue) and value.key == "password-zookeeper"
        assert "{password}" in value.template
    assert "stringData" in jaas.secret_outputs


def test_zookeeper_servers_log_in_to_each_other_with_a_password_brokers_never_get() -> None:
    model = model_of()
    zoo = zookeeper_config(model, model.quorum[0]).splitlines()
    for line in (
        "quorum.auth.enableSasl=true",
        "quorum.auth.learnerRequireSasl=true",
        "quorum.auth.serverRequireSasl=true",
        "quorum.auth.learner.saslLoginContext=QuorumLearner",
        "quorum.auth.server.saslLoginContext=QuorumServer",
    ):
        assert line in zoo
    files = render.manifests(
        config_of("dev", **ZOOKEEPER),
        {"password-zookeeper": "client-secret", "password-zookeeper-quorum": "peer-secret"},
    )[("Secret", "kafka-zookeeper-jaas")]["stringData"]
    server = files["server.conf"]
    assert "QuorumServer {" in server and 'user_zookeeper="peer-secret";' in server
    assert "QuorumLearner {" in server and 'password="peer-secret";' in server
    assert 'user_kafka="client-secret";' in server
    assert "peer-secret" not in files["client.conf"]  # what brokers mount
