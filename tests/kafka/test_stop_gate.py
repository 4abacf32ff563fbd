"""A broker's stop waits while it is all that keeps a partition at min.insync.replicas, on real
brokers (infra/model/stop_gate.py).

The broker container's rendered preStop hook runs as the kubelet runs it when the pod is
deleted: in the pod's namespaces, with the container's environment. The state it must hold a
stop in is made as it happened on real nodes: a replica's broker stops answering (SIGSTOP), falls
behind in the quorum leader's table within seconds, and is fenced for a missed heartbeat and
taken out of every in-sync set at 9 s; the partition is then in sync on min.insync.replicas
brokers, and stopping one of them would take it below. The hook must wait until the stopped
broker is back (SIGCONT) in the ISR and fetching, then let the stop go on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from infra.model import stop_gate
from infra.verify.errors import VerifyError
from infra.verify.processes import ProcessCluster
from tests.kafka.checks import (
    check_stop_where_waiting_cannot_help,
    create,
    finished,
    poll,
    wait_full_isr,
)

pytestmark = pytest.mark.kafka


def test_a_brokers_stop_waits_while_a_fenced_replica_leaves_it_holding_min_isr(
    restore: ProcessCluster, tmp_path: Path
) -> None:
    cluster = restore
    check_stop_where_waiting_cannot_help(cluster, "gate-full", tmp_path / "full")

    create(cluster, "gate", partitions=1)
    partition = cluster.client("describe", topic="gate")["partitions"]["0"]
    followers = [b for b in partition["replicas"] if b != partition["leader"]]
    away_id, holding_id = followers
    away, holding = cluster.broker_by_id(away_id), cluster.broker_by_id(holding_id)
    assert away.process is not None
    output = tmp_path / "held"
    hook: subprocess.Popen[str] | None = None
    os.killpg(away.process.pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        poll(
            lambda: away_id not in (isr(cluster, "gate") or [away_id]),
            f"{away.name} stayed in the ISR while stopped",
            # Fenced after broker.session.timeout.ms (9 s); a question that went to the stopped
            # broker first waits out its own timeout (30 s).
            timeout=150,
        )
        print(f"\n{away.name} out of the ISR {time.monotonic() - began:.1f} s after SIGSTOP")
        hook = cluster.pre_stop(holding.name, output)
        needed = f"would fall below min.insync.replicas without broker {holding_id}"
        poll(lambda: needed in output.read_text(), lambda: output.read_text())
        # Every partition it names misses the stopped broker (and it alone).
        assert f"away: {away_id}\n" in output.read_text(), output.read_text()
        assert stop_gate.WAITING in output.read_text(), output.read_text()
        assert hook.poll() is None, f"the stop went on: {output.read_text()}"
    except BaseException:
        if hook is not None and hook.poll() is None:
            os.killpg(hook.pid, signal.SIGKILL)
        raise
    finally:
        os.killpg(away.process.pid, signal.SIGCONT)
    resumed = time.monotonic()
    assert hook is not None
    status, said = finished(hook, output)
    print(f"{holding.name}'s stop held until {time.monotonic() - resumed:.1f} s after SIGCONT")
    assert status == 0 and said.rstrip().endswith(f"{stop_gate.FREE} {holding_id} to stay")
    assert stop_gate.GIVING_UP not in said, said
    # It let the stop go only once the partition no longer needed it.
    assert away_id in (isr(cluster, "gate") or []), said
    wait_full_isr(cluster, "gate", 1)


def isr(cluster: ProcessCluster, topic: str) -> list[int] | None:
    """The in-sync set of the topic's partition 0; None while the admin's question times out
    (it may have gone to the stopped broker, until the cluster fences it)."""
    try:
        found: list[int] = cluster.client("describe", topic=topic)["partitions"]["0"]["isrs"]
    except VerifyError:
        return None
    return found
