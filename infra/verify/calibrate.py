"""`kafkastack calibrate`: what this cluster's brokers carry, measured on the brokers started from
the stack's rendered configs (as `kafkastack verify` starts them), as a hardware profile.

Robust on a shared machine without timing anything against a target: warm-up rounds (JIT, page
cache, leader elections) are discarded until two in a row agree within `SETTLED` (at most
`MAX_WARMUPS`: on 2 cores one short round left the brokers' throughput still climbing by half
from one measured round to the next), each round writes to a fresh topic, the produce
figure is the median of the rounds, and CPU is what the broker processes really used (/proc),
whatever else the machine runs.
"""

from __future__ import annotations

import os
import socket
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from infra import render
from infra.stack_config import StackConfig
from infra.verify import network, throughput
from infra.verify.cpu_time import group_cpu_seconds
from infra.verify.errors import VerifyError
from infra.verify.processes import ProcessCluster
from spark_sizing.calibration import (
    MAX_WARMUPS,
    MEASURED_FIELDS,
    SETTLED,
    CalibrationRun,
    calibrated_profile,
    check_rounds,
    method,
)
from spark_sizing.profiles import HardwareProfile, Measured

# Heap per broker and controller here: enough for unthrottled 1 KiB produce, small enough for
# six JVMs beside the load tools on a developer machine.
HEAP_MB = 1024
PARTITIONS_PER_BROKER = 2


def measure(
    config: StackConfig,
    records: int,
    rounds: int,
    workdir: Path | None = None,
    warmups: int = MAX_WARMUPS,
) -> CalibrationRun:
    """Start the stack's rendered cluster here, run at most `warmups` warm-up rounds and
    `rounds` measured rounds of `records` records each (produce with acks=all, then consume),
    and stop it."""
    check_rounds(records, rounds, warmups)
    problem = network.available()
    if problem:
        raise VerifyError(problem)
    with tempfile.TemporaryDirectory(prefix="kafkastack-calibrate-") as tmp:
        root = workdir or Path(tmp)
        render.write(config, root / "render")
        cluster = ProcessCluster(root / "render", root / "run", heap_mb=HEAP_MB)
        try:
            cluster.start()
            return _rounds(cluster, config, records, rounds, root, warmups)
        finally:
            cluster.close()


def warm_up(
    cluster: ProcessCluster, partitions: int, rf: int, records: int, work: Path, most: int
) -> None:
    """Full rounds until the last two agree within `SETTLED` (or `most` ran)."""
    previous = None
    for number in range(most):
        topic = f"calibrate-warmup-{number}"
        throughput.create_topic(cluster, topic, partitions, rf)
        produced = throughput.produce(cluster, topic, records, work)
        throughput.consume(cluster, topic, produced.records, work)
        if previous is not None and abs(produced.mb_s - previous) <= SETTLED * previous:
            return
        previous = produced.mb_s


def _rounds(
    cluster: ProcessCluster,
    config: StackConfig,
    records: int,
    rounds: int,
    work: Path,
    warmups: int,
) -> CalibrationRun:
    brokers = len(cluster.brokers)
    rf = min(config.replication_factor, brokers)
    partitions = PARTITIONS_PER_BROKER * brokers
    warm_up(cluster, partitions, rf, records, work, warmups)
    groups = [n.process.pid for n in cluster.brokers if n.process is not None]
    produce_mb_s: list[float] = []
    produced_mb = consumed_mb = cpu_seconds = 0.0
    for round_no in range(rounds):
        topic = f"calibrate-{round_no}"
        throughput.create_topic(cluster, topic, partitions, rf)
        before = group_cpu_seconds(groups)
        produced = throughput.produce(cluster, topic, records, work)
        consumed = throughput.consume(cluster, topic, produced.records, work)
        cpu_seconds += group_cpu_seconds(groups) - before
        produce_mb_s.append(produced.mb_s)
        produced_mb += produced.payload_mb
        consumed_mb += consumed.payload_mb
    return CalibrationRun(
        brokers=brokers,
        replication_factor=rf,
        produce_mb_s=produce_mb_s,
        produced_mb=produced_mb,
        consumed_mb=consumed_mb,
        broker_cpu_seconds=cpu_seconds,
    )


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    for line in cpuinfo.read_text(errors="replace").splitlines():
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU model"


def calibrate(
    config: StackConfig,
    stack: str,
    base: HardwareProfile,
    records: int,
    rounds: int,
    workdir: Path | None = None,
    warmups: int = MAX_WARMUPS,
) -> HardwareProfile:
    """Measure, then the base profile with the measured figures and their provenance."""
    run = measure(config, records, rounds, workdir, warmups)
    run.check()
    provenance = Measured(
        measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        host=socket.gethostname(),
        cpu_model=cpu_model(),
        host_cpus=os.cpu_count() or 1,
        kafka_version=config.kafka_version,
        stack=stack,
        brokers=run.brokers,
        method=method(run.replication_factor, rounds, warmups),
        base_profile=base.name,
        fields=list(MEASURED_FIELDS),
        records=records,
        rounds=rounds,
        produce_mb_s=[round(v, 3) for v in run.produce_mb_s],
    )
    return calibrated_profile(base, run, provenance)
