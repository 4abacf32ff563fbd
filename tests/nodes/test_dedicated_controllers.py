"""KRaft controllers of their own on real nodes, as prod runs them: the ordered roll, a change
of their number and a lost disk, each through `pulumi up` under an acks=all load.

The roll proof is a change of every Kafka pod (the CPU request of brokers and controllers): the
controllers restart first, one at a time with the active controller (asked of the running
cluster by the program) last, then the brokers one at a time, each only once the previous pod is
Ready through its own probes; no partition falls below min.insync.replicas and no acknowledged
record is lost.

The voter set changes through the dynamic quorum (KIP-853), one voter at a time, and restarts
no running node: the voters' addresses are where nodes find the quorum, read at their next
start, not part of any pod template (infra/model/quorum.py, DISCOVERY_SETTINGS). 3 → 5 creates
two controllers, each made a voter by its own `quorum-membership` container; 5 → 3 is refused
by `pulumi preview` while the two that go are voters, until `kafkastack remove-voters` takes
them out; then `pulumi up` deletes them and the three voters that stayed kept their
directories. Then a voter's metadata volume is lost (its claim and pod deleted): it comes back
on a fresh volume under a new directory id, never as the voter it was with an empty log, and
its `quorum-membership` container swaps it into the voter set.

The stack runs in `network.mode: dual` (the on-prem shape: a second network through Multus, a
subnet per zone), where controllers listen only on the second network: each is attached at its
planned address, listens there, and turns Ready through its own probe (the finding was that
dual-mode controllers never did: their probe dialled the pod network)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from infra.localcluster.deployed import DeployedStack
from infra.localcluster.disruptions import (
    LOAD_RECORDS_PER_S,
    Load,
    Roll,
    every_node_cpu,
    lose_volume,
    overlapping_starts,
    read_back,
    roll_report,
    rolling_change,
    set_quorum_nodes,
    started_and_ready,
)
from infra.localcluster.isr_watch import below, min_isr_seen
from infra.localcluster.real_stack import BROKERS, CONTROLLERS
from infra.model import labels, stop_gate
from infra.voter_removal import VoterSet, kubectl_exec
from tests.nodes.pods import DualDeployment, assert_on_the_second_network

# The grown quorum: a second voter in two of the three zones.
GROWN = CONTROLLERS + 2
T = TypeVar("T")


def voters(stack: DeployedStack) -> dict[int, str]:
    """Voter id → directory id, as a voter pod's quorum-membership container reads them."""
    return VoterSet(stack.model, kubectl_exec(stack.namespace)).voters()


def assert_one_at_a_time_within_min_isr(stack: DeployedStack, roll: Roll) -> int:
    """Each restarted pod began only once the one before it was Ready, the ISR watcher saw no
    partition below min.insync.replicas, and every acknowledged record came back; the minimum
    ISR seen."""
    overlapping = overlapping_starts(roll.restarts)
    assert overlapping == [], f"started before the previous pod was Ready: {roll.restarts}"
    min_isr = stack.model.config.min_insync_replicas
    seen = min_isr_seen(roll.samples)
    assert len(roll.samples) >= 3, "the ISR watcher took too few samples to judge the roll"
    # The message (pods' logs included) is made only when the check fails.
    assert seen >= min_isr, (
        f"fell to {seen} in sync: {below(roll.samples, min_isr)[:10]}\n{roll_report(stack, roll)}"
    )
    assert roll.load.acked and roll.load.lost == [] and roll.load.disorder == []
    return seen


def assert_controllers_first_the_active_last(stack: DeployedStack, roll: Roll) -> int:
    """Every controller the stack declares restarted (or was created) before any broker, the one
    that led the quorum when `pulumi up` began last of them, then every broker; the leader."""
    model = stack.model
    controllers = {model.names.pod(n.workload): n.node_id for n in model.quorum}
    brokers = {model.names.pod(n.workload) for n in model.brokers}
    order = [name for name, _, _ in roll.restarts]
    assert sorted(order) == sorted([*controllers, *brokers]), roll.restarts
    assert set(order[: len(controllers)]) == set(controllers), f"brokers first: {order}"
    active = roll.leader_before
    assert active in controllers.values(), f"the quorum named no controller: {active}"
    assert controllers[order[len(controllers) - 1]] == active, (
        f"the active controller {active} did not restart last of the controllers: {order}"
    )
    return active


