"""Settings Kafka applies while it runs reach running brokers through the rendered Job, with no
restart, while the rendered pod templates stay the same (so `pulumi up` rolls nothing)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.verify.jobs import run_job
from infra.verify.processes import Node, ProcessCluster
from tests.infra.conftest import sizing_cluster
from tests.kafka.checks import create
from tests.kafka.conftest import KRAFT_BROKERS, KRAFT_PASSWORDS, KRAFT_SECURITY, render_stack

pytestmark = pytest.mark.kafka

# The brokers' sizing in the resized render, and the settings its Job sets, as Kafka names them.
SIZED = {"num_io_threads": 5, "num_network_threads": 3}
JOB_VALUES = {"num.io.threads": "5", "num.network.threads": "3"}


@pytest.fixture
def running(kraft: ProcessCluster) -> ProcessCluster:
    """The folder's shared KRaft cluster, its settings as its own render has them."""
    return kraft


def resized_render(tmp: Path, **broker: Any) -> tuple[Path, ClusterModel]:
    """The shared cluster's stack with the brokers' sizing changed, rendered apart."""
    cluster = sizing_cluster(brokers=KRAFT_BROKERS)
    cluster["broker"] = {**cluster["broker"], **broker}
    sizing = {"schema_version": "1.0", "source": "tests", "cluster": cluster}
    config = render_stack(
        tmp / "render", KRAFT_BROKERS, KRAFT_PASSWORDS, sizing=sizing, security=KRAFT_SECURITY
    )
    return tmp / "render", ClusterModel.from_config(config)


def pod_template_hash(render_dir: Path, node: Node) -> str:
    path = render_dir / "kubernetes" / "StatefulSet" / f"{node.name}.yaml"
    template = yaml.safe_load(path.read_text())["spec"]["template"]
    return str(template["metadata"]["annotations"][labels.CONFIG_HASH])


def server_properties(render_dir: Path, node: Node) -> str:
    return (render_dir / node.entry["config_dir"] / "server.properties").read_text()


def test_more_threads_reach_the_running_brokers_without_a_restart(
    running: ProcessCluster, tmp_path: Path
) -> None:
    cluster = running
    first = {b.name: b.process.pid for b in cluster.brokers if b.process is not None}
    assert len(first) == len(cluster.brokers)
    render_dir, model = resized_render(tmp_path, **SIZED)
    for broker in cluster.brokers:
        assert "num.io.threads=5" in server_properties(render_dir, broker)
        assert "num.io.threads=5" not in server_properties(cluster.render_dir, broker)
        # What `pulumi up` would compare: the pod templates are the same, nothing restarts.
        assert pod_template_hash(render_dir, broker) == pod_template_hash(
            cluster.render_dir, broker
        )

    try:
        run_job(cluster, model.names.settings_job, render_dir=render_dir)
        check_applied_without_restart(cluster, first)
    finally:
        # The shared cluster left as found: the Job again, as the cluster's own render has it
        # (what its brokers' files say). Left at this test's values, every later restart
        # would resize thread pools right after start, and a resized fetcher pool drops its
        # lag figures: the readiness test's throttled follower then read MaxLag 0.
        run_job(cluster, model.names.settings_job)


def check_applied_without_restart(cluster: ProcessCluster, first: dict[str, int]) -> None:
    """Every broker serves the Job's values as cluster-wide defaults and resized its pools, in
    the process it ran before (`first`: pid per broker)."""
    wanted = {k: [v, "DYNAMIC_DEFAULT_BROKER_CONFIG"] for k, v in JOB_VALUES.items()}
    for broker in cluster.brokers:
        # Each broker takes the change from the metadata log, in its own time: on the shared
        # cluster, just after a test that paused the controllers, one still served the old
        # value when first asked.
        deadline = time.monotonic() + 30
        while True:
            configs = cluster.client("describe_configs", broker=broker.entry["node_id"])
            served = {k: configs["configs"][k] for k in wanted}
            if served == wanted:
                break
            assert time.monotonic() < deadline, f"{broker.name} serves {served}"
            time.sleep(0.5)
        # The running process took it in: it resized its request handler pool.
        resized = "Resizing request handler thread pool size from 8 to 5"
        while resized not in broker.log.read_text(errors="replace"):
            assert time.monotonic() < deadline, f"{broker.name} never resized its handlers"
            time.sleep(0.5)
        assert broker.process is not None and broker.process.poll() is None
        assert broker.process.pid == first[broker.name]
    create(cluster, "after-settings", partitions=3)  # topics are never created by a write
    produced = cluster.client("produce", topic="after-settings", count=100, keys=5)
    assert len(produced["acked"]) == 100, produced["errors"][:5]
