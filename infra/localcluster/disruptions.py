"""Day-2 disruptions of the deployed stack under an idempotent acks=all load, measured.

Each proof runs a VerifiableProducer in the client pod for its whole length, then reads the
topic back: an acknowledged record that does not come back is lost. Shared by the nodes tier
(tests/nodes/test_stack_day2.py, which asserts) and bench/day2.py (which prints figures).
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from infra.localcluster.api_reads import api_time
from infra.localcluster.control_plane import LocalClusterError
from infra.localcluster.deployed import DeployedStack, pod_ready
from infra.localcluster.isr_watch import IsrSample, IsrWatcher
from infra.localcluster.pod_client import Acked, PodClient, lost, out_of_order
from infra.localcluster.real_stack import brokers_per_zone
from infra.model import labels, stop_gate

# The day-2 proofs' load: an acknowledgement every 50 ms spans every disruption (a failover
# stalls acks for 0.2 s and more) with thousands of records per proof to read back. Each record
# costs the brokers TLS, acks=all and a JSON line: on three real-node brokers (2026-11-28,
# bench/load_cost.py) a load of 100/s took the machine 24 CPU-s a minute beyond idle, 50/s 11
# and 20/s 4; over the half hour the nodes tier runs under load, 100/s was its largest cost.
LOAD_RECORDS_PER_S = 20


@dataclass(frozen=True)
class Load:
    """What a producer had acknowledged over a disruption, and what came back of it."""

    acked: list[Acked]
    errors: list[str]
    lost: list[Acked]
    disorder: list[str]


def read_back(client: PodClient, topic: str, acked: list[Acked], errors: list[str]) -> Load:
    """All of `topic` (records the producer sent but never saw acknowledged may be there too),
    judged against what was acknowledged. The producer has stopped, so each log ends where it
    stays, and the consumer stops once it has read that many records instead of waiting
    `consume`'s idle time for more (a minute per proof): the proofs' topics are new (their logs
    begin at offset 0) and an idempotent producer without transactions writes no control
    records, so the end offsets add up to the records there are. Were there fewer (a log whose
    start had moved), the consumer would end at its idle time, as without the count."""
    consumed = client.consume(topic, expect=sum(client.end_offsets(topic).values()))
    return Load(acked, errors, lost(acked, consumed), out_of_order(consumed))


def _pod(stack: DeployedStack, name: str) -> dict[str, Any]:
    return stack.kube.object("pods", stack.namespace, name) or {}


def wait_replaced_and_ready(
    stack: DeployedStack, name: str, old_uid: str, timeout: float = 300
) -> float:
    """Until pod `name` is a new pod (not `old_uid`) Ready through its own probes; when."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pod = _pod(stack, name)
        if pod and pod["metadata"]["uid"] != old_uid and pod_ready(pod):
            return time.time()
        time.sleep(0.5)
    raise LocalClusterError(f"pod {name} not back and Ready within {timeout}s")


def lose_volume(stack: DeployedStack, workload: str, template: str, timeout: float = 300) -> str:
    """A node's disk lost: its claim of volumeClaimTemplate `template` deleted, then its pod. The
    StatefulSet controller makes the claim anew (it binds a fresh volume: the old one is
    Retained and Released) and a new pod, whose steps find an empty volume. Returns the new
    claim's volume, once the new pod is Ready through its own probes."""
    names, namespace = stack.model.names, stack.namespace
    pod, claim = names.pod(workload), names.claim(template, workload)
    uid = _pod(stack, pod)["metadata"]["uid"]
    # The claim goes once no scheduled pod uses it; the new pod waits Pending until its claim
    # is made again (the StatefulSet controller does that for a Pending pod).
    stack.kube.kubectl("delete", "pvc", claim, "-n", namespace, "--wait=false")
    stack.kube.kubectl("delete", "pod", pod, "-n", namespace, "--wait=false")
    wait_replaced_and_ready(stack, pod, uid, timeout)
    reply = stack.kube.kubectl(
        "get", "pvc", claim, "-n", namespace, "-o", "jsonpath={.spec.volumeName}"
    )
    return reply.stdout.strip()


def longest_stall(acked: list[Acked], start: float, end: float) -> float:
    """The longest time without an acknowledgement between `start` and `end` (epoch seconds)."""
    times = sorted(a.at for a in acked if start <= a.at <= end)
    return max(b - a for a, b in itertools.pairwise([start, *times, end]))


