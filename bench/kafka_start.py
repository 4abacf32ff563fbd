"""How long a Kafka JVM takes to start, with and without the class archive
(scripts/kafka/class-archive.sh, `make kafka-jars`): a single KRaft node on loopback until its
client port accepts connections, and a tool (`kafka-storage random-uuid`) to its end, each
timed in wall seconds and CPU-seconds (the process's own, from /proc). Prints figures only.

    .venv/bin/python bench/kafka_start.py [--version 4.3.1] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from infra.toolchain import kafka_class_archive, kafka_jvm_classes, kafka_lib

TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def node_start(classes: str, work: Path) -> tuple[float, float]:
    """(seconds until the client port listens, CPU-seconds by then) of a fresh KRaft node."""
    client, controller = free_port(), free_port()
    data = work / f"data-{client}"
    props = work / f"server-{client}.properties"
    props.write_text(
        "process.roles=broker,controller\nnode.id=1\n"
        f"controller.quorum.voters=1@127.0.0.1:{controller}\n"
        f"listeners=PLAINTEXT://127.0.0.1:{client},CONTROLLER://127.0.0.1:{controller}\n"
        "controller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
        f"log.dirs={data}\noffsets.topic.replication.factor=1\n",
        encoding="utf-8",
    )
    java = f"java -Xmx256m {classes}"
    subprocess.run(
        f"{java} kafka.tools.StorageTool format -t kafkastack-bench-00001 -c {props}",
        shell=True, check=True, capture_output=True,
    )  # fmt: skip
    command = f"exec java -Xms512m -Xmx512m -XX:+UseG1GC {classes} kafka.Kafka {props}"
    started = time.monotonic()
    node = subprocess.Popen(
        command, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    try:
        while not listening(client):
            if node.poll() is not None:
                raise RuntimeError(f"the node exited ({node.returncode}) before listening")
            time.sleep(0.05)
        return time.monotonic() - started, cpu_seconds(node.pid)
    finally:
        node.terminate()
        node.wait()


def tool_run(classes: str) -> tuple[float, float]:
    """(wall seconds, CPU-seconds of the JVM and its children) of `random-uuid`."""
    before = os.times()
    started = time.monotonic()
    subprocess.run(
        f"exec java -Xmx256m {classes} kafka.tools.StorageTool random-uuid",
        shell=True, check=True, capture_output=True,
    )  # fmt: skip
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return time.monotonic() - started, cpu


def report(label: str, figures: list[tuple[float, float]]) -> None:
    wall = [w for w, _ in figures]
    cpu = [c for _, c in figures]
    print(
        f"{label:34s} wall median {statistics.median(wall):5.2f} s (min {min(wall):.2f}), "
        f"CPU median {statistics.median(cpu):5.2f} s (min {min(cpu):.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="4.3.1")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    lib = kafka_lib(args.version)
    if not kafka_class_archive(lib).is_file():
        raise SystemExit(f"no class archive beside {lib}: run scripts/kafka/class-archive.sh")
    shared = kafka_jvm_classes(lib)
    plain = f"-cp {shlex.quote(f'{lib}/*')}"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for label, classes in (("without the archive", plain), ("with the archive", shared)):
            report(f"node start, {label}", [node_start(classes, work) for _ in range(args.rounds)])
            report(f"tool run, {label}", [tool_run(classes) for _ in range(args.rounds)])


if __name__ == "__main__":
    main()
