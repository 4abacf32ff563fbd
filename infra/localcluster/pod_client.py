"""Kafka's own tools run in the client pod (client_pod.py) through `kubectl exec`, and the
proofs' questions about the cluster asked from this host (host_clients.HostAdmin).

The Kafka image carries only `kafka-run-class.sh` (no per-tool scripts), so each tool is named
by its class, as the upstream scripts do: VerifiableProducer for an idempotent acks=all load
that reports every acknowledged record with its partition and offset, ConsoleConsumer to read
the records back, MetadataQuorumCommand for the quorum's leader, TopicCommand for a listing
through HAProxy. Parsing their output is plain Python (tested in tests/infra/test_pod_client.py).

Creating topics, their leaders and in-sync sets, and where each log ends come from the stack's
admin on this host: the proofs poll them every second, and a tool's JVM per question cost more
CPU than the brokers under test were given.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from dataclasses import dataclass

from infra.localcluster import client_pod
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.host_clients import HostAdmin
from infra.model import membership
from infra.model.cluster import ClusterModel
from infra.model.in_sync import QUORUM_COMMAND, TOPIC_COMMAND

PRODUCER = "org.apache.kafka.tools.VerifiableProducer"
PERFORMANCE = "org.apache.kafka.tools.ProducerPerformance"
FILL_RECORD_BYTES = 1_000
CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
# A tool's JVM is small: several share the client pod beside the brokers on two cores.
TOOL_HEAP = "-Xmx256m"


@dataclass(frozen=True)
class PartitionState:
    leader: int  # -1 while none serves
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class Acked:
    """One record the producer had acknowledged (acks=all), and when (seconds since the epoch)."""

    key: str
    value: str
    partition: int
    offset: int
    at: float


@dataclass(frozen=True)
class Consumed:
    key: str
    value: str
    partition: int
    offset: int


# VerifiableProducer's SIGTERM hook sets its stop flag and closes the producer at once, while its
# main loop may be sending one more record: KafkaProducer refuses that send with this, before
# the record goes anywhere. The stop's own race (seen once on real nodes, after a whole
# rebalance under load), not a record that failed to be delivered.
REFUSED_AFTER_CLOSE = (
    "class java.lang.IllegalStateException",
    "Cannot perform operation after producer has been closed",
)


def parse_acked(output: str) -> tuple[list[Acked], list[str]]:
    """VerifiableProducer's JSON lines → the acknowledged records and every send error (but a
    send its own stop refused: `REFUSED_AFTER_CLOSE`)."""
    acked, errors = [], []
    for line in output.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # the tool's own log lines
        if not isinstance(event, dict):
            continue
        if event.get("name") == "producer_send_success":
            acked.append(
                Acked(
                    str(event["key"]),
                    str(event["value"]),
                    int(event["partition"]),
                    int(event["offset"]),
                    float(event["timestamp"]) / 1000,
                )
            )
        elif event.get("name") == "producer_send_error" and (
            (event.get("exception"), event.get("message")) != REFUSED_AFTER_CLOSE
        ):
            errors.append(str(event.get("exception", event)))
    return acked, errors


def parse_consumed(output: str) -> list[Consumed]:
    """ConsoleConsumer lines printed as `Partition:<p>\\tOffset:<o>\\t<key>\\t<value>`."""
    records = []
    for line in output.splitlines():
        fields = line.split("\t")
        if len(fields) != 4 or not fields[0].startswith("Partition:"):
            continue
        partition = int(fields[0].removeprefix("Partition:"))
        offset = int(fields[1].removeprefix("Offset:"))
        records.append(Consumed(fields[2], fields[3], partition, offset))
    return records


def tool_options(model: ClusterModel) -> dict[str, str]:
    """The producer's and consumer's option naming their client config, and the consumer's
    for formatter settings: Kafka 4 renamed them (--command-config, --formatter-property) and
    deprecated the old names; 3.9's tools know only the old ones."""
    if model.config.kafka_major >= 4:
        config = "--command-config"
        return {"producer": config, "consumer": config, "formatter": "--formatter-property"}
    return {
        "producer": "--producer.config",
        "consumer": "--consumer.config",
        "formatter": "--property",
    }


