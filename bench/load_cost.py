"""Benchmark: what the day-2 proofs' producer load costs the machine, by rate. Prints figures,
asserts nothing. Needs root, the nodes toolchain and images (`make nodes-toolchain images`); it
uses the nodes tier's cluster name (it replaces a cluster of that name), so run it while no
suite runs:

    sudo .venv/bin/python bench/load_cost.py [--rates 0,20,50,100] [--seconds 60]

The local stack on three real nodes, one topic of three partitions, then per rate the same
VerifiableProducer the proofs run (idempotent, acks=all, from the client pod) for `--seconds`:
the CPU-seconds the whole machine and the three brokers' JVMs used meanwhile (rate 0: no
producer). Where LOAD_RECORDS_PER_S (infra/localcluster/disruptions.py) comes from.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from infra.localcluster.deployed import DeployedStack  # noqa: E402
from infra.localcluster.nodes import fresh_real_nodes  # noqa: E402
from infra.verify.cpu_time import machine_busy_seconds, process_cpu_seconds  # noqa: E402

TOPIC = "bench-load-cost"
BROKER_CLASS = "kafka.Kafka"


def broker_cpu_s() -> dict[int, float]:
    """Each broker JVM's user + system CPU so far, by pid."""
    found = subprocess.run(["pgrep", "-f", BROKER_CLASS], capture_output=True, text=True)
    seconds = {int(pid): process_cpu_seconds(int(pid)) for pid in found.stdout.split()}
    return {pid: used for pid, used in seconds.items() if used is not None}


def window(seconds: float) -> tuple[float, list[float]]:
    """The machine's busy CPU-seconds over `seconds`, and each broker's that ran throughout."""
    machine, brokers = machine_busy_seconds(), broker_cpu_s()
    time.sleep(seconds)
    after = broker_cpu_s()
    used = sorted(after[p] - brokers[p] for p in brokers if p in after)
    return machine_busy_seconds() - machine, used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="0,20,50,100", help="records/s, comma-separated")
    parser.add_argument("--seconds", type=float, default=60, help="each rate's window")
    parser.add_argument("--settle", type=float, default=30, help="before the first window")
    args = parser.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    with (
        fresh_real_nodes() as nodes,
        tempfile.TemporaryDirectory(prefix="kafkastack-load-cost-") as tmp,
    ):
        stack = DeployedStack(nodes, REPO / "stacks" / "Pulumi.local.yaml", Path(tmp))
        stack.ensure()
        client = stack.client()
        client.create_topic(TOPIC, partitions=3)
        client.wait_isr(TOPIC, len(stack.model.brokers))
        time.sleep(args.settle)  # the start's own work (compiling, first fetches) ends
        for rate in rates:
            run = f"{TOPIC}-{rate}"
            if rate:
                client.start_producer(run, TOPIC, rate)
            machine, brokers = window(args.seconds)
            acked = len(client.stop_producer(run)[0]) if rate else 0
            print(
                f"{rate:4d} records/s ({acked} acked): machine {machine:.1f} CPU-s, brokers "
                f"{sum(brokers):.1f} ({', '.join(f'{b:.1f}' for b in brokers)}) "
                f"per {args.seconds:.0f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
