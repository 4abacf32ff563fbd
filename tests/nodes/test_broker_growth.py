"""More brokers on real nodes: 3 → 5 through `pulumi up` under an acks=all load, then
`kafkastack rebalance --stack local`, run as an operator runs it, moves replicas onto the new
brokers, racks apart, throttled, losing nothing.

The throttle is seen in the move's duration: each new broker copies about 12 MB at 0.25 MB/s.
Kafka's replication quota measures its rate over at least ten one-second windows (of eleven),
and lets a whole fetch through while the rate it measures is within the quota: up to 1 MiB
(`replica.fetch.max.bytes`) of each throttled partition the fetch asks for. So each cycle of
eleven seconds may carry ten windows' worth plus a fetch's worth of each such partition (5.6
MB here with three of the bulk topic's), and B bytes take at least eleven seconds for each
cycle after the first. The busiest receiving broker copies about two cycles' worth, and the
move must last at least that (unthrottled, the same bytes move in a few seconds on this
machine). Asking for B / throttle failed on a fast machine: 12.6 MB moved in 18.3 s with the
bulk topic at 12 MB, where that asked for 20.1 s.

The growth creates the two brokers, one after the other, and restarts no running one: the
variant's brokers are also its KRaft voters, and a change of the voter set restarts nobody
(docs/provisioning.md, "A changed voter set restarts nobody"); each new broker joins the voter
set through its own `quorum-membership` container. Kafka places nothing on a new broker by
itself: before the rebalance, the topic lives on the three old ones.

It grows the session's deployment of the local stack, after the tests that keep it as it is,
and releases it (`stack_to_change`): the cluster then holds their topics too, which the
rebalance spreads over the new brokers with the proof's own.

The CLI runs on this host, whose resolver knows nothing of the cluster: it gets the cluster's
DNS as its resolver in a mount namespace of its own (`host_clients.with_cluster_dns`), as an
operator's machine resolves the brokers' advertised names through its own DNS. Its login is
the stack's admin, from the stack's Secrets."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infra.localcluster import host_clients
from infra.localcluster.deployed import DeployedStack
from infra.localcluster.disruptions import (
    overlapping_starts,
    read_back,
    roll_report,
    rolling_change,
    set_brokers,
)
from infra.localcluster.isr_watch import min_isr_seen
from infra.localcluster.nodes import RealNodes
from infra.localcluster.real_stack import BROKERS
from infra.model import labels
from infra.voter_removal import VoterSet, kubectl_exec
from tests.nodes.pods import restarts

GROWN = BROKERS + 2
TOPIC = "growth"
PARTITIONS = 6
# Bulk data beside the keyed records, for the throttle to show: about 12 MB reach each new broker.
BULK = "bulk"
BULK_MB = 24
THROTTLE_MB_S = 0.25
QUOTA_WINDOWS = 10  # Kafka's replication quota: 11 one-second samples, rated over at least 10
QUOTA_CYCLE_S = 11
FETCH_BYTES = 1_048_576  # replica.fetch.max.bytes, Kafka's default (the stack leaves it)
# The margin covers the progress poll's rounding.
THROTTLE_MARGIN = 0.8
MOVED = re.compile(r"moved (\d+) bytes in ([\d.]+) s")
PLANNED = re.compile(r"^  (.+)-\d+: \[[\d,]+\] -> \[([\d,]+)\]$", re.MULTILINE)
COPIED = re.compile(r"bytes copied per receiving broker: (.*)")


def rebalance(stack: DeployedStack, folder: Path, *extra: str) -> str:
    """`kafkastack rebalance --stack local` with the variant's stack file, throttled, from this
    host with the cluster's DNS; what it printed (it must exit 0)."""
    model = stack.model
    login = host_clients.admin_login(stack.kube, model, folder)
    command = [
        str(Path(sys.executable).parent / "kafkastack"),
        *("rebalance", "--stack", "local", "--stacks-dir", str(stack.stack_file.parent)),
        *("--bootstrap", f"{model.names.bootstrap_dns}:{model.ports.client}"),
        *("--client-config", str(host_clients.write_login(login, folder / "admin.conf"))),
        *("--throttle", str(THROTTLE_MB_S), *extra),
    ]
    done = subprocess.run(
        host_clients.with_cluster_dns(folder, model.config.namespace, command),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.timeout(1800)
def test_new_brokers_take_replicas_through_rebalance_losing_nothing(
    stack_to_change: DeployedStack,
    real_nodes: RealNodes,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    added = []
    stack = stack_to_change
    monkeypatch.setenv("KUBECONFIG", str(stack.kube.kubeconfig))  # VoterSet's kubectl
    try:
        client = stack.client()
        client.create_topic(TOPIC, partitions=PARTITIONS)
        client.wait_isr(TOPIC, BROKERS)
        before_acked, errors = client.produce(TOPIC, 6000)
        assert before_acked and not errors, errors
        client.create_topic(BULK, partitions=PARTITIONS)
        client.fill(BULK, BULK_MB)
        added = real_nodes.add(GROWN - BROKERS)  # zones in turn: the new brokers' zones

        grow = rolling_change(stack, "proof-growth-up", set_brokers(GROWN))

        model = stack.model
        new = [model.names.pod(b.workload) for b in model.brokers[BROKERS:]]
        # Only the two new brokers started, one after the other; no running one restarted.
        assert [name for name, _, _ in grow.restarts] == new, grow.restarts
        assert overlapping_starts(grow.restarts) == [], grow.restarts
        assert min_isr_seen(grow.samples) >= model.config.min_insync_replicas, roll_report(
            stack, grow
        )
        assert grow.load.acked and grow.load.lost == [] and grow.load.disorder == []
        nodes = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in stack.pods(labels.BROKER)}
        assert {nodes[name] for name in new} == {n.name for n in added}, nodes
        voters = VoterSet(model, kubectl_exec(stack.namespace)).voters()
        assert sorted(voters) == [b.node_id for b in model.brokers], voters
        old_holders = {
            b for state in client.describe(TOPIC)[TOPIC].values() for b in state.replicas
        }
        assert old_holders == {b.node_id for b in model.brokers[:BROKERS]}, old_holders
        print(
            f"\nbrokers {BROKERS} → {GROWN} through pulumi up in {grow.seconds:.0f} s: "
            f"{' then '.join(new)} created, no running pod restarted; min ISR "
            f"{min_isr_seen(grow.samples)}, {len(grow.load.acked)} acked, 0 lost"
        )

        pods_before = restarts(stack)
        run = f"{TOPIC}-load"
        client.start_producer(run, TOPIC, 100)
        began = time.monotonic()
        try:
            output = rebalance(stack, tmp_path / "rebalance")
            seconds = time.monotonic() - began
        finally:
            acked, errors = client.stop_producer(run)
        throttle = round(THROTTLE_MB_S * 1_000_000)
        assert f"throttled at {throttle} B/s" in output, output
        moved, copied = MOVED.search(output), COPIED.search(output)
        assert moved and copied, output
        pairs = (pair.split(":") for pair in copied.group(1).split(", "))
        per_broker = {int(broker): int(size) for broker, size in pairs}
        receiver = max(per_broker, key=lambda broker: per_broker[broker])
        busiest = per_broker[receiver]
        # The partitions with data enough for a whole fetch that it receives (the others hold
        # a few kB each, which the margin covers).
        fetched = sum(
            1
            for topic, now in PLANNED.findall(output)
            if topic in (TOPIC, BULK) and str(receiver) in now.split(",")
        )
        cycle = QUOTA_WINDOWS * throttle + fetched * FETCH_BYTES
        assert busiest > cycle, (per_broker, fetched)  # beyond one cycle's allowance
        move_seconds = float(moved.group(2))
        least = QUOTA_CYCLE_S * (math.ceil(busiest / cycle) - 1)
        assert move_seconds >= THROTTLE_MARGIN * least, output
        racks = {b.node_id: b.zone for b in model.brokers}
        after = client.wait_isr(TOPIC, 3)
        for state in after.values():
            assert len({racks[b] for b in state.replicas}) == 3, after  # one replica per zone
        assert {b for s in after.values() for b in s.replicas} == set(racks), after
        leaders = {s.leader for s in after.values()}
        assert len(leaders) >= 4, after  # leadership spread beyond the three old brokers
        # The brokers carried the throttle while replicas moved (the move's duration above);
        # Kafka's tool lifted it at the end.
        assert client.throttles(sorted(racks)) == {b: {} for b in racks}
        load = read_back(client, TOPIC, before_acked + acked, errors)
        assert load.errors == [] and load.lost == [] and load.disorder == [], load.errors
        # Balanced now: a second plan moves nothing of either topic.
        again = rebalance(stack, tmp_path / "again", "--dry-run")
        assert f"  {TOPIC}-" not in again and f"  {BULK}-" not in again, again
        # Shown, not asserted: a CI run found broker 3 out of the metadata as the rebalance
        # began (the command now waits for it); whether a pod restarted then is the clue.
        restarted = sorted(
            name for name, pod in restarts(stack).items() if pod != pods_before.get(name)
        )
        waited = [line for line in output.splitlines() if line.startswith("waiting for broker")]
        waits = "; ".join(waited) or "no wait for a broker"
        print(f"broker pods restarted during the rebalance: {restarted or 'none'}; {waits}")
        print(
            f"kafkastack rebalance: {moved.group(1)} bytes moved in {move_seconds:.1f} s at "
            f"{THROTTLE_MB_S} MB/s ({seconds:.0f} s with the CLI's start); the busiest new "
            f"broker copied {busiest} B, {busiest / move_seconds / 1e6:.2f} MB/s; replicas on all "
            f"{GROWN} brokers, racks apart; {len(load.acked)} acked, 0 lost"
        )
    finally:
        try:
            stack.release()
        finally:
            real_nodes.remove(added)
