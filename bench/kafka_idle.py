"""What an idle Kafka cluster costs a minute, with Kafka's idle polling and with the committed
local stack's (`polling`: an idle follower's fetch wait, the active controller's no-op
interval), each cluster started as `kafkastack verify` starts it (the kafka tier's harness:
network namespaces, TLS replication, SCRAM clients, the JMX agent, the pods' sidecars; no
HAProxy).

Each round renders the local-like stack with 3 brokers and 3 controllers, starts it, creates
topics (`--partitions` in all, RF 3), waits until every replica is in sync, then counts the
CPU-seconds its servers and sidecars spend over `--seconds` (from /proc). Kafka's defaults and
the local stack's alternate, so drift hits both alike. Prints figures only.

    sudo .venv/bin/python bench/kafka_idle.py [--rounds 2] [--seconds 120] [--partitions 60]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from infra import render
from infra.config import load_stack, parse_stack_config
from infra.verify.cpu_time import group_cpu_seconds
from infra.verify.processes import ProcessCluster
from spark_sizing.contract import SizingReport

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "infra" / "fixtures" / "sizing.json"
PARTITIONS_PER_TOPIC = 10


def stack(polling: dict[str, Any]) -> dict[str, Any]:
    cluster = SizingReport.model_validate_json(FIXTURE.read_text()).cluster.model_dump(mode="json")
    local = load_stack(ROOT / "stacks", "local")
    return {
        "platform": "local",
        "zones": ["a", "b", "c"],
        "brokers": 3,
        "quorum": {"kind": "kraft", "nodes": 3},
        "external": {"mode": "none"},
        "network": {"mode": "dual", "replication": {"cidr": "10.20.0.0/24"}},
        "resources": {"server_jvm_options": local.resources.server_jvm_options},
        "polling": polling,
        "sizing": {"schema_version": "1.0", "source": "bench", "cluster": cluster},
    }


def in_sync(partitions: dict[str, dict[str, Any]]) -> bool:
    whole = len(partitions) == PARTITIONS_PER_TOPIC
    return whole and all(len(p["isrs"]) == 3 for p in partitions.values())


def idle_cost(polling: dict[str, Any], root: Path, partitions: int, seconds: float) -> float:
    """CPU-seconds a minute of every process the cluster runs, idle."""
    config = parse_stack_config(stack(polling), "local")
    render.write(config, root / "render")
    cluster = ProcessCluster(root / "render", root / "run")
    cluster.start()
    try:
        topics = [f"idle-{n}" for n in range(partitions // PARTITIONS_PER_TOPIC)]
        for topic in topics:
            cluster.client("create_topic", topic=topic, partitions=PARTITIONS_PER_TOPIC, rf=3)
        for topic in topics:  # counted once every follower fetches: all in sync
            while not in_sync(cluster.client("describe", topic=topic)["partitions"]):
                time.sleep(0.5)
        # Each server and sidecar leads a process group of its own (its mount script, then java).
        groups = [
            process.pid
            for node in cluster.nodes
            for process in [*node.sidecars, *([node.process] if node.process else [])]
        ]
        before = group_cpu_seconds(groups)
        time.sleep(seconds)  # the window measured
        spent = group_cpu_seconds(groups) - before
    finally:
        cluster.close()
    return spent * 60 / seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--partitions", type=int, default=60)
    args = parser.parse_args()
    if args.partitions <= 0 or args.partitions % PARTITIONS_PER_TOPIC:
        parser.error(
            f"--partitions: a positive multiple of {PARTITIONS_PER_TOPIC}, each topic's count"
        )
    local = load_stack(ROOT / "stacks", "local").polling.model_dump(exclude_none=True)
    variants = {"Kafka's defaults": {}, f"local stack's {local}": local}
    results: dict[str, list[float]] = {label: [] for label in variants}
    with tempfile.TemporaryDirectory(prefix="kafkastack-bench-") as tmp:
        for round_no in range(args.rounds):
            for n, (label, polling) in enumerate(variants.items()):
                root = Path(tmp) / f"{round_no}-{n}"
                root.mkdir()
                results[label].append(idle_cost(polling, root, args.partitions, args.seconds))
    for label, costs in results.items():
        print(
            f"{label}: {statistics.median(costs):.2f} CPU-s a minute idle "
            f"(3 brokers, 3 controllers, {args.partitions} partitions; rounds: "
            f"{', '.join(f'{c:.2f}' for c in costs)})"
        )


if __name__ == "__main__":
    main()
