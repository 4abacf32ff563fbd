"""Benchmark: growth 3 → 5 brokers on real Kafka, then `kafkastack rebalance` under a
replication throttle, while an idempotent acks=all producer writes.

    sudo .venv/bin/python bench/rebalance.py [--throttle 2] [--records 4000] [--value-bytes 2000]

The cluster runs exactly as `kafkastack verify` starts it (network namespaces, the rendered
configs); `kafkastack rebalance` runs as an operator would, from the client host. Prints the
bytes the plan copied (in all and into the busiest receiving broker), the time until Kafka
reported every move done, the least time the throttle allows (busiest receiver's bytes /
throttle, since the throttle is a per-broker rate), the acknowledged records and how many of
them were not read back. No targets are asserted.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path
from typing import Any

from infra import render
from infra.config import parse_stack_config
from infra.verify.growth import GrowthRun, grow, stack_file
from infra.verify.processes import ProcessCluster
from spark_sizing.contract import SizingReport

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "infra" / "fixtures" / "sizing.json"
PER_BROKER = re.compile(r"bytes copied per receiving broker: (.*)")


def stack() -> dict[str, Any]:
    cluster = SizingReport.model_validate_json(FIXTURE.read_text()).cluster.model_dump(mode="json")
    cluster["brokers"] = 5
    return {
        "platform": "local",
        "zones": ["a", "b", "c"],
        "brokers": 5,
        "external": {"mode": "none"},
        "network": {"mode": "single"},
        "sizing": {"schema_version": "1.0", "source": "bench", "cluster": cluster},
    }


def figures(run: GrowthRun) -> dict[str, float]:
    found = PER_BROKER.search(run.output)
    into = [int(pair.split(":")[1]) for pair in found.group(1).split(", ")] if found else [0]
    consumed = {r[1] for r in run.consumed}
    return {
        "bytes_moved": run.bytes_moved,
        "busiest_receiver_bytes": max(into),
        "seconds": run.seconds,
        "throttle_floor_s": max(into) / run.throttle_bytes,
        "acked": len(run.acked),
        "lost": sum(1 for a in run.acked if a[1] not in consumed),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--throttle", type=float, default=2.0, help="MB/s (10^6 B/s)")
    parser.add_argument("--records", type=int, default=4000)
    parser.add_argument("--value-bytes", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kafkastack-bench-") as tmp:
        root = Path(tmp)
        values = stack()
        stacks = root / "stacks"
        stack_file(stacks, "local", values)
        render.write(parse_stack_config(values, "local"), root / "render")
        cluster = ProcessCluster(root / "render", root / "run")
        try:
            cluster.start()
            run = grow(
                cluster,
                stacks,
                "local",
                "bench-growth",
                args.throttle,
                records=args.records,
                value_bytes=args.value_bytes,
            )
        finally:
            cluster.close()
    found = figures(run)
    print(f"throttle: {args.throttle:g} MB/s per broker")
    busiest = found["busiest_receiver_bytes"]
    print(f"bytes moved: {found['bytes_moved']:.0f} ({busiest:.0f} into the busiest receiver)")
    print(f"time: {found['seconds']:.1f} s (throttle floor {found['throttle_floor_s']:.1f} s)")
    print(f"throttle honoured: {found['seconds'] >= found['throttle_floor_s']}")
    print(f"acked records: {found['acked']:.0f}, lost: {found['lost']:.0f}")


if __name__ == "__main__":
    main()
