"""Commands an operator runs against the stack from outside its pods (`kafkastack rebalance`),
run on this host against the real-node cluster.

The host routes to pod and Service addresses (kube-proxy and the nodes' bridge live in its
network namespace), but resolves names through its own resolver, which knows nothing of the
cluster. An operator's machine resolves the brokers' advertised names through its DNS; here a
command gets the cluster's DNS as its resolver in a private mount namespace of its own, so the
host's /etc/resolv.conf is never touched. The login is the stack's own: the admin's password
from its Secret, the CA from the stack's CA Secret.
"""

from __future__ import annotations

from pathlib import Path

from infra.localcluster.control_plane import LocalKubernetes
from infra.localcluster.node_config import CLUSTER_DOMAIN, DNS_SERVICE_IP
from infra.model.broker_config import client_protocol
from infra.model.cluster import ClusterModel
from infra.model.security import scram_secret_name

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
