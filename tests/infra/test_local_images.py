"""The images built here (scripts/images/build.sh) hold every script their manifests run: each
`/opt/kafka/bin/*.sh` a container or probe of the stack names is among the Kafka image's
scripts for that release line, and the ZooKeeper image's command is on its PATH."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any, Literal

import pytest

from infra.config import load_stack
from infra.localcluster import images
from infra.localcluster.real_stack import write_real_node_stack
from infra.model.cluster import ClusterModel
from infra.model.desired import desired_state
from infra.model.paths import KAFKA_BIN
from infra.model.resources import tool_jvm_env

KAFKA_SCRIPT = re.compile(rf"{re.escape(KAFKA_BIN)}/([\w-]+\.sh)")


def _containers(model: ClusterModel) -> list[dict[str, Any]]:
    found = []
    for concern in desired_state(model):
        for declared in concern.objects:
            spec = declared.manifest.get("spec", {})
            pod = spec.get("template", {}).get("spec") or spec.get("jobTemplate", {}).get(
                "spec", {}
            ).get("template", {}).get("spec", {})
            found += [*pod.get("initContainers", []), *pod.get("containers", [])]
    return found


def _variant(repo_root: Path, tmp_path: Path, quorum: Literal["kraft", "zookeeper"]) -> Any:
    target = tmp_path / "stacks" / "Pulumi.local.yaml"
    write_real_node_stack(repo_root / "stacks" / "Pulumi.local.yaml", target, quorum=quorum)
    return ClusterModel.from_config(load_stack(target.parent, "local"))


def _scripts(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("*.sh")}


@pytest.mark.parametrize(
    ("quorum", "script_dirs"), [("kraft", ("bin",)), ("zookeeper", ("bin", "bin-3.x"))]
)
def test_every_kafka_script_the_manifests_run_is_in_the_image(
    repo_root: Path,
    tmp_path: Path,
    quorum: Literal["kraft", "zookeeper"],
    script_dirs: tuple[str, ...],
) -> None:
    model = _variant(repo_root, tmp_path, quorum)
    kafka_image = f"{model.config.images.kafka.repository}:{model.config.kafka_version}"
    shipped = set().union(*(_scripts(repo_root / "scripts/images/kafka" / d) for d in script_dirs))
    named = set()
    for container in _containers(model):
        if container["image"] != kafka_image:
            continue
        text = " ".join(
            str(part) for key in ("command", "args") for part in container.get(key, [])
        ) + str({k: v for k, v in container.items() if k.endswith("Probe")})
        named |= set(KAFKA_SCRIPT.findall(text))
    assert named, "the manifests run no script of the image: the pattern no longer matches"
    assert named - shipped == set()


def test_the_zookeeper_image_runs_the_manifests_command(repo_root: Path, tmp_path: Path) -> None:
    model = _variant(repo_root, tmp_path, "zookeeper")
    assert model.config.images.zookeeper.image == images.ZOOKEEPER.ref
    servers = [c for c in _containers(model) if c["name"] == "zookeeper"]
    assert len(servers) == model.config.quorum_nodes
    on_path = _scripts(repo_root / "scripts/images/zookeeper/bin")
    assert {c["command"][0] for c in servers} <= on_path


def _run_class(repo_root: Path, opt: Path, env: dict[str, str]) -> list[str]:
    """What the image's kafka-run-class.sh hands java, laid out as in the image under `opt`, with
    a `java` that prints its arguments one per line."""
    (opt / "bin").mkdir(parents=True, exist_ok=True)
    runner = opt / "bin" / "kafka-run-class.sh"
    runner.write_bytes((repo_root / "scripts/images/kafka/bin/kafka-run-class.sh").read_bytes())
    runner.chmod(0o755)
    java = opt / "jre" / "bin" / "java"
    java.parent.mkdir(parents=True, exist_ok=True)
    java.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n', encoding="utf-8")
    java.chmod(0o755)
    done = subprocess.run(
        [str(runner), "kafka.Kafka"],
        env={"PATH": os.environ["PATH"], "JAVA_HOME": str(opt / "jre"), **env},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.splitlines()


def test_the_kafka_runner_lists_jars_by_name_and_maps_the_images_class_archive(
    repo_root: Path, tmp_path: Path
) -> None:
    """The class archive holds only for the classpath it was dumped with, so the runner lists the
    jars in name order (the JVM's own `libs/*` follows the directory's order, which another copy
    of the image need not keep) and maps `kafka.jsa` when the image has one."""
    opt = tmp_path / "kafka"
    (opt / "libs").mkdir(parents=True)
    names = ["zstd-jni.jar", "kafka-clients.jar", "jopt-simple.jar", "kafka_2.13.jar"]
    for name in names:
        (opt / "libs" / name).touch()
    argv = _run_class(repo_root, opt, {})
    classpath = argv[argv.index("-cp") + 1].split(":")
    assert classpath == [str(opt / "libs" / n) for n in sorted(names)]
    assert not any(a.startswith("-XX:SharedArchiveFile") for a in argv), argv

    (opt / "kafka.jsa").touch()
    argv = _run_class(repo_root, opt, {})
    assert f"-XX:SharedArchiveFile={opt}/kafka.jsa" in argv
    assert argv.index(f"-XX:SharedArchiveFile={opt}/kafka.jsa") < argv.index("-cp")
    # The image build dumps the archive through the same runner, naming its own options.
    argv = _run_class(repo_root, opt, {"KAFKA_CDS_OPTS": "-Xshare:dump"})
    assert "-Xshare:dump" in argv
    assert not any(a.startswith("-XX:SharedArchiveFile") for a in argv), argv


def test_the_kafka_runner_starts_a_tool_container_with_the_tool_options(
    repo_root: Path, tmp_path: Path
) -> None:
    """The variable the stack's tool containers set (resources.tool_jvm_env) replaces the
    image's broker-minded defaults, as in upstream's kafka-run-class.sh."""
    opt = tmp_path / "kafka"
    (opt / "libs").mkdir(parents=True)
    variable = tool_jvm_env()
    argv = _run_class(repo_root, opt, {variable["name"]: variable["value"]})
    assert "-XX:TieredStopAtLevel=1" in argv and "-XX:+UseSerialGC" in argv
    assert "-XX:+UseG1GC" not in argv
    assert "-XX:+UseG1GC" in _run_class(repo_root, opt, {})  # the servers' default
