"""KRaft controllers of their own on real nodes, as prod runs them: a change of every Kafka pod
through `pulumi up`, under an acks=all load, restarts the controllers first, one at a time with
the active controller (asked of the running cluster by the program) last, then the brokers one
at a time, each only once the previous pod is Ready through its own probes; no partition falls
below min.insync.replicas and no acknowledged record is lost.

The stack runs in `network.mode: dual` (the on-prem shape: a second network through Multus, a
subnet per zone), where controllers listen only on the second network: each is attached at its
planned address, listens there, and turns Ready through its own probe (the finding was that
dual-mode controllers never did: their probe dialled the pod network)."""

from __future__ import annotations

import time
from pathlib import Path

from infra.localcluster.deployed import DeployedStack
from infra.localcluster.disruptions import every_node_cpu, rolling_change, started_and_ready
from infra.localcluster.isr_watch import below, min_isr_seen
from infra.localcluster.nodes import RealNodes
from infra.localcluster.real_stack import BROKERS, CONTROLLERS
from infra.model import labels, networks
from infra.model.probes import listening_command
from tests.nodes.pods import second_network_addresses


def test_a_change_rolls_controllers_one_at_a_time_the_active_last_then_brokers(
    released_nodes: RealNodes, repo_root: Path, tmp_path: Path
) -> None:
    real_nodes = released_nodes
    started = time.monotonic()
    # Brokers and controllers never share a node: one node more per controller.
    added = real_nodes.add(CONTROLLERS)
    stack = DeployedStack(
        real_nodes,
        repo_root / "stacks" / "Pulumi.local.yaml",
        tmp_path,
        quorum="dedicated",
        second_network=True,
    )
    try:
        stack.ensure()
        model = stack.model
        controllers = {model.names.pod(n.workload): n.node_id for n in model.quorum}
        brokers = {model.names.pod(n.workload) for n in model.brokers}
        pods = stack.pods(labels.CONTROLLER) + stack.pods(labels.BROKER)
        assert len({p["spec"]["nodeName"] for p in pods}) == CONTROLLERS + BROKERS
        # The first `pulumi up` created each role's nodes at once (nothing ran to protect):
        # every controller, and every broker, started before any of its kind was Ready.
        for component in (labels.CONTROLLER, labels.BROKER):
            times = [started_and_ready(p) for p in stack.pods(component)]
            assert max(s for s, _ in times) < min(r for _, r in times), (component, times)
        print(
            f"\ndedicated-controller stack Ready on {len(real_nodes.specs)} real nodes in "
            f"{time.monotonic() - started:.0f} s (pulumi up {stack.deploy_seconds:.0f} s)"
        )
        assert model.config.network.mode == "dual"
        for node in model.quorum:
            pod = next(p for p in pods if p["metadata"]["name"] == model.names.pod(node.workload))
            assert node.replication_ip is not None
            attached = second_network_addresses(pod, networks.SECOND_INTERFACE)
            assert attached == [[node.replication_ip]], pod["metadata"]["annotations"]
            listening = listening_command(node.replication_ip, model.ports.controller)
            stack.kube.kubectl(
                "exec", "-n", stack.namespace, pod["metadata"]["name"], "-c", "kafka", "--",
                *listening,
            )  # fmt: skip
        active = stack.client().quorum_leader()
        assert active in controllers.values(), f"the quorum names no controller: {active}"

        roll = rolling_change(stack, "proof-controllers-roll", every_node_cpu)

        order = [name for name, _, _ in roll.restarts]
        assert sorted(order) == sorted([*controllers, *brokers]), roll.restarts
        assert set(order[:CONTROLLERS]) == set(controllers), f"brokers before controllers: {order}"
        assert controllers[order[CONTROLLERS - 1]] == active, (
            f"the active controller {active} did not restart last of the controllers: {order}"
        )
        for (_, _, ready), (name, begun, _) in zip(roll.restarts, roll.restarts[1:], strict=False):
            assert begun >= ready, f"{name} started before the previous pod was Ready"
        min_isr = model.config.min_insync_replicas
        seen = min_isr_seen(roll.samples)
        assert len(roll.samples) >= 3, "the ISR watcher took too few samples to judge the roll"
        assert seen >= min_isr, f"fell to {seen} in sync: {below(roll.samples, min_isr)[:10]}"
        assert roll.load.acked and roll.load.lost == [] and roll.load.disorder == []
        print(
            f"controllers then brokers rolled in {roll.seconds:.0f} s (pulumi up), active "
            f"controller {active} last of the controllers, min ISR {seen} over "
            f"{len(roll.samples)} samples, {len(roll.load.acked)} acked, 0 lost"
        )
    finally:
        stack.release()
        real_nodes.remove(added)
