"""`kafkastack render`: every object a stack declares, with no cluster and no Pulumi backend.

The real program runs under Pulumi's mock runtime; each resource registration is captured and
written as one YAML file per object, next to the rendered config files and `topology.json`
(what `kafkastack verify` needs to lay the cluster out on one machine).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime import MockCallArgs, MockResourceArgs, Mocks, set_mocks

from infra.engine import LOCAL_PASSPHRASE, Engine, placeholder_passwords
from infra.errors import ConfigError
from infra.model import labels, templating, zookeeper_tls
from infra.model.broker_config import client_protocol
from infra.model.cluster import ClusterModel
from infra.model.paths import (
    CONFIG_DIR,
    JMX_AGENT_DIR,
    METADATA_DIR,
    TLS_DIR,
    ZK_CONFIG_DIR,
    ZK_DATA_DIR,
    ZK_LOG_DIR,
    ZK_TLS_DIR,
)
from infra.model.security import certificate_dns_names
from infra.program import provision
from infra.stack_config import StackConfig

CONFIG_FOLDERS = {
    labels.BROKER: "brokers",
    labels.CONTROLLER: "controllers",
    labels.ZOOKEEPER: "zookeeper",
}


@dataclass(frozen=True)
class Captured:
    type: str
    name: str
    inputs: dict[str, Any]


class _Capture(Mocks):
    def __init__(self) -> None:
        self.resources: list[Captured] = []

    def new_resource(self, args: MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append(Captured(args.typ, args.name, dict(args.inputs)))
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None


def capture(config: StackConfig, passwords: dict[str, str] | None = None) -> list[Captured]:
    """Run the program under mocks and return every resource it registered.

    `passwords`: secret config by key (`password-<user>`), as `pulumi config set --secret`
    would hold it; a key not given holds the visible placeholder."""
    mocks = _Capture()
    set_mocks(mocks, project="kafkastack", stack=config.environment, preview=False)
    # The same keys the real program asks Pulumi for.
    values = {**placeholder_passwords(config, prefix=""), **(passwords or {})}
    secrets = {key: pulumi.Output.secret(value) for key, value in values.items()}

    @pulumi.runtime.test  # type: ignore[untyped-decorator]
    def run() -> pulumi.Output[Any]:
        # A render under mocks asks no cluster (a real render: renderYamlToDirectory).
        return provision(config, secrets, ask_cluster=False).bootstrap

    run()
    return mocks.resources


# Pulumi marks secret values with this signature key when it serializes them.
SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"


def _unwrap_secrets(value: Any) -> Any:
    """Secret values as their plain (placeholder) value, as Kubernetes would receive them."""
    if isinstance(value, dict):
        if SECRET_SIG_KEY in value:
            return _unwrap_secrets(value.get("value"))
        return {k: _unwrap_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap_secrets(v) for v in value]
    # The mock runtime carries numbers as protobuf doubles; ports and counts are integers.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def manifest(resource: Captured) -> dict[str, Any] | None:
    """A Kubernetes object from a captured `kubernetes:<group/version>:<Kind>` registration."""
    if not resource.type.startswith("kubernetes:"):
        return None  # component resources and providers are not objects
    _, group_version, kind = resource.type.split(":", 2)
    # A patch stands for fields of the object it patches; the provider renders that object.
    kind = kind.removesuffix("Patch")
    api_version = (
        group_version[len("core/") :] if group_version.startswith("core/") else group_version
    )
    body = {
        k: _unwrap_secrets(v) for k, v in resource.inputs.items() if k not in ("apiVersion", "kind")
    }
    return {"apiVersion": api_version, "kind": kind, **body}


def topology(model: ClusterModel) -> dict[str, Any]:
    p = model.ports

    def node_entry(n: Any) -> dict[str, Any]:
        entry = {
            "name": n.workload,
            "pod": model.names.pod(n.workload),
            "role": n.role,
            "node_id": n.node_id,
            "zone": n.zone,
            "client_host": n.client_host,
            "replication_ip": n.replication_ip,
            "external_host": n.external_host if n.role == labels.BROKER else None,
            "config_dir": f"config/{CONFIG_FOLDERS[n.role]}/{n.workload}",
        }
        entry["certificate"] = {
            "secret": model.names.tls_secret(n.workload),
            "common_name": model.names.node_principal,
            "dns_names": certificate_dns_names(model, n),
            "ip_addresses": [n.replication_ip] if n.replication_ip else [],
        }
        if n.role == labels.ZOOKEEPER:
            entry["paths"] = {"config": ZK_CONFIG_DIR, "data": ZK_DATA_DIR, "log": ZK_LOG_DIR}
            if zookeeper_tls.applies(model.config):
                entry["paths"]["tls"] = ZK_TLS_DIR
        else:
            entry["paths"] = {
                "config": CONFIG_DIR,
                "tls": TLS_DIR,
                "metadata": METADATA_DIR,
                "data": model.log_dirs if n.role == labels.BROKER else [],
                "jmx_agent": JMX_AGENT_DIR,
            }
        return entry

    c = model.config
    return {
        "environment": c.environment,
        "cluster_name": c.cluster_name,
        "namespace": c.namespace,
        "cluster_id": model.cluster_id,
        "kafka_version": c.kafka_version,
        "bootstrap_host": model.names.bootstrap_dns,
        "quorum": {
            "kind": c.quorum.kind,
            "combined": c.quorum.combined,
            "initial_controllers": model.metadata.initial_voters(model),
        },
        "network": {
            "mode": c.network.mode,
            # One segment over every zone; per-zone subnets (clouds) are listed apart.
            "replication_cidr": c.network.replication.cidr if c.network.replication else None,
            "replication_subnets": c.network.replication.subnets if c.network.replication else None,
        },
        "ports": {
            "client": p.client,
            "replication": p.replication,
            "controller": p.controller,
            "external": p.external,
            "external_advertised": p.route,
            "metrics": p.metrics,
            "zookeeper_client": p.zookeeper_client,
            "haproxy": p.haproxy,
        },
        "security": {
            "client_auth": c.security.client_auth,
            "client_protocol": client_protocol(model),
            "replication_tls": c.security.replication_tls,
            "users": c.security.users,
            "admin_user": c.security.admin_user,
            # mTLS: the Secret of the admin's client certificate (CN = admin_user).
            "admin_tls_secret": model.names.admin_tls_secret,
        },
        "external": {
            "mode": c.external.mode,
            "bootstrap_host": model.names.external_bootstrap,
            "haproxy_config": "config/haproxy/haproxy.cfg"
            if c.external.mode == "haproxy"
            else None,
        },
        "brokers": [node_entry(b) for b in model.brokers],
        "quorum_nodes": [node_entry(q) for q in model.quorum],
    }


def manifests(
    config: StackConfig, passwords: dict[str, str] | None = None
) -> dict[tuple[str, str], dict[str, Any]]:
    """Every Kubernetes object the stack declares, by (kind, name) (`passwords`: see capture)."""
    objects = {}
    for resource in capture(config, passwords):
        obj = manifest(resource)
        if obj is not None:
            objects[(obj["kind"], obj["metadata"]["name"])] = obj
    return objects


def engine_manifests(
    stack_file: Path, config: StackConfig, workdir: Path
) -> dict[tuple[str, str], dict[str, Any]]:
    """Every object as the real engine and Kubernetes provider produce it, with no cluster:
    `pulumi up` with the provider's `renderYamlToDirectory` into a throwaway backend."""
    target = workdir / "provider-output"
    engine = Engine(state_dir=workdir / "state", passphrase=LOCAL_PASSPHRASE)
    # Rendered files hold secrets in clear text: a visible placeholder, as in the mock render.
    engine.select(
        config.environment,
        stack_file,
        {"kubernetes:renderYamlToDirectory": str(target), **placeholder_passwords(config)},
    )
    engine.up(config.environment)
    objects = {}
    for path in sorted(target.rglob("*.yaml")):
        for obj in yaml.load_all(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader):
            if obj:
                objects[(obj["kind"], obj["metadata"]["name"])] = obj
    return objects


