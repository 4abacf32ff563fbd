"""`kafkastack render` on every committed stack: strict schema validation and stable layouts."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path

import kubernetes_validate
import kubernetes_validate.utils
import pytest
import yaml
from typer.testing import CliRunner

from infra import render
from infra.config import load_stack
from infra.engine import PLACEHOLDER_SECRET
from kafkastack.cli import app
from tests.infra.conftest import config_of, sizing_cluster

KUBERNETES_VERSION = "1.36.0"
CUSTOM_KINDS = {
    "Certificate",
    "Issuer",
    "MultiNetworkPolicy",
    "NetworkAttachmentDefinition",
    "Route",
}
STACKS = ["local", "dev", "staging", "prod"]


@pytest.fixture(scope="module", autouse=True)
def _schemas_read_once() -> Iterator[None]:
    # kubernetes-validate re-reads and re-parses its multi-megabyte definitions file for every
    # object it checks; the files do not change during a run, so one read each is enough.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            kubernetes_validate.utils,
            "schema_contents",
            functools.cache(kubernetes_validate.utils.schema_contents),
        )
        yield


def objects(out: Path) -> dict[tuple[str, str], dict]:  # type: ignore[type-arg]
    return {
        (p.parent.name, p.stem): yaml.load(p.read_text(), Loader=yaml.CSafeLoader)
        for p in sorted((out / "kubernetes").glob("*/*.yaml"))
    }


@pytest.mark.parametrize("stack", STACKS)
def test_every_rendered_builtin_object_passes_strict_validation(
    repo_root: Path, tmp_path: Path, stack: str
) -> None:
    result = CliRunner().invoke(app, ["render", "--stack", stack, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    rendered = objects(tmp_path)
    builtin = [o for (kind, _), o in rendered.items() if kind not in CUSTOM_KINDS]
    assert len(builtin) >= 20
    for obj in builtin:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
    for (kind, _), obj in rendered.items():
        if kind in CUSTOM_KINDS:
            assert obj["apiVersion"] in {
                "cert-manager.io/v1",
                "k8s.cni.cncf.io/v1",
                "k8s.cni.cncf.io/v1beta1",
                "route.openshift.io/v1",
            }
            assert obj["metadata"]["namespace"] == "kafka"


def test_render_writes_configs_and_topology(repo_root: Path, tmp_path: Path) -> None:
    render.write(load_stack(repo_root / "stacks", "local"), tmp_path)
    topology = json.loads((tmp_path / "topology.json").read_text())
    # The local stack's sizing (12 brokers) asks for five KRaft voters.
    assert topology["quorum"]["kind"] == "kraft" and len(topology["quorum_nodes"]) == 5
    for broker in topology["brokers"]:
        props = (tmp_path / broker["config_dir"] / "server.properties").read_text()
        assert f"broker.rack={broker['zone']}" in props
        assert f"REPLICATION://{broker['replication_ip']}:9091" in props
    assert (
        "use_backend broker-0 if { req_ssl_sni -i broker-0."
        in (tmp_path / "config/haproxy/haproxy.cfg").read_text()
    )
    configmap = yaml.safe_load(
        (tmp_path / "kubernetes/ConfigMap/kafka-broker-0-config.yaml").read_text()
    )
    assert (
        configmap["data"]["server.properties"]
        == (tmp_path / "config/brokers/kafka-broker-0/server.properties").read_text()
    )


def test_zookeeper_stack_renders_an_ensemble(repo_root: Path, tmp_path: Path) -> None:
    render.write(load_stack(repo_root / "stacks", "dev"), tmp_path)
    zoo = (tmp_path / "config/zookeeper/kafka-zookeeper-1/zoo.cfg").read_text()
    assert "server.3=10.21.0.3:2888:3888" in zoo and "dataLogDir=/var/lib/zookeeper/log" in zoo
    assert (tmp_path / "config/zookeeper/kafka-zookeeper-1/myid").read_text() == "1\n"


def test_zookeeper_logs_through_the_logback_config_its_release_reads(
    repo_root: Path, tmp_path: Path
) -> None:
    # ZooKeeper 3.8 (its release, the public image) logs through logback: a log4j file in its
    # config folder is never read, and logback without a config logs everything at DEBUG.
    import xml.etree.ElementTree as ElementTree

    render.write(load_stack(repo_root / "stacks", "dev"), tmp_path)
    folder = tmp_path / "config/zookeeper/kafka-zookeeper-1"
    assert sorted(p.name for p in folder.iterdir() if p.name != "myid") == [
        "logback.xml",
        "zoo.cfg",
    ]
    config = ElementTree.parse(folder / "logback.xml").getroot()
    assert config.find("root").get("level") == "INFO"  # type: ignore[union-attr]
    # Milliseconds need the quotes: logback reads a bare comma in %d{} as its time-zone argument.
    assert '%d{"yyyy-MM-dd HH:mm:ss,SSS"}' in (folder / "logback.xml").read_text()
    assert config.find("appender").get("class") == "ch.qos.logback.core.ConsoleAppender"  # type: ignore[union-attr]
    configmap = yaml.safe_load(
        (tmp_path / "kubernetes/ConfigMap/kafka-zookeeper-1-config.yaml").read_text()
    )
    assert set(configmap["data"]) == {"zoo.cfg", "logback.xml"}


def test_secrets_are_never_written_from_config(repo_root: Path, tmp_path: Path) -> None:
    render.write(load_stack(repo_root / "stacks", "prod"), tmp_path)
    secret = yaml.safe_load((tmp_path / "kubernetes/Secret/kafka-user-admin.yaml").read_text())
    assert secret["stringData"]["password"] == PLACEHOLDER_SECRET


def test_growing_from_3_to_5_brokers_only_adds(tmp_path: Path) -> None:
    def rendered(brokers: int) -> dict[tuple[str, str], dict]:  # type: ignore[type-arg]
        sizing = {
            "schema_version": "1.0",
            "source": "t",
            "cluster": sizing_cluster(brokers=brokers),
        }
        out = tmp_path / str(brokers)
        render.write(config_of(sizing=sizing), out)
        return objects(out)

    three, five = rendered(3), rendered(5)
    assert set(three) < set(five)
    added = set(five) - set(three)
    assert ("StatefulSet", "kafka-broker-3") in added and ("StatefulSet", "kafka-broker-4") in added
    for key in three:
        if key[0] in {"StatefulSet", "StorageClass", "Certificate"}:
            assert three[key] == five[key], f"{key} would change"


def test_render_refuses_an_unsafe_stack(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.bad.yaml").write_text("config:\n  kafkastack:zones: [a]\n")
    result = CliRunner().invoke(
        app,
        ["render", "--stack", "bad", "--out", str(tmp_path / "o"), "--stacks-dir", str(tmp_path)],
    )
    assert result.exit_code == 2 and "kafkastack:sizing: required" in result.output
    assert not (tmp_path / "o").exists()
