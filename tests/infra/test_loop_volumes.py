"""The real nodes' expandable volumes, without a cluster: the volume each claim gets, which
claims wait for one, where the driver goes, and the refusal on a cluster without real nodes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.config import load_stack
from infra.localcluster import loop_volumes
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.loop_provisioner import LoopProvisioner
from infra.localcluster.provision import prepare_volumes
from infra.model.cluster import ClusterModel


def claim(
    name: str = "data-0-kafka-broker-0-0",
    size: str = "1Gi",
    storage_class: str = "kafka-broker-fast",
    node: str | None = "c-nodes-1",
    phase: str = "Pending",
    volume: str = "",
) -> dict[str, Any]:
    annotations = {loop_volumes.SELECTED_NODE: node} if node else {}
    return {
        "metadata": {
            "name": name,
            "namespace": "kafka",
            "uid": f"uid-{name}",
            "annotations": annotations,
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": size}},
            "volumeName": volume,
        },
        "status": {"phase": phase},
    }


def test_a_claim_gets_a_volume_of_its_own_size_on_the_node_the_scheduler_chose() -> None:
    volume = loop_volumes.volume_for(claim(size="2Gi"), "Retain", Path("/n/1/volumes"), {"a": "b"})
    spec = volume["spec"]
    assert volume["metadata"]["name"] == "pvc-uid-data-0-kafka-broker-0-0"
    assert volume["metadata"]["labels"] == {"a": "b"}
    assert spec["capacity"] == {"storage": "2Gi"}
    assert spec["persistentVolumeReclaimPolicy"] == "Retain"
    assert spec["storageClassName"] == "kafka-broker-fast"
    assert spec["claimRef"]["uid"] == "uid-data-0-kafka-broker-0-0"
    assert spec["claimRef"]["namespace"] == "kafka"
    assert spec["flexVolume"]["driver"] == loop_volumes.DRIVER
    assert spec["flexVolume"]["fsType"] == "xfs"
    assert spec["flexVolume"]["options"] == {
        "file": "/n/1/volumes/loop/pvc-uid-data-0-kafka-broker-0-0.img",
        "size": str(2 * 2**30),
    }
    terms = spec["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["c-nodes-1"]
    assert loop_volumes.backing_file(volume) == Path(spec["flexVolume"]["options"]["file"])


def test_only_placed_unanswered_claims_of_a_loop_class_wait() -> None:
    classes = loop_volumes.loop_classes(
        [
            {"metadata": {"name": "kafka-broker-fast"}, "provisioner": loop_volumes.PROVISIONER},
            {"metadata": {"name": "other"}, "provisioner": "ebs.csi.aws.com"},
        ]
    )
    assert classes == {"kafka-broker-fast": "Delete"}
    waiting = claim("waiting")
    claims = [
        waiting,
        claim("unplaced", node=None),
        claim("bound", phase="Bound", volume="pvc-1"),
        claim("answered", volume="pvc-2"),
        claim("other-class", storage_class="other"),
    ]
    assert loop_volumes.waiting_claims(claims, classes) == [waiting]


@pytest.mark.parametrize(
    ("quantity", "size"), [("1Gi", 2**30), ("512Mi", 2**29), ("2Ti", 2 * 2**40), ("4096", 4096)]
)
def test_claim_sizes_read_in_bytes(quantity: str, size: int) -> None:
    assert loop_volumes.quantity_bytes(quantity) == size


@pytest.mark.parametrize("quantity", ["1G", "1.5Gi", "", "10Pi"])
def test_sizes_loop_volumes_cannot_take_are_refused_naming_the_quantity(quantity: str) -> None:
    with pytest.raises(ValueError, match=f"storage quantity {quantity!r}"):
        loop_volumes.quantity_bytes(quantity)


def test_other_volumes_have_no_backing_file() -> None:
    assert loop_volumes.backing_file({"spec": {"local": {"path": "/x"}}}) is None


def test_the_driver_is_installed_executable_where_flexvolume_looks(tmp_path: Path) -> None:
    installed = loop_volumes.install_driver(tmp_path)
    assert installed == tmp_path / "kafkastack.io~loop" / "loop"
    assert os.access(installed, os.X_OK)
    assert installed.read_bytes() == loop_volumes.DRIVER_SCRIPT.read_bytes()
    assert sorted(p.name for p in installed.parent.iterdir()) == ["loop"]


def test_loop_volumes_on_a_cluster_without_real_nodes_are_refused(
    repo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path / "cache"))
    document = yaml.safe_load((repo_root / "stacks" / "Pulumi.local.yaml").read_text())
    document["config"]["kafkastack:storage"]["provisioner"] = loop_volumes.PROVISIONER
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.local.yaml").write_text(yaml.safe_dump(document))
    model = ClusterModel.from_config(load_stack(stacks, "local"))
    with pytest.raises(
        LocalClusterError, match=r"kafkastack:storage.provisioner: kafkastack.io/loop"
    ):
        prepare_volumes(LocalKubernetes("no-real-nodes"), model)


def test_releasing_a_stack_removes_only_volume_files_in_the_real_nodes_folder() -> None:
    nodes = Path("/cache/local-cluster/c/nodes")
    loop = loop_volumes.volume_for(claim(), "Retain", nodes / "c-nodes-1" / "volumes", {})
    local_folder = nodes / "c-nodes-1" / "volumes" / "kafka-broker-fast-0"

    def local(path: str) -> dict[str, Any]:
        return {"spec": {"local": {"path": path}}}

    assert loop_volumes.volume_leftover(loop, nodes) == loop_volumes.backing_file(loop)
    assert loop_volumes.volume_leftover(local(str(local_folder)), nodes) == local_folder
    # A loop volume has no `local` path: read as "", that was ".", the working directory.
    assert (
        loop_volumes.volume_leftover({"spec": {"flexVolume": {"driver": "other"}}}, nodes) is None
    )
    assert loop_volumes.volume_leftover(local(""), nodes) is None
    assert loop_volumes.volume_leftover(local("relative/folder"), nodes) is None
    assert loop_volumes.volume_leftover(local("/mnt/kafkastack"), nodes) is None  # fake nodes' path
    assert loop_volumes.volume_leftover(local(f"{nodes}/../../etc"), nodes) is None
    assert loop_volumes.volume_leftover(local(str(nodes)), nodes) is None


class FakeKube:
    """kubectl answers for one loop class and its claims; records the volumes created."""

    def __init__(self, workdir: Path, claims: list[dict[str, Any]]) -> None:
        self.name, self.workdir, self.kubeconfig = "c", workdir, workdir / "kubeconfig"
        self.claims = claims
        self.created: list[dict[str, Any]] = []
        self.classes = [
            {
                "metadata": {"name": "kafka-broker-fast"},
                "provisioner": loop_volumes.PROVISIONER,
                "reclaimPolicy": "Retain",
            }
        ]

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        if args[:2] == ("get", "storageclasses"):
            out = json.dumps({"items": self.classes})
        elif args[:2] == ("get", "pvc"):
            out = json.dumps({"items": self.claims})
        else:
            assert args[:2] == ("create", "-f") and stdin is not None
            self.created.append(json.loads(stdin))
            out = ""
        return subprocess.CompletedProcess(list(args), 0, out, "")


def test_the_provisioner_answers_placed_claims_on_real_nodes_and_keeps_what_it_cannot(
    tmp_path: Path,
) -> None:
    nodes = tmp_path / "nodes"
    (nodes / "c-nodes-1").mkdir(parents=True)
    (nodes / "c-nodes-1" / "node.json").write_text("{}")
    kube = FakeKube(tmp_path, [claim("on-a-real-node"), claim("elsewhere", node="kwok-node")])
    provisioner = LoopProvisioner(kube)  # type: ignore[arg-type]
    assert provisioner.provision_once() == ["pvc-uid-on-a-real-node"]
    (volume,) = kube.created
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert volume["metadata"]["labels"] == {"kafkastack.io/volume-node": "c-nodes-1"}
    assert loop_volumes.backing_file(volume) == (
        nodes / "c-nodes-1" / "volumes" / "loop" / "pvc-uid-on-a-real-node.img"
    )
    # What the stack's wait for its pods reports when a claim stays unanswered.
    assert provisioner.errors == ["claim elsewhere: kwok-node is no real node"]
