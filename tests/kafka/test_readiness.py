"""A broker is ready when it has caught up, as its rendered probe says on real brokers.

Each probe runs as the StatefulSet carries it, in the broker's own network namespace (where the
kubelet would run an exec probe inside the pod); a tcpSocket probe is asked of the same
namespace's listening sockets. One follower is held back by a replication throttle after a
restart, so "running but still lagging" lasts long enough to be seen.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from infra.model import metrics
from infra.verify.errors import VerifyError
from infra.verify.processes import Node, ProcessCluster
from tests.kafka.checks import create, wait_full_isr
from tests.kafka.test_metrics import samples

pytestmark = pytest.mark.kafka

THROTTLE_BYTES_PER_S = 20_000
# The follower's quota lets a whole fetch (replica.fetch.max.bytes, 1 MiB) through whenever its
# rate over the quota's window (11 s) is under the throttle: about 1 MiB per 11 s, not 20 kB/s.
# 6 MB were caught up within the broker's start to RUNNING on busy cores (seen twice, and on
# 2026-11-26 on this cluster of its own); 30 MB keep it out of the in-sync set for minutes.
MISSED_RECORDS = 30_000


def readiness_probe(cluster: ProcessCluster, node: Node) -> dict[str, Any]:
    rendered = cluster.render_dir / "kubernetes" / "StatefulSet" / f"{node.name}.yaml"
    container = yaml.safe_load(rendered.read_text())["spec"]["template"]["spec"]["containers"][0]
    probe: dict[str, Any] = container["readinessProbe"]
    return probe


def ready(cluster: ProcessCluster, node: Node) -> bool:
    probe = readiness_probe(cluster, node)
    if "tcpSocket" in probe:
        return node.host.listening(int(probe["tcpSocket"]["port"]))
    netns = ["ip", "netns", "exec", node.host.namespace]
    command = [*netns, *probe["exec"]["command"]]
    return subprocess.run(command, check=False, timeout=30).returncode == 0


def poll(condition: Callable[[], bool], what: str | Callable[[], str], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what if isinstance(what, str) else what()
        time.sleep(0.5)


def probe_figures(cluster: ProcessCluster, node: Node) -> str:
    """What the broker's readiness probe reads from its agent, for a failure's message."""
    served = cluster.metrics(node.entry["client_host"]).splitlines()
    names = (metrics.BROKER_STATE, metrics.REPLICA_MAX_LAG)
    return "\n".join(line for line in served if line.startswith(names))


def broker_state(cluster: ProcessCluster, node: Node) -> float:
    try:
        served = samples(cluster.metrics(node.entry["client_host"]))
    except VerifyError:  # not serving yet: the JVM or its agent is starting
        return -1
    return served.get(metrics.BROKER_STATE, -1)


@pytest.fixture
def cluster(three_brokers: ProcessCluster) -> ProcessCluster:
    """Shared: the other tests' topics there take no writes while this one runs, so the
    restarted follower has only this test's partition to catch up."""
    return three_brokers


def test_a_restarted_broker_is_ready_only_once_back_in_sync(cluster: ProcessCluster) -> None:
    create(cluster, "catchup", partitions=1)
    partition = cluster.client("describe", topic="catchup")["partitions"]["0"]
    follower_id = next(b for b in partition["replicas"] if b != partition["leader"])
    follower = cluster.broker_by_id(follower_id)
    in_sync = [cluster.broker_by_id(b) for b in partition["replicas"] if b != follower_id]
    for broker in cluster.brokers:
        poll(lambda b=broker: ready(cluster, b), f"{broker.name} never ready while in sync")

    # Only this follower's fetches of this partition are throttled.
    throttle = {"follower.replication.throttled.rate": THROTTLE_BYTES_PER_S}
    throttled = {"follower.replication.throttled.replicas": f"0:{follower_id}"}
    assert cluster.client("alter_configs", resource="broker", name=follower_id, set=throttle)["ok"]
    assert cluster.client("alter_configs", resource="topic", name="catchup", set=throttled)["ok"]
    try:
        began = time.monotonic()
        cluster.stop_node(follower.name)  # SIGTERM: a controlled shutdown
        print(f"\ncontrolled shutdown of {follower.name}: {time.monotonic() - began:.1f} s")
        assert not ready(cluster, follower)
        produced = cluster.client(
            "produce", topic="catchup", count=MISSED_RECORDS, value_bytes=1000, keys=10
        )
        assert len(produced["acked"]) == MISSED_RECORDS, produced["errors"][:5]

        began = time.monotonic()
        cluster.start_node(follower.name)
        poll(lambda: broker_state(cluster, follower) == 3, f"{follower.name} never RUNNING")
        print(f"{follower.name} RUNNING {time.monotonic() - began:.1f} s after its start")
        # Running and serving, yet still fetching what it missed: the kubelet never sees it
        # ready, for as long as it is out of the in-sync set; the replicas in it are ready.
        probe = readiness_probe(cluster, follower)
        successes_in_a_row, answers = 0, []
        for _ in range(5):
            checked = time.monotonic()
            isr = cluster.client("describe", topic="catchup")["partitions"]["0"]["isrs"]
            assert follower_id not in isr, "the throttle let the follower catch up already"
            answers.append(ready(cluster, follower))
            successes_in_a_row = successes_in_a_row + 1 if answers[-1] else 0
            assert successes_in_a_row < probe["successThreshold"], "a lagging broker is ready"
            assert all(ready(cluster, b) for b in in_sync)
            time.sleep(max(0.0, probe["periodSeconds"] - (time.monotonic() - checked)))
        print(f"the lagging {follower.name}'s probe, every {probe['periodSeconds']} s: {answers}")
    finally:
        cluster.client("alter_configs", resource="topic", name="catchup", delete=list(throttled))
        cluster.client("alter_configs", resource="broker", name=follower_id, delete=list(throttle))
    began = time.monotonic()
    poll(
        lambda: ready(cluster, follower),
        lambda: (
            f"{follower.name} never ready once unthrottled:\n{probe_figures(cluster, follower)}"
        ),
    )
    print(f"{follower.name} ready {time.monotonic() - began:.1f} s after the throttle went")
    described = wait_full_isr(cluster, "catchup", 1, timeout=30)
    assert follower_id in described["partitions"]["0"]["isrs"]
