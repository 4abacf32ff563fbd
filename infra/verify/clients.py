"""Clients of a started stack: each operation runs `infra.verify.client` inside the client
host's network namespace, against the CLIENT listeners or through HAProxy.

The questions go to one serving process per test host (`ServedClient`), started at the first
and kept until the cluster closes: a process per question paid the interpreter's start and the
Kafka client's import each time (about 0.3 CPU-s, 400 of them in a run of the suite), on the
cores the brokers under test share. Requests travel on its stdin, so the logins in them never
show on a command line. Background producers still get a process each (`spawn_client`).
"""

from __future__ import annotations

import contextlib
import json
import selectors
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from infra.verify.errors import VerifyError
from infra.verify.network import Host

REPO = Path(__file__).resolve().parent.parent.parent
SERVE = [sys.executable, "-m", "infra.verify.client", "--serve"]
FAILED = "failed"  # the key of the serving process's reply when an operation raised


class ServedClient:
    """`infra.verify.client --serve` behind a wrapper (a network namespace, a resolver): one
    JSON request per line on its stdin, one JSON reply per line on its stdout. Started at the
    first request and again after it ended, each time with the argv `command()` makes then (it
    may write what its wrapper needs); its stderr is appended to `errors`."""

    def __init__(self, command: Callable[[], list[str]], errors: Path) -> None:
        self.command = command
        self.errors = errors
        self._process: subprocess.Popen[str] | None = None

    def _started(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            self.errors.parent.mkdir(parents=True, exist_ok=True)
            with self.errors.open("a", encoding="utf-8") as errors:
                self._process = subprocess.Popen(
                    self.command(),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    text=True,
                    cwd=REPO,
                )
        return self._process

    def ask(self, request: dict[str, Any], seconds: float) -> dict[str, Any] | None:
        """The reply, or None when none came within `seconds` (the process is then ended, and
        the next request starts another)."""
        process = self._started()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
        except OSError:  # it had ended: its stdin is a broken pipe
            line = ""
        else:
            line = _line_within(process.stdout, seconds)
        if not line:
            self.close()
            return None
        reply: dict[str, Any] = json.loads(line)
        return reply

    def said(self) -> str:
        """The end of what it wrote on stderr."""
        if not self.errors.is_file():
            return ""
        return self.errors.read_text(encoding="utf-8", errors="replace")[-1500:]

    def close(self) -> None:
        """End the process (its stdin closes: it leaves its loop), killed if it does not."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):  # it had ended: a broken pipe
                process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _line_within(stream: IO[str], seconds: float) -> str:
    """The next line of `stream`, or "" when none came within `seconds` (or it ended)."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if selector.select(left):
                return stream.readline()
    return ""


class ClientAccess:
    """What ProcessCluster offers its callers for talking to the cluster (a mixin: it reads
    the started cluster's topology, password, CA file, client host and brokers)."""

    topology: dict[str, Any]
    password: str
    ca_file: Path
    admin_tls: Path | None  # mTLS: the admin's tls.crt, tls.key, ca.crt
    client_host: Host
    workdir: Path
    served: dict[str, ServedClient]  # by network namespace

    @property
    def broker_hosts(self) -> list[str]:
        port = self.topology["ports"]["client"]
        return [f"{b['client_host']}:{port}" for b in self.topology["brokers"]]

    def _tls(self) -> dict[str, str]:
        """Trust the stack's CA and check the broker's name against its certificate."""
        return {
            "ssl.ca.location": str(self.ca_file),
            "ssl.endpoint.identification.algorithm": "https",
        }

    def internal_security(self) -> dict[str, str]:
        """The admin on the CLIENT listener: its SCRAM login, over TLS when the stack says so,
        or with mTLS its client certificate (the one the rendered admin Certificate asks for)."""
        security = self.topology["security"]
        protocol = security.get("client_protocol", "SASL_PLAINTEXT")
        if protocol == "SSL":
            if self.admin_tls is None:
                raise VerifyError("mTLS clients need the admin's client certificate")
            return {
                "security.protocol": "SSL",
                **self._tls(),
                "ssl.certificate.location": str(self.admin_tls / "tls.crt"),
                "ssl.key.location": str(self.admin_tls / "tls.key"),
            }
        settings = {
            "security.protocol": protocol,
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": security.get("admin_user", security["users"][0]),
            "sasl.password": self.password,
        }
        if protocol == "SASL_SSL":
            settings.update(self._tls())
        return settings

    def external_security(self) -> dict[str, str]:
        """EXTERNAL is TLS whatever CLIENT is: SCRAM over it, or the client certificate."""
        internal = self.internal_security()
        if internal["security.protocol"] == "SSL":
            return internal
        return {**internal, "security.protocol": "SASL_SSL", **self._tls()}

    @property
    def bootstrap(self) -> str:
        return ",".join(self.broker_hosts)

    @property
    def external_bootstrap(self) -> str:
        external, ports = self.topology["external"], self.topology["ports"]
        return f"{external['bootstrap_host']}:{ports['external_advertised']}"

    def client(
        self, op: str, external: bool = False, timeout: float = 180, **request: Any
    ) -> dict[str, Any]:
        """Run one client operation on the client host; returns its JSON reply."""
        request = {
            "op": op,
            "bootstrap": self.external_bootstrap if external else self.bootstrap,
            "security": self.external_security() if external else self.internal_security(),
            **request,
        }
        result = self.client_process(request, timeout)
        return result

    def python_on_client_host(
        self, *args: str, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """`python ARGS` (this interpreter, the repository as its folder) on the client host,
        as an operator's machine in the cluster network runs it; its output, whatever its exit."""
        return subprocess.run(
            ["ip", "netns", "exec", self.client_host.namespace, sys.executable, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=REPO,
        )

    def wait_for_brokers(self, count: int, timeout: float = 120) -> None:
        """Until `count` brokers are registered (a metadata request through the client)."""
        deadline = time.monotonic() + timeout
        seen: list[int] = []
        while time.monotonic() < deadline:
            try:
                seen = self.client("describe", topic="__none__", timeout=60)["brokers"]
            except VerifyError:
                seen = []
            if len(seen) >= count:
                return
            time.sleep(1)
        raise VerifyError(f"only brokers {seen} registered; expected {count}")

    def metrics(self, host: str) -> str:
        """What a node's metrics endpoint serves (Prometheus text), fetched from the client host."""
        url = f"http://{host}:{self.topology['ports']['metrics']}/metrics"
        fetched = subprocess.run(
            ["ip", "netns", "exec", self.client_host.namespace, "curl", "-fsS", "-m", "30", url],
            capture_output=True,
            text=True,
            check=False,
        )
        if fetched.returncode != 0:
            raise VerifyError(f"GET {url}: {fetched.stderr.strip()}")
        return fetched.stdout

    def client_process(
        self, request: dict[str, Any], timeout: float, host: Host | None = None
    ) -> dict[str, Any]:
        """`host`: the test host to run on (a node's, to reach its peers' second network); by
        default the client host."""
        namespace = (host or self.client_host).namespace
        if namespace not in self.served:
            errors = self.workdir / "clients" / f"{namespace}.err"
            self.served[namespace] = ServedClient(
                lambda: ["ip", "netns", "exec", namespace, *SERVE], errors
            )
        served = self.served[namespace]
        reply = served.ask(request, timeout)
        if reply is None:
            raise VerifyError(
                f"client {request['op']}: no answer in {timeout:.0f} s: {served.said()}"
            )
        if FAILED in reply:
            raise VerifyError(f"client {request['op']} failed: {reply[FAILED]}")
        return reply

    def close_clients(self) -> None:
        for served in self.served.values():
            served.close()
        self.served.clear()

    def spawn_client(
        self, request: dict[str, Any], external: bool = False, host: Host | None = None
    ) -> subprocess.Popen[bytes]:
        request.setdefault("bootstrap", self.external_bootstrap if external else self.bootstrap)
        request.setdefault(
            "security", self.external_security() if external else self.internal_security()
        )
        return subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                (host or self.client_host).namespace,
                sys.executable,
                "-m",
                "infra.verify.client",
                json.dumps(request),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO,
        )
