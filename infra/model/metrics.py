"""The Prometheus JMX exporter agent of Kafka pods: where its jar comes from, how the JVM loads it.

The agent runs inside the broker's or controller's JVM (`-javaagent` in `KAFKA_OPTS`, which
`kafka-run-class.sh` passes to java) and serves `/metrics` on the metrics port, with the rules
of the node's `jmx-exporter.yaml`. The public apache/kafka image has no agent: either the image
carries it (`jmx_agent: bundled`, the locally built image or docs/provisioning.md's recipe) or
an init container of the Kafka image fetches the pinned jar and checks its checksum.
"""

from __future__ import annotations

import shlex
from typing import Any

from infra.image_config import JMX_AGENT_SHA256, JMX_AGENT_VERSION
from infra.model.cluster import ClusterModel
from infra.model.paths import CONFIG_DIR, JMX_AGENT_DIR, JMX_AGENT_JAR

JMX_CONFIG_FILE = "jmx-exporter.yaml"
VOLUME = "jmx-agent"

# Served names the brokers' readiness probe reads (infra/model/in_sync.py), exported by rules of
# their own in templating.JMX_RULES: renaming one breaks the probe, so both use these.
BROKER_STATE = "kafka_server_kafkaserver_brokerstate"
REPLICA_MAX_LAG = "kafka_server_replicafetchermanager_maxlag"
# The JVM's start (seconds since the epoch), which the agent serves among the JVM's own figures
# (no rule needed): the probe's "found in sync" belongs to one process (in_sync.py).
PROCESS_START = "process_start_time_seconds"
# 1 on the controller leading the KRaft quorum, 0 on the others (infra/active_controller.py).
ACTIVE_CONTROLLER = "kafka_controller_kafkacontroller_activecontrollercount"
# Per partition, on its leader only (followers serve 0): the in-sync set's size
# (infra/localcluster/isr_watch.py reads it).
PARTITION_IN_SYNC = "kafka_cluster_partition_insyncreplicascount"
# Partition replicas a broker holds (ReplicaManager's PartitionCount): 0 once drained, which is
# what removing the broker needs (infra/broker_removal.py).
PARTITION_COUNT = "kafka_server_replicamanager_partitioncount"


def scrape_command(port: int, names: tuple[str, ...]) -> str:
    """A shell command printing the named series the pod's own agent serves on localhost.

    busybox `wget` is in apache/kafka's Alpine base and in the local image: no JVM is started.
    No `wget -T`: Debian's busybox 1.35 (the local image's) crashes on it; callers bound the
    time (a probe's timeoutSeconds, a subprocess timeout)."""
    query = "&".join(f"name[]={n}" for n in names)
    return f"busybox wget -q -O - {shlex.quote(f'http://127.0.0.1:{port}/metrics?{query}')}"


def agent_url(repository: str) -> str:
    artifact = "io/prometheus/jmx/jmx_prometheus_javaagent"
    name = f"jmx_prometheus_javaagent-{JMX_AGENT_VERSION}.jar"
    return f"{repository.rstrip('/')}/{artifact}/{JMX_AGENT_VERSION}/{name}"


def kafka_opts(model: ClusterModel) -> str:
    """`KAFKA_OPTS`: the agent on the metrics port with the node's rules."""
    return f"-javaagent:{JMX_AGENT_JAR}={model.ports.metrics}:{CONFIG_DIR}/{JMX_CONFIG_FILE}"


def downloads_agent(model: ClusterModel) -> bool:
    return model.config.images.kafka.jmx_agent == "download"


def agent_volumes(model: ClusterModel) -> list[dict[str, Any]]:
    return [{"name": VOLUME, "emptyDir": {}}] if downloads_agent(model) else []


def agent_mounts(model: ClusterModel) -> list[dict[str, Any]]:
    return [{"name": VOLUME, "mountPath": JMX_AGENT_DIR}] if downloads_agent(model) else []


def agent_init(model: ClusterModel, image: str) -> list[dict[str, Any]]:
    """The init container that fetches the agent, when the image lacks it.

    busybox's own wget and sha256sum: apache/kafka's Alpine base keeps busybox (the image
    removes GNU wget after its build). A jar whose checksum differs never reaches the JVM.
    """
    if not downloads_agent(model):
        return []
    part = f"{JMX_AGENT_JAR}.part"
    url = agent_url(model.config.images.kafka.maven_repository)
    return [
        {
            "name": "jmx-agent",
            "image": image,
            "command": [
                "sh",
                "-c",
                f"busybox wget -q -O {part} {url} "
                f"&& echo '{JMX_AGENT_SHA256}  {part}' | busybox sha256sum -c - "
                f"&& mv {part} {JMX_AGENT_JAR}",
            ],
            "volumeMounts": agent_mounts(model),
        }
    ]
