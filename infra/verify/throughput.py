"""Kafka's own load tools against a started stack: ProducerPerformance (acks=all) and
ConsumerPerformance, run in the client host's network namespace with the admin's SCRAM login.

The one home of this machinery: `bench/kafka_throughput.py` compares tunings with it and
`kafkastack calibrate` (infra/verify/calibrate.py) measures what the brokers carry with it.
Figures come out in the model's units, MB/s = 10^6 B/s.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from infra.model.secret_text import java_login_properties
from infra.verify.errors import VerifyError
from infra.verify.processes import ProcessCluster
from spark_sizing.units import BYTES_PER_MB, mib_s_to_mb_s

RECORD_BYTES = 1024
PRODUCER = re.compile(
    r"([\d]+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\).*?"
    r"([\d.]+) ms 50th, [\d.]+ ms 95th, ([\d.]+) ms 99th"
)


@dataclass(frozen=True)
class Produced:
    """One ProducerPerformance run: payload throughput and what was acknowledged."""

    records: int
    mb_s: float
    records_s: float
    p50_ms: float
    p99_ms: float

    @property
    def payload_mb(self) -> float:
        return self.records * RECORD_BYTES / BYTES_PER_MB


@dataclass(frozen=True)
class Consumed:
    records: int
    mb_s: float

    @property
    def payload_mb(self) -> float:
        return self.records * RECORD_BYTES / BYTES_PER_MB


def parse_produced(output: str) -> Produced:
    """ProducerPerformance's last line. Its "MB/sec" is computed with 1024 × 1024 bytes: MiB/s.
    Records that were never acknowledged (acks=all refused, timed out) are not in "records sent"
    of the final line; none at all is a failed measurement, not a slow one."""
    lines = output.strip().splitlines()
    match = PRODUCER.search(lines[-1]) if lines else None
    if match is None:
        raise VerifyError(f"ProducerPerformance printed no summary: {output[-500:]!r}")
    produced = Produced(
        records=int(match[1]),
        mb_s=mib_s_to_mb_s(float(match[3])),
        records_s=float(match[2]),
        p50_ms=float(match[4]),
        p99_ms=float(match[5]),
    )
    if produced.records == 0 or produced.mb_s <= 0:
        raise VerifyError(
            "no records were acknowledged (acks=all): the measurement failed; check that "
            "every broker is up and the topic's min.insync.replicas can be met"
        )
    return produced


def parse_consumed(line: str) -> Consumed:
    """ConsumerPerformance's CSV line: start, end, MiB consumed, MiB/s, records, records/s."""
    fields = [f.strip() for f in line.split(",")]
    if len(fields) < 6:
        raise VerifyError(f"ConsumerPerformance printed no summary: {line!r}")
    return Consumed(records=int(float(fields[4])), mb_s=mib_s_to_mb_s(float(fields[3])))


def client_properties(cluster: ProcessCluster, directory: Path) -> Path:
    """The admin's login for Java clients; over TLS (a stack with client TLS) they trust the
    run's CA, whose PEM file Kafka reads directly."""
    path = directory / "client.properties"
    path.write_text(java_login_properties(cluster.internal_security()), encoding="utf-8")
    return path


def _tool(cluster: ProcessCluster, main: str, *args: str) -> str:
    command = [
        "ip",
        "netns",
        "exec",
        cluster.client_host.namespace,
        "java",
        "-Xmx512m",
        "-cp",
        f"{cluster.lib}/*",
        main,
        *args,
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=900)
    if result.returncode != 0:
        raise VerifyError(f"{main.rsplit('.', 1)[1]} failed: {result.stderr[-800:]}")
    return result.stdout


def create_topic(cluster: ProcessCluster, topic: str, partitions: int, rf: int) -> None:
    """A topic as the model assumes one: RF `rf`, min.insync.replicas = rf − 1 (at least 1)."""
    created = cluster.client(
        "create_topic",
        topic=topic,
        partitions=partitions,
        rf=rf,
        config={"min.insync.replicas": max(1, rf - 1)},
    )
    if not created["ok"]:
        raise VerifyError(f"creating topic {topic} failed: {created['error']}")


def produce(cluster: ProcessCluster, topic: str, records: int, work: Path) -> Produced:
    """As fast as the cluster acknowledges with acks=all: `--throughput -1`."""
    out = _tool(
        cluster,
        "org.apache.kafka.tools.ProducerPerformance",
        "--topic",
        topic,
        "--num-records",
        str(records),
        "--record-size",
        str(RECORD_BYTES),
        "--throughput",
        "-1",
        "--producer-props",
        f"bootstrap.servers={cluster.bootstrap}",
        "acks=all",
        # A cluster it cannot reach fails the run in seconds instead of blocking per record.
        "max.block.ms=20000",
        "--producer.config",
        str(client_properties(cluster, work)),
    )
    return parse_produced(out)


def consume(cluster: ProcessCluster, topic: str, records: int, work: Path) -> Consumed:
    out = _tool(
        cluster,
        "org.apache.kafka.tools.ConsumerPerformance",
        "--topic",
        topic,
        "--messages",
        str(records),
        "--bootstrap-server",
        cluster.bootstrap,
        "--consumer.config",
        str(client_properties(cluster, work)),
        "--timeout",
        "60000",
    )
    lines = out.strip().splitlines()
    return parse_consumed(lines[-1] if lines else "")
