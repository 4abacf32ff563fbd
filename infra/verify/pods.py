"""What a node's rendered pod declares, for the harness to run as a kubelet would.

Init containers run as the rendered StatefulSet declares them.

The harness never re-implements a step the manifests perform: it reads the init container from
`kubernetes/StatefulSet/<node>.yaml`, resolves its environment the way the kubelet would (values
as written, `secretKeyRef`s from the rendered Secrets) and runs its command, unchanged, inside
the node's network and mount namespaces. The Kafka image's tools are stood in for by launchers
at the same path (/opt/kafka/bin) that start the same main class on the cached jars, with the
same `KAFKA_OPTS`/`KAFKA_HEAP_OPTS`/`KAFKA_JVM_PERFORMANCE_OPTS` the image's scripts pass on.

The JMX agent init container (`jmx_agent: download`) runs as rendered too, with the host's
network (its only way out) and the host's busybox standing in for the image's: it fetches the
jar from the rendered Maven repository into the pod's emptyDir, checks its sha256 and the JVM
loads what it fetched. With `jmx_agent: bundled` the image holds the agent: the harness mounts
the pinned jar scripts/kafka/fetch.sh cached at the path the image has it.

The pod's further containers (a KRaft voter's `quorum-membership`, every Kafka node's
`keystore-reloader`) run as rendered too, beside the node's process, in the same namespaces.
Exec readiness probes (the Kafka and ZooKeeper containers') are run as declared; the
membership container has none (its startup probe only gates the kubelet's first Ready).

Certificate Secrets are cert-manager's to write: the harness issues their files itself
(`certificates.py`) and mounts them where the pod mounts the Secret.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import yaml

from infra.image_config import JMX_AGENT_VERSION
from infra.model import certificate_reload, membership
from infra.model.paths import SCRIPT_LOG_VOLUME
from infra.model.resources import JVM_PERFORMANCE_VARIABLE
from infra.toolchain import cache_dir, kafka_jvm_classes
from infra.verify.errors import VerifyError

RUN_HERE = ("jmx-agent", "format-storage", "scram-users")
# kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS when a pod sets none (the collector of its
# defaults; ZooKeeper's scripts start it the same way).
IMAGE_PERFORMANCE_OPTIONS = "-XX:+UseG1GC -Djava.awt.headless=true"
# The pod's volumes the harness lays out from the manifest (the others, config, TLS, data and
# the agent, it maps itself): the voters' birth record (an optional ConfigMap, which exists only
# once created), their membership container's emptyDir, the keystore reloader's, and the one
# the Kafka container's scripts and readiness probe write to (in_sync.py's files).
POD_VOLUMES = (
    SCRIPT_LOG_VOLUME,
    membership.RECORD_VOLUME,
    membership.STATE_VOLUME,
    certificate_reload.STATE_VOLUME,
)
# Init containers that reach outside the cluster (the JMX agent from its Maven repository): the
# harness's networks have no route out, so they get the host's network (a pod's egress through
# its node), still in a mount namespace of their own with the pod's volumes.
HOST_NETWORK = ("jmx-agent",)
# The image's bin/*.sh scripts the rendered commands call: the classes each one may start (the
# first the release has; Kafka 4 moved some into org.apache.kafka.tools) and the arguments it
# puts first (zookeeper-shell.sh passes `-server` itself).
LAUNCHERS = {
    "kafka-storage.sh": (("kafka.tools.StorageTool",), ""),
    "kafka-configs.sh": (("kafka.admin.ConfigCommand",), ""),
    "kafka-acls.sh": (("org.apache.kafka.tools.AclCommand", "kafka.admin.AclCommand"), ""),
    "kafka-metadata-quorum.sh": (("org.apache.kafka.tools.MetadataQuorumCommand",), ""),
    "zookeeper-shell.sh": (
        ("org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka",),
        "-server",
    ),
}


def _classes(lib: Path) -> set[str]:
    names: set[str] = set()
    for jar in lib.glob("*.jar"):
        with zipfile.ZipFile(jar) as archive:
            names.update(
                n[: -len(".class")].replace("/", ".")
                for n in archive.namelist()
                if n.endswith(".class")
            )
    return names


def write_launchers(bin_dir: Path, lib: Path) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    present = _classes(lib)
    java = (
        "java ${KAFKA_HEAP_OPTS:--Xmx256m} ${KAFKA_JVM_PERFORMANCE_OPTS:-} $KAFKA_OPTS "
        + kafka_jvm_classes(lib)
    )
    for name, (candidates, leading) in LAUNCHERS.items():
        main = next((c for c in candidates if c in present), None)
        if main is None:
            continue  # this release has no such tool; a command calling it fails visibly
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec {java} {main} {leading} "$@"\n', encoding="utf-8")
        script.chmod(0o755)
    # Kafka's runner: the class to run comes first (the admin Jobs call tools by class, as an
    # image with only the runner — the local one — requires).
    runner = bin_dir / "kafka-run-class.sh"
    runner.write_text(f'#!/bin/sh\nexec {java} "$@"\n', encoding="utf-8")
    runner.chmod(0o755)


def rendered(render_dir: Path, kind: str, name: str) -> dict[str, Any]:
    path = render_dir / "kubernetes" / kind / f"{name}.yaml"
    if not path.is_file():
        raise VerifyError(f"{path} is missing: render the stack again")
    return dict(yaml.safe_load(path.read_text(encoding="utf-8")))


def secret_values(render_dir: Path) -> dict[tuple[str, str], str]:
    """(Secret name, key) → value of every rendered Secret (placeholders for passwords)."""
    values = {}
    for path in sorted((render_dir / "kubernetes" / "Secret").glob("*.yaml")):
        secret = yaml.safe_load(path.read_text(encoding="utf-8"))
        for key, value in (secret.get("stringData") or {}).items():
            values[(secret["metadata"]["name"], key)] = str(value)
    return values


def init_containers(render_dir: Path, workload: str) -> list[dict[str, Any]]:
    """The init containers the harness runs for a node, in the manifest's order."""
    pod = rendered(render_dir, "StatefulSet", workload)["spec"]["template"]["spec"]
    return [c for c in pod.get("initContainers", []) if c["name"] in RUN_HERE]


