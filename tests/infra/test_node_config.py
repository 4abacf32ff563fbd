"""Real-node configs (pure) and the errors a missing prerequisite gives: no binary needed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from infra.localcluster import images
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.node_config import (
    CNI_BIN_DIR,
    NodeSpec,
    cni_config,
    containerd_config,
    kubelet_args,
    kubelet_config,
    multus_config,
    replication_bridge,
)
from infra.localcluster.nodes import NODE_BINARIES, RealNodes
from kafkastack.cli import app

WORKDIR = Path("/cache/local-cluster/a-rather-long-cluster-name-for-paths/nodes")


def specs(cluster: str = "a-rather-long-cluster-name-for-paths") -> list[NodeSpec]:
    return [NodeSpec(cluster, i, f"zone-{i % 3}", WORKDIR) for i in range(20)]


def test_every_node_owns_distinct_names_ports_subnets_bridges_and_cgroups() -> None:
    nodes = specs()
    for attr in ("name", "port", "subnet", "address", "bridge", "cgroup", "socket", "dir"):
        values = [getattr(n, attr) for n in nodes]
        assert len(set(values)) == len(values), attr
    assert max(len(n.bridge) for n in nodes) <= 15  # IFNAMSIZ - 1
    # The longest socket containerd makes beside its own, under containerd's 104-byte limit.
    assert max(len(f"{n.socket}.ttrpc") for n in nodes) < 100


def test_two_clusters_get_different_bridges() -> None:
    assert specs("one")[0].bridge != specs("two")[0].bridge


def test_a_node_index_beyond_the_address_plan_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 20 real nodes"):
        NodeSpec("c", 20, "zone-a", WORKDIR)


def test_the_spec_a_node_leaves_behind_reads_back_equal(tmp_path: Path) -> None:
    node = NodeSpec("c", 4, "zone-b", tmp_path)
    node.dir.mkdir(parents=True)
    (node.dir / "node.json").write_text(node.to_json())
    assert NodeSpec.from_file(node.dir / "node.json") == node


def test_kubelet_config_carries_what_this_machine_kind_needs() -> None:
    node = specs()[2]
    conf = yaml.safe_load(kubelet_config(node))
    assert conf["failCgroupV1"] is False
    assert conf["cgroupDriver"] == "cgroupfs"
    assert conf["cgroupRoot"] == node.cgroup
    assert conf["containerRuntimeEndpoint"] == f"unix://{node.socket}"
    assert (conf["port"], conf["healthzPort"], conf["address"]) == (
        node.port,
        node.port + 1,
        node.address,
    )
    assert conf["podLogsDir"].startswith(str(node.dir))
    args = kubelet_args(node, "/bin/kubelet", Path("/k/kubeconfig"))
    assert args[args.index("--hostname-override") + 1] == node.name
    assert args[args.index("--node-labels") + 1].count("topology.kubernetes.io/zone=zone-2") == 1


def test_containerd_config_pins_the_sandbox_and_keeps_state_in_the_node() -> None:
    node = specs()[0]
    text = containerd_config(node)
    assert f'sandbox = "{images.PAUSE.ref}"' in text
    assert "restrict_oom_score_adj = true" in text
    assert f'address = "{node.socket}"' in text
    assert "/run/containerd" not in text
    cni = json.loads(cni_config(node))["plugins"][0]
    assert cni["bridge"] == node.bridge
    assert cni["ipam"]["ranges"] == [[{"subnet": node.subnet, "gateway": node.address}]]
    assert cni["ipam"]["dataDir"].startswith(str(node.dir))


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path))
    return tmp_path


def test_multus_delegates_the_pod_network_and_keeps_its_state_in_the_node() -> None:
    nodes = specs()
    kubeconfig = Path("/cache/local-cluster/c/kubeconfig")
    confs = [json.loads(multus_config(n, kubeconfig)) for n in nodes]
    for node, conf in zip(nodes, confs, strict=True):
        assert conf["type"] == "multus" and conf["kubeconfig"] == str(kubeconfig)
        # The pod network is unchanged: the node's own bridge config is the one delegate.
        assert conf["delegates"] == [json.loads(cni_config(node))]
        assert conf["binDir"] == CNI_BIN_DIR
        # containerd finds Multus in the node's own folder first, Debian's plugins after.
        assert f'bin_dirs = ["{node.cni_bin_dir}", "{CNI_BIN_DIR}"]' in containerd_config(node)
    # Multus's defaults (/var/lib/cni/multus, /etc/cni/multus) are machine-wide: never shared.
    for key in ("cniDir", "confDir", "logFile"):
        assert len({c[key] for c in confs}) == len(confs), key
        assert all(c[key].startswith(("/var/lib/kafkastack-nodes/", str(WORKDIR))) for c in confs)
    assert len(replication_bridge("a-rather-long-cluster-name-for-paths")) <= 15
    assert replication_bridge("one") != replication_bridge("two")


def test_missing_node_binaries_name_the_make_target(empty_cache: Path) -> None:
    nodes = RealNodes(LocalKubernetes("unit"), count=1)
    with pytest.raises(LocalClusterError, match="make nodes-toolchain"):
        nodes.up()


def test_nodes_asked_for_multus_need_its_binary(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)  # the root check comes first
    bin_dir = empty_cache / "bin"
    bin_dir.mkdir()
    for name in NODE_BINARIES:
        (bin_dir / name).write_text("")
    with pytest.raises(LocalClusterError, match=r"multus is missing .*build-multus\.sh"):
        RealNodes(LocalKubernetes("unit"), count=1, multus=True).check(wanted=[])


def test_local_up_multus_without_real_nodes_is_refused(empty_cache: Path) -> None:
    result = CliRunner().invoke(app, ["local", "up", "--multus"])
    assert result.exit_code == 2 and "--real-nodes" in result.output


def test_a_missing_image_names_the_make_target(empty_cache: Path) -> None:
    with pytest.raises(images.ImageError, match="make images"):
        images.KAFKA.require()


def test_at_least_one_real_node() -> None:
    with pytest.raises(LocalClusterError, match="at least 1"):
        RealNodes(LocalKubernetes("unit"), count=0)


def test_local_up_with_real_nodes_checks_them_before_creating_anything(empty_cache: Path) -> None:
    result = CliRunner().invoke(app, ["local", "up", "--real-nodes", "2"])
    assert result.exit_code == 2
    assert "make nodes-toolchain" in result.output
    assert not (empty_cache / "local-cluster").exists()


def test_local_up_refuses_more_real_nodes_than_the_address_plan() -> None:
    result = CliRunner().invoke(
        app, ["local", "up", "--real-nodes", "21"], env={**os.environ, "COLUMNS": "250"}
    )
    assert result.exit_code == 2
    assert "less than or equal to 20" in result.output
