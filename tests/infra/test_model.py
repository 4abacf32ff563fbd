"""Kafka rules of the pure model: racks, anti-affinity, addresses, listeners, quorum, budgets."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infra.model import access, labels, networks, security, storage, workloads
from infra.model.broker_config import broker_properties, controller_properties
from infra.model.cluster import ClusterModel
from infra.model.racks import assign_zones, max_skew
from tests.infra.conftest import OPENSHIFT, config_of, sizing_cluster

# The on-prem second network: one L2 segment stretched over the zones.
DUAL: dict[str, Any] = {
    "platform": "local",
    "network": {"mode": "dual", "replication": {"cidr": "10.20.0.0/24"}},
}


def model_of(environment: str = "staging", **overrides: Any) -> ClusterModel:
    return ClusterModel.from_config(config_of(environment, **overrides))


def with_brokers(n: int, **overrides: Any) -> ClusterModel:
    return model_of(
        sizing={"schema_version": "1.0", "source": "t", "cluster": sizing_cluster(brokers=n)},
        **overrides,
    )


@given(count=st.integers(1, 60), zones=st.integers(1, 6))
def test_zone_assignment_has_skew_at_most_one(count: int, zones: int) -> None:
    names = [f"z{i}" for i in range(zones)]
    assert max_skew(assign_zones(count, names), names) <= 1


def test_growing_the_cluster_never_moves_an_existing_broker() -> None:
    three, five = with_brokers(3), with_brokers(5)
    for before, after in zip(three.brokers, five.brokers, strict=False):
        assert (before.workload, before.zone, before.replication_ip) == (
            after.workload,
            after.zone,
            after.replication_ip,
        )
    assert [q.replication_ip for q in three.quorum] == [q.replication_ip for q in five.quorum]


def test_broker_rack_is_its_zone_and_static() -> None:
    model = with_brokers(5)
    for broker in model.brokers:
        props = broker_properties(model, broker).flat()
        assert props["broker.rack"] == broker.zone
        sts = workloads.kafka_statefulset(model, broker, "fast")
        terms = sts["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        assert terms[0]["matchExpressions"][0] == {
            "key": labels.ZONE,
            "operator": "In",
            "values": [broker.zone],
        }


def test_brokers_repel_brokers_and_quorum_pods_per_node() -> None:
    model = model_of()
    sts = workloads.kafka_statefulset(model, model.brokers[0], "fast")
    (term,) = sts["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert term["topologyKey"] == labels.HOSTNAME
    assert set(term["labelSelector"]["matchExpressions"][0]["values"]) == {
        "broker",
        "controller",
        "zookeeper",
    }


def test_replication_listener_binds_and_advertises_only_the_replication_address() -> None:
    model = model_of(**DUAL)
    broker = model.brokers[1]
    props = broker_properties(model, broker).flat()
    assert broker.replication_ip == "10.20.0.9"
    assert f"REPLICATION://{broker.replication_ip}:9091" in props["listeners"].split(",")
    assert f"REPLICATION://{broker.replication_ip}:9091" in props["advertised.listeners"].split(",")
    assert f"CLIENT://{broker.client_host}:9092" in props["advertised.listeners"]
    assert "EXTERNAL://broker-1.kafka.example.com:443" in props["advertised.listeners"]
    assert props["inter.broker.listener.name"] == "REPLICATION"
    annotation = networks.pod_network_annotation(model, broker)["k8s.v1.cni.cncf.io/networks"]
    assert '"ips": ["10.20.0.9/24"]' in annotation


def test_single_network_mode_uses_pod_dns_for_replication() -> None:
    model = model_of(network={"mode": "single"})
    broker = model.brokers[0]
    assert broker.replication_ip is None
    props = broker_properties(model, broker).flat()
    # Bound on every interface (the pod's DNS record may not exist yet), advertised by name.
    assert "REPLICATION://0.0.0.0:9091" in props["listeners"].split(",")
    assert f"REPLICATION://{broker.client_host}:9091" in props["advertised.listeners"].split(",")
    assert networks.pod_network_annotation(model, broker) == {}


def test_safe_defaults() -> None:
    model = model_of()
    props = broker_properties(model, model.brokers[0]).flat()
    assert props["unclean.leader.election.enable"] == "false"
    assert props["auto.create.topics.enable"] == "false"
    assert (props["default.replication.factor"], props["min.insync.replicas"]) == ("3", "2")
    assert props["offsets.topic.replication.factor"] == "3"
    assert props["transaction.state.log.min.isr"] == "2"
    assert props["replica.selector.class"].endswith("RackAwareReplicaSelector")
    assert (props["num.network.threads"], props["num.io.threads"]) == ("4", "8")


def test_kraft_controllers_form_a_dynamic_quorum_on_the_replication_network() -> None:
    model = model_of(**DUAL)
    controller = model.quorum[0]
    props = controller_properties(model, controller).flat()
    assert props["process.roles"] == "controller"
    assert (
        props["controller.quorum.bootstrap.servers"]
        == "10.20.0.1:9093,10.20.0.2:9093,10.20.0.3:9093"
    )
    assert props["listeners"] == "CONTROLLER://10.20.0.1:9093"
    assert "controller.quorum.voters" not in props  # static quorum would block changes later
    assert model.initial_controllers.count("@") == 3


@pytest.mark.parametrize("network", [{}, DUAL])
def test_a_combined_broker_advertises_where_voters_reach_its_controller_listener(
    network: dict[str, Any],
) -> None:
    """`add-controller` sends the leader the node's advertised CONTROLLER endpoint, or its bind
    address when none is advertised: 0.0.0.0, where the leader reached only itself, so a
    combined broker never became a voter (found growing 3 → 5 brokers on real nodes)."""
    model = model_of("dev", quorum={"combined": True}, **network)
    for broker in model.brokers:
        props = broker_properties(model, broker).flat()
        advertised = props["advertised.listeners"].split(",")
        assert f"CONTROLLER://{broker.replication_host}:9093" in advertised
        assert (
            props["controller.quorum.bootstrap.servers"]
            .split(",")
            .count(f"{broker.replication_host}:9093")
            == 1
        )  # the address the other voters list it under


def test_quorum_spreads_over_zones() -> None:
    model = model_of(quorum={"nodes": 5}, brokers=5)
    assert max_skew([q.zone for q in model.quorum], model.zones) <= 1


def test_zookeeper_ensemble_has_separate_snapshot_and_log_volumes() -> None:
    model = model_of("dev", kafka_version="3.9.1", quorum={"kind": "zookeeper", "nodes": 3}, **DUAL)
    sts = workloads.zookeeper_statefulset(model, model.quorum[0], "fast")
    assert [c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]] == [
        "snapshots",
        "txlog",
    ]
    props = broker_properties(model, model.brokers[0]).flat()
    assert props["zookeeper.connect"] == "10.20.0.1:2181,10.20.0.2:2181,10.20.0.3:2181/kafka"
    assert "process.roles" not in props and props["broker.id"] == "0"


def test_storage_class_is_fast_retained_and_zone_aware() -> None:
    sc = storage.storage_class(model_of(), "broker")
    assert sc["provisioner"] == "ebs.csi.aws.com"
    assert sc["parameters"] == {
        "type": "gp3",
        "encrypted": "true",
        "iops": "3000",
        "throughput": "125",  # gp3's floor (125 MB/s sized is 119.2 MiB/s)
    }
    assert (sc["volumeBindingMode"], sc["allowVolumeExpansion"], sc["reclaimPolicy"]) == (
        "WaitForFirstConsumer",
        True,
        "Retain",
    )


def test_jbod_volumes_become_log_dirs() -> None:
    model = model_of(storage={"volumes_per_broker": 3, "size_gib": 200})
    assert broker_properties(model, model.brokers[0]).flat()["log.dirs"] == (
        "/var/lib/kafka/data-0,/var/lib/kafka/data-1,/var/lib/kafka/data-2"
    )
    sts = workloads.kafka_statefulset(model, model.brokers[0], "fast")
    claims = [c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]]
    assert claims == ["data-0", "data-1", "data-2", "metadata"]
    assert sts["spec"]["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }


@pytest.mark.parametrize("nodes", [3, 5])
def test_disruption_budgets_allow_one_disruption_at_a_time(nodes: int) -> None:
    model = model_of(quorum={"nodes": nodes}, brokers=5)
    by_name = {b["metadata"]["name"]: b for b in access.disruption_budgets(model)}
    brokers, quorum = by_name["kafka-brokers"], by_name["kafka-quorum"]
    assert brokers["spec"]["maxUnavailable"] == 1
    # Five voters could lose two, but draining two leaves no room for a failure meanwhile.
    assert quorum["spec"]["maxUnavailable"] == 1


def test_routes_are_passthrough_one_per_broker_plus_bootstrap() -> None:
    model = model_of(
        **OPENSHIFT, external={"mode": "route", "domain": "k.example.com", "router_shard": "kafka"}
    )
    routes = access.routes(model)
    assert len(routes) == len(model.brokers) + 1
    assert {r["spec"]["tls"]["termination"] for r in routes} == {"passthrough"}
    assert routes[1]["spec"]["host"] == "broker-0.k.example.com"
    assert routes[0]["metadata"]["labels"]["router-shard"] == "kafka"


def test_network_policies_keep_replication_ports_internal() -> None:
    model = model_of()
    brokers_policy = next(
        p for p in networks.network_policies(model) if p["metadata"]["name"] == "kafka-brokers"
    )
    internal_rule = next(
        r
        for r in brokers_policy["spec"]["ingress"]
        if {"port": 9091, "protocol": "TCP"} in r["ports"]
    )
    components = {
        peer["podSelector"]["matchLabels"][labels.COMPONENT] for peer in internal_rule["from"]
    }
    assert components == {"broker"}  # controllers never dial a broker's replication listener
    haproxy_rule = next(
        r
        for r in brokers_policy["spec"]["ingress"]
        if {"port": 9094, "protocol": "TCP"} in r["ports"]
    )
    assert haproxy_rule["from"][0]["podSelector"]["matchLabels"][labels.COMPONENT] == "haproxy"


def test_certificates_cover_every_dialled_name() -> None:
    model = model_of(**DUAL)
    cert = security.certificate(model, model.brokers[0])
    assert cert["spec"]["dnsNames"] == [
        model.brokers[0].client_host,
        # The stack's `bootstrap` output: verified against whichever broker answers it.
        "kafka-bootstrap.kafka.svc.cluster.local",
        "broker-0.kafka.example.com",
        "bootstrap.kafka.example.com",  # the bootstrap route may land on any broker
    ]
    assert cert["spec"]["ipAddresses"] == ["10.20.0.8"]


def test_controller_certificates_name_only_the_controller() -> None:
    model = model_of()
    cert = security.certificate(model, model.quorum[0])
    assert cert["spec"]["dnsNames"] == [model.quorum[0].client_host]


def test_cluster_id_is_stable_and_kraft_shaped() -> None:
    first, second = model_of().cluster_id, model_of().cluster_id
    assert first == second and len(first) == 22
