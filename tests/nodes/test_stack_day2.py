"""Day-2 operations on the rendered stack's pods, each under an idempotent acks=all load from
the client pod: leader failover, a rolling config change through `pulumi up`, a zone's node
drained, a zone's node lost. Figures are printed (bench/day2.py reports the same); nothing here
is timed."""

from __future__ import annotations

import statistics

from infra.localcluster.deployed import DeployedStack
from infra.localcluster.disruptions import (
    below,
    leader_failover,
    min_isr_seen,
    other_broker_cpu,
    rolling_change,
)
from infra.localcluster.drain import drain_zone
from infra.localcluster.node_loss import lose_node

TRIALS = 10


def test_deleting_the_leaders_pod_loses_no_acknowledged_record(
    deployed_stack: DeployedStack,
) -> None:
    failover = leader_failover(deployed_stack, "proof-failover", trials=TRIALS)
    load = failover.load
    assert len(failover.trials) == TRIALS
    assert load.acked and load.lost == [], f"{len(load.lost)} acknowledged records lost"
    assert load.disorder == []
    # Every trial's pod came back Ready through its own probes (wait_replaced_and_ready).
    stalls = sorted(t.stall_s for t in failover.trials)
    ready = sorted(t.ready_s for t in failover.trials)
    print(
        f"\nleader pod deleted {TRIALS}x under load ({len(load.acked)} acked, 0 lost): longest "
        f"write stall min {stalls[0]:.1f}s median {statistics.median(stalls):.1f}s max "
        f"{stalls[-1]:.1f}s; pod back Ready median {statistics.median(ready):.0f}s"
    )


def test_a_config_change_rolls_brokers_one_at_a_time_above_min_isr(
    deployed_stack: DeployedStack,
) -> None:
    min_isr = deployed_stack.model.config.min_insync_replicas
    roll = rolling_change(deployed_stack, "proof-roll", other_broker_cpu)
    assert roll.load.acked and roll.load.lost == [] and roll.load.disorder == []
    # Every broker restarted, each only after the previous one was Ready again.
    assert len(roll.restarts) == len(deployed_stack.model.brokers), roll.restarts
    for (_, _, ready), (name, started, _) in zip(roll.restarts, roll.restarts[1:], strict=False):
        assert started >= ready, f"{name} started before the previous broker was Ready"
    assert len(roll.samples) >= 3, "the ISR watcher took too few samples to judge the roll"
    seen = min_isr_seen(roll.samples)
    assert seen >= min_isr, (
        f"a partition fell to {seen} in-sync replicas during the roll: "
        f"{below(roll.samples, min_isr)[:10]}; restarts {roll.restarts}"
    )
    print(
        f"\nrolling change: {len(roll.restarts)} brokers in {roll.seconds:.0f}s (pulumi up), "
        f"min ISR seen {seen} over {len(roll.samples)} samples, "
        f"{len(roll.load.acked)} acked, 0 lost"
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
    # The third node: the first runs the client pod and kube-proxy.
    loss = lose_node(deployed_stack, "proof-node-loss", index=2)
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