def environment(container: dict[str, Any], secrets: dict[tuple[str, str], str]) -> dict[str, str]:
    env = {}
    for variable in container.get("env", []):
        if "value" in variable:
            env[variable["name"]] = str(variable["value"])
            continue
        ref = variable["valueFrom"]["secretKeyRef"]
        try:
            env[variable["name"]] = secrets[(ref["name"], ref["key"])]
        except KeyError:
            raise VerifyError(
                f"{container['name']}: Secret {ref['name']} key {ref['key']} is not rendered"
            ) from None
    return env


def command(container: dict[str, Any]) -> str:
    """The container's command as one shell line (the rendered ones are `sh -c <script>`)."""
    argv = container["command"]
    if argv[:2] != ["sh", "-c"] or len(argv) != 3:
        raise VerifyError(f"{container['name']}: only `sh -c <script>` commands are run here")
    return str(argv[2])


def secret_volumes(
    pod: dict[str, Any],
    secrets: dict[tuple[str, str], str],
    workdir: Path,
    issued: dict[str, Path] | None = None,
) -> list[tuple[Path, str]]:
    """The pod's volumes from Secrets the stack renders, and from certificate Secrets named in
    `issued` (folder of the harness's own PEM files) when it is given; written under `workdir`:
    (folder, path in the pod) pairs. Other certificate volumes the harness mounts itself."""
    mounts = {
        m["name"]: m["mountPath"]
        for c in (*pod["containers"], *pod.get("initContainers", []))
        for m in c.get("volumeMounts", [])
    }
    pairs = []
    for volume in pod.get("volumes", []):
        secret = volume.get("secret")
        if secret is None or volume["name"] not in mounts:
            continue
        keys = {k: v for (name, k), v in secrets.items() if name == secret["secretName"]}
        if issued and secret["secretName"] in issued:
            keys = {f.name: f.read_text() for f in issued[secret["secretName"]].iterdir()}
        if not keys:
            continue
        directory = workdir / f"secret-{volume['name']}"
        directory.mkdir(parents=True, exist_ok=True)
        for item in secret.get("items") or [{"key": k, "path": k} for k in keys]:
            (directory / item["path"]).write_text(keys[item["key"]], encoding="utf-8")
        pairs.append((directory, mounts[volume["name"]]))
    return pairs


