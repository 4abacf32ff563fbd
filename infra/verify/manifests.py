"""What the harness takes from the rendered manifests and the images, so that it starts each
process the way its pod would: the Kafka container's environment and the JMX agent's jar."""

from __future__ import annotations

from pathlib import Path

import yaml

from infra.image_config import JMX_AGENT_VERSION
from infra.toolchain import cache_dir
from infra.verify.errors import VerifyError


def jmx_agent_dir() -> Path:
    """What the image (or its init container) holds at the agent's path: scripts/kafka/fetch.sh
    put the same pinned jar here."""
    folder = cache_dir() / "jmx-agent" / JMX_AGENT_VERSION
    if not (folder / "jmx_prometheus_javaagent.jar").is_file():
        raise VerifyError(f"the JMX agent is not in {folder}: run scripts/kafka/fetch.sh")
    return folder


def kafka_opts(render_dir: Path, workload: str) -> str:
    """`KAFKA_OPTS` of a workload's Kafka container, as its rendered StatefulSet sets it
    (`kafka-run-class.sh` hands it to java)."""
    path = render_dir / "kubernetes" / "StatefulSet" / f"{workload}.yaml"
    pod = yaml.safe_load(path.read_text())["spec"]["template"]["spec"]
    kafka = next(c for c in pod["containers"] if c["name"] == "kafka")
    return next((e["value"] for e in kafka.get("env", []) if e["name"] == "KAFKA_OPTS"), "")
