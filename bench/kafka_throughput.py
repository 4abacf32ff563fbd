"""Benchmark: Kafka's ProducerPerformance/ConsumerPerformance (RF 3, acks=all) on the rendered
configuration and on Kafka's stock defaults, same machine, alternating runs.

    sudo .venv/bin/python bench/kafka_throughput.py [--records 200000] [--rounds 2]

The rendered cluster runs exactly as `kafkastack verify` starts it (network namespaces, mTLS
replication, SCRAM clients); the stock cluster runs the same brokers with only the settings
Kafka cannot start without (ids, listeners, quorum, log dirs) and the same security, so the
comparison isolates the tuning. Prints MB/s (10^6 B/s), records/s,
p50/p99 latency and the rendered/stock ratio. No targets are asserted.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

from infra import render
from infra.config import parse_stack_config
from infra.verify import throughput
from infra.verify.processes import ProcessCluster
from spark_sizing.contract import SizingReport

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "infra" / "fixtures" / "sizing.json"
STOCK_KEEP = (
    "process.roles",
    "node.id",
    "broker.id",
    "listeners",
    "advertised.listeners",
    "listener.security.protocol.map",
    "inter.broker.listener.name",
    "controller.listener.names",
    "controller.quorum.bootstrap.servers",
    "metadata.log.dir",
    "log.dirs",
    "zookeeper.connect",
    "broker.rack",
    "ssl.",
    "sasl.",
    "listener.name.",
)


def stack() -> dict[str, Any]:
    cluster = SizingReport.model_validate_json(FIXTURE.read_text()).cluster.model_dump(mode="json")
    return {
        "platform": "local",
        "zones": ["a", "b", "c"],
        "brokers": 3,
        "external": {"mode": "none"},
        "network": {"mode": "dual", "replication": {"cidr": "10.20.0.0/24"}},
        "sizing": {"schema_version": "1.0", "source": "bench", "cluster": cluster},
    }


def strip_to_stock(render_dir: Path) -> None:
    """Keep only what a broker needs to start here; every tuning falls back to Kafka's default."""
    for path in render_dir.glob("config/*/*/*.properties"):
        kept = [
            line
            for line in path.read_text().splitlines()
            if line.startswith(STOCK_KEEP) or line.startswith("#") or not line.strip()
        ]
        path.write_text("\n".join(kept) + "\n")


def run_round(cluster: ProcessCluster, records: int, work: Path, label: str) -> dict[str, float]:
    topic = f"bench-{label}-{len(list(work.iterdir()))}"
    throughput.create_topic(cluster, topic, partitions=6, rf=3)
    produced = throughput.produce(cluster, topic, records, work)
    consumed = throughput.consume(cluster, topic, records, work)
    return {
        "produce_mb_s": produced.mb_s,
        "records_s": produced.records_s,
        "p50_ms": produced.p50_ms,
        "p99_ms": produced.p99_ms,
        "consume_mb_s": consumed.mb_s,
    }


def start(root: Path, stock: bool) -> ProcessCluster:
    config = parse_stack_config(stack(), "local")
    render.write(config, root / "render")
    if stock:
        strip_to_stock(root / "render")
    cluster = ProcessCluster(root / "render", root / "run", heap_mb=1024)
    cluster.start()
    return cluster


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {"rendered": [], "stock": []}
    with tempfile.TemporaryDirectory(prefix="kafkastack-bench-") as tmp:
        for round_no in range(args.rounds):
            for label in ("rendered", "stock"):  # alternate, so drift hits both alike
                root = Path(tmp) / f"{label}-{round_no}"
                root.mkdir()
                cluster = start(root, stock=label == "stock")
                try:
                    results[label].append(run_round(cluster, args.records, root, label))
                finally:
                    cluster.close()
    header = ("config", "produce MB/s", "records/s", "p50 ms", "p99 ms", "consume MB/s")
    print(f"{header[0]:<10}" + "".join(f"{h:>14}" for h in header[1:]))
    medians = {}
    for label, rows in results.items():
        medians[label] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        m = medians[label]
        print(
            f"{label:<10}{m['produce_mb_s']:>14.1f}{m['records_s']:>14.0f}{m['p50_ms']:>14.0f}"
            f"{m['p99_ms']:>14.0f}{m['consume_mb_s']:>14.1f}"
        )
    ratio = medians["rendered"]["produce_mb_s"] / medians["stock"]["produce_mb_s"]
    print(f"rendered/stock produce throughput ratio: {ratio:.2f} (goal ≥ 1.0)")


if __name__ == "__main__":
    main()
