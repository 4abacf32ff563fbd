"""The Prometheus JMX agent the manifests load (`KAFKA_OPTS`), serving each node's metrics.

The names are the ones the agent served from these rules on real Kafka 4.3.1 nodes: KRaft's
raft-metrics on every node, the request handler pools' idle share, broker and controller gauges.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest
import yaml

from infra.image_config import JMX_AGENT_SHA256
from infra.verify.processes import Node, ProcessCluster

pytestmark = pytest.mark.kafka

IDLE_OVERSHOOT = 1.01
# The agent's count of the times it read its config file again (it does when the file changes).
RELOADS = "jmx_config_reload_success_total"


def samples(text: str) -> dict[str, float]:
    """Prometheus text → value per series (name plus labels, as served)."""
    result = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            result[series] = float(value)
    return result


def settled(kraft: ProcessCluster, timeout: float = 120) -> dict[str, dict[str, float]]:
    """Every node's series, once all of them follow one leader among the controllers with the
    whole quorum voting and one active controller (or what they serve at `timeout`): the tests
    before this one stop and restart nodes of the session's cluster, and an election may still
    be under way when it starts."""
    controllers = {int(n.entry["node_id"]) for n in kraft.quorum}
    deadline = time.monotonic() + timeout
    while True:
        served = {n.name: samples(kraft.metrics(n.entry["client_host"])) for n in kraft.nodes}
        leaders = {v.get("kafka_server_raft_metrics_current_leader") for v in served.values()}
        active = sum(
            served[n.name].get("kafka_controller_kafkacontroller_activecontrollercount", 0)
            for n in kraft.quorum
        )
        voting = all(
            v.get("kafka_server_raft_metrics_number_of_voters") == len(controllers)
            and v.get("kafka_server_raft_metrics_high_watermark", -1) > 0
            for v in served.values()
        )
        if (len(leaders) == 1 and leaders <= controllers and voting and active == 1) or (
            time.monotonic() > deadline
        ):
            return served
        time.sleep(2)


def idle_share(value: float) -> bool:
    """A request handler pool's idle share. Kafka serves it as the one-minute rate of a meter
    of idle nanoseconds per second and thread, which overshoots 1 by a little when ticks come
    late on busy cores (seen: 1.000134 on a broker of this cluster); more would be no share."""
    return 0 <= value <= IDLE_OVERSHOOT


def latency(values: dict[str, float], request: str, quantile: str) -> list[str]:
    """The series of a request type's total time at a quantile (one per request type)."""
    return [
        series
        for series in values
        if series.startswith("kafka_network_request_totaltimems{")
        and f'request="{request}"' in series
        and f'quantile="{quantile}"' in series
    ]


def test_every_node_serves_kraft_and_request_handler_metrics(kraft: ProcessCluster) -> None:
    controllers = {int(n.entry["node_id"]) for n in kraft.quorum}
    served = settled(kraft)
    for name, values in served.items():
        # Every node follows the metadata log and knows its leader, one of the controllers.
        assert values["kafka_server_raft_metrics_current_leader"] in controllers, name
        assert values["kafka_server_raft_metrics_number_of_voters"] == len(controllers), name
        assert values["kafka_server_raft_metrics_high_watermark"] > 0, name
        idle = values["kafka_server_requesthandleravgidlepercent"]
        assert idle_share(idle), (name, idle)
    leaders = {v["kafka_server_raft_metrics_current_leader"] for v in served.values()}
    assert len(leaders) == 1  # one leader, seen alike by all
    brokers = [served[n.name] for n in kraft.brokers]
    for values in brokers:
        idle = values["kafka_server_brokerrequesthandleravgidlepercent"]
        assert idle_share(idle), idle
        assert "kafka_server_replicamanager_underreplicatedpartitions" in values
        assert "kafka_server_brokertopicmetrics_messagesin_total" in values
        assert len(latency(values, "Produce", "0.99")) == 1, latency(values, "Produce", "0.99")
        assert len(latency(values, "FetchFollower", "0.999")) == 1
    quorum = [served[n.name] for n in kraft.quorum]
    for values in quorum:
        idle = values["kafka_server_controllerrequesthandleravgidlepercent"]
        assert idle_share(idle), idle
        assert len(latency(values, "Fetch", "0.50")) == 1  # the metadata log's fetches
    assert sum(v["kafka_controller_kafkacontroller_activecontrollercount"] for v in quorum) == 1


def test_the_agent_is_the_jar_each_pods_init_container_fetched(kraft: ProcessCluster) -> None:
    """`jmx_agent: download`: the rendered init container ran (wget from the rendered Maven
    repository, sha256 check) and the JVM above served metrics from what it put in the pod's
    emptyDir."""
    for node in kraft.nodes:
        fetched = node.workdir / "jmx-agent"
        assert sorted(p.name for p in fetched.iterdir()) == ["jmx_prometheus_javaagent.jar"]
        digest = hashlib.sha256((fetched / "jmx_prometheus_javaagent.jar").read_bytes())
        assert digest.hexdigest() == JMX_AGENT_SHA256, node.name


def served_series(text: str) -> set[str]:
    """The Kafka series an agent serves (name and labels), without the agent's and the JVM's own."""
    own = ("jmx_", "jvm_", "process_")
    return {s for s in samples(text) if not s.startswith(own)}


def agent_config(kraft: ProcessCluster, node: Node) -> Path:
    """The node's agent config as its process reads it (the rendered file, mounted)."""
    return kraft.render_dir / node.entry["config_dir"] / "jmx-exporter.yaml"


def served_after_reload(kraft: ProcessCluster, node: Node, config: str) -> str:
    """What the node's agent serves once it has read `config`: it reloads its file when the
    file's modification time changes, and counts each reload."""
    path = agent_config(kraft, node)
    host = node.entry["client_host"]
    before = samples(kraft.metrics(host)).get(RELOADS, 0)
    path.write_text(config)
    deadline = time.monotonic() + 30
    while (served := kraft.metrics(host)) and samples(served).get(RELOADS, 0) <= before:
        assert time.monotonic() < deadline, f"{node.name}'s agent never reloaded its config"
        time.sleep(0.5)
    return served


def test_the_agent_reads_only_the_mbeans_its_rules_match_and_drops_no_series(
    kraft: ProcessCluster,
) -> None:
    for node in (kraft.brokers[0], kraft.quorum[0]):
        rendered = agent_config(kraft, node).read_text()
        every_mbean = yaml.safe_load(rendered)
        del every_mbean["includeObjectNames"]
        listed = kraft.metrics(node.entry["client_host"])
        try:
            unlisted = served_after_reload(kraft, node, yaml.safe_dump(every_mbean))
        finally:
            relisted = served_after_reload(kraft, node, rendered)
        assert served_series(listed) == served_series(unlisted), (
            sorted(served_series(listed) ^ served_series(unlisted))[:10],
            node.name,
        )
        scrape = "jmx_scrape_duration_seconds"
        seconds = [samples(text)[scrape] for text in (listed, unlisted, relisted)]
        print(
            f"\n{node.name}: {len(served_series(listed))} series; scrape {seconds[0]:.3f} s "
            f"with the MBean list, {seconds[1]:.3f} s without it, {seconds[2]:.3f} s with again"
        )
