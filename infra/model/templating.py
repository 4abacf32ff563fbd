"""Renders configs from templates/ through one jinja2 Environment with StrictUndefined.

Logic stays here and in the model; templates only print and iterate.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Required, TypedDict

import jinja2

from infra.model import (
    dynamic_config,
    labels,
    membership,
    metrics,
    zookeeper_auth,
    zookeeper_tls,
)
from infra.model.broker_config import broker_properties, controller_properties
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node
from infra.model.paths import ZK_DATA_DIR, ZK_LOG_DIR
from infra.model.quorum import DISCOVERY_SETTINGS


def _templates() -> Path:
    """The checkout's templates/ when running from one (a base revision's worktree renders with
    its own), else the copy installed as package data (`kafkastack_templates`)."""
    checkout = Path(__file__).resolve().parent.parent.parent / "templates"
    if checkout.is_dir():
        return checkout
    spec = importlib.util.find_spec("kafkastack_templates")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("kafkastack's templates are not installed: reinstall kafkastack")
    return Path(next(iter(spec.submodule_search_locations)))


TEMPLATES = _templates()


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,  # a missing value is an error, never an empty string
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # config files, not HTML
    )


def render(template: str, **values: object) -> str:
    return environment().get_template(template).render(**values)


Sections = list[tuple[str, dict[str, str]]]


def _leaving_out(sections: Sections, leave_out: frozenset[str]) -> Sections:
    return [
        (title, {k: v for k, v in values.items() if k not in leave_out})
        for title, values in sections
    ]


def broker_config(model: ClusterModel, node: Node, leave_out: frozenset[str] = frozenset()) -> str:
    return render(
        "kafka/server.properties.j2",
        title=f"Kafka broker {node.node_id} ({node.zone})",
        environment=model.config.environment,
        sections=_leaving_out(broker_properties(model, node).sections, leave_out),
    )


def controller_config(
    model: ClusterModel, node: Node, leave_out: frozenset[str] = frozenset()
) -> str:
    return render(
        "kafka/server.properties.j2",
        title=f"KRaft controller {node.node_id} ({node.zone})",
        environment=model.config.environment,
        sections=_leaving_out(controller_properties(model, node).sections, leave_out),
    )


def zookeeper_config(model: ClusterModel, node: Node) -> str:
    return render(
        "zookeeper/zoo.cfg.j2",
        node=node,
        ensemble=model.quorum,
        ports=model.ports,
        environment=model.config.environment,
        data_dir=ZK_DATA_DIR,
        data_log_dir=ZK_LOG_DIR,
        auth_settings=zookeeper_auth.server_settings(),
        tls_settings=zookeeper_tls.server_settings() if zookeeper_tls.applies(model.config) else {},
        plain_client_host=zookeeper_tls.plain_client_host(model.config, node),
    )


@dataclass(frozen=True)
class HaproxyBackend:
    backend: str
    host: str
    address: str
    port: int


def haproxy_config(model: ClusterModel) -> str:
    brokers = [
        HaproxyBackend(
            backend=f"broker-{b.node_id}",
            host=b.external_host or "",
            address=b.client_host,
            port=model.ports.external,
        )
        for b in model.brokers
    ]
    return render(
        "haproxy/haproxy.cfg.j2",
        environment=model.config.environment,
        brokers=brokers,
        bootstrap_host=model.names.external_bootstrap,
        bind_address="0.0.0.0",
        listen_port=model.ports.haproxy,
        # A Kafka client holds one connection per broker it talks to, so a few thousand per
        # replica go a long way; twice this many file descriptors must be available.
        maxconn=8000,
    )


def logging_file(model: ClusterModel) -> str:
    """Kafka 4 logs through log4j2, 3.9 through log4j 1 (ZooKeeper: ZOOKEEPER_LOGGING_FILE)."""
    return "log4j2.yaml" if model.config.kafka_major >= 4 else "log4j.properties"


def log4j_opts(model: ClusterModel, config_dir: str) -> str:
    """`KAFKA_LOG4J_OPTS` naming the node's logging file in `config_dir`."""
    path = f"{config_dir}/{logging_file(model)}"
    if model.config.kafka_major >= 4:
        return f"-Dlog4j2.configurationFile={path}"
    return f"-Dlog4j.configuration=file:{path}"


