"""Where the Prometheus JMX agent comes from in each stack, and how the JVM is told to load it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from infra import render
from infra.config import load_stack
from infra.image_config import JMX_AGENT_SHA256, JMX_AGENT_VERSION
from infra.model.paths import JMX_AGENT_JAR
from tests.infra.conftest import config_of
from tests.infra.restricted_profile import pod_specs


def kafka_pods(**overrides: Any) -> dict[str, dict[str, Any]]:
    config = config_of("staging", **overrides)
    return {
        name: spec
        for (kind, name), manifest in render.manifests(config).items()
        if kind == "StatefulSet"
        for spec in pod_specs(manifest)
        if spec["containers"][0]["name"] == "kafka"
    }


def kafka_opts(spec: dict[str, Any]) -> str:
    env = spec["containers"][0]["env"]
    return str(next(e["value"] for e in env if e["name"] == "KAFKA_OPTS"))


def test_the_jvm_loads_the_agent_with_the_nodes_rules_on_the_metrics_port() -> None:
    pods = kafka_pods()
    assert pods
    for spec in pods.values():
        # The agent first; after it, KRaft nodes' controller login (test_controller_login.py).
        assert kafka_opts(spec).split()[0] == (
            f"-javaagent:{JMX_AGENT_JAR}=9404:/etc/kafka/config/jmx-exporter.yaml"
        )


def test_by_default_an_init_container_fetches_the_pinned_agent_and_checks_it() -> None:
    for name, spec in kafka_pods().items():
        init = {c["name"]: c for c in spec["initContainers"]}
        fetch = init["jmx-agent"]
        # The Kafka image itself: no other image to pull.
        assert fetch["image"] == spec["containers"][0]["image"] == "apache/kafka:4.3.1"
        script = fetch["command"][-1]
        assert (
            "https://repo1.maven.org/maven2/io/prometheus/jmx/jmx_prometheus_javaagent/"
            f"{JMX_AGENT_VERSION}/jmx_prometheus_javaagent-{JMX_AGENT_VERSION}.jar"
        ) in script
        assert f"echo '{JMX_AGENT_SHA256}  {JMX_AGENT_JAR}.part' | busybox sha256sum -c -" in script
        # The jar takes its final name only after the checksum matched.
        assert script.index("sha256sum") < script.index(f"mv {JMX_AGENT_JAR}.part {JMX_AGENT_JAR}")
        mounts = {m["mountPath"] for m in spec["containers"][0]["volumeMounts"]}
        assert "/opt/jmx-exporter" in mounts, name


def test_a_mirror_replaces_maven_central() -> None:
    mirror = "https://nexus.example.com/repository/maven-central/"
    for spec in kafka_pods(images={"kafka": {"maven_repository": mirror}}).values():
        script = next(c for c in spec["initContainers"] if c["name"] == "jmx-agent")["command"][-1]
        assert f"{mirror}io/prometheus/jmx/" in script


def test_an_image_with_the_agent_bundled_needs_no_init_container_or_volume() -> None:
    images = {"kafka": {"repository": "registry.example.com/kafka-jmx", "jmx_agent": "bundled"}}
    for spec in kafka_pods(images=images).values():
        assert spec["containers"][0]["image"] == "registry.example.com/kafka-jmx:4.3.1"
        assert "jmx-agent" not in {c["name"] for c in spec["initContainers"]}
        assert "jmx-agent" not in {v["name"] for v in spec["volumes"]}
        assert kafka_opts(spec).startswith(f"-javaagent:{JMX_AGENT_JAR}=")


def test_every_image_of_every_stack_is_one_the_stack_names(repo_root: Path) -> None:
    for stack in ("local", "dev", "staging", "prod"):
        config = load_stack(repo_root / "stacks", stack)
        named = {
            f"{config.images.kafka.repository}:{config.kafka_version}",
            config.images.zookeeper.image,
            config.images.haproxy.image,
        }
        for manifest in render.manifests(config).values():
            for spec in pod_specs(manifest):
                for c in [*spec.get("initContainers", []), *spec["containers"]]:
                    assert c["image"] in named, (stack, c["name"], c["image"])


def test_the_fetch_script_pins_the_same_agent(repo_root: Path) -> None:
    script = (repo_root / "scripts" / "kafka" / "fetch.sh").read_text()
    pins = dict(re.findall(r"^(JMX_AGENT_\w+)=(\S+)$", script, re.M))
    assert pins == {"JMX_AGENT_VERSION": JMX_AGENT_VERSION, "JMX_AGENT_SHA256": JMX_AGENT_SHA256}
