"""Pods of locally built images on the real nodes, and the shared deployments' helpers, for the
nodes tier's tests."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import yaml

from infra.localcluster import images
from infra.localcluster.deployed import DeployedStack
from infra.localcluster.node_config import NodeSpec
from infra.localcluster.nodes import RealNodes
from infra.localcluster.real_stack import CONTROLLERS
from infra.model import labels, networks
from infra.model.probes import listening_command


def pod(name: str, node: str, image: images.Image, command: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "automountServiceAccountToken": False,
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "main",
                    "image": image.ref,
                    "imagePullPolicy": "Never",
                    "command": command,
                }
            ],
        },
    }


def create(nodes: RealNodes, pod: dict[str, Any]) -> None:
    nodes.kube.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(pod))


def wait_phase(
    nodes: RealNodes, name: str, phases: set[str], timeout: float = 120
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    pod: dict[str, Any] = {}
    while time.monotonic() < deadline:
        pod = nodes.kube.object("pods", "default", name) or {}
        if pod.get("status", {}).get("phase") in phases:
            return pod
        time.sleep(0.5)
    raise AssertionError(f"pod {name} not in {phases} after {timeout}s: {pod.get('status')}")


def phase(nodes: RealNodes, name: str) -> str:
    return str(nodes.kube.kubectl("get", "pod", name, "-o", "jsonpath={.status.phase}").stdout)


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


# What Multus writes on each pod it attached: every interface, its network and addresses.
NETWORK_STATUS = "k8s.v1.cni.cncf.io/network-status"


def second_network_addresses(pod: dict[str, Any], interface: str) -> list[list[str]]:
    """The addresses Multus reports for `interface` of `pod` (one list per attachment)."""
    status = json.loads(pod["metadata"]["annotations"][NETWORK_STATUS])
    return [s["ips"] for s in status if s.get("interface") == interface]


def restarts(stack: DeployedStack) -> dict[str, tuple[str, int]]:
    """Each broker pod → its uid and its containers' restart count."""
    return {
        p["metadata"]["name"]: (
            p["metadata"]["uid"],
            sum(s.get("restartCount", 0) for s in p["status"].get("containerStatuses", [])),
        )
        for p in stack.pods("broker")
    }


def assert_on_the_second_network(stack: DeployedStack, component: str) -> None:
    """Each pod of `component` (brokers or controllers) attached to the second network at its
    planned address (Multus's account), its node-to-node listener listening there (the
    kernel's, inside the pod): a broker's REPLICATION, a controller's CONTROLLER."""
    model = stack.model
    assert model.config.network.mode == "dual"
    broker = component == labels.BROKER
    nodes = model.brokers if broker else model.quorum
    port = model.ports.replication if broker else model.ports.controller
    pods = {p["metadata"]["name"]: p for p in stack.pods(component)}
    assert len(pods) == len(nodes), sorted(pods)
    for node in nodes:
        pod = pods[model.names.pod(node.workload)]
        assert node.replication_ip is not None
        attached = second_network_addresses(pod, networks.SECOND_INTERFACE)
        assert attached == [[node.replication_ip]], pod["metadata"]["annotations"]
        stack.kube.kubectl(
            "exec", "-n", stack.namespace, pod["metadata"]["name"], "-c", "kafka", "--",
            *listening_command(node.replication_ip, port),
        )  # fmt: skip


@dataclass
class DualDeployment:
    """The local stack's variant in prod's shape on-prem: KRaft controllers of their own (each
    on a node of its own: brokers and controllers never share one) and a second network
    (`network.mode: dual`), deployed once for the tests that use it."""

    stack: DeployedStack
    added: list[NodeSpec] = field(default_factory=list)  # nodes started for it, in order

    def ensure(self) -> DualDeployment:
        if not self.added:
            self.add_nodes(CONTROLLERS)
        self.stack.ensure()
        return self

    def add_nodes(self, count: int) -> list[NodeSpec]:
        """`count` more nodes (zones in turn), given back with the deployment: pods may land on
        them whoever asked for them (a replaced controller in a zone that got one)."""
        nodes = self.stack.nodes.add(count)
        self.added += nodes
        return nodes

    def release(self) -> None:
        """The deployment removed first, so that no pod of it is left on the nodes that go."""
        self.stack.release()
        if self.added:
            self.stack.nodes.remove(self.added)
            self.added = []
