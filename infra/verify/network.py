"""Test hosts on this machine: one network namespace per process, two separate networks.

A "switch" namespace holds two bridges, one per network; every host gets a veth into the client
bridge and, when it is on it, one into the replication bridge. Only addresses inside these
namespaces are ever contacted. Names resolve through /etc/netns/<ns>/hosts, which
`ip netns exec` mounts over /etc/hosts for that host alone.

Every namespace of a run carries the run's id (`ksv-<id>-<host>`), and the network deletes only
the namespaces it records having made: another run's, or anyone else's `ksv-*`, stay.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "ksv"
CLIENT_BRIDGE = "br-client"
REPLICATION_BRIDGE = "br-repl"
# The client network stands in for the pod network; it must not overlap the replication CIDR.
CLIENT_CIDR_BASE = "10.30.0."
CLIENT_PREFIX = 24
NETNS_ETC = Path("/etc/netns")


class NetworkError(RuntimeError):
    """The namespaces could not be laid out; the message says what `ip` answered."""


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise NetworkError(f"ip {' '.join(args)}: {result.stderr.strip()}")
    return result


def in_ns(namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    return ip("-n", namespace, *args)


@dataclass
class Host:
    """One test host: its namespace, its interfaces and the names it resolves."""

    name: str
    index: int
    client_ip: str
    replication_ip: str | None
    replication_prefix: int = 24
    hosts: dict[str, str] = field(default_factory=dict)
    run_id: str = ""  # the network's; set when the host is added to it

    @property
    def namespace(self) -> str:
        return namespace_name(self.run_id, self.name)

    @property
    def client_if(self) -> str:
        return "eth-client"

    @property
    def replication_if(self) -> str:
        return "eth-repl"

    def listening(self, port: int) -> bool:
        """Whether a TCP socket listens on `port` inside this host's namespace."""
        shown = subprocess.run(
            ["ip", "netns", "exec", self.namespace, "ss", "-Hltn", f"sport = :{port}"],
            capture_output=True,
            text=True,
            check=False,
        )
        return bool(shown.stdout.strip())


def namespace_name(run_id: str, name: str) -> str:
    return f"{PREFIX}-{run_id}-{name}"


def new_run_id() -> str:
    return secrets.token_hex(3)


@dataclass
class TestNetwork:
    hosts: list[Host] = field(default_factory=list)
    run_id: str = field(default_factory=new_run_id)
    created: list[str] = field(default_factory=list)  # namespaces this network made, in order

    @property
    def switch(self) -> str:
        return namespace_name(self.run_id, "switch")

    def _add_namespace(self, name: str) -> None:
        ip("netns", "add", name)
        self.created.append(name)

    def create(self) -> None:
        self._add_namespace(self.switch)
        for bridge in (CLIENT_BRIDGE, REPLICATION_BRIDGE):
            in_ns(self.switch, "link", "add", bridge, "type", "bridge")
            in_ns(self.switch, "link", "set", bridge, "up")
        in_ns(self.switch, "link", "set", "lo", "up")
        for host in self.hosts:
            host.run_id = self.run_id
            self._add_host(host)

    def delete(self) -> None:
        """Remove the namespaces and hosts files this network made, and nothing else."""
        for name in reversed(self.created):
            ip("netns", "delete", name, check=False)
            shutil.rmtree(NETNS_ETC / name, ignore_errors=True)
        self.created.clear()

    def _add_host(self, host: Host) -> None:
        self._add_namespace(host.namespace)
        in_ns(host.namespace, "link", "set", "lo", "up")
        self._plug(
            host, host.client_if, f"c{host.index}", CLIENT_BRIDGE, host.client_ip, CLIENT_PREFIX
        )
        if host.replication_ip:
            self._plug(
                host,
                host.replication_if,
                f"r{host.index}",
                REPLICATION_BRIDGE,
                host.replication_ip,
                host.replication_prefix,
            )
        directory = NETNS_ETC / host.namespace
        directory.mkdir(parents=True, exist_ok=True)
        lines = [
            "127.0.0.1 localhost",
            *(f"{addr} {name}" for name, addr in sorted(host.hosts.items())),
        ]
        (directory / "hosts").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _plug(
        self, host: Host, inner: str, outer: str, bridge: str, address: str, prefix: int
    ) -> None:
        ip(
            "link",
            "add",
            inner,
            "netns",
            host.namespace,
            "type",
            "veth",
            "peer",
            "name",
            outer,
            "netns",
            self.switch,
        )
        in_ns(self.switch, "link", "set", outer, "master", bridge)
        in_ns(self.switch, "link", "set", outer, "up")
        in_ns(host.namespace, "addr", "add", f"{address}/{prefix}", "dev", inner)
        in_ns(host.namespace, "link", "set", inner, "up")

    def byte_counters(self, host: Host) -> dict[str, int]:
        """Bytes sent plus received per interface of a host, from the kernel's counters."""
        totals = {}
        for interface in (host.client_if, host.replication_if):
            result = ip("-n", host.namespace, "-s", "-j", "link", "show", interface, check=False)
            if result.returncode != 0:
                continue
            import json

            stats = json.loads(result.stdout)[0]["stats64"]
            totals[interface] = int(stats["rx"]["bytes"]) + int(stats["tx"]["bytes"])
        return totals


def available() -> str | None:
    """None when namespaces work here, else why not (so callers can fail with the reason)."""
    if shutil.which("ip") is None:
        return "iproute2's `ip` is missing: run scripts/install-system-deps.sh"
    probe = namespace_name(new_run_id(), f"probe{os.getpid()}")
    result = ip("netns", "add", probe, check=False)
    if result.returncode != 0:
        return f"cannot create network namespaces ({result.stderr.strip()}); run as root"
    ip("netns", "delete", probe, check=False)
    return None
