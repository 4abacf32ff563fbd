"""The in-sync sets of every partition, sampled throughout a day-2 proof from the brokers' own
metrics, as a monitoring system reads them.

Each broker's JMX agent serves, per partition it leads, the in-sync set's size
(`metrics.PARTITION_IN_SYNC`; a follower serves 0). A small pod in the stack's monitoring
namespace (the only one the brokers' NetworkPolicy admits to the metrics port) scrapes every
broker once a second with busybox `wget` and prints what it read; the proof reads its log when
it ends. Asking Kafka's TopicCommand instead started a JVM per sample: seconds of CPU each,
back to back on the two cores the brokers under test share.

A broker that does not answer (its pod restarting, its node lost) leads nothing any more or
will not for long: its partitions show up on their new leader from the next sample on, and a
partition nobody leads at that moment is absent from that sample, not counted as empty.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from dataclasses import dataclass, field
from typing import Any

from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.model import metrics
from infra.model.cluster import ClusterModel
from infra.model.pod_security import container_security_context, pod_security_context
from infra.network_rules import monitoring_namespace

WATCHER_POD = "kafkastack-isr-watch"
SAMPLE_PERIOD_S = 1
SCRAPE_TIMEOUT_S = 3

_SERIES = re.compile(
    rf"^{metrics.PARTITION_IN_SYNC}\{{(?P<labels>[^}}]*)\}}\s+(?P<value>\S+)", re.MULTILINE
)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


@dataclass(frozen=True)
class SampledPartition:
    leader: int  # the broker that served the partition's in-sync count
    isr: int  # the size of its in-sync set


Partitions = dict[str, dict[int, SampledPartition]]  # topic → partition → state


@dataclass(frozen=True)
class IsrSample:
    at: float
    partitions: Partitions
    unanswered: tuple[int, ...] = ()  # brokers whose metrics could not be read


def parse_scrape(broker: int, text: str) -> Partitions:
    """One broker's served in-sync counts → topic → partition → state, for the partitions it
    leads (non-zero counts)."""
    led: Partitions = {}
    for match in _SERIES.finditer(text):
        labels = dict(_LABEL.findall(match["labels"]))
        size = int(float(match["value"]))
        if size > 0 and "topic" in labels and "partition" in labels:
            led.setdefault(labels["topic"], {})[int(labels["partition"])] = SampledPartition(
                broker, size
            )
    return led


def merge(scrapes: dict[int, str | None]) -> tuple[Partitions, tuple[int, ...]]:
    """Every broker's scrape (None: no answer) → the partitions, and who did not answer. Two
    brokers both serving a partition (a leader change seen half-way) count the smaller set."""
    partitions: Partitions = {}
    for broker, text in sorted(scrapes.items()):
        for topic, led in parse_scrape(broker, text or "").items():
            known = partitions.setdefault(topic, {})
            for partition, state in led.items():
                if partition not in known or state.isr < known[partition].isr:
                    known[partition] = state
    return partitions, tuple(b for b, text in sorted(scrapes.items()) if text is None)


def parse_samples(output: str) -> list[IsrSample]:
    """The watcher's log: `@sample <epoch>`, then per broker `@broker <id>` and what its agent
    served, or `@unanswered`. A sample in which no broker served anything is left out."""
    samples = []
    for chunk in output.split("@sample ")[1:]:
        stamp, _, body = chunk.partition("\n")
        scrapes: dict[int, str | None] = {}
        for part in body.split("@broker ")[1:]:
            broker, _, text = part.partition("\n")
            scrapes[int(broker)] = None if "@unanswered" in text else text
        partitions, unanswered = merge(scrapes)
        if partitions:
            samples.append(IsrSample(float(stamp), partitions, unanswered))
    return samples


def min_isr_seen(samples: list[IsrSample], topics: set[str] | None = None) -> int:
    sizes = [
        state.isr
        for sample in samples
        for topic, states in sample.partitions.items()
        if topics is None or topic in topics
        for state in states.values()
    ]
    return min(sizes) if sizes else 0


def below(
    samples: list[IsrSample], size: int, topics: set[str] | None = None
) -> list[tuple[float, str, int, SampledPartition]]:
    """Every (time, topic, partition, state) sampled with fewer than `size` in-sync replicas:
    what a failed ISR check shows, to tell a roll's hand-off from a partition that never
    recovered."""
    return [
        (sample.at, topic, partition, state)
        for sample in samples
        for topic, states in sample.partitions.items()
        if topics is None or topic in topics
        for partition, state in states.items()
        if state.isr < size
    ]


def scrape_round(model: ClusterModel) -> str:
    """One pass over every broker's metrics."""
    query = f"name[]={metrics.PARTITION_IN_SYNC}"
    steps = []
    for broker in model.brokers:
        url = shlex.quote(f"http://{broker.client_host}:{model.ports.metrics}/metrics?{query}")
        # No `wget -T` (Debian's busybox 1.35 crashes on it): `timeout` bounds a stuck scrape.
        # Comments and followers' zeros are left out here: they would fill the pod's log.
        steps.append(
            f"echo '@broker {broker.node_id}'; "
            f"if served=$(timeout {SCRAPE_TIMEOUT_S} busybox wget -q -O - {url}); "
            """then printf '%s\\n' "$served" | grep -vE '^#| 0(\\.0*)?$'; """
            "else echo @unanswered; fi"
        )
    return "; ".join(steps)


