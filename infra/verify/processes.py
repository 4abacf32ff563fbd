"""Starts a rendered stack on this machine: real ZooKeeper/controllers, brokers and HAProxy.

Every process runs the files `kafkastack render` wrote, unchanged: its own network namespace
gives it the rendered addresses, and bind mounts inside that namespace put the rendered config,
its TLS files, its data dirs and the JMX agent at the container paths they name. JVM flags
(heap, log config) are options, not rendered properties; `KAFKA_OPTS` is the manifest's.
"""

from __future__ import annotations

import atexit
import datetime
import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.model.paths import KAFKA_BIN
from infra.toolchain import ToolchainError, kafka_jvm_classes, kafka_lib, zookeeper_lib
from infra.verify import certificates, pods
from infra.verify.clients import ClientAccess, ServedClient
from infra.verify.errors import VerifyError
from infra.verify.haproxy import start_haproxy
from infra.verify.mounts import mount_script
from infra.verify.network import CLIENT_CIDR_BASE, Host, TestNetwork
from infra.verify.pod_steps import PodSteps

STARTED_MARKERS = {
    "broker": ("Kafka Server started", "] started (kafka.server.KafkaServer)"),
    "controller": ("Kafka Server started",),
    "zookeeper": ("LEADING", "FOLLOWING"),
}


def jars(lib: Callable[[str], Path], kafka_version: str) -> Path:
    try:
        return lib(kafka_version)
    except ToolchainError as err:
        raise VerifyError(str(err)) from None


@dataclass
class Node:
    entry: dict[str, Any]
    host: Host
    workdir: Path
    process: subprocess.Popen[bytes] | None = None
    # The pod's other containers (a voter's quorum-membership), as rendered.
    sidecars: list[subprocess.Popen[bytes]] = field(default_factory=list)
    started_at: int = 0  # bytes in its log before its last start (each start appends)

    @property
    def name(self) -> str:
        return str(self.entry["name"])

    @property
    def role(self) -> str:
        return str(self.entry["role"])

    @property
    def log(self) -> Path:
        return self.workdir / "process.log"

    def log_since_start(self) -> str:
        """What the node logged since its last start ("" before its first)."""
        if not self.log.exists():
            return ""
        return self.log.read_bytes()[self.started_at :].decode(errors="replace")