def under_load(stack: DeployedStack, topic: str, action: Callable[[], T]) -> tuple[T, float, Load]:
    """`action()` while an idempotent acks=all producer writes to `topic`: what it returned, its
    seconds, and what the producer had acknowledged and what came back of it."""
    client = stack.client()
    client.create_topic(topic, partitions=3)
    client.wait_isr(topic, BROKERS)
    run = f"{topic}-load"
    client.start_producer(run, topic, LOAD_RECORDS_PER_S)
    began = time.monotonic()
    try:
        result = action()
        seconds = time.monotonic() - began
    finally:
        acked, errors = client.stop_producer(run)
    return result, seconds, read_back(client, topic, acked, errors)


def remove_voters(stack: DeployedStack) -> subprocess.CompletedProcess[str]:
    """`kafkastack remove-voters --stack local` with the variant's stack file, as an operator
    runs it against this cluster."""
    command = Path(sys.executable).parent / "kafkastack"
    stacks = stack.stack_file.parent
    return subprocess.run(
        [str(command), "remove-voters", "--stack", "local", "--stacks-dir", str(stacks)],
        capture_output=True,
        text=True,
        env={**os.environ, "KUBECONFIG": str(stack.kube.kubeconfig)},
        timeout=900,
        check=False,
    )


# An ordered roll of six pods, two controllers created and two deleted, a preview and a lost
# disk: about 10 min on a quiet 2-core machine, more than the suite's default limit per test.
@pytest.mark.timeout(1800)
def test_controllers_roll_first_voters_join_and_leave_one_at_a_time_and_a_lost_disk_rejoins(
    dual_stack_to_change: DualDeployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = dual_stack_to_change.stack
    monkeypatch.setenv("KUBECONFIG", str(stack.kube.kubeconfig))
    print(
        f"\ndedicated-controller stack Ready on {len(stack.nodes.specs)} real nodes "
        f"(pulumi up {stack.deploy_seconds:.0f} s)"
    )
    pods = stack.pods(labels.CONTROLLER) + stack.pods(labels.BROKER)
    assert len({p["spec"]["nodeName"] for p in pods}) == CONTROLLERS + BROKERS
    # The first `pulumi up` created each role's nodes at once (nothing ran to protect):
    # every controller, and every broker, started before any of its kind was Ready.
    for component in (labels.CONTROLLER, labels.BROKER):
        times = [started_and_ready(p) for p in stack.pods(component)]
        assert max(s for s, _ in times) < min(r for _, r in times), (component, times)
    assert_on_the_second_network(stack, labels.CONTROLLER)
    before = voters(stack)
    assert sorted(before) == [n.node_id for n in stack.model.quorum]

    rolled = time.time()
    roll = rolling_change(stack, "proof-controllers-roll", every_node_cpu)

    active = assert_controllers_first_the_active_last(stack, roll)
    roll_isr = assert_one_at_a_time_within_min_isr(stack, roll)
    # Each broker's preStop hook (stop_gate.py) let its stop go on without reaching its bound.
    assert stack.events(stop_gate.FAILED_EVENT, since=rolled) == []
    assert voters(stack) == before  # a restart keeps a voter's directory
    print(
        f"a change of every Kafka pod through pulumi up in {roll.seconds:.0f} s: the "
        f"controllers (the active {active} last), then the brokers, one at a time; min ISR "
        f"{roll_isr} over {len(roll.samples)} samples, {len(roll.load.acked)} acked, 0 lost"
    )

    # The two zones that get a second voter: a node more in each (zones in turn).
    dual_stack_to_change.add_nodes(GROWN - CONTROLLERS)
    grow = rolling_change(stack, "proof-voters-grow", set_quorum_nodes(GROWN))

    model = stack.model
    grown = voters(stack)
    new_ids = sorted(n.node_id for n in model.quorum if n.node_id not in before)
    # Only the two new controllers started, one after the other; no running node restarted.
    created = [model.names.pod(model.names.controller(i)) for i in new_ids]
    assert [name for name, _, _ in grow.restarts] == created, grow.restarts
    grow_isr = assert_one_at_a_time_within_min_isr(stack, grow)
    assert sorted(grown) == sorted(n.node_id for n in model.quorum), grown
    assert {i: grown[i] for i in before} == before  # the voters kept their directories
    assert_on_the_second_network(stack, labels.CONTROLLER)
    print(
        f"KRaft voters {CONTROLLERS} → {GROWN} through pulumi up in {grow.seconds:.0f} s: "
        f"{' then '.join(created)} created, no running pod restarted; min ISR {grow_isr} "
        f"over {len(grow.samples)} samples, {len(grow.load.acked)} acked, 0 lost"
    )

    # Back to three: refused while the two that go are voters, with the command to run.
    stack.edit(set_quorum_nodes(CONTROLLERS))
    refusals = stack.preview().errors
    going = ", ".join(map(str, new_ids))
    assert any(
        f"kafkastack:quorum.nodes: this change deletes KRaft voter(s) {going}" in r
        and "`kafkastack remove-voters --stack local`" in r
        for r in refusals
    ), refusals
    removed, removal_s, leaving = under_load(
        stack, "proof-voters-leave", lambda: remove_voters(stack)
    )
    assert removed.returncode == 0, removed.stdout + removed.stderr
    said = removed.stdout.splitlines()
    removals = [line.split()[2] for line in said if line.startswith("removing voter")]
    assert removals == [str(i) for i in reversed(new_ids)], removed.stdout
    assert leaving.acked and leaving.lost == [] and leaving.disorder == []
    assert voters(stack) == before

    shrink = rolling_change(stack, "proof-voters-shrink", set_quorum_nodes(CONTROLLERS))

    left = {s["metadata"]["name"] for s in stack.kube.objects("statefulsets", stack.namespace)}
    assert not {model.names.controller(i) for i in new_ids} & left, left
    assert {model.names.controller(i) for i in before} <= left, left
    assert voters(stack) == before
    # The two went; nothing else restarted.
    assert shrink.restarts == []
    assert min_isr_seen(shrink.samples) >= model.config.min_insync_replicas
    assert shrink.load.acked and shrink.load.lost == [] and shrink.load.disorder == []
    print(
        f"{GROWN} → {CONTROLLERS}: refused by the preview; remove-voters took "
        f"{', '.join(removals)} out in {removal_s:.0f} s ({len(leaving.acked)} acked "
        f"meanwhile, 0 lost); pulumi up deleted them in {shrink.seconds:.0f} s, no pod "
        f"restarted ({len(shrink.load.acked)} acked, 0 lost)"
    )

    # A follower voter's disk lost: it must not come back as the same voter with an empty
    # log; it formats a new directory id and its quorum-membership container swaps it in.
    leader = stack.client().quorum_leader()
    lost = min(i for i in before if i != leader)
    workload = model.names.controller(lost)
    claim = model.names.claim("metadata", workload)
    old_volume = stack.kube.kubectl(
        "get", "pvc", claim, "-n", stack.namespace, "-o", "jsonpath={.spec.volumeName}"
    ).stdout.strip()
    volume, loss_s, disk = under_load(
        stack, "proof-voter-disk", lambda: lose_volume(stack, workload, "metadata")
    )
    assert volume and volume != old_volume, (old_volume, volume)
    replaced = voters(stack)
    assert sorted(replaced) == sorted(before), replaced
    assert replaced[lost] != before[lost], "the voter rejoined under its old directory id"
    assert {i: d for i, d in replaced.items() if i != lost} == {
        i: d for i, d in before.items() if i != lost
    }
    assert disk.acked and disk.lost == [] and disk.disorder == []
    print(
        f"voter {lost}'s metadata volume lost: a voter again under a new directory id, its "
        f"pod Ready {loss_s:.0f} s after the loss, under load "
        f"({len(disk.acked)} acked, 0 lost)"
    )
