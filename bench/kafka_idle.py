"""What an idle Kafka cluster costs a minute, with Kafka's idle polling and with the committed
local stack's (`polling`: an idle follower's fetch wait, the active controller's no-op
interval), each cluster started as `kafkastack verify` starts it (the kafka tier's harness:
network namespaces, TLS replication, SCRAM clients, the JMX agent, the pods' sidecars).

Each round renders the local-like stack with 3 brokers and 3 controllers, starts it, creates
topics (`--partitions` in all, RF 3), lets it settle, then counts the CPU-seconds every process
it started spends over `--seconds` (from /proc). Kafka's defaults and the local stack's
alternate, so drift hits both alike. Prints figures only.

    sudo .venv/bin/python bench/kafka_idle.py [--rounds 2] [--seconds 120] [--partitions 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from infra import render
from infra.config import load_stack, parse_stack_config
from infra.verify.processes import ProcessCluster
from spark_sizing.contract import SizingReport

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "infra" / "fixtures" / "sizing.json"
TICKS = os.sysconf("SC_CLK_TCK")


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


def descendants_cpu(root: int) -> dict[int, tuple[str, float]]:
    """pid → (command, CPU-seconds) of every live process below `root`."""
    parents: dict[int, int] = {}
    seen: dict[int, tuple[str, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        command = text[text.index("(") + 1 : text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        parents[int(entry.name)] = int(fields[1])
        seen[int(entry.name)] = (command, (int(fields[11]) + int(fields[12])) / TICKS)

    def below(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == root:
                return True
        return False

    return {pid: value for pid, value in seen.items() if below(pid)}


def in_sync(partitions: dict[str, dict[str, Any]]) -> bool:
    return len(partitions) == 10 and all(len(p["isrs"]) == 3 for p in partitions.values())


def idle_cost(polling: dict[str, Any], root: Path, partitions: int, seconds: float) -> float:
    """CPU-seconds a minute of every process the cluster runs, idle."""
    config = parse_stack_config(stack(polling), "local")
    render.write(config, root / "render")
    cluster = ProcessCluster(root / "render", root / "run")
    cluster.start()
    try:
        topics = [f"idle-{n}" for n in range(partitions // 10)]
        for topic in topics:
            cluster.client("create_topic", topic=topic, partitions=10, rf=3)
        for topic in topics:  # counted once every follower fetches: all in sync
            while not in_sync(cluster.client("describe", topic=topic)["partitions"]):
                time.sleep(0.5)
        before = descendants_cpu(os.getpid())
        time.sleep(seconds)  # the window measured
        after = descendants_cpu(os.getpid())
    finally:
        cluster.close()
    spent = sum(cpu - before[pid][1] for pid, (_, cpu) in after.items() if pid in before)
    return spent * 60 / seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--partitions", type=int, default=60)
    args = parser.parse_args()
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
