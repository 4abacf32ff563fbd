"""The ISR watcher (infra/localcluster/isr_watch.py): its scrape round run by a real shell with
the host's busybox against stand-in metrics endpoints, and the parsing of what it prints."""

from __future__ import annotations

import http.server
import shutil
import subprocess
import threading
from collections.abc import Iterator

import pytest
import yaml

from infra.localcluster.isr_watch import (
    SampledPartition,
    below,
    min_isr_seen,
    one_pass,
    parse_samples,
    watcher_pod,
)
from infra.model import metrics
from infra.model.cluster import ClusterModel
from infra.model.templating import jmx_exporter_config
from infra.network_rules import monitoring_namespace
from tests.infra.conftest import config_of

# As the JMX agent serves it: a leader's count, a follower's zero, another topic.
SERVED = (
    "# HELP kafka_cluster_partition_insyncreplicascount InSyncReplicasCount\n"
    "# TYPE kafka_cluster_partition_insyncreplicascount gauge\n"
    f'{metrics.PARTITION_IN_SYNC}{{partition="0",topic="orders"}} 3.0\n'
    f'{metrics.PARTITION_IN_SYNC}{{partition="1",topic="orders"}} 0.0\n'
    f'{metrics.PARTITION_IN_SYNC}{{partition="2",topic="other"}} 2.0\n'
)


def model() -> ClusterModel:
    return ClusterModel.from_config(config_of())


def serve(text: str) -> Iterator[int]:
    class Metrics(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = text.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Metrics)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture
def endpoint() -> Iterator[int]:
    yield from serve(SERVED)


@pytest.fixture
def follower() -> Iterator[int]:
    """A broker that leads nothing: it serves only zeros."""
    yield from serve(SERVED.replace(" 3.0", " 0.0").replace(" 2.0", " 0.0"))


def test_a_pass_reads_each_broker_and_marks_the_one_that_does_not_answer(
    endpoint: int, follower: int
) -> None:
    assert shutil.which("busybox"), "busybox comes with the system packages (make system-deps)"
    m = model()
    script = one_pass(m)
    first, second, *rest = m.brokers
    port = m.ports.metrics
    script = script.replace(f"{first.client_host}:{port}", f"127.0.0.1:{endpoint}")
    script = script.replace(f"{second.client_host}:{port}", "127.0.0.1:1")  # nothing listens
    for broker in rest:  # the last one leads nothing: the pass still succeeds
        script = script.replace(f"{broker.client_host}:{port}", f"127.0.0.1:{follower}")
    out = subprocess.run(
        ["sh", "-c", script], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert " 0.0" not in out and "# TYPE" not in out  # only leaders' counts reach the log
    [sample] = parse_samples(out)
    assert sample.unanswered == (second.node_id,)
    assert sample.partitions["orders"] == {0: SampledPartition(first.node_id, 3)}
    assert sample.partitions["other"] == {2: SampledPartition(first.node_id, 2)}


def test_two_leaders_seen_half_way_through_a_change_count_the_smaller_set() -> None:
    output = (
        "@sample 1700000000\n@broker 0\n"
        f'{metrics.PARTITION_IN_SYNC}{{partition="0",topic="t",}} 3.0\n'
        "@broker 1\n"
        f'{metrics.PARTITION_IN_SYNC}{{partition="0",topic="t",}} 2.0\n'
        "@broker 2\n@unanswered\n"
        "@sample 1700000001\n@broker 0\n@unanswered\n@broker 1\n@unanswered\n"
    )
    samples = parse_samples(output)
    # The second sample, with no answer at all, judges nothing.
    assert [s.at for s in samples] == [1700000000.0]
    assert samples[0].partitions == {"t": {0: SampledPartition(1, 2)}}
    assert min_isr_seen(samples) == 2 and min_isr_seen(samples, {"u"}) == 0


def test_below_a_size_names_the_time_topic_partition_and_leader() -> None:
    output = (
        "@sample 1700000000\n@broker 0\n"
        f'{metrics.PARTITION_IN_SYNC}{{partition="0",topic="t"}} 3.0\n'
        f'{metrics.PARTITION_IN_SYNC}{{partition="1",topic="t"}} 1.0\n'
    )
    samples = parse_samples(output)
    assert below(samples, 2) == [(1700000000.0, "t", 1, SampledPartition(0, 1))]
    assert below(samples, 1) == [] and below(samples, 2, {"u"}) == []


def test_the_watcher_runs_where_the_brokers_admit_metrics_scrapes() -> None:
    m = model()
    pod = watcher_pod(m, "node-a")
    assert pod["metadata"]["namespace"] == monitoring_namespace(m.config)
    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "node-a"}
    assert pod["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] is False
    loop = pod["spec"]["containers"][0]["command"]
    assert loop == ["sh", "-c", f"while true; do {one_pass(m)}; sleep 1; done"]


def test_the_series_the_watcher_reads_is_one_the_brokers_export() -> None:
    rules = yaml.safe_load(jmx_exporter_config(model()))["rules"]
    [rule] = [r for r in rules if r["pattern"].startswith("kafka.cluster<type=Partition")]
    assert "InSyncReplicasCount" in rule["pattern"]
    # The agent lowercases names (lowercaseOutputName) and keeps topic and partition as labels.
    served = rule["name"].replace("$1", "InSyncReplicasCount").lower()
    assert served == metrics.PARTITION_IN_SYNC
    assert rule["labels"] == {"topic": "$2", "partition": "$3"}