@dataclass
class ProcessCluster(ClientAccess, PodSteps):
    render_dir: Path
    workdir: Path
    heap_mb: int = 320
    # How long the certificates the nodes start with are valid; cert-manager never issues under
    # 1h (config refuses it), so only a test asks for less, to see a start certificate expire.
    certificate_validity: datetime.timedelta = certificates.VALIDITY
    password: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    nodes: list[Node] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.topology: dict[str, Any] = json.loads((self.render_dir / "topology.json").read_text())
        self.lib = jars(kafka_lib, self.topology["kafka_version"])
        self.agent_dir = pods.jmx_agent_dir()
        self.haproxy_host: Host | None = None
        self._haproxy: subprocess.Popen[bytes] | None = None
        self.network = TestNetwork()
        self.served: dict[str, ServedClient] = {}
        # What the kubelet would hand the pods: the rendered Secrets (placeholder passwords).
        self.secrets = pods.secret_values(self.render_dir)
        users = self.topology["security"]["users"]
        admin = self.topology["security"].get("admin_user", users[0] if users else "")
        rendered_password = self.secrets.get(
            (f"{self.topology['cluster_name']}-user-{admin}", "password")
        )
        if rendered_password is not None:
            self.password = rendered_password
        self._layout()

    # ----- layout ---------------------------------------------------------------------------
    def _layout(self) -> None:
        t = self.topology
        entries = [*t["quorum_nodes"], *t["brokers"]]
        client_ip = {e["name"]: f"{CLIENT_CIDR_BASE}{10 + i}" for i, e in enumerate(entries)}
        haproxy_ip = f"{CLIENT_CIDR_BASE}200"
        names = {e["client_host"]: client_ip[e["name"]] for e in entries}
        # The bootstrap Service's name lands on a broker, as its virtual IP would.
        names[t["bootstrap_host"]] = client_ip[t["brokers"][0]["name"]]
        external = {e["external_host"]: haproxy_ip for e in t["brokers"] if e["external_host"]}
        external[t["external"]["bootstrap_host"]] = haproxy_ip
        network = t["network"]
        if network.get("replication_subnets"):
            raise VerifyError(
                "verify lays out one replication segment; a stack with a subnet per zone "
                "(network.replication.subnets) cannot be started here"
            )
        # Single mode has no second network: the prefix is then never used.
        cidr = network.get("replication_cidr")
        prefix = int(cidr.split("/")[1]) if cidr else 24
        for i, e in enumerate(entries):
            host = Host(
                e["name"].split("-", 1)[1],
                i + 1,
                client_ip[e["name"]],
                e["replication_ip"],
                prefix,
                dict(names),
                run_id=self.network.run_id,
            )
            self.nodes.append(Node(e, host, self.workdir / e["name"]))
        self.network.hosts = [n.host for n in self.nodes]
        if t["external"]["mode"] == "haproxy":
            self.haproxy_host = Host(
                "haproxy", 200, haproxy_ip, None, prefix, dict(names), run_id=self.network.run_id
            )
            self.network.hosts.append(self.haproxy_host)
        self.client_host = Host(
            "client",
            250,
            f"{CLIENT_CIDR_BASE}250",
            None,
            prefix,
            {**names, **external},
            run_id=self.network.run_id,
        )
        self.network.hosts.append(self.client_host)

    # ----- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        atexit.register(self.close)
        # Fresh data every start: formatting is skipped on formatted dirs, and a previous run's
        # SCRAM credentials or cluster id would otherwise linger.
        shutil.rmtree(self.workdir, ignore_errors=True)
        self.network.create()
        self._issue_certificates()
        pods.write_launchers(self.workdir / "kafka-bin", self.lib)
        for node in self.nodes:
            self._prepare_dirs(node)
        # A pod's init containers run before its container, once per pod (a process restart
        # later is a container restart: they do not run again).
        for node in self.quorum:
            self._run_init_containers(node)
            self.start_node(node.name, wait=False)
            self._start_sidecars(node)
        for node in self.quorum:
            self._wait_started(node)
        for node in self.brokers:
            self._run_init_containers(node)
            self.start_node(node.name, wait=False)
            self._start_sidecars(node)
        for node in self.brokers:
            self._wait_started(node)
        self._create_config_maps()
        if self.haproxy_host is not None:
            self._start_haproxy()
        self.wait_for_brokers(len(self.brokers))

    def close(self) -> None:
        self.close_clients()
        for node in self.nodes:
            self._kill(node)
        if self._haproxy is not None:
            self._signal_group(self._haproxy, signal.SIGKILL)
            self._haproxy = None
        self.network.delete()

    @property
    def brokers(self) -> list[Node]:
        return [n for n in self.nodes if n.role == "broker"]

    @property
    def quorum(self) -> list[Node]:
        return [n for n in self.nodes if n.role != "broker"]

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)

    def broker_by_id(self, node_id: int) -> Node:
        return next(n for n in self.brokers if n.entry["node_id"] == node_id)

    # ----- preparation ----------------------------------------------------------------------
    def _issue_certificates(self) -> None:
        self.authority = certificates.new_authority()
        self.ca_file = self.workdir / "ca.crt"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.ca_file.write_bytes(self.authority.pem)
        self.admin_tls = certificates.issue_admin(self.authority, self.topology, self.workdir)
        self.renew_certificates(self.certificate_validity)

    def renew_certificates(self, validity: datetime.timedelta = certificates.VALIDITY) -> None:
        """Every node's Secret anew (new key, new serial), as cert-manager renews it."""
        for node in self.nodes:
            if "tls" in node.entry["paths"]:  # a ZooKeeper server's only when it speaks TLS
                certificates.issue(
                    self.authority, node.entry["certificate"], node.workdir / "tls", validity
                )

    def _mounts(self, node: Node) -> list[tuple[Path, str]]:
        """(host directory, container path) pairs, the config one being the rendered folder."""
        paths = node.entry["paths"]
        pairs = [(self.render_dir / node.entry["config_dir"], paths["config"])]
        pairs += [(self.workdir / "kafka-bin", KAFKA_BIN)]
        pairs += self._secret_volumes(node)
        if "tls" in paths:  # a ZooKeeper server has its Secret only when it speaks TLS
            pairs.append((node.workdir / "tls", paths["tls"]))
        if node.role == "zookeeper":
            pairs += [(node.workdir / "data", paths["data"]), (node.workdir / "log", paths["log"])]
            return pairs
        pairs += [
            (node.workdir / "metadata", paths["metadata"]),
            # The pod's emptyDir its init container fills, or the jar the image would hold.
            (
                node.workdir / "jmx-agent"
                if pods.fetches_agent(self._pod(node))
                else self.agent_dir,
                paths["jmx_agent"],
            ),
        ]
        pairs += [(node.workdir / Path(d).name, d) for d in paths["data"]]
        return pairs + pods.pod_volumes(self._pod(node), node.workdir)

    def _pod(self, node: Node) -> dict[str, Any]:
        manifest = pods.rendered(self.render_dir, "StatefulSet", node.name)
        return dict(manifest["spec"]["template"]["spec"])

    def _secret_volumes(self, node: Node) -> list[tuple[Path, str]]:
        return pods.secret_volumes(self._pod(node), self.secrets, node.workdir)

    def _run_init_containers(self, node: Node) -> None:
        for container in pods.init_containers(self.render_dir, node.name):
            env = pods.environment(container, self.secrets)
            host_network = container["name"] in pods.HOST_NETWORK
            self._run_in(node, pods.command(container), env=env, host_network=host_network)

    def _prepare_dirs(self, node: Node) -> None:
        # Only the run's own folders: the in-pod paths exist only inside the process's mounts.
        for source, _ in self._mounts(node):
            source.mkdir(parents=True, exist_ok=True)
        if node.role == "zookeeper":
            (node.workdir / "data" / "myid").write_text(f"{node.entry['node_id']}\n")

    def _mount_script(self, node: Node, command: str, host_network: bool = False) -> str:
        namespace = None if host_network else node.host.namespace
        return mount_script(self._mounts(node), node.workdir / "mounts", namespace, command)

    def _java(self, main: str, *args: str, options: str = "", classpath: str = "") -> str:
        quoted = " ".join(f"'{a}'" for a in args)
        classes = f"-cp '{classpath}'" if classpath else kafka_jvm_classes(self.lib)
        return f"java -Xms{self.heap_mb}m -Xmx{self.heap_mb}m {options} {classes} {main} {quoted}"

    def _log_option(self, node: Node) -> str:
        config = node.entry["paths"]["config"]
        if node.role == "zookeeper":
            return ""  # logback reads logback.xml from the classpath's config folder
        if int(self.topology["kafka_version"].split(".")[0]) >= 4:
            return f"-Dlog4j2.configurationFile={config}/log4j2.yaml"
        return f"-Dlog4j.configuration=file:{config}/log4j.properties"

    def _config_file(self, node: Node) -> str:
        name = {
            "broker": "server.properties",
            "controller": "controller.properties",
            "zookeeper": "zoo.cfg",
        }[node.role]
        return f"{node.entry['paths']['config']}/{name}"

    def _run_in(
        self,
        node: Node,
        command: str,
        env: dict[str, str] | None = None,
        timeout: float = 180,
        host_network: bool = False,
    ) -> str:
        script = self._mount_script(node, f"sh -c {shlex.quote(command)}", host_network)
        enter = ["ip", "netns", "exec", node.host.namespace]
        if host_network:  # a mount namespace of its own, as `ip netns exec` gives the others
            enter = ["unshare", "--mount", "--propagation", "slave"]
        result = subprocess.run(
            [*enter, "sh", "-c", script],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, **(env or {})},
        )
        if result.returncode != 0:
            raise VerifyError(
                f"{node.name}: {command.split()[0]} failed: "
                f"{result.stdout[-800:]}{result.stderr[-800:]}"
            )
        return result.stdout

    # ----- processes ------------------------------------------------------------------------
    def start_node(self, name: str, wait: bool = True) -> None:
        node = self.node(name)
        pod = self._pod(node)
        jvm = (pods.performance_options(pod), self._log_option(node), pods.jvm_options(pod))
        options = " ".join(jvm)
        main, classpath = "kafka.Kafka", ""
        if node.role == "zookeeper":
            # As zkServer.sh: the config folder first (logback.xml), then ZooKeeper's jars.
            main = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
            zookeeper = jars(zookeeper_lib, self.topology["kafka_version"])
            classpath = f"{node.entry['paths']['config']}:{zookeeper}/*"
        command = self._java(main, self._config_file(node), options=options, classpath=classpath)
        node.workdir.mkdir(parents=True, exist_ok=True)
        with node.log.open("ab") as log:
            log.write(f"\n=== start {time.strftime('%H:%M:%S')}\n".encode())
            node.process = subprocess.Popen(
                [
                    "ip",
                    "netns",
                    "exec",
                    node.host.namespace,
                    "sh",
                    "-c",
                    self._mount_script(node, command),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        node.started_at = node.log.stat().st_size
        if wait:
            self._wait_started(node)

    def _wait_started(self, node: Node, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = node.log_since_start()
            if any(marker in text for marker in STARTED_MARKERS[node.role]):
                return
            if node.process is not None and node.process.poll() is not None:
                raise VerifyError(
                    f"{node.name} exited with {node.process.returncode}: {text[-1500:]}"
                )
            time.sleep(0.3)
        raise VerifyError(f"{node.name} did not start within {timeout:.0f}s; see {node.log}")

    @staticmethod
    def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def stop_node(self, name: str, sig: int = signal.SIGTERM) -> None:
        node = self.node(name)
        if node.process is not None:
            self._signal_group(node.process, sig)
            node.process = None

    def _kill(self, node: Node) -> None:
        for process in [*node.sidecars, *([node.process] if node.process else [])]:
            if process.poll() is None:
                self._signal_group(process, signal.SIGKILL)
        node.process, node.sidecars = None, []

    def _start_haproxy(self) -> None:
        assert self.haproxy_host is not None
        self._haproxy = start_haproxy(
            self.render_dir, self.topology, self.haproxy_host, self.workdir
        )
