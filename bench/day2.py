"""Benchmark: day-2 operations of the local stack on three real nodes. Prints figures, asserts
nothing. Needs root, the nodes toolchain and images (`make nodes-toolchain images`); it uses the
nodes tier's cluster name (it replaces a cluster of that name), so run it while no suite runs:

    sudo .venv/bin/python bench/day2.py [--trials 10] [--rolls 1] [--only rolls] [--image-jvm]

The same machinery as tests/nodes/test_stack_day2.py (infra/localcluster/disruptions.py,
drain.py), each disruption under an idempotent acks=all VerifiableProducer of
LOAD_RECORDS_PER_S (20 records/s) in a client pod:
- leader failover: the partition leader's pod deleted, per trial the longest pause in
  acknowledgements and the time until the new pod is Ready;
- a rolling broker change through `pulumi up`: total duration, the order of restarts (and which
  node led the quorum before: it restarts last),
  the smallest in-sync set a watcher saw (`--rolls N` repeats it; `--image-jvm` runs the
  servers with the image's JVM defaults, C2 included, instead of the local stack's C1 options:
  where a roll's next stop used to catch a broker not yet back in the ISR);
- one zone's node drained and uncordoned: time for its broker to catch up;
- one zone's node lost (every process it runs killed at once) and booted again: when Kafka
  noticed and when the control plane did, the connected producer's longest pause, writes
  meanwhile, time for its broker to catch up.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from infra.localcluster.deployed import DeployedStack  # noqa: E402
from infra.localcluster.disruptions import (  # noqa: E402
    Load,
    leader_failover,
    other_broker_cpu,
    rolling_change,
)
from infra.localcluster.drain import drain_zone  # noqa: E402
from infra.localcluster.isr_watch import min_isr_seen  # noqa: E402
from infra.localcluster.node_loss import lose_node  # noqa: E402
from infra.localcluster.nodes import fresh_real_nodes  # noqa: E402


def spread(values: list[float]) -> str:
    ordered = sorted(values)
    return (
        f"min {ordered[0]:.1f} s, median {statistics.median(ordered):.1f} s, "
        f"max {ordered[-1]:.1f} s"
    )


def loss(load: Load) -> str:
    return f"{len(load.acked)} acked, {len(load.lost)} lost, {len(load.disorder)} out of order"


def rolled(stack: DeployedStack, topic: str) -> None:
    roll = rolling_change(stack, topic, other_broker_cpu)
    first = roll.restarts[0][1] if roll.restarts else time.time()
    order = ", ".join(f"{n} +{s - first:.0f}s→Ready +{r - first:.0f}s" for n, s, r in roll.restarts)
    print(f"rolling broker CPU request change (pulumi up): {roll.seconds:.0f} s")
    if roll.leader_before is not None and roll.restarts:
        last = roll.restarts[-1][0]
        print(f"  quorum leader before: node {roll.leader_before}; last restarted: {last}")
    print(f"  {loss(roll.load)}")
    print(f"  restarts: {order}")
    print(f"  min ISR seen: {min_isr_seen(roll.samples)} over {len(roll.samples)} samples")


def stack_file(image_jvm: bool, folder: Path) -> Path:
    """The local stack, or a copy of it without `resources.server_jvm_options`."""
    committed = REPO / "stacks" / "Pulumi.local.yaml"
    if not image_jvm:
        return committed
    document = yaml.safe_load(committed.read_text(encoding="utf-8"))
    del document["config"]["kafkastack:resources"]["server_jvm_options"]
    copy = folder / "stacks" / committed.name
    copy.parent.mkdir()
    copy.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return copy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10, help="leader failovers")
    parser.add_argument("--rolls", type=int, default=1, help="rolling config changes")
    parser.add_argument("--only", choices=("all", "rolls"), default="all")
    parser.add_argument("--image-jvm", action="store_true", help="the image's JVM defaults")
    args = parser.parse_args()
    with fresh_real_nodes() as nodes, tempfile.TemporaryDirectory(prefix="kafkastack-day2-") as tmp:
        stack_path = stack_file(args.image_jvm, Path(tmp))
        stack = DeployedStack(nodes, stack_path, Path(tmp) / "work")
        stack.ensure()
        print(f"stack Ready on 3 real nodes (pulumi up): {stack.deploy_seconds:.0f} s")
        if args.only == "all":
            failover = leader_failover(stack, "bench-failover", args.trials)
            print(f"leader pod deleted, {args.trials} trials ({loss(failover.load)}):")
            print(f"  longest pause in acks: {spread([t.stall_s for t in failover.trials])}")
            print(f"  pod back Ready:        {spread([t.ready_s for t in failover.trials])}")
        for i in range(args.rolls):
            rolled(stack, f"bench-roll-{i}")
        if args.only == "rolls":
            return
        drain = drain_zone(stack, "bench-drain", nodes.specs[1].name)
        print(
            f"drain {drain.node}: second eviction refused: "
            f"{'disruption budget' in drain.second_eviction}, min ISR {drain.min_isr}, "
            f"caught up {drain.caught_up_s:.0f} s after uncordon ({loss(drain.load)})"
        )
        lost = lose_node(stack, "bench-node-loss", index=2)
        print(
            f"lose {lost.node} (every process killed): broker out of the ISR after "
            f"{lost.shrunk_s:.0f} s, node noticed by the control plane after "
            f"{lost.noticed_s:.0f} s, longest write stall {lost.stall_s:.1f} s, "
            f"{lost.written_while_down} records acked while it was down, min ISR "
            f"{lost.min_isr}, caught up {lost.caught_up_s:.0f} s after it came back, same "
            f"pod: {lost.same_pod} ({loss(lost.load)})"
        )


if __name__ == "__main__":
    main()
