"""ZooKeeper mode's TLS (infra/model/zookeeper_tls.py): what the manifests carry. That brokers
and servers really speak it is shown on the kafka tier (tests/kafka/test_zookeeper.py) and on
real nodes (tests/nodes/test_zookeeper_mode.py)."""

from __future__ import annotations

from typing import Any

from infra.model import security, workloads
from infra.model.broker_config import broker_properties
from infra.model.cluster import ClusterModel
from infra.model.templating import zookeeper_config
from tests.infra.test_zookeeper_auth import model_of


def zoo_settings(model: ClusterModel) -> dict[str, str]:
    text = zookeeper_config(model, model.quorum[0])
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def pod_spec(statefulset: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = statefulset["spec"]["template"]["spec"]
    return spec


def mount_of(container: dict[str, Any], volume: str) -> str:
    return str(next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == volume))


def test_the_ensemble_serves_clients_and_peers_over_tls_only() -> None:
    model = model_of()
    zk = model.quorum[0]
    settings = zoo_settings(model)
    # Brokers dial the TLS port; the plaintext one listens on the pod's loopback only.
    assert settings["secureClientPortAddress"] == zk.replication_host
    assert settings["secureClientPort"] == settings["clientPort"] == "2181"
    assert settings["clientPortAddress"] == "127.0.0.1"
    assert settings["serverCnxnFactory"].endswith("NettyServerCnxnFactory")
    assert settings["ssl.clientAuth"] == settings["ssl.quorum.clientAuth"] == "need"
    assert settings["sslQuorum"] == "true"
    # The keys are the server's own Secret, mounted where zoo.cfg reads them.
    spec = pod_spec(workloads.zookeeper_statefulset(model, zk, "fast"))
    tls_dir = mount_of(spec["containers"][0], "tls")
    volume = next(v for v in spec["volumes"] if v["name"] == "tls")
    assert volume["secret"]["secretName"] == model.names.tls_secret(zk.workload)
    for key in ("ssl.keyStore.location", "ssl.quorum.keyStore.location"):
        assert settings[key] == f"{tls_dir}/tls-combined.pem"
    for key in ("ssl.trustStore.location", "ssl.quorum.trustStore.location"):
        assert settings[key] == f"{tls_dir}/ca.crt"


def test_each_server_has_a_certificate_for_the_address_brokers_dial() -> None:
    model = model_of()
    wanted = {c["metadata"]["name"]: c["spec"] for c in security.certificates(model)}
    for zk in model.quorum:
        spec = wanted[zk.workload]
        assert spec["secretName"] == model.names.tls_secret(zk.workload)
        assert zk.replication_host in [*spec["dnsNames"], *spec.get("ipAddresses", [])]
        assert set(spec["usages"]) == {"server auth", "client auth"}  # peers are both


def test_brokers_and_their_scram_step_reach_zookeeper_with_their_node_certificate() -> None:
    model = model_of(security={"users": ["admin"]})
    broker = model.brokers[0]
    flat = broker_properties(model, broker).flat()
    assert flat["zookeeper.ssl.client.enable"] == "true"
    assert flat["zookeeper.clientCnxnSocket"].endswith("ClientCnxnSocketNetty")
    spec = pod_spec(workloads.kafka_statefulset(model, broker, "fast"))
    kafka = spec["containers"][0]
    assert flat["zookeeper.ssl.keystore.location"] == f"{mount_of(kafka, 'tls')}/tls-combined.pem"
    assert flat["zookeeper.ssl.truststore.location"] == f"{mount_of(kafka, 'tls')}/ca.crt"
    # The init container reads the same settings from the broker's own server.properties.
    users = next(c for c in spec["initContainers"] if c["name"] == "scram-users")
    settings = f"{mount_of(users, 'config')}/server.properties"
    assert mount_of(users, "tls") == mount_of(kafka, "tls")
    assert f"-zk-tls-config-file {settings} create" in users["command"][2]
    assert f"--zk-tls-config-file {settings} --alter" in users["command"][2]


def test_without_tls_between_nodes_the_ensemble_stays_plaintext() -> None:
    model = model_of(security={"replication_tls": False})
    zk = model.quorum[0]
    settings = zoo_settings(model)
    assert settings["clientPortAddress"] == zk.replication_host
    assert not any(k.startswith(("ssl", "secureClient")) for k in settings)
    assert all(c["metadata"]["name"] != zk.workload for c in security.certificates(model))
    flat = broker_properties(model, model.brokers[0]).flat()
    assert not any(k.startswith("zookeeper.ssl") for k in flat)
    spec = pod_spec(workloads.zookeeper_statefulset(model, zk, "fast"))
    assert all(v["name"] != "tls" for v in spec["volumes"])
