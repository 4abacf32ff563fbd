"""Losing one zone's real node under load, and getting it back (issue 14, "Quorum and
recovery"): every process of the node is killed at once, as a machine or a zone that goes away
gives no time to shut down; writes go on with the other two zones; then the node boots again on
the state it left and its broker catches up with no step from anyone. Shared by the nodes tier
and bench/day2.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from infra.localcluster.deployed import DeployedStack
from infra.localcluster.disruptions import (
    LOAD_RECORDS_PER_S,
    IsrWatcher,
    Load,
    min_isr_seen,
    read_back,
)
from infra.localcluster.pod_client import Acked
from infra.model import labels


@dataclass(frozen=True)
class NodeLoss:
    node: str
    broker: str  # the broker pod that ran on the lost node
    written_while_down: int  # records a producer started after the loss had acknowledged
    shrunk_s: float  # loss → no partition lists the lost broker in sync any more
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


def lose_node(stack: DeployedStack, topic: str, index: int) -> NodeLoss:
    """Crash real node `index` (not the first: it runs the client pod and kube-proxy) under
    load, write with it down, boot it again and wait until its broker is back in every in-sync
    set."""
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
    watcher = IsrWatcher(client, run=f"{topic}-isr")
    run = f"{topic}-load"
    client.start_producer(run, topic, LOAD_RECORDS_PER_S)
    watcher.start()
    acked_down: list[Acked] = []
    errors_down: list[str] = []
    down = False
    try:
        lost_at = time.monotonic()
        down = True
        nodes.crash(node)

        def out_of_sync() -> bool:
            states = client.describe(topic).get(topic, {})
            return bool(states) and all(broker.node_id not in s.isr for s in states.values())

        # Kafka's own reaction (replica.lag.time.max.ms) is what keeps the service up; the API
        # server's (NotReady after the controller's node grace) changes nothing here: the pod
        # stays bound to the node that holds its volume, so nothing waits for it.
        shrunk = _since(lost_at, out_of_sync, f"broker {broker.node_id} out of the ISR", 180)
        acked_down, errors_down = client.produce(topic, count=200)
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
        min_isr=min_isr_seen(samples, {topic}),
        caught_up_s=caught_up,
        same_pod=bool(after) and after[0]["metadata"]["uid"] == pod["uid"],
        load=read_back(client, topic, acked + acked_down, errors + errors_down),
    )
