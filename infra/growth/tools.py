"""The cluster as `kafkastack rebalance` and `drain` see it: where the replicas are (the Python
admin client), and Kafka's own admin tools (the reassignment and log-dirs commands), run as Java
from the jars kafkastack already caches, with the same login as the admin client.

What librdkafka has no API for (moving replicas, throttling them, reading log sizes) is done by
the tools Kafka ships, rather than by re-implementing their protocol calls.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.errors import ConfigError
from infra.model.reassignment import Partition
from infra.model.secret_text import java_login_properties
from infra.toolchain import ToolchainError, kafka_lib

REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"
# The line a tool prints when it refuses, before changing anything, a broker it was given that is
# not live (fenced, stopped, restarting): LogDirsCommand for `--broker-list`, and
# ReassignPartitionsCommand for a plan's target replicas (checked before it sets a throttle or
# moves a replica). Matched only at a line's start: words quoted inside another failure (one
# after Kafka accepted part of a plan) must not read as a refusal that is safe to retry.
ABSENT_BROKER = re.compile(
    r"^(ERROR: The given brokers do not exist|Error: Unknown broker id)", re.MULTILINE
)
STACK_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")
EXCEPTION = re.compile(r"^[\w.$]+(?:Exception|Error): (.*)$")  # a Java exception's own line


class BrokersAbsent(ConfigError):
    """A broker the tool was given is not live now; nothing was changed, and asking again once
    it is back may succeed."""


def tool_failure(main: str, output: str) -> ConfigError:
    """The error for a tool that failed: its words, without the Java stack frames it prints
    after them nor an exception's line that repeats them; BrokersAbsent when it refused a broker
    that is not live."""
    kept: list[str] = []
    for line in output.strip().splitlines():
        thrown = EXCEPTION.match(line)
        repeated = thrown is not None and any(thrown.group(1) in said for said in kept)
        if not (STACK_FRAME.match(line) or repeated):
            kept.append(line)
    said = "\n".join(kept)[-1500:]
    absent = ABSENT_BROKER.search(said) is not None
    return (BrokersAbsent if absent else ConfigError)(f"{main.rsplit('.', 1)[-1]}: {said}")


@dataclass(frozen=True)
class KafkaTools:
    bootstrap: str
    client: dict[str, str]  # librdkafka settings: the login both clients use
    kafka_version: str

    @contextmanager
    def _config(self) -> Iterator[Path]:
        with tempfile.TemporaryDirectory(prefix="kafkastack-tools-") as folder:
            path = Path(folder) / "client.properties"
            path.write_text(java_login_properties(self.client), encoding="utf-8")
            path.chmod(0o600)  # it holds the admin's password
            yield path

    def run(self, main: str, *args: str, timeout: float = 300) -> str:
        try:
            lib = kafka_lib(self.kafka_version)
        except ToolchainError as err:
            raise ConfigError(f"kafka_version {self.kafka_version}: {err}") from None
        with self._config() as config:
            command = [
                "java",
                "-Xmx256m",
                "-cp",
                f"{lib}/*",
                main,
                "--bootstrap-server",
                self.bootstrap,
                "--command-config",
                str(config),
                *args,
            ]
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, check=False
            )
        if done.returncode != 0:
            # Where a tool prints its refusal differs by tool and path: both streams are read.
            raise tool_failure(main, done.stdout + done.stderr)
        return done.stdout

    def assignment(self) -> tuple[dict[Partition, list[int]], set[int]]:
        """Every partition's replicas (preferred leader first) and the live brokers: those
        registered and not fenced, as the brokers' metadata lists them."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap, **self.client})
        metadata = admin.list_topics(timeout=30)
        replicas = {
            (name, pid): list(part.replicas)
            for name, topic in metadata.topics.items()
            for pid, part in topic.partitions.items()
        }
        return replicas, set(metadata.brokers)

    def partition_sizes(self, brokers: list[int]) -> dict[Partition, int]:
        """The largest replica's bytes of every partition on `brokers`."""
        out = self.run(LOG_DIRS, "--describe", "--broker-list", ",".join(map(str, brokers)))
        document: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        sizes: dict[Partition, int] = {}
        for broker in document.get("brokers", []):
            for log_dir in broker.get("logDirs", []):
                for part in log_dir.get("partitions", []):
                    topic, _, index = str(part["partition"]).rpartition("-")
                    key = (topic, int(index))
                    sizes[key] = max(sizes.get(key, 0), int(part["size"]))
        return sizes

    def reassign(self, document: dict[str, object], throttle_bytes: int | None) -> None:
        with tempfile.TemporaryDirectory(prefix="kafkastack-plan-") as folder:
            plan_file = Path(folder) / "plan.json"
            plan_file.write_text(json.dumps(document), encoding="utf-8")
            args = ["--reassignment-json-file", str(plan_file), "--execute"]
            if throttle_bytes:
                args += ["--throttle", str(throttle_bytes)]
            self.run(REASSIGN, *args)

    def verify(self, document: dict[str, object]) -> tuple[int, int]:
        """(completed, total) partitions of the plan. Once all are done, Kafka's tool removes
        the replication throttle it set."""
        with tempfile.TemporaryDirectory(prefix="kafkastack-plan-") as folder:
            plan_file = Path(folder) / "plan.json"
            plan_file.write_text(json.dumps(document), encoding="utf-8")
            out = self.run(REASSIGN, "--reassignment-json-file", str(plan_file), "--verify")
        lines = [line for line in out.splitlines() if line.startswith("Reassignment of partition")]
        return sum("is completed" in line for line in lines), len(lines)
