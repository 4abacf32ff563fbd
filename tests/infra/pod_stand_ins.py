"""Stand-ins for what a Kafka pod's probes and preStop hook ask, so that their rendered
commands run here for real (sh, busybox wget and awk, as in the image): the JMX agent's
/metrics on 127.0.0.1, and a `kafka-run-class.sh` that prints a prepared describe."""

from __future__ import annotations

import shlex
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from infra.model import in_sync, metrics
from infra.model.cluster import ClusterModel
from infra.model.paths import KAFKA_BIN, SCRIPT_LOG_DIR


class FakeAgent:
    """Serves `body` on 127.0.0.1 as the agent's /metrics, remembering the paths asked for."""

    def __init__(self) -> None:
        self.body = ""
        self.paths: list[str] = []
        agent = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the name http.server calls
                agent.paths.append(self.path)
                payload = agent.body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]

    def caught_up(self) -> bool:
        """The readiness probe's first step: the figures, through busybox wget and awk."""
        names = (metrics.BROKER_STATE, metrics.REPLICA_MAX_LAG, metrics.PROCESS_START)
        scrape = metrics.scrape_command(self.port, names)
        program = shlex.quote(in_sync.caught_up_program())
        command = ["sh", "-c", f"{scrape} | busybox awk {program}"]
        return subprocess.run(command, check=False, timeout=10).returncode == 0


def serving() -> Iterator[FakeAgent]:
    """A FakeAgent serving until the generator closes (the `agent` fixture)."""
    fake = FakeAgent()
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def served(state: float | None, lag: float | None, started: str | None = "1.7958E9") -> str:
    lines = ["# HELP other a figure the probe ignores", "other 3.0"]
    if state is not None:
        lines += [f"# TYPE {metrics.BROKER_STATE} gauge", f"{metrics.BROKER_STATE} {state}"]
    if lag is not None:
        lines.append(f"{metrics.REPLICA_MAX_LAG} {lag}")
    if started is not None:
        lines.append(f"{metrics.PROCESS_START} {started}")
    return "\n".join(lines) + "\n"


# The container's environment is the broker's: a command must not start its tool in it.
CONTAINER_ENV = {"PATH": "/usr/bin:/bin", "KAFKA_OPTS": "-javaagent:x", "KAFKA_HEAP_OPTS": "-Xmx6g"}


class StandInTool:
    """A stand-in `kafka-run-class.sh` under `tmp` that prints what `answer` prepared and exits
    with its status, recording each call with its environment; `in_pod` moves a rendered
    command's in-pod folders and agent port here."""

    def __init__(self, tmp: Path, agent: FakeAgent) -> None:
        self.tmp, self.agent = tmp, agent
        self.bin, self.logs, self.calls_file = tmp / "bin", tmp / "logs", tmp / "calls"
        self.bin.mkdir()
        self.logs.mkdir()
        tool = self.bin / "kafka-run-class.sh"
        tool.write_text(
            "#!/bin/sh\n"
            'echo "$* KAFKA_OPTS=$KAFKA_OPTS KAFKA_HEAP_OPTS=$KAFKA_HEAP_OPTS"'
            f" >> {self.calls_file}\n"
            f'case "$1" in *{in_sync.QUORUM_COMMAND}) cat {tmp / "quorum"};; '
            f"*) cat {tmp / 'described'};; esac\n"
            f"exit $(cat {tmp / 'exit'})\n"
        )
        tool.chmod(0o755)
        self.answer("", 0)

    def answer(self, described: str, status: int = 0, quorum: str = "") -> None:
        """What the tool prints from its next call on (`kafka-topics`: `described`;
        `kafka-metadata-quorum`: `quorum`), and its exit status."""
        (self.tmp / "described").write_text(described)
        (self.tmp / "quorum").write_text(quorum)
        (self.tmp / "exit").write_text(str(status))

    def in_pod(self, model: ClusterModel, command: list[str]) -> str:
        """`sh -c` command's script, its folders and the agent's port moved here."""
        return (
            command[2]
            .replace(KAFKA_BIN, str(self.bin))
            .replace(SCRIPT_LOG_DIR, str(self.logs))
            .replace(f"127.0.0.1:{model.ports.metrics}", f"127.0.0.1:{self.agent.port}")
        )

    def run(self, script: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", "-c", script], capture_output=True, text=True, timeout=timeout, env=CONTAINER_ENV
        )

    def start(self, script: str) -> subprocess.Popen[str]:
        """`script` running on, its output (stderr with it) on a pipe."""
        return subprocess.Popen(
            ["sh", "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=CONTAINER_ENV,
        )

    def calls(self) -> list[str]:
        return self.calls_file.read_text().splitlines() if self.calls_file.exists() else []
