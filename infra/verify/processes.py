"""Starts a rendered stack on this machine: real ZooKeeper/controllers, brokers and HAProxy.

Every process runs the files `kafkastack render` wrote, unchanged: its own network namespace
gives it the rendered addresses, and bind mounts inside that namespace put the rendered config,
its TLS files, its data dirs and the JMX agent at the container paths they name. JVM flags
(heap, log config) are options, not rendered properties; `KAFKA_OPTS` is the manifest's.
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.toolchain import cache_dir
from infra.verify import certificates
from infra.verify.clients import ClientAccess
from infra.verify.errors import VerifyError
from infra.verify.manifests import jmx_agent_dir, kafka_opts
from infra.verify.network import CLIENT_CIDR_BASE, Host, TestNetwork, cleanup

REPO = Path(__file__).resolve().parent.parent.parent
STARTED_MARKERS = {
    "broker": ("Kafka Server started", "] started (kafka.server.KafkaServer)"),
    "controller": ("Kafka Server started",),
    "zookeeper": ("LEADING", "FOLLOWING"),
}


def kafka_lib(version: str) -> Path:
    lib = cache_dir() / "kafka" / version / "lib"
    if not (lib.parent / ".complete").is_file():
        raise VerifyError(
            f"Kafka {version} jars are not in {lib}: run scripts/kafka/fetch.sh {version}"
        )
    return lib


@dataclass
class Node:
    entry: dict[str, Any]
    host: Host
    workdir: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def name(self) -> str:
        return str(self.entry["name"])

    @property
    def role(self) -> str:
        return str(self.entry["role"])

    @property
    def log(self) -> Path:
        return self.workdir / "process.log"


@dataclass
class ProcessCluster(ClientAccess):
    render_dir: Path
    workdir: Path
    heap_mb: int = 320
    password: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    nodes: list[Node] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.topology: dict[str, Any] = json.loads((self.render_dir / "topology.json").read_text())
        self.lib = kafka_lib(self.topology["kafka_version"])
        self.agent_dir = jmx_agent_dir()
        self.haproxy_host: Host | None = None
        self._haproxy: subprocess.Popen[bytes] | None = None
        self.network = TestNetwork()
        self._layout()

    # ----- layout ---------------------------------------------------------------------------
    def _layout(self) -> None:
        t = self.topology
        entries = [*t["quorum_nodes"], *t["brokers"]]
        client_ip = {e["name"]: f"{CLIENT_CIDR_BASE}{10 + i}" for i, e in enumerate(entries)}
        haproxy_ip = f"{CLIENT_CIDR_BASE}200"
        names = {e["client_host"]: client_ip[e["name"]] for e in entries}
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
            )
            self.nodes.append(Node(e, host, self.workdir / e["name"]))
        self.network.hosts = [n.host for n in self.nodes]
        if t["external"]["mode"] == "haproxy":
            self.haproxy_host = Host("haproxy", 200, haproxy_ip, None, prefix, dict(names))
            self.network.hosts.append(self.haproxy_host)
        self.client_host = Host(
            "client", 250, f"{CLIENT_CIDR_BASE}250", None, prefix, {**names, **external}
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
        kraft = self.topology["quorum"]["kind"] == "kraft"
        for node in self.nodes:
            self._prepare_dirs(node)
            if kraft:
                self._format(node)
        for node in self.quorum:
            self.start_node(node.name, wait=False)
        for node in self.quorum:
            self._wait_started(node)
        for node in self.brokers:
            self.start_node(node.name, wait=False)
        for node in self.brokers:
            self._wait_started(node)
        if not kraft:
            # After the brokers: they create the cluster's chroot, which ConfigCommand needs.
            self._add_zookeeper_scram_user()
        if self.haproxy_host is not None:
            self._start_haproxy()
        self.wait_for_brokers(len(self.brokers))

    def close(self) -> None:
        for node in self.nodes:
            self._kill(node)
        if self._haproxy is not None:
            self._signal_group(self._haproxy, signal.SIGKILL)
            self._haproxy = None
        cleanup()

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
        authority = certificates.new_authority()
        self.ca_file = self.workdir / "ca.crt"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.ca_file.write_bytes(authority.pem)
        for node in self.nodes:
            # The names and addresses the rendered Certificate asks cert-manager for.
            wanted = node.entry["certificate"]
            certificates.issue(
                authority,
                node.name,
                wanted["dns_names"],
                wanted["ip_addresses"],
                node.workdir / "tls",
            )

    def _mounts(self, node: Node) -> list[tuple[Path, str]]:
        """(host directory, container path) pairs, the config one being the rendered folder."""
        paths = node.entry["paths"]
        pairs = [(self.render_dir / node.entry["config_dir"], paths["config"])]
        if node.role == "zookeeper":
            pairs += [(node.workdir / "data", paths["data"]), (node.workdir / "log", paths["log"])]
            return pairs
        pairs += [
            (node.workdir / "tls", paths["tls"]),
            (node.workdir / "metadata", paths["metadata"]),
            (self.agent_dir, paths["jmx_agent"]),
        ]
        pairs += [(node.workdir / Path(d).name, d) for d in paths["data"]]
        return pairs

    def _prepare_dirs(self, node: Node) -> None:
        for source, target in self._mounts(node):
            source.mkdir(parents=True, exist_ok=True)
            Path(target).mkdir(parents=True, exist_ok=True)  # mount point in the root file system
        if node.role == "zookeeper":
            (node.workdir / "data" / "myid").write_text(f"{node.entry['node_id']}\n")

    def _mount_script(self, node: Node, command: str) -> str:
        lines = ["set -e"]
        for source, target in self._mounts(node):
            lines.append(f"mount --bind '{source}' '{target}'")
        lines.append(f"exec {command}")
        return "\n".join(lines)

    def _java(self, main: str, *args: str, log_option: str = "", kafka_opts: str = "") -> str:
        quoted = " ".join(f"'{a}'" for a in args)
        return (
            f"java -Xms{self.heap_mb}m -Xmx{self.heap_mb}m -XX:+UseG1GC -Djava.awt.headless=true "
            f"{log_option} {kafka_opts} -cp '{self.lib}/*' {main} {quoted}"
        )

    def _log_option(self, node: Node) -> str:
        config = node.entry["paths"]["config"]
        if node.role != "zookeeper" and int(self.topology["kafka_version"].split(".")[0]) >= 4:
            return f"-Dlog4j2.configurationFile={config}/log4j2.yaml"
        return f"-Dlog4j.configuration=file:{config}/log4j.properties"

    def _config_file(self, node: Node) -> str:
        name = {
            "broker": "server.properties",
            "controller": "controller.properties",
            "zookeeper": "zoo.cfg",
        }[node.role]
        return f"{node.entry['paths']['config']}/{name}"

    def _run_in(self, node: Node, command: str, timeout: float = 120) -> str:
        script = self._mount_script(node, command)
        result = subprocess.run(
            ["ip", "netns", "exec", node.host.namespace, "sh", "-c", script],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0:
            raise VerifyError(
                f"{node.name}: {command.split()[0]} failed: "
                f"{result.stdout[-800:]}{result.stderr[-800:]}"
            )
        return result.stdout

    def _format(self, node: Node) -> None:
        """What the rendered format-storage init container runs, with the same arguments."""
        q = self.topology["quorum"]
        voter = node.role == "controller" or (q["combined"] and node.role == "broker")
        args = [
            "format",
            "--ignore-formatted",
            "-t",
            self.topology["cluster_id"],
            "-c",
            self._config_file(node),
        ]
        if voter:
            args += ["--initial-controllers", q["initial_controllers"]]
            for user in self.topology["security"]["users"]:
                args += ["--add-scram", f"SCRAM-SHA-512=[name={user},password={self.password}]"]
        else:
            args.append("--no-initial-controllers")
        self._run_in(
            node, self._java("kafka.tools.StorageTool", *args, log_option=self._log_option(node))
        )

    def _add_zookeeper_scram_user(self) -> None:
        broker = self.brokers[0]
        zk = ",".join(
            f"{n.entry['replication_ip']}:{self.topology['ports']['zookeeper_client']}"
            for n in self.quorum
        )
        for user in self.topology["security"]["users"]:
            self._run_in(
                broker,
                self._java(
                    "kafka.admin.ConfigCommand",
                    "--zookeeper",
                    f"{zk}/{self.topology['cluster_name']}",
                    "--alter",
                    "--add-config",
                    f"SCRAM-SHA-512=[password={self.password}]",
                    "--entity-type",
                    "users",
                    "--entity-name",
                    user,
                    log_option=self._log_option(broker),
                ),
            )

    # ----- processes ------------------------------------------------------------------------
    def start_node(self, name: str, wait: bool = True) -> None:
        node = self.node(name)
        if node.role == "zookeeper":
            command = self._java(
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                self._config_file(node),
                log_option=self._log_option(node),
            )
        else:
            log_option, opts = self._log_option(node), kafka_opts(self.render_dir, node.name)
            command = self._java(
                "kafka.Kafka", self._config_file(node), log_option=log_option, kafka_opts=opts
            )
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
        node.started_at = node.log.stat().st_size  # type: ignore[attr-defined]
        if wait:
            self._wait_started(node)

    def _wait_started(self, node: Node, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        offset = getattr(node, "started_at", 0)
        while time.monotonic() < deadline:
            text = node.log.read_text(errors="replace")[offset:]
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
        if node.process is not None and node.process.poll() is None:
            self._signal_group(node.process, signal.SIGKILL)
        node.process = None

    def _start_haproxy(self) -> None:
        host = self.haproxy_host
        assert host is not None
        config = self.render_dir / str(self.topology["external"]["haproxy_config"])
        log = (self.workdir / "haproxy.log").open("ab")
        command = ["ip", "netns", "exec", host.namespace, "haproxy", "-db", "-f", str(config)]
        self._haproxy = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        port = self.topology["ports"]["haproxy"]
        deadline = time.monotonic() + 30
        while not host.listening(port):
            if self._haproxy.poll() is not None:  # exited: a config error
                raise VerifyError(
                    f"haproxy exited: {(self.workdir / 'haproxy.log').read_text()[-1500:]}"
                )
            if time.monotonic() > deadline:
                raise VerifyError(f"haproxy did not listen on :{port} within 30 s")
            time.sleep(0.2)