class PodClient:
    """The client pod `name` of a deployed stack, and the Kafka tools run in it."""

    def __init__(
        self, kube: LocalKubernetes, model: ClusterModel, name: str, admin: HostAdmin
    ) -> None:
        self.kube = kube
        self.model = model
        self.name = name
        self.admin = admin
        self.namespace = model.config.namespace
        self.bootstrap = f"{model.names.bootstrap_dns}:{model.ports.client}"
        self.external_bootstrap = f"{model.names.external_bootstrap}:{model.ports.route}"
        self.options = tool_options(model)

    def start(self, node: str | None = None, timeout: float = 120) -> None:
        """Create the pod (on `node` if given) and wait until its client configs are written."""
        haproxy_ip = self.kube.kubectl(
            "get", "service", self.model.names.haproxy, "-n", self.namespace,
            "-o", "jsonpath={.spec.clusterIP}",
        ).stdout.strip()  # fmt: skip
        aliases = {haproxy_ip: client_pod.external_host_names(self.model)} if haproxy_ip else {}
        pod = client_pod.client_pod(self.model, self.name, aliases)
        if node:
            pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": node}
        self.kube.kubectl("apply", "-f", "-", stdin=json.dumps(pod))
        deadline = time.monotonic() + timeout
        while self.exec_sh(f"test -s {client_pod.PRODUCER_PROPERTIES}", check=False).returncode:
            if time.monotonic() > deadline:
                raise LocalClusterError(f"client pod {self.name} not ready after {timeout}s")
            time.sleep(1)

    def delete(self) -> None:
        self.kube.kubectl(
            "delete", "pod", self.name, "-n", self.namespace, "--wait=false", check=False
        )

    def exec_sh(self, script: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = self.kube.kubectl(
            "exec", self.name, "-n", self.namespace, "--", "sh", "-c", script, check=False
        )
        if check and result.returncode != 0:
            raise LocalClusterError(
                f"in {self.name}: {script[:200]}: {result.stdout[-1500:]}{result.stderr[-1500:]}"
            )
        return result

    def tool_command(self, tool: str, args: list[str], external: bool = False) -> str:
        bootstrap = self.external_bootstrap if external else self.bootstrap
        argv = ["kafka-run-class.sh", tool, "--bootstrap-server", bootstrap, *args]
        # `env`, not a shell assignment: the command also runs in the background (`&`), where
        # `$!` must be the tool's own process id (env and the runner exec into java).
        return f"env KAFKA_HEAP_OPTS={TOOL_HEAP} {shlex.join(argv)}"

    def create_topic(self, topic: str, partitions: int, min_isr: int | None = None) -> None:
        """`topic` with the stack's replication factor, unless it exists already."""
        min_isr = min_isr or self.model.config.min_insync_replicas
        self.admin.ask(
            "create_topic", topic=topic, partitions=partitions,
            rf=self.model.config.replication_factor,
            config={"min.insync.replicas": min_isr}, if_not_exists=True,
        )  # fmt: skip

    def describe(self, topic: str | None = None) -> dict[str, dict[int, PartitionState]]:
        """topic → partition → state, for `topic` or every topic."""
        reply = self.admin.ask("describe_topics", topics=[topic] if topic else None)
        return {
            name: {
                int(partition): PartitionState(
                    state["leader"], tuple(state["replicas"]), tuple(state["isrs"])
                )
                for partition, state in partitions.items()
            }
            for name, partitions in reply["topics"].items()
        }

    def end_offsets(self, topic: str) -> dict[int, int]:
        """partition → the offset after its last record (its high watermark)."""
        offsets = self.admin.ask("end_offsets", topic=topic)["offsets"]
        return {int(partition): int(offset) for partition, offset in offsets.items()}

    def throttles(self, brokers: list[int]) -> dict[int, dict[str, str]]:
        """broker → the replication throttle rates someone set on it (empty when none is)."""
        rates = self.admin.ask("throttles", brokers=brokers)
        return {int(broker): set_rates for broker, set_rates in rates.items()}

    def quorum_leader(self) -> int | None:
        """The KRaft quorum's leader (the active controller) as the brokers report it."""
        args = ["--command-config", client_pod.CLIENT_PROPERTIES, "describe", "--status"]
        return membership.leader_id(self.exec_sh(self.tool_command(QUORUM_COMMAND, args)).stdout)

    def wait_isr(self, topic: str, size: int, timeout: float = 180) -> dict[int, PartitionState]:
        """Until every partition of `topic` has `size` in-sync replicas and a leader."""
        deadline = time.monotonic() + timeout
        while True:
            states = self.describe(topic).get(topic, {})
            if states and all(len(s.isr) >= size and s.leader >= 0 for s in states.values()):
                return states
            if time.monotonic() > deadline:
                raise LocalClusterError(f"{topic}: in-sync sets never reached {size}: {states}")
            time.sleep(1)

    def wait_in_sync(self, timeout: float = 180) -> None:
        """Until every partition of every topic has all its replicas in sync and a leader: a
        disruption judged by the in-sync sets it leaves must not inherit an earlier one's."""
        deadline = time.monotonic() + timeout
        while True:
            behind = {
                (topic, partition): state
                for topic, states in self.describe().items()
                for partition, state in states.items()
                if set(state.isr) != set(state.replicas) or state.leader < 0
            }
            if not behind:
                return
            if time.monotonic() > deadline:
                raise LocalClusterError(f"partitions never back in sync: {behind}")
            time.sleep(1)

    def producer_args(self, topic: str, count: int, keys: int, throughput: int) -> list[str]:
        return [
            "--topic", topic, "--max-messages", str(count), "--throughput", str(throughput),
            "--acks", "-1", self.options["producer"], client_pod.PRODUCER_PROPERTIES,
            "--repeating-keys", str(keys), "--value-prefix", str(time.time_ns() % 1_000_000_000),
        ]  # fmt: skip

    def produce(
        self, topic: str, count: int, keys: int = 8, external: bool = False
    ) -> tuple[list[Acked], list[str]]:
        """Produce `count` keyed records and wait: what was acknowledged, and the errors."""
        args = self.producer_args(topic, count, keys, throughput=-1)
        out = self.exec_sh(self.tool_command(PRODUCER, args, external)).stdout
        return parse_acked(out)

    def fill(self, topic: str, megabytes: int) -> None:
        """Write `megabytes` MB to `topic` in records of 1 kB as fast as the cluster takes them
        (ProducerPerformance, acks=all): data for a reassignment to carry."""
        args = [
            "--topic", topic, "--num-records", str(megabytes * 1_000_000 // FILL_RECORD_BYTES),
            "--record-size", str(FILL_RECORD_BYTES), "--throughput", "-1",
            self.options["producer"], client_pod.PRODUCER_PROPERTIES,
        ]  # fmt: skip
        self.exec_sh(self.tool_command(PERFORMANCE, args))

    def start_producer(self, run: str, topic: str, throughput: int, keys: int = 16) -> None:
        """A producer in the background until stop_producer(run): about `throughput` records/s."""
        args = self.producer_args(topic, -1, keys, throughput)
        out = f"{client_pod.RUN_DIR}/{run}"
        command = self.tool_command(PRODUCER, args)
        self.exec_sh(f"{command} > {out}.out 2> {out}.err & echo $! > {out}.pid")
        deadline = time.monotonic() + 120
        while "producer_send_success" not in self.exec_sh(f"head -c 100000 {out}.out").stdout:
            if not self._running(f"{out}.pid") or time.monotonic() > deadline:
                err = self.exec_sh(f"tail -c 2000 {out}.err", check=False).stdout
                raise LocalClusterError(f"producer {run}: nothing acknowledged: {err}")
            time.sleep(1)

    def _running(self, pid_file: str) -> bool:
        """Whether the process is alive: an exited one stays a zombie (state Z) under the
        pod's first process, `sleep`, which never reaps it."""
        check = f"grep -q '^State:[[:space:]]*[^Z]' /proc/$(cat {pid_file})/status"
        return self.exec_sh(check, check=False).returncode == 0

    def stop_producer(self, run: str, timeout: float = 300) -> tuple[list[Acked], list[str]]:
        """SIGTERM the producer: its shutdown hook flushes what it sent, then prints its
        summary (`tool_data`), the last line. (Not `kill -0`: the pod's first process, `sleep`,
        never reaps the exited tool, which stays a zombie.)"""
        out = f"{client_pod.RUN_DIR}/{run}"
        self.exec_sh(f"kill -TERM $(cat {out}.pid)")
        deadline = time.monotonic() + timeout
        while self.exec_sh(f"grep -q tool_data {out}.out", check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise LocalClusterError(f"producer {run} still running {timeout}s after SIGTERM")
            time.sleep(1)
        return parse_acked(self.exec_sh(f"cat {out}.out").stdout)

    def consume(
        self, topic: str, expect: int | None = None, external: bool = False, idle_s: int = 60
    ) -> list[Consumed]:
        """Read `topic` from the beginning (read_committed) until `expect` records, or (without
        `expect`, or short of it) until nothing came for `idle_s`: everything it holds.

        The idle time also covers the wait for the first record: a stack's first consumer
        waits for Kafka to create the group coordinator's topic (`__consumer_offsets`, 50
        partitions), which took over 20 s on two loaded cores, and a consumer that gave up
        then read nothing and made every acknowledged record look lost."""
        args = self.consumer_args(topic, expect, idle_s)
        # The consumer exits non-zero when its idle timeout ends it; what it read is the answer.
        result = self.exec_sh(self.tool_command(CONSUMER, args, external), check=False)
        consumed = parse_consumed(result.stdout)
        if expect and not consumed:
            raise LocalClusterError(
                f"the consumer of {topic} read nothing of {expect} records within "
                f"{idle_s} s: {result.stderr[-1500:]}"
            )
        return consumed

    def consumer_args(self, topic: str, expect: int | None, idle_s: int) -> list[str]:
        limit = ["--max-messages", str(expect)] if expect is not None else []
        formatter = self.options["formatter"]
        return [
            "--topic", topic, "--from-beginning", *limit,
            "--timeout-ms", str(idle_s * 1000), self.options["consumer"],
            client_pod.CLIENT_PROPERTIES, "--isolation-level", "read_committed",
            formatter, "print.partition=true",
            formatter, "print.offset=true",
            formatter, "print.key=true",
        ]  # fmt: skip

    def external_plaintext_refused(self) -> bool:
        """The admin's login without TLS, through HAProxy: whether listing topics fails (while
        the same call over TLS lists them)."""
        plain = f"{client_pod.RUN_DIR}/plaintext.properties"
        self.exec_sh(
            f"sed 's/^security.protocol=SASL_SSL$/security.protocol=SASL_PLAINTEXT/' "
            f"{client_pod.CLIENT_PROPERTIES} > {plain}"
            f" && echo default.api.timeout.ms=15000 >> {plain}"
            f" && echo request.timeout.ms=5000 >> {plain}"
        )
        listing = ["--list", "--command-config"]
        tls = self.exec_sh(
            self.tool_command(TOPIC_COMMAND, [*listing, client_pod.CLIENT_PROPERTIES], True),
            check=False,
        )
        if tls.returncode != 0:
            raise LocalClusterError(f"listing topics over TLS through HAProxy failed: {tls.stderr}")
        plaintext = self.exec_sh(
            self.tool_command(TOPIC_COMMAND, [*listing, plain], True), check=False
        )
        return plaintext.returncode != 0


def lost(acked: list[Acked], consumed: list[Consumed]) -> list[Acked]:
    """Acknowledged records that were not read back."""
    read = {(c.partition, c.key, c.value) for c in consumed}
    return [a for a in acked if (a.partition, a.key, a.value) not in read]


def out_of_order(consumed: list[Consumed]) -> list[str]:
    """Keys whose records were read out of produce order within their partition (each value
    ends with the producer's running counter: `<prefix>.<n>`), or read twice."""
    problems = []
    last: dict[tuple[int, str, str], int] = {}
    for c in consumed:
        prefix, _, counter = c.value.rpartition(".")
        key = (c.partition, c.key, prefix)
        n = int(counter)
        if key in last and n <= last[key]:
            problems.append(f"partition {c.partition} key {c.key}: {n} after {last[key]}")
        last[key] = n
    return problems
