"""Commands an operator runs against the stack from outside its pods (`kafkastack rebalance`),
run on this host against the real-node cluster.

The host routes to pod and Service addresses (kube-proxy and the nodes' bridge live in its
network namespace), but resolves names through its own resolver, which knows nothing of the
cluster. An operator's machine resolves the brokers' advertised names through its DNS; here a
command gets the cluster's DNS as its resolver in a private mount namespace of its own, so the
host's /etc/resolv.conf is never touched. The login is the stack's own: the admin's password
from its Secret, the CA from the stack's CA Secret.

The proofs' questions (where each partition's leader and in-sync set are, where a log ends)
are asked the same way, through `HostAdmin`: one librdkafka process per deployment, where a
Kafka tool in the client pod started a JVM per question (1.3–2.1 CPU-seconds each with TLS and
SCRAM, on the cores the brokers under test share). What the proofs produce and read back stays
in the client pod, inside the cluster's network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.node_config import CLUSTER_DOMAIN, DNS_SERVICE_IP
from infra.model.broker_config import client_protocol
from infra.model.cluster import ClusterModel
from infra.model.security import scram_secret_name
from infra.verify.clients import FAILED, SERVE, ServedClient

RESOLVER = "/etc/resolv.conf"


def with_cluster_dns(folder: Path, namespace: str, argv: list[str]) -> list[str]:
    """`argv` run with the cluster's DNS as its only resolver (root: a mount namespace)."""
    resolv = folder / "resolv.conf"
    folder.mkdir(parents=True, exist_ok=True)
    resolv.write_text(
        f"nameserver {DNS_SERVICE_IP}\n"
        f"search {namespace}.svc.{CLUSTER_DOMAIN} svc.{CLUSTER_DOMAIN} {CLUSTER_DOMAIN}\n",
        encoding="utf-8",
    )
    bind = f'mount --bind "$0" {RESOLVER} && exec "$@"'
    private = ["unshare", "--mount", "--propagation", "private", "--"]
    return [*private, "sh", "-c", bind, str(resolv), *argv]


def admin_login(kube: LocalKubernetes, model: ClusterModel, folder: Path) -> dict[str, str]:
    """librdkafka settings of the stack's admin on the CLIENT listener (SCRAM, over TLS when
    the stack says so), its CA written under `folder`."""
    c = model.config
    if c.security.client_auth != "scram-sha-512":
        raise ValueError(f"{c.security.client_auth} logins are not covered here")
    admin = c.security.admin_user
    password = kube.secret_data(c.namespace, scram_secret_name(model, admin))["password"]
    settings = {
        "security.protocol": client_protocol(model),
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": admin,
        "sasl.password": password.decode(),
    }
    if settings["security.protocol"] == "SASL_SSL":
        folder.mkdir(parents=True, exist_ok=True)
        ca = folder / "ca.crt"
        ca.write_bytes(kube.secret_data(c.namespace, model.names.ca)["ca.crt"])
        settings["ssl.ca.location"] = str(ca)
    return settings


def write_login(settings: dict[str, str], path: Path) -> Path:
    """The settings as `--client-config` reads them (key=value), readable by root alone."""
    path.touch(mode=0o600)
    path.chmod(0o600)  # before the password is in it, whoever made the file
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return path


class HostAdmin:
    """The stack's admin asking the brokers from this host: `infra.verify.client --serve` with
    the cluster's DNS, started at the first question and kept until `close()`. `folder` holds
    its resolver, the CA and its error output."""

    REPLY_SECONDS = 120  # above the longest wait of an operation (list_offsets: 30 s + 60 s)

    def __init__(self, kube: LocalKubernetes, model: ClusterModel, folder: Path) -> None:
        self.kube = kube
        self.model = model
        self.folder = folder
        self.bootstrap = f"{model.names.bootstrap_dns}:{model.ports.client}"
        namespace = model.config.namespace
        self._served = ServedClient(
            lambda: with_cluster_dns(folder, namespace, SERVE), folder / "admin.err"
        )
        self._security: dict[str, str] = {}

    def login(self) -> dict[str, str]:
        """The settings the process logs in with: the stack's admin, from its Secrets."""
        return admin_login(self.kube, self.model, self.folder)

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        """One operation's reply; an operation that failed raises, naming it."""
        if not self._security:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._security = self.login()
        # The password travels on the pipe, never on a command line.
        request = {"op": op, "bootstrap": self.bootstrap, "security": self._security, **fields}
        reply = self._served.ask(request, self.REPLY_SECONDS)
        if reply is None:
            said = self._served.said()
            raise LocalClusterError(f"the host's admin client gave no answer to {op}: {said}")
        if FAILED in reply or "error" in reply or reply.get("ok") is False:
            said = reply.get(FAILED, reply.get("error", reply))
            raise LocalClusterError(f"{op} from this host: {said}")
        return reply

    def close(self) -> None:
        """End the process (its stdin closes: it leaves its loop), killed if it does not."""
        self._served.close()
