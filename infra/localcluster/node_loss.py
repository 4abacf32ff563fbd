"""Losing one zone's real node under load, and getting it back (issue 14, "Quorum and
recovery"): every process of the node is killed at once, as a machine or a zone that goes away
gives no time to shut down; writes go on with the other two zones; then the node boots again on
the state it left and its broker catches up with no step from anyone. Shared by the nodes tier
and bench/day2.py.

Two clocks run after the loss. Kafka's (replica.lag.time.max.ms) drops the broker from the
in-sync sets; clients that were connected write on through it. The control plane's (the node
grace, 40 s as in any Kubernetes cluster) marks the node NotReady and takes its pods out of
every Service: until then the cluster DNS Service still sends part of the lookups to the
CoreDNS replica that died with the node, so a client started in that window may fail to
resolve the bootstrap name. The proof writes with a new client only once the cluster has
noticed, as an operator's tooling would see it, and reports both clocks; the node running the
client may still route a lookup to the lost replica for a moment after that (kube-proxy has yet
to rewrite its rules), so a new client that resolved nothing is started again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from infra.localcluster.control_plane import LocalClusterError
from infra.localcluster.deployed import DeployedStack
from infra.localcluster.disruptions import (
    LOAD_RECORDS_PER_S,
    Load,
    longest_stall,
    read_back,
    watcher_of,
)
from infra.localcluster.isr_watch import min_isr_seen
from infra.localcluster.pod_client import Acked, PodClient
from infra.model import labels


@dataclass(frozen=True)
class NodeLoss:
    node: str
    broker: str  # the broker pod that ran on the lost node
    written_while_down: int  # records a producer started after the loss had acknowledged
    shrunk_s: float  # loss → no partition lists the lost broker in sync any more
    # loss → the node NotReady and no Service endpoint on it ready (the cluster DNS's included)
    noticed_s: float
    stall_s: float  # the longest pause in the connected producer's acknowledgements meanwhile
    min_isr: int  # the smallest in-sync set the watcher saw, loss to catch-up
    caught_up_s: float  # node back → its broker's pod Ready and every partition in sync again
    same_pod: bool  # the pod that came back is the one that ran before (nobody replaced it)
    load: Load


def _since(start: float, condition: Callable[[], bool], what: str, timeout: float) -> float:
    """Poll `condition()` until true; the seconds from `start` until it was."""
    while not condition():
        if time.monotonic() > start + timeout:
            raise AssertionError(f"{what} not seen in {timeout:.0f} s")
        time.sleep(1)
    return time.monotonic() - start


def endpoint_serving(endpoint: dict[str, Any]) -> bool:
    """An EndpointSlice endpoint's pod is ready. `serving`, not `ready`: a Service that
    publishes not-ready addresses (the brokers' headless one, for their DNS names) marks every
    endpoint ready."""
    conditions = endpoint.get("conditions") or {}
    return bool(conditions.get("serving", conditions.get("ready", True)))


def _noticed(stack: DeployedStack, node: str) -> bool:
    """The control plane has reacted to the loss: the node is not Ready and no EndpointSlice
    (the stack's Services, the cluster DNS) lists a serving endpoint on it any more."""
    if stack.nodes.ready().get(node, True):
        return False
    reply = stack.kube.kubectl("get", "endpointslices", "-A", "-o", "json")
    return not any(
        endpoint.get("nodeName") == node and endpoint_serving(endpoint)
        for item in json.loads(reply.stdout)["items"]
        for endpoint in item.get("endpoints") or []
    )


# A Kafka client that resolves none of its bootstrap addresses stops before it sends anything.
UNRESOLVED = "No resolvable bootstrap urls"
RESOLVE_SECONDS = 60


def produce_once_resolved(
    client: PodClient, topic: str, count: int
) -> tuple[list[Acked], list[str]]:
    """`client.produce`, started again while the new producer cannot resolve the bootstrap
    name. Noticed by the control plane (`_noticed`) is not yet seen by kube-proxy: until it
    has rewritten the client node's rules, part of the lookups still go to the CoreDNS replica
    that died with the node (a CI run's producer failed so, right after the EndpointSlices
    had dropped it). Such a producer sent nothing, so nothing acknowledged is lost."""
    deadline = time.monotonic() + RESOLVE_SECONDS
    while True:
        try:
            return client.produce(topic, count=count)
        except LocalClusterError as failed:
            if UNRESOLVED not in str(failed) or time.monotonic() > deadline:
                raise
        time.sleep(1)


def lose_node(
    stack: DeployedStack,
    topic: str,
    index: int,
    while_down: Callable[[str], None] | None = None,
) -> NodeLoss:
    """Crash real node `index` (not the first: it runs the client pod and kube-proxy) under
    load, write with it down, boot it again and wait until its broker is back in every in-sync
    set. `while_down(broker pod)` runs once the control plane has noticed the loss, before the
    node boots again."""
    nodes = stack.nodes
    node = nodes.specs[index]
    client = stack.client()
    client.create_topic(topic, partitions=3)
    client.wait_isr(topic, 3)
    client.wait_in_sync()  # judged by the in-sync sets: nothing left over from before
    on_node = [p for p in stack.pods(labels.BROKER) if p["spec"].get("nodeName") == node.name]
    assert len(on_node) == 1, f"expected one broker on {node.name}: {on_node}"
    pod = on_node[0]["metadata"]
    broker = next(
        b for b in stack.model.brokers if stack.model.names.pod(b.workload) == pod["name"]
    )
    watcher = watcher_of(stack)
    run = f"{topic}-load"
    client.start_producer(run, topic, LOAD_RECORDS_PER_S)
    watcher.start()
    acked_down: list[Acked] = []
    errors_down: list[str] = []
    down = False
    try:
        lost_at, lost_epoch = time.monotonic(), time.time()
        down = True
        nodes.crash(node)

        def out_of_sync() -> bool:
            try:
                states = client.describe(topic).get(topic, {})
            except LocalClusterError:
                return False  # a new client's lookup that reached the lost CoreDNS: ask again
            return bool(states) and all(broker.node_id not in s.isr for s in states.values())

        shrunk = _since(lost_at, out_of_sync, f"broker {broker.node_id} out of the ISR", 180)
        noticed = _since(
            lost_at, lambda: _noticed(stack, node.name), f"{node.name} noticed as lost", 180
        )
        acked_down, errors_down = produce_once_resolved(client, topic, count=200)
        if while_down is not None:
            while_down(pod["name"])
        back_at = time.monotonic()
        down = False
        nodes.restart(node)
        stack.wait_ready()
        client.wait_isr(topic, 3)
        caught_up = time.monotonic() - back_at
    finally:
        if down:
            nodes.restart(node)  # a failed proof must not leave the session's node down
        samples = watcher.stop()
        acked, errors = client.stop_producer(run)
    after = [p for p in stack.pods(labels.BROKER) if p["metadata"]["name"] == pod["name"]]
    return NodeLoss(
        node=node.name,
        broker=pod["name"],
        written_while_down=len(acked_down),
        shrunk_s=shrunk,
        noticed_s=noticed,
        stall_s=longest_stall(acked, lost_epoch, lost_epoch + noticed),
        min_isr=min_isr_seen(samples, {topic}),
        caught_up_s=caught_up,
        same_pod=bool(after) and after[0]["metadata"]["uid"] == pod["uid"],
        load=read_back(client, topic, acked + acked_down, errors + errors_down),
    )
