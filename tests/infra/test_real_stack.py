"""The local stack's real-node variant, and when a cluster has real nodes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from infra.config import load_stack
from infra.localcluster import images
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.local_volumes import FAKE_VOLUME_ROOT
from infra.localcluster.node_config import replication_bridge
from infra.localcluster.provision import second_network_routers
from infra.localcluster.real_stack import (
    BROKERS,
    CONTROLLERS,
    ZOOKEEPER_SERVERS,
    Quorum,
    write_real_node_stack,
)
from infra.localcluster.zones import NODES_PER_ZONE, ZONES, fake_nodes, is_fake_node
from infra.model.cluster import ClusterModel


def _variant(repo_root: Path, tmp_path: Path, quorum: Quorum = "combined") -> Path:
    return write_real_node_stack(
        repo_root / "stacks" / "Pulumi.local.yaml",
        tmp_path / "stacks" / "Pulumi.local.yaml",
        quorum=quorum,
    )


def test_real_node_variant_is_three_small_brokers_on_one_network_awaited(
    repo_root: Path, tmp_path: Path
) -> None:
    config = load_stack(_variant(repo_root, tmp_path).parent, "local")
    model = ClusterModel.from_config(config)
    assert config.broker_count == BROKERS == len(model.brokers)
    assert config.network.mode == "single"
    assert config.skip_await is False
    assert model.haproxy_replicas == 1
    assert config.images.haproxy.image == "localhost/kafkastack/haproxy:2.6.12"
    assert config.images.kafka.repository == "localhost/kafkastack/kafka"
    # Three nodes, and brokers never share one with a controller: the brokers are controllers.
    assert config.quorum.combined and model.pod_count == BROKERS + 1
    assert model.broker_resources.cpu <= 0.5  # beside HAProxy (1 CPU) on a 2-CPU machine
    # Everything else is the committed local stack's.
    committed = load_stack(repo_root / "stacks", "local")
    assert (config.zones, config.external.domain) == (committed.zones, committed.external.domain)
    # The smaller servers keep the committed stack's JVM options (they were dropped once).
    server_jvm = committed.resources.server_jvm_options
    assert server_jvm and config.resources.server_jvm_options == server_jvm


def test_zookeeper_variant_is_kafka_3_9_with_an_ensemble_on_the_images_built_here(
    repo_root: Path, tmp_path: Path
) -> None:
    config = load_stack(_variant(repo_root, tmp_path, "zookeeper").parent, "local")
    model = ClusterModel.from_config(config)
    assert (config.kafka_version, config.quorum.kind) == ("3.9.1", "zookeeper")
    assert config.kafka_version == images.KAFKA_ZOOKEEPER_MODE.tag
    assert config.images.zookeeper.image == images.ZOOKEEPER.ref
    assert config.images.kafka.repository == "localhost/kafkastack/kafka"
    # One ZooKeeper server per zone, none of them a broker: each pod wants a node of its own.
    assert len(model.quorum) == ZOOKEEPER_SERVERS and not config.quorum.combined
    assert sorted(n.zone for n in model.quorum) == sorted(config.zones)
    assert model.pod_count == BROKERS + ZOOKEEPER_SERVERS + 1
    # The rest is the KRaft variant's: SCRAM over TLS, one network, awaited.
    kraft = load_stack(_variant(repo_root, tmp_path / "kraft").parent, "local")
    assert (config.client_tls, config.network.mode, config.skip_await) == (
        kraft.client_tls,
        kraft.network.mode,
        kraft.skip_await,
    )
    # Its followers idle as the KRaft variant's; ZooKeeper mode has no metadata log to poll.
    assert config.polling.replica_fetch_wait_ms == kraft.polling.replica_fetch_wait_ms
    assert kraft.polling.metadata_idle_interval_ms and not config.polling.metadata_idle_interval_ms


def test_dual_variant_puts_a_subnet_per_zone_on_the_nodes_host_bridge(
    repo_root: Path, tmp_path: Path
) -> None:
    source = repo_root / "stacks" / "Pulumi.local.yaml"
    target = tmp_path / "stacks" / "Pulumi.local.yaml"
    config = load_stack(write_real_node_stack(source, target, "repl-1a2b").parent, "local")
    model = ClusterModel.from_config(config)
    replication = config.network.replication
    assert config.network.mode == "dual" and replication is not None
    assert (replication.plugin, replication.master_interface) == ("bridge", "repl-1a2b")
    assert model.address_plan is not None and model.address_plan.zoned
    assert sorted(replication.subnets or {}) == sorted(config.zones)
    # Each broker's static address lies in its own zone's subnet.
    for broker in model.brokers:
        assert broker.replication_ip is not None
        subnet = (replication.subnets or {})[broker.zone]
        assert broker.replication_ip.startswith(subnet.rsplit(".", 2)[0] + ".")


def test_the_host_routes_the_dual_variants_zones_on_its_own_bridge(
    repo_root: Path, tmp_path: Path
) -> None:
    """The bridge plugin cannot be every zone's gateway: the host bridge of the cluster carries
    each zone's router address; a bridge of another cluster is refused."""
    source = repo_root / "stacks" / "Pulumi.local.yaml"
    kube = LocalKubernetes("routes-test")
    mine = write_real_node_stack(source, tmp_path / "a" / "Pulumi.local.yaml", "repl-0000")
    model = ClusterModel.from_config(load_stack(mine.parent, "local"))
    with pytest.raises(LocalClusterError, match=replication_bridge("routes-test")):
        second_network_routers(kube, model)
    bridge = replication_bridge(kube.name)
    ours = write_real_node_stack(source, tmp_path / "b" / "Pulumi.local.yaml", bridge)
    model = ClusterModel.from_config(load_stack(ours.parent, "local"))
    assert second_network_routers(kube, model) == ["10.30.0.1/24", "10.30.1.1/24", "10.30.2.1/24"]
    single = ClusterModel.from_config(load_stack(_variant(repo_root, tmp_path).parent, "local"))
    assert second_network_routers(kube, single) == []