def node_files(model: ClusterModel, node: Node) -> dict[str, str]:
    """The files of a node's config directory (its ConfigMap), exactly as `render` writes them."""
    if node.role == labels.ZOOKEEPER:
        return {
            "zoo.cfg": zookeeper_config(model, node),
            ZOOKEEPER_LOGGING_FILE: zookeeper_logging_config(),
        }
    files = {
        logging_file(model): logging_config(model),
        "jmx-exporter.yaml": jmx_exporter_config(model, node.role),
    }
    if node.role == labels.BROKER:
        files["server.properties"] = broker_config(model, node)
    else:
        files["controller.properties"] = controller_config(model, node)
    initial_voters = model.metadata.initial_voters(model)
    if initial_voters is not None and node in model.voters:
        files[membership.INITIAL_VOTERS_FILE] = initial_voters + "\n"
    return files


def restart_files(model: ClusterModel, node: Node) -> dict[str, str]:
    """What a node must restart to take in: its files, less the settings Kafka applies while
    it runs (dynamic_config.py) and less where it finds the quorum (quorum.DISCOVERY_SETTINGS,
    and the initial voter set, read only while the quorum is born). The config hash on its pod
    template is taken over these."""
    files = node_files(model, node)
    files.pop(membership.INITIAL_VOTERS_FILE, None)
    if node.role == labels.BROKER:
        leave_out = dynamic_config.CLUSTER_WIDE | DISCOVERY_SETTINGS
        files["server.properties"] = broker_config(model, node, leave_out)
    elif node.role == labels.CONTROLLER:
        files["controller.properties"] = controller_config(model, node, DISCOVERY_SETTINGS)
    return files


def logging_config(model: ClusterModel) -> str:
    loggers = {
        "kafka.controller": "INFO",
        "kafka.request.logger": "WARN",
        "state.change.logger": "INFO",
    }
    if model.config.kafka_major >= 4:
        return render(
            "logging/log4j2.yaml.j2",
            kafka_version=model.config.kafka_version,
            root_level="INFO",
            loggers=loggers,
        )
    return render(
        "logging/log4j.properties.j2",
        kafka_version=model.config.kafka_version,
        root_level="INFO",
        loggers={**loggers, "org.apache.zookeeper": "INFO"},
    )


# ZooKeeper 3.8 logs through logback (its release and the public image ship logback-classic and
# read `logback.xml` from the classpath, whose first entry is ZOOCFGDIR): a log4j file there is
# never read, and logback without a config logs everything at DEBUG.
ZOOKEEPER_LOGGING_FILE = "logback.xml"


def zookeeper_logging_config() -> str:
    return render(
        "logging/logback.xml.j2", root_level="INFO", loggers={"org.apache.zookeeper": "INFO"}
    )


LATENCY_REQUESTS = ("Produce", "FetchConsumer", "FetchFollower", "Fetch")


class JmxRule(TypedDict, total=False):
    objects: Required[list[str]]
    pattern: Required[str]
    name: Required[str]
    type: Required[str]
    labels: dict[str, str]