@dataclass(frozen=True)
class FailoverTrial:
    leader: int
    stall_s: float  # the longest pause in acknowledgements after the leader's pod was deleted
    ready_s: float  # until the new pod of that broker was Ready through its own probes


@dataclass(frozen=True)
class Failover:
    trials: list[FailoverTrial]
    load: Load


def leader_failover(stack: DeployedStack, topic: str, trials: int) -> Failover:
    """Delete the partition leader's pod `trials` times under one continuous produce; before
    each deletion every replica is back in sync."""
    client = stack.client()
    client.create_topic(topic, partitions=1)
    client.wait_isr(topic, 3)
    run = f"{topic}-load"
    client.start_producer(run, topic, LOAD_RECORDS_PER_S)
    kills: list[tuple[int, float, float]] = []
    try:
        for _ in range(trials):
            # The leader once its in-sync set is whole again, asked of the host's admin
            # process (a metadata request; no JVM, no exec into a pod).
            leader = client.wait_isr(topic, 3)[0].leader
            name = stack.broker_pod(leader)
            uid = _pod(stack, name)["metadata"]["uid"]
            deleted_at = time.time()
            stack.kube.kubectl("delete", "pod", name, "-n", stack.namespace, "--wait=false")
            ready_at = wait_replaced_and_ready(stack, name, uid)
            kills.append((leader, deleted_at, ready_at))
        client.wait_isr(topic, 3)
    finally:
        acked, errors = client.stop_producer(run)
    results = [
        FailoverTrial(leader, longest_stall(acked, at, ready), ready - at)
        for leader, at, ready in kills
    ]
    return Failover(results, read_back(client, topic, acked, errors))


@dataclass(frozen=True)
class Roll:
    seconds: float  # the whole `pulumi up`
    restarts: list[tuple[str, float, float]]  # broker or controller pod, started, Ready, by start
    updates: list[tuple[str, str]]  # the engine's (phase, resource) order
    samples: list[IsrSample]
    load: Load
    # The KRaft quorum's leader just before `pulumi up` (the program asks which one it is
    # then, and restarts it last of the controllers).
    leader_before: int | None


def other_broker_cpu(values: dict[str, Any]) -> None:
    """A change only a restart applies, in the variant's `kafkastack:` values: the brokers' CPU
    request (num.io.threads, the change this used, is now applied while the brokers run:
    infra/model/dynamic_config.py)."""
    resources = values["resources"]
    resources["broker_cpu"] = 0.3 if resources["broker_cpu"] != 0.3 else 0.25


def overlapping_starts(restarts: list[tuple[str, float, float]]) -> list[str]:
    """The pods of a roll (`Roll.restarts`) that started before the one before them was Ready:
    none, in a roll one at a time."""
    return [
        name for (_, _, ready), (name, begun, _) in itertools.pairwise(restarts) if begun < ready
    ]


def every_node_cpu(values: dict[str, Any]) -> None:
    """Like `other_broker_cpu`, for the dedicated KRaft controllers' CPU request too: a change
    only a restart applies, of every Kafka pod, controllers and brokers."""
    other_broker_cpu(values)
    quorum = values["sizing"]["cluster"]["quorum"]
    quorum["cpu"] = 0.3 if quorum["cpu"] != 0.3 else 0.25


def set_brokers(count: int) -> Callable[[dict[str, Any]], None]:
    """An edit of the variant's values: `count` brokers, as `kafkastack apply-sizing` of a
    sizing for `count` writes them (zones in turn)."""

    def edit(values: dict[str, Any]) -> None:
        values["brokers"] = count
        cluster = values["sizing"]["cluster"]
        cluster["brokers"] = count
        cluster["brokers_per_zone"] = brokers_per_zone(count, len(values["zones"]))

    return edit


def set_quorum_nodes(count: int) -> Callable[[dict[str, Any]], None]:
    """An edit of the dedicated-controller variant's values: `count` KRaft controllers (the
    stack setting and the sizing it was written from say the same)."""

    def edit(values: dict[str, Any]) -> None:
        values["quorum"]["nodes"] = count
        values["sizing"]["cluster"]["quorum"]["nodes"] = count

    return edit