def jvm_options(pod: dict[str, Any]) -> str:
    """What the pod's container hands its JVM through the image's start scripts: KAFKA_OPTS
    (the JMX agent, a JAAS login) or ZooKeeper's SERVER_JVMFLAGS, as rendered."""
    container = pod["containers"][0]
    return " ".join(
        str(variable["value"])
        for variable in container.get("env", [])
        if variable["name"] in ("KAFKA_OPTS", "SERVER_JVMFLAGS") and "value" in variable
    )


def performance_options(pod: dict[str, Any]) -> str:
    """The JVM options the image's start script gives the server: the pod's
    KAFKA_JVM_PERFORMANCE_OPTS when it sets them, else the harness's stand-in for the image's
    defaults (the G1 collector)."""
    for variable in pod["containers"][0].get("env", []):
        if variable["name"] == JVM_PERFORMANCE_VARIABLE and "value" in variable:
            return str(variable["value"])
    return IMAGE_PERFORMANCE_OPTIONS


def fetches_agent(pod: dict[str, Any]) -> bool:
    """The pod's agent comes from its init container, not from the image."""
    return any(c["name"] == "jmx-agent" for c in pod.get("initContainers", []))


def jmx_agent_dir() -> Path:
    """What the image (or its init container) holds at the agent's path: scripts/kafka/fetch.sh
    put the same pinned jar here."""
    folder = cache_dir() / "jmx-agent" / JMX_AGENT_VERSION
    if not (folder / "jmx_prometheus_javaagent.jar").is_file():
        raise VerifyError(f"the JMX agent is not in {folder}: run scripts/kafka/fetch.sh")
    return folder


def pod_volumes(pod: dict[str, Any], workdir: Path) -> list[tuple[Path, str]]:
    """(folder, path in the pod) of the `POD_VOLUMES` the pod has: one folder each under
    `workdir`, empty until the harness fills it (`fill_config_map`, or the containers)."""
    paths = {
        m["name"]: m["mountPath"]
        for c in (*pod["containers"], *pod.get("initContainers", []))
        for m in c.get("volumeMounts", [])
    }
    return [
        (workdir / f"volume-{v['name']}", paths[v["name"]])
        for v in pod.get("volumes", [])
        if v["name"] in POD_VOLUMES and v["name"] in paths
    ]


def fill_config_map(pod: dict[str, Any], workdir: Path, config_map: dict[str, Any]) -> bool:
    """Write `config_map`'s data into the pod's volume of it, as the kubelet does once the
    ConfigMap exists; False when the pod does not mount it."""
    name = config_map["metadata"]["name"]
    volumes = [
        v["name"]
        for v in pod.get("volumes", [])
        if v["name"] in POD_VOLUMES and (v.get("configMap") or {}).get("name") == name
    ]
    for volume in volumes:
        folder = workdir / f"volume-{volume}"
        folder.mkdir(parents=True, exist_ok=True)
        for key, value in (config_map.get("data") or {}).items():
            (folder / key).write_text(str(value), encoding="utf-8")
    return bool(volumes)


def optional_config_maps(pod: dict[str, Any]) -> list[str]:
    """ConfigMaps the pod mounts although they may not exist yet (created after its workload)."""
    return [
        v["configMap"]["name"]
        for v in pod.get("volumes", [])
        if v["name"] in POD_VOLUMES and (v.get("configMap") or {}).get("optional")
    ]


def sidecars(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod's containers beside the node's process (the first container)."""
    return list(pod["containers"][1:])
