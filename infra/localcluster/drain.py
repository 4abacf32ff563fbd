"""Draining one zone's real node as `kubectl drain` does (cordon, then the eviction API, which
honours PodDisruptionBudgets), under load; then uncordoning it and waiting for its broker to
catch up. Shared by the nodes tier and bench/day2.py."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from infra.localcluster.deployed import DeployedStack
from infra.localcluster.disruptions import (
    LOAD_RECORDS_PER_S,
    Load,
    read_back,
    watcher_of,
)
from infra.localcluster.isr_watch import min_isr_seen
from infra.model import labels, probes


@dataclass(frozen=True)
class Drain:
    node: str
    evicted: str  # the broker pod the drain evicted
    second_eviction: str  # the API's answer to evicting another broker meanwhile
    written_while_down: int  # records acknowledged by a producer started with the broker down
    min_isr: int  # the smallest in-sync set the watcher saw, drain to catch-up
    caught_up_s: float  # uncordon → the broker's pod Ready and every partition in sync again
    load: Load


def evict(stack: DeployedStack, pod: str) -> tuple[bool, str]:
    """POST an Eviction for `pod` (policy/v1): whether the API accepted it, and its answer."""
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": pod, "namespace": stack.namespace},
    }
    path = f"/api/v1/namespaces/{stack.namespace}/pods/{pod}/eviction"
    reply = stack.kube.kubectl(
        "create", "--raw", path, "-f", "-", stdin=json.dumps(body), check=False
    )
    return reply.returncode == 0, (reply.stdout + reply.stderr).strip()


def drain_zone(stack: DeployedStack, topic: str, node: str) -> Drain:
    """Drain `node` (not the client pod's) under load, try a second broker's eviction, write
    with its broker down, uncordon, and wait until the broker is back in every in-sync set."""
    client = stack.client()
    client.create_topic(topic, partitions=3)
    client.wait_isr(topic, 3)
    on_node = [p for p in stack.pods(labels.BROKER) if p["spec"].get("nodeName") == node]
    assert len(on_node) == 1, (
        f"expected one broker on {node}: {[p['metadata']['name'] for p in on_node]}"
    )
    evicted = on_node[0]["metadata"]["name"]
    others = [
        p["metadata"]["name"] for p in stack.pods(labels.BROKER) if p["metadata"]["name"] != evicted
    ]
    watcher = watcher_of(stack)
    run = f"{topic}-load"
    client.start_producer(run, topic, LOAD_RECORDS_PER_S)
    watcher.start()
    try:
        stack.kube.kubectl(
            "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--force",
            # The evicted broker's whole grace period (its stop gate, then its shutdown).
            f"--timeout={probes.TERMINATION_GRACE_SECONDS + 60}s",
        )  # fmt: skip
        # The evicted broker cannot start elsewhere (its volume is on the drained node), so
        # its budget stays spent: the next broker's eviction must be refused.
        accepted, answer = evict(stack, others[0])
        assert not accepted, f"a second broker was evicted while {evicted} is down: {answer}"
        acked_down, errors_down = client.produce(topic, count=200)
        uncordoned = time.monotonic()
        stack.kube.kubectl("uncordon", node)
        stack.wait_ready()
        client.wait_isr(topic, 3)
        caught_up = time.monotonic() - uncordoned
    finally:
        stack.kube.kubectl("uncordon", node, check=False)
        samples = watcher.stop()
        acked, errors = client.stop_producer(run)
    load = read_back(client, topic, acked + acked_down, errors + errors_down)
    return Drain(
        node=node,
        evicted=evicted,
        second_eviction=answer,
        written_while_down=len(acked_down),
        min_isr=min_isr_seen(samples, {topic}),
        caught_up_s=caught_up,
        load=load,
    )
