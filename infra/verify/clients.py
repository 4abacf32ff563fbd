"""Clients of a started stack: each operation runs `infra.verify.client` inside the client
host's network namespace, against the CLIENT listeners or through HAProxy."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from infra.verify.errors import VerifyError
from infra.verify.network import Host

REPO = Path(__file__).resolve().parent.parent.parent


class ClientAccess:
    """What ProcessCluster offers its callers for talking to the cluster (a mixin: it reads
    the started cluster's topology, password, CA file, client host and brokers)."""

    topology: dict[str, Any]
    password: str
    ca_file: Path
    admin_tls: Path | None  # mTLS: the admin's tls.crt, tls.key, ca.crt
    client_host: Host

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
        proc = self.spawn_client(request, host=host)
        out, err = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            raise VerifyError(f"client {request['op']} failed: {err.decode()[-1500:]}")
        return dict(json.loads(out.decode().strip().splitlines()[-1]))

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
