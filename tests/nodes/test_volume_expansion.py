"""More storage on real nodes: a larger `storage.size_gib` through `pulumi up` grows every
broker's data filesystem in place, under an idempotent acks=all load, with no pod restarted.

The variant's StorageClasses name the loop provisioner (infra/localcluster/loop_volumes.py):
each claim gets a volume of exactly its size, so a larger claim is a real change underneath,
carried by Kubernetes' own expansion path as on a cloud: the claims are patched (the preview
says update, never replace), the controller-manager grows the volume through the FlexVolume
driver, and each node's kubelet grows the mounted filesystem while the broker writes to it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.localcluster import loop_volumes
from infra.localcluster.deployed import DeployedStack
from infra.localcluster.disruptions import LOAD_RECORDS_PER_S, read_back
from infra.localcluster.nodes import RealNodes
from infra.localcluster.real_stack import BROKERS
from tests.nodes.pods import restarts

SMALL_GIB = 1  # XFS needs at least 300 MB
GROWN_GIB = 2
GIB = 2**30


def loop_volume_stack(source: Path, target: Path) -> Path:
    """The local stack with loop-provisioned volumes of `SMALL_GIB` per data volume."""
    document = yaml.safe_load(source.read_text(encoding="utf-8"))
    storage = document["config"].setdefault("kafkastack:storage", {})
    storage.update(provisioner=loop_volumes.PROVISIONER, size_gib=SMALL_GIB)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return target


def grow(values: dict[str, Any]) -> None:
    values["storage"]["size_gib"] = GROWN_GIB


def data_claims(stack: DeployedStack) -> dict[str, str]:
    """Each broker's data claim → its pod."""
    model = stack.model
    return {
        model.names.claim(f"data-{i}", broker.workload): model.names.pod(broker.workload)
        for broker in model.brokers
        for i in range(len(model.log_dirs))
    }


def claim_capacities(stack: DeployedStack) -> dict[str, str]:
    claims = stack.kube.objects("pvc", stack.namespace)
    return {
        c["metadata"]["name"]: c.get("status", {}).get("capacity", {}).get("storage")
        for c in claims
    }


def filesystem_bytes(stack: DeployedStack, pod: str, path: str) -> int:
    """The size of the filesystem at `path` as the broker's own container sees it."""
    reply = stack.kube.kubectl(
        "exec", "-n", stack.namespace, pod, "-c", "kafka", "--", "df", "-kP", path
    )
    return int(reply.stdout.splitlines()[-1].split()[1]) * 1024


@pytest.mark.timeout(1200)
def test_a_larger_volume_grows_every_brokers_filesystem_in_place_under_load(
    released_nodes: RealNodes, repo_root: Path, tmp_path: Path
) -> None:
    source = loop_volume_stack(
        repo_root / "stacks" / "Pulumi.local.yaml", tmp_path / "source" / "Pulumi.local.yaml"
    )
    stack = DeployedStack(released_nodes, source, tmp_path / "deployment")
    try:
        stack.ensure()
        claims = data_claims(stack)
        assert len(claims) == BROKERS * len(stack.model.log_dirs)
        listed = json.loads(stack.kube.kubectl("get", "pv", "-o", "json").stdout)["items"]
        volumes = {
            v["spec"]["claimRef"]["name"]: v
            for v in listed
            if v["spec"].get("claimRef", {}).get("namespace") == stack.namespace
        }
        for name in claims:
            assert loop_volumes.backing_file(volumes[name]) is not None, volumes[name]["spec"]
            assert volumes[name]["spec"]["capacity"]["storage"] == f"{SMALL_GIB}Gi"
        path = stack.model.log_dirs[0]
        before = {pod: filesystem_bytes(stack, pod, path) for pod in set(claims.values())}
        assert all(0.25 * GIB < size <= SMALL_GIB * GIB for size in before.values()), before

        stack.edit(grow)
        preview = stack.preview()
        assert preview.errors == []
        changed = {(s.op, s.kind) for s in preview.steps if s.op != "same"}
        # One update per claim, and nothing else: no StatefulSet or claim replaced.
        assert changed == {("update", "PersistentVolumeClaimPatch")}, changed

        pods = restarts(stack)
        client = stack.client()
        client.create_topic("proof-grow-volumes", partitions=3)
        client.wait_isr("proof-grow-volumes", BROKERS)
        client.start_producer("grow-volumes", "proof-grow-volumes", LOAD_RECORDS_PER_S)
        began = time.monotonic()
        try:
            stack.change(grow)
            up_s = time.monotonic() - began
            deadline = time.monotonic() + 300
            while True:
                capacities = claim_capacities(stack)
                grown = {pod: filesystem_bytes(stack, pod, path) for pod in before}
                if all(capacities[c] == f"{GROWN_GIB}Gi" for c in claims) and all(
                    grown[pod] > before[pod] + 0.5 * GIB for pod in before
                ):
                    break
                assert time.monotonic() < deadline, (capacities, grown)
                time.sleep(2)
            grown_s = time.monotonic() - began
        finally:
            acked, errors = client.stop_producer("grow-volumes")
        load = read_back(client, "proof-grow-volumes", acked, errors)
        assert restarts(stack) == pods  # the same pods, no container restarted
        assert load.acked and load.lost == [] and load.disorder == []
        print(
            f"\ndata volumes {SMALL_GIB} → {GROWN_GIB} GiB through pulumi up ({up_s:.0f} s): every "
            f"broker's filesystem grown in place {grown_s:.0f} s after the up began "
            f"({min(before.values()) / GIB:.2f} → {min(grown.values()) / GIB:.2f} GiB), no pod "
            f"restarted, {len(load.acked)} acked, 0 lost"
        )
    finally:
        stack.release()