def one_pass(model: ClusterModel) -> str:
    """A sample now. `true`: the last broker may lead nothing, and grep then finds no line."""
    return f'echo "@sample $(date +%s)"; {scrape_round(model)}; true'


def watcher_pod(model: ClusterModel, node: str) -> dict[str, Any]:
    """The watcher's pod, sampling in a loop until deleted."""
    c = model.config
    loop = f"while true; do {one_pass(model)}; sleep {SAMPLE_PERIOD_S}; done"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": WATCHER_POD, "namespace": monitoring_namespace(c)},
        "spec": {
            "automountServiceAccountToken": False,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "nodeSelector": {"kubernetes.io/hostname": node},
            "securityContext": pod_security_context(model, c.images.kafka),
            "containers": [
                {
                    "name": "watch",
                    "image": f"{c.images.kafka.repository}:{c.kafka_version}",
                    "imagePullPolicy": "IfNotPresent",
                    "command": ["sh", "-c", loop],
                    "securityContext": container_security_context(),
                }
            ],
        },
    }


@dataclass
class IsrWatcher:
    """The watcher pod on `node` (one the proof never takes down) from start() to stop()."""

    kube: LocalKubernetes
    model: ClusterModel
    node: str
    samples: list[IsrSample] = field(default_factory=list)

    @property
    def namespace(self) -> str:
        return monitoring_namespace(self.model.config)

    def _delete(self) -> None:
        self.kube.delete_and_wait("pod", WATCHER_POD, namespace=self.namespace, timeout=60)

    def start(self, timeout: float = 120) -> None:
        """The pod, once its first sample has an answer from every broker."""
        self.kube.kubectl("create", "namespace", self.namespace, check=False)
        self._delete()
        pod = watcher_pod(self.model, self.node)
        self.kube.kubectl("apply", "-f", "-", stdin=json.dumps(pod))
        deadline = time.monotonic() + timeout
        while not any(not s.unanswered for s in self._read()):
            if time.monotonic() > deadline:
                raise LocalClusterError(f"the ISR watcher read no broker within {timeout}s")
            time.sleep(1)

    def _read(self) -> list[IsrSample]:
        reply = self.kube.kubectl("logs", WATCHER_POD, "-n", self.namespace, check=False)
        return parse_samples(reply.stdout) if reply.returncode == 0 else []

    def stop(self) -> list[IsrSample]:
        self.samples = self._read()
        self._delete()
        return self.samples