def rolling_change(
    stack: DeployedStack, topic: str, edit: Callable[[dict[str, Any]], None]
) -> Roll:
    """`pulumi up` of the variant changed by `edit` under load, with the ISR watcher running."""
    client = stack.client()
    client.create_topic(topic, partitions=3)
    client.wait_isr(topic, 3)
    # The watcher judges every topic: none may still be short from whatever ran before.
    client.wait_in_sync()
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in _kafka_pods(stack)}
    watcher = watcher_of(stack)
    run = f"{topic}-load"
    client.start_producer(run, topic, LOAD_RECORDS_PER_S)
    watcher.start()
    try:
        leader = client.quorum_leader()
        started = time.monotonic()
        done = stack.change(edit)
        seconds = time.monotonic() - started
        stack.wait_ready()
        client.wait_isr(topic, 3)
    finally:
        samples = watcher.stop()
        acked, errors = client.stop_producer(run)
    restarts = []
    for pod in _kafka_pods(stack):
        name = pod["metadata"]["name"]
        if before.get(name) != pod["metadata"]["uid"]:
            restarts.append((name, *started_and_ready(pod)))
    restarts.sort(key=lambda r: r[1])
    load = read_back(client, topic, acked, errors)
    return Roll(seconds, restarts, done.updates, samples, load, leader)


# What a Kafka log says when a partition's in-sync set changes or a broker is fenced, and what
# leads up to a fencing: the quorum's elections and resignations (a leader that missed its
# voters' fetches steps down), a controller taking over, a broker's heartbeat that timed out.
# Why a roll dipped below min.insync.replicas (a broker fenced by the quorum, a follower its
# leader dropped, a controlled shutdown) is told only by these lines, gone once the proof
# releases the stack. Message texts as Kafka 4.3's jars carry them.
ISR_LOG = re.compile(
    r"ISR|[Ff]enc|[Cc]ontrolled shutdown|Completed transition to|"
    r"Did not receive fetch request from the majority|Becoming the active controller|heartbeat"
)
ISR_LOG_LINES = 60


def isr_history(stack: DeployedStack) -> dict[str, list[str]]:
    """Each running Kafka pod → its last log lines about in-sync sets and fencing (with the
    kubelet's timestamps), for a failed roll's report."""
    history = {}
    for pod in _kafka_pods(stack):
        name = pod["metadata"]["name"]
        reply = stack.kube.kubectl(
            "logs", name, "-n", stack.namespace, "-c", "kafka", "--timestamps", check=False
        )
        lines = [line for line in reply.stdout.splitlines() if ISR_LOG.search(line)]
        history[name] = lines[-ISR_LOG_LINES:] or [reply.stderr.strip() or "(none)"]
    return history


def roll_report(stack: DeployedStack, roll: Roll) -> str:
    """What a failed roll check shows: each restart (start, Ready), then the pods' ISR lines."""
    lines = [
        f"{name}: started {begun:.0f}, Ready {ready:.0f}" for name, begun, ready in roll.restarts
    ]
    for name, said in isr_history(stack).items():
        lines += [f"-- {name}", *said]
    # A broker's stop that its preStop hook held to the bound (the hook's words about which
    # partitions held it are in that node's kubelet log; the event says only that it failed).
    lines += [f"-- preStop gave up: {e}" for e in stack.events(stop_gate.FAILED_EVENT)]
    return "\n".join(lines)


def watcher_of(stack: DeployedStack) -> IsrWatcher:
    """The ISR watcher on the node of the client pod, which no proof takes down."""
    return IsrWatcher(stack.kube, stack.model, stack.nodes.specs[0].name)


def _kafka_pods(stack: DeployedStack) -> list[dict[str, Any]]:
    """Brokers and dedicated KRaft controllers: what a roll restarts one at a time."""
    return stack.pods(labels.BROKER) + stack.pods(labels.CONTROLLER)


def started_and_ready(pod: dict[str, Any]) -> tuple[float, float]:
    """When the pod started, and since when it is Ready (epoch seconds, as the API says)."""
    for condition in pod["status"]["conditions"]:
        if condition["type"] == "Ready":
            started = api_time(pod["status"]["startTime"])
            return started, api_time(condition["lastTransitionTime"])
    raise LocalClusterError(f"pod {pod['metadata']['name']} has no Ready condition")