# The agent exports only what a rule matches. Kafka's own (KafkaMetrics) beans carry no `name`
# key: raft-metrics is `kafka.server<type=raft-metrics><>current-leader`.
# Each rule names the MBeans its pattern can match (`objects`, JMX ObjectName patterns): the agent
# reads only those (`includeObjectNames`). Without the list every scrape reads every attribute of
# every MBean in the JVM (per-partition logs, per-client quotas and fetchers: thousands on a
# broker) to match it against the rules: 0.9 s per scrape on a kafka-tier broker (0.04 s with
# the list), and the readiness probe scrapes every 5 s. The kafka tier checks that the list
# drops no series.
JMX_RULES: list[JmxRule] = [
    {
        # KRaft: leader, epoch, high watermark, commit and election latency (controllers and
        # brokers alike: every node follows the metadata log).
        "objects": ["kafka.server:type=raft-metrics,*"],
        "pattern": "kafka.server<type=raft-metrics><>([a-z-]+)",
        "name": "kafka_server_raft_metrics_$1",
        "type": "GAUGE",
    },
    {
        # Request handler threads' idle share (0-1); the first to watch when a broker saturates.
        "objects": ["kafka.server:type=KafkaRequestHandlerPool,*"],
        "pattern": "kafka.server<type=KafkaRequestHandlerPool, name=(.+)><>OneMinuteRate",
        "name": "kafka_server_$1",
        "type": "GAUGE",
    },
    {
        "objects": ["kafka.server:type=*,name=*PerSec*"],
        "pattern": "kafka.server<type=(.+), name=(.+)PerSec\\w*><>Count",
        "name": "kafka_server_$1_$2_total",
        "type": "COUNTER",
    },
    {
        # 3 = RUNNING (caught up with the metadata log, unfenced); 6-7 = shutting down.
        "objects": ["kafka.server:type=KafkaServer,name=BrokerState"],
        "pattern": "kafka.server<type=KafkaServer, name=BrokerState><>Value",
        "name": metrics.BROKER_STATE,
        "type": "GAUGE",
    },
    {
        # Messages this broker's replica fetchers trail their leaders' high watermark by, at
        # most, over every partition it follows: 0 once it is caught up.
        "objects": ["kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica"],
        "pattern": "kafka.server<type=ReplicaFetcherManager, name=MaxLag, clientId=Replica><>Value",
        "name": metrics.REPLICA_MAX_LAG,
        "type": "GAUGE",
    },
    {
        # Per partition, on its leader (a follower reports 0): the in-sync set's size and the
        # replica count, what a per-partition under-min-ISR alert reads (and the day-2
        # proofs' ISR watcher: infra/localcluster/isr_watch.py).
        "objects": [
            "kafka.cluster:type=Partition,name=InSyncReplicasCount,*",
            "kafka.cluster:type=Partition,name=ReplicasCount,*",
        ],
        "pattern": (
            "kafka.cluster<type=Partition, name=(InSyncReplicasCount|ReplicasCount), "
            "topic=(.+), partition=(\\d+)><>Value"
        ),
        "name": "kafka_cluster_partition_$1",
        "type": "GAUGE",
        "labels": {"topic": "$2", "partition": "$3"},
    },
    {
        "objects": ["kafka.server:type=ReplicaManager,*"],
        "pattern": "kafka.server<type=ReplicaManager, name=(.+)><>Value",
        "name": "kafka_server_replicamanager_$1",
        "type": "GAUGE",
    },
    {
        "objects": ["kafka.controller:*"],
        "pattern": "kafka.controller<type=(.+), name=(.+)><>Value",
        "name": "kafka_controller_$1_$2",
        "type": "GAUGE",
    },
    {
        # Time spent per request, in its stages (queues, local, remote, sending), as quantiles
        # (50thPercentile → quantile 0.50), for the requests that carry data: writes, the
        # consumers' and followers' fetches and, on controllers, the metadata log's (`Fetch`).
        # Kafka keeps these histograms for all its ~80 request types: read them all and every
        # scrape sorts hundreds of samples thousands of times.
        "objects": [
            f"kafka.network:type=RequestMetrics,request={request},*" for request in LATENCY_REQUESTS
        ],
        "pattern": (
            "kafka.network<type=RequestMetrics, name=(.+), "
            f"request=({'|'.join(LATENCY_REQUESTS)})><>(\\d+)thPercentile"
        ),
        "name": "kafka_network_request_$1",
        "type": "GAUGE",
        "labels": {"request": "$2", "quantile": "0.$3"},
    },
]


def jmx_exporter_config(model: ClusterModel, role: str = labels.BROKER) -> str:
    objects = [name for rule in JMX_RULES for name in rule["objects"]]
    return render(
        "metrics/jmx-exporter.yaml.j2",
        role=role,
        port=model.ports.metrics,
        objects=objects,
        rules=JMX_RULES,
    )
