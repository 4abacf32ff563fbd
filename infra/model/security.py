"""Certificates (cert-manager) for TLS listeners, and SCRAM users.

Certificates cover every name a peer dials: the pod DNS name, the replication address and the
external host. Passwords never appear here: the components take them from Pulumi secrets.
"""

from __future__ import annotations

from typing import Any

from infra.model.cluster import ClusterModel
from infra.model.nodes import Node


def certificate(model: ClusterModel, node: Node) -> dict[str, Any]:
    dns = certificate_dns_names(model, node)
    spec: dict[str, Any] = {
        "secretName": model.names.tls_secret(node.workload),
        "dnsNames": dns,
        "duration": "2160h",
        "renewBefore": "360h",
        # Kafka's PEM keystore reads unencrypted PKCS#8 keys.
        "privateKey": {
            "algorithm": "ECDSA",
            "size": 256,
            "encoding": "PKCS8",
            "rotationPolicy": "Always",
        },
        "usages": ["server auth", "client auth"],
        "issuerRef": {"name": model.config.security.certificate_issuer, "kind": "Issuer"},
    }
    if node.replication_ip:
        spec["ipAddresses"] = [node.replication_ip]
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": node.workload, "namespace": model.config.namespace},
        "spec": spec,
    }


def certificate_dns_names(model: ClusterModel, node: Node) -> list[str]:
    """Every name a peer may dial: the pod name; for brokers also the in-cluster bootstrap
    Service (the stack's `bootstrap` output, which lands on any broker), their external host
    and the external bootstrap host."""
    names = [node.client_host]
    if node.role == "broker":
        names.append(model.names.bootstrap_dns)
    if node.role == "broker" and model.config.external.mode != "none" and node.external_host:
        names += [node.external_host, model.names.external_bootstrap]
    return names


def certificates(model: ClusterModel) -> list[dict[str, Any]]:
    return [certificate(model, n) for n in (*model.brokers, *model.quorum) if n.role != "zookeeper"]


def scram_secret_name(model: ClusterModel, user: str) -> str:
    return f"{model.config.cluster_name}-user-{user}"