RENDER_MARKER = "topology.json"


def _clear(out: Path) -> None:
    """Empty `out` for a new render, but only if it is empty or holds an earlier render."""
    if not out.exists():
        return
    if not out.is_dir() or (any(out.iterdir()) and not (out / RENDER_MARKER).is_file()):
        raise ConfigError(
            f"--out {out}: exists and is not an earlier render (no {RENDER_MARKER}); "
            "name a new or empty directory"
        )
    shutil.rmtree(out)


def write(
    config: StackConfig,
    out: Path,
    objects: dict[tuple[str, str], dict[str, Any]] | None = None,
) -> dict[str, int]:
    """Render the stack into `out` (replacing an earlier render); returns counts per kind.

    `objects` are the Kubernetes objects to write; by default the mock runtime's.
    """
    model = ClusterModel.from_config(config)
    objects = manifests(config) if objects is None else objects
    _clear(out)
    counts: dict[str, int] = {}
    for (kind, name), obj in objects.items():
        path = out / "kubernetes" / kind / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.dump(obj, Dumper=yaml.CSafeDumper, sort_keys=True), encoding="utf-8")
        counts[kind] = counts.get(kind, 0) + 1
    topo = topology(model)
    for entry, node in zip(
        topo["brokers"] + topo["quorum_nodes"], model.brokers + model.quorum, strict=True
    ):
        directory = out / entry["config_dir"]
        directory.mkdir(parents=True, exist_ok=True)
        for filename, text in templating.node_files(model, node).items():
            (directory / filename).write_text(text, encoding="utf-8")
        if node.role == labels.ZOOKEEPER:
            (directory / "myid").write_text(f"{node.node_id}\n", encoding="utf-8")
    if config.external.mode == "haproxy":
        (out / "config" / "haproxy").mkdir(parents=True, exist_ok=True)
        (out / "config" / "haproxy" / "haproxy.cfg").write_text(
            templating.haproxy_config(model), encoding="utf-8"
        )
    (out / RENDER_MARKER).write_text(json.dumps(topo, indent=2) + "\n", encoding="utf-8")
    return counts
