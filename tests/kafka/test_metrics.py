"""The Prometheus JMX agent the manifests load (`KAFKA_OPTS`), serving each node's metrics.

The names are the ones the agent served from these rules on real Kafka 4.3.1 nodes: KRaft's
raft-metrics on every node, the request handler pools' idle share, broker and controller gauges.
"""

from __future__ import annotations

import hashlib
import time

import pytest

from infra.image_config import JMX_AGENT_SHA256
from infra.verify.processes import ProcessCluster

pytestmark = pytest.mark.kafka

IDLE_OVERSHOOT = 1.01


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
    quorum = [served[n.name] for n in kraft.quorum]
    for values in quorum:
        idle = values["kafka_server_controllerrequesthandleravgidlepercent"]
        assert idle_share(idle), idle
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
