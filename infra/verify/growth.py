"""Growth on real brokers: a topic that lives on three brokers (as Kafka left it before the
stack grew to five) is spread by `kafkastack rebalance`, run as an operator would run it, while
an idempotent acks=all producer keeps writing. Shared by the kafka tier and bench/rebalance.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.verify.clients import REPO
from infra.verify.errors import VerifyError
from infra.verify.processes import ProcessCluster

MOVED = re.compile(r"moved (\d+) bytes in ([\d.]+) s")


@dataclass(frozen=True)
class GrowthRun:
    bytes_moved: int
    seconds: float  # from the reassignment's start until Kafka reported every move done
    throttle_bytes: int
    throttle_seen: dict[str, dict[str, str]]  # broker → rates seen set while replicas moved
    throttle_left: dict[str, dict[str, str]]  # broker → rates still set afterwards
    acked: list[list[Any]]  # every record acknowledged, before and during the move
    consumed: list[list[Any]]
    partitions: dict[str, dict[str, Any]]  # the topic after: leader, replicas, isrs
    racks: dict[int, str]
    output: str  # what `kafkastack rebalance` printed


def stack_file(stacks_dir: Path, stack: str, values: dict[str, Any]) -> Path:
    """The stack file the started cluster was rendered from, as `--stacks-dir` reads it."""
    stacks_dir.mkdir(parents=True, exist_ok=True)
    path = stacks_dir / f"Pulumi.{stack}.yaml"
    document = {"config": {f"kafkastack:{k}": v for k, v in values.items()}}
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")  # JSON is YAML
    return path


def _rebalance(
    cluster: ProcessCluster,
    stacks_dir: Path,
    stack: str,
    throttle_mb_s: float,
    *extra: str,
    command_name: str = "rebalance",
) -> subprocess.Popen[str]:
    login = cluster.workdir / "admin-client.properties"
    login.write_text(
        "".join(f"{k}={v}\n" for k, v in cluster.internal_security().items()), encoding="utf-8"
    )
    login.chmod(0o600)
    command = [
        *("ip", "netns", "exec", cluster.client_host.namespace, sys.executable, "-c"),
        "from kafkastack.cli import app; app()",
        *(command_name, "--stack", stack, "--stacks-dir", str(stacks_dir)),
        *("--bootstrap", cluster.bootstrap, "--client-config", str(login)),
        *("--throttle", f"{throttle_mb_s:g}", *extra),
    ]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},  # progress lines as they are printed
    )


def throttles(cluster: ProcessCluster, brokers: list[int]) -> dict[str, dict[str, str]]:
    """Broker id → the replication throttle rates set on it, asked from the client host."""
    request = {"bootstrap": cluster.bootstrap, "security": cluster.internal_security()}
    done = cluster.python_on_client_host(
        "-m", "infra.verify.throttles", json.dumps({**request, "brokers": brokers})
    )
    if done.returncode != 0:
        raise VerifyError(f"reading the throttles failed: {done.stderr[-1500:]}")
    reply: dict[str, dict[str, str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return reply


def grow(
    cluster: ProcessCluster,
    stacks_dir: Path,
    stack: str,
    topic: str,
    throttle_mb_s: float,
    records: int = 4000,
    value_bytes: int = 2000,
    partitions: int = 6,
) -> GrowthRun:
    brokers = [b["node_id"] for b in cluster.topology["brokers"]]
    cluster.wait_for_brokers(len(brokers))
    racks = {b["node_id"]: b["zone"] for b in cluster.topology["brokers"]}
    # Three brokers of distinct racks hold the topic: the cluster before it grew.
    first: dict[str, int] = {}
    for broker in brokers:
        first.setdefault(racks[broker], broker)
    old = sorted(first.values())[:3]
    assignment = [[old[(p + i) % 3] for i in range(3)] for p in range(partitions)]
    created = cluster.client(
        "create_topic", topic=topic, assignment=assignment, config={"min.insync.replicas": 2}
    )
    if not created["ok"]:
        raise VerifyError(f"create {topic}: {created}")
    before = cluster.client("produce", topic=topic, count=records, value_bytes=value_bytes)
    stop = cluster.workdir / f"{topic}.stop"
    producer = cluster.spawn_client(
        {
            "op": "produce",
            "topic": topic,
            "count": 10**7,
            "keys": 12,
            "interval_s": 0.005,
            "stop_file": str(stop),
            "message_timeout_ms": 120000,
        }
    )
    rebalance = _rebalance(cluster, stacks_dir, stack, throttle_mb_s)
    seen: dict[str, dict[str, str]] = {}
    try:
        while rebalance.poll() is None:
            # What the brokers say while the moves run: the throttle Kafka's tool set.
            rates = throttles(cluster, brokers)
            for broker, set_rates in rates.items():
                if set_rates:
                    seen[broker] = set_rates
        output = rebalance.communicate()[0]
    finally:
        stop.touch()  # the producer stops at its next record, whatever happened here
        if rebalance.poll() is None:
            rebalance.kill()
            rebalance.wait()
    out, err = producer.communicate(timeout=300)
    if rebalance.returncode != 0:
        raise VerifyError(f"kafkastack rebalance exited {rebalance.returncode}: {output[-2000:]}")
    if producer.returncode != 0:
        raise VerifyError(f"producer failed: {err.decode()[-1500:]}")
    during = json.loads(out.decode().strip().splitlines()[-1])
    acked = before["acked"] + during["acked"]
    moved = MOVED.search(output)
    if moved is None:
        raise VerifyError(f"kafkastack rebalance moved nothing: {output[-2000:]}")
    left = throttles(cluster, brokers)
    described = cluster.client("describe", topic=topic)
    consumed = cluster.client("consume", topic=topic, expect=len(acked), timeout_s=180)
    return GrowthRun(
        bytes_moved=int(moved.group(1)),
        seconds=float(moved.group(2)),
        throttle_bytes=round(throttle_mb_s * 1_000_000),
        throttle_seen=seen,
        throttle_left={b: r for b, r in left.items() if r},
        acked=acked,
        consumed=consumed["records"],
        partitions=described["partitions"],
        racks=racks,
        output=output,
    )


def start_dry_run(
    cluster: ProcessCluster, stacks_dir: Path, stack: str, *extra: str
) -> subprocess.Popen[str]:
    """`kafkastack rebalance --dry-run` started against the running cluster; its stdout gives
    each line as it is printed."""
    return _rebalance(cluster, stacks_dir, stack, 1, "--dry-run", *extra)


def drain(
    cluster: ProcessCluster, stacks_dir: Path, stack: str, brokers: list[int], throttle_mb_s: float
) -> str:
    """`kafkastack drain --brokers …` against the running cluster; what it printed."""
    ids = ",".join(map(str, brokers))
    process = _rebalance(
        cluster, stacks_dir, stack, throttle_mb_s, "--brokers", ids, command_name="drain"
    )
    output = process.communicate(timeout=900)[0]
    if process.returncode != 0:
        raise VerifyError(f"kafkastack drain exited {process.returncode}: {output[-2000:]}")
    return output