def test_a_cluster_has_real_nodes_while_a_started_nodes_folder_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What decides whether the fake nodes are there (`apply_fake_nodes`) and whose volumes a
    stack gets (`add_volumes`)."""
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path))
    kube = LocalKubernetes("real-node-test")
    fake = fake_nodes(kube.name)
    assert all(is_fake_node(n) for n in fake)
    assert not kube.has_real_nodes()
    assert kube.volume_hosts() == {n["metadata"]["name"]: FAKE_VOLUME_ROOT for n in fake}
    started = kube.workdir / "nodes" / "real-node-test-nodes-0"
    started.mkdir(parents=True)
    (started / "node.json").write_text("{}")
    assert kube.has_real_nodes()
    # The fake nodes are gone while real ones run: none of their volumes is made then.
    assert kube.volume_hosts() == {started.name: started / "volumes"}


def test_dedicated_variant_has_one_kraft_controller_per_zone_beside_the_brokers(
    repo_root: Path, tmp_path: Path
) -> None:
    config = load_stack(_variant(repo_root, tmp_path, "dedicated").parent, "local")
    model = ClusterModel.from_config(config)
    assert (config.quorum.kind, config.quorum.combined) == ("kraft", False)
    assert len(model.quorum) == CONTROLLERS and not set(model.quorum) & set(model.brokers)
    assert sorted(n.zone for n in model.quorum) == sorted(config.zones)
    # Controllers and brokers each on a node of their own; Pulumi awaits each one's readiness.
    assert model.pod_count == BROKERS + CONTROLLERS + 1
    assert not config.skip_await


def test_fake_nodes_are_named_for_their_cluster_and_spread_evenly_over_the_zones() -> None:
    fake = fake_nodes("other")
    assert len({n["metadata"]["name"] for n in fake}) == len(ZONES) * NODES_PER_ZONE
    assert all(n["metadata"]["name"].startswith("other-zone-") for n in fake)
    per_zone = Counter(n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in fake)
    assert per_zone == {zone: NODES_PER_ZONE for zone in ZONES}
