"""Day-2 operations on the rendered stack's pods, each under an idempotent acks=all load from
the client pod: leader failover, a zone's node drained, a zone's node lost (while it is down, a
change is previewed with a warning and refused by `pulumi up`). Figures are printed
(bench/day2.py reports the same); nothing here is timed. A rolling change through `pulumi up` is
proven on the production shape, controllers of their own (test_dedicated_controllers.py); this
variant's combined brokers roll the same way (bench/day2.py measures it)."""

from __future__ import annotations

import statistics
import time

import pytest

from infra.config_base import NAMESPACE
from infra.engine import EngineError
from infra.localcluster.deployed import DeployedStack
from infra.localcluster.disruptions import leader_failover, other_broker_cpu
from infra.localcluster.drain import drain_zone
from infra.localcluster.node_loss import lose_node
from infra.model import stop_gate
from infra.unready_nodes import OVERRIDE_KEY, PREVIEW_WARNING
from tests.objects import uids

TRIALS = 10


def test_deleting_the_leaders_pod_loses_no_acknowledged_record(
    deployed_stack: DeployedStack,
) -> None:
    began = time.time()
    failover = leader_failover(deployed_stack, "proof-failover", trials=TRIALS)
    load = failover.load
    assert len(failover.trials) == TRIALS
    assert load.acked and load.lost == [], f"{len(load.lost)} acknowledged records lost"
    assert load.disorder == []
    # Each deleted broker's preStop hook (stop_gate.py) ran in the real image and let the stop
    # go on: a hook that failed or gave up would be the kubelet's FailedPreStopHook event.
    assert deployed_stack.events(stop_gate.FAILED_EVENT, since=began) == []
    # Every trial's pod came back Ready through its own probes (wait_replaced_and_ready).
    stalls = sorted(t.stall_s for t in failover.trials)
    ready = sorted(t.ready_s for t in failover.trials)
    print(
        f"\nleader pod deleted {TRIALS}x under load ({len(load.acked)} acked, 0 lost): longest "
        f"write stall min {stalls[0]:.1f}s median {statistics.median(stalls):.1f}s max "
        f"{stalls[-1]:.1f}s; pod back Ready median {statistics.median(ready):.0f}s"
    )


def test_draining_a_zones_node_keeps_min_isr_and_the_budget_holds(
    deployed_stack: DeployedStack,
) -> None:
    node = deployed_stack.nodes.specs[1].name  # the client pod runs on the first node
    drain = drain_zone(deployed_stack, "proof-drain", node)
    assert "disruption budget" in drain.second_eviction, drain.second_eviction
    assert drain.written_while_down == 200
    assert drain.min_isr >= deployed_stack.model.config.min_insync_replicas
    assert drain.load.lost == [] and drain.load.disorder == []
    print(
        f"\ndrained {node} ({drain.evicted} evicted): second eviction refused, min ISR "
        f"{drain.min_isr}, caught up {drain.caught_up_s:.0f}s after uncordon, "
        f"{len(drain.load.acked)} acked, 0 lost"
    )


def test_a_zones_node_lost_under_load_comes_back_and_its_broker_catches_up_by_itself(
    deployed_stack: DeployedStack,
) -> None:
    stack = deployed_stack

    def change_while_down(broker_pod: str) -> None:
        """A change that would roll the brokers, while one is down: the preview shows it and
        says `pulumi up` would be refused now; the up is refused before touching anything."""
        saved = stack.stack_file.read_text(encoding="utf-8")
        workloads = uids(stack.kube, stack.namespace, "statefulsets")
        pods = uids(stack.kube, stack.namespace, "pods")
        try:
            stack.edit(other_broker_cpu)
            preview = stack.preview()
            rolled = {s.name for s in preview.steps if s.op == "update" and s.kind == "StatefulSet"}
            assert len(rolled) >= len(stack.model.brokers), preview.steps
            said = " ".join(preview.warnings)
            assert PREVIEW_WARNING in said and f"{broker_pod.rsplit('-', 1)[0]} (0/1 Ready)" in said
            with pytest.raises(EngineError) as refused:
                stack.change(lambda values: None)
            message = " ".join(str(refused.value).split())
            assert f"{NAMESPACE}:{OVERRIDE_KEY}: not applying this change while" in message
            assert uids(stack.kube, stack.namespace, "statefulsets") == workloads
            assert uids(stack.kube, stack.namespace, "pods") == pods
        finally:
            stack.stack_file.write_text(saved, encoding="utf-8")
            stack.edit(lambda values: None)

    # The third node: the first runs the client pod and kube-proxy.
    loss = lose_node(stack, "proof-node-loss", index=2, while_down=change_while_down)
    min_isr = deployed_stack.model.config.min_insync_replicas
    # The other two zones kept serving acks=all writes, to the connected producer throughout
    # and to a new one once the control plane had noticed the loss.
    assert loss.written_while_down == 200
    assert loss.min_isr >= min_isr, loss.min_isr
    assert loss.load.lost == [] and loss.load.disorder == []
    # Nobody replaced or restarted anything by hand: the same pod came back on its node.
    assert loss.same_pod
    print(
        f"\nlost {loss.node} ({loss.broker}): out of the ISR {loss.shrunk_s:.0f}s and noticed "
        f"by the control plane {loss.noticed_s:.0f}s after the loss, longest write stall "
        f"{loss.stall_s:.1f}s, min ISR {loss.min_isr}, caught up {loss.caught_up_s:.0f}s after "
        f"the node came back, {len(loss.load.acked)} acked, 0 lost"
    )
