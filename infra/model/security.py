"""Certificates (cert-manager) for TLS listeners, their issuer, and SCRAM users.

Certificates cover every name a peer dials: the pod DNS name, the replication address and the
external host. Every node's certificate carries one common name, the nodes' principal, so the
authorizer's `super.users` does not change when brokers are added. Passwords never appear here:
the components take them from Pulumi secrets.

The issuer is the stack's own unless config names an existing one: a self-signed bootstrap
Issuer signs one CA Certificate, and a CA Issuer signs every node's certificate with it, so all
nodes share one CA (its Secret's `ca.crt` is what clients trust).
"""

from __future__ import annotations

from typing import Any

from infra.model import zookeeper_tls
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node


def _lifetime(model: ClusterModel) -> dict[str, str]:
    """`duration` and `renewBefore` from `security.certificates`; cert-manager takes the same
    notation (hours and minutes)."""
    certificates = model.config.security.certificates
    return {"duration": certificates.duration, "renewBefore": certificates.renew_before}


def certificate(model: ClusterModel, node: Node) -> dict[str, Any]:
    dns = certificate_dns_names(model, node)
    spec: dict[str, Any] = {
        "secretName": model.names.tls_secret(node.workload),
        "dnsNames": dns,
        **_lifetime(model),
        # Kafka's PEM keystore is one file, key then chain: cert-manager writes it as
        # `tls-combined.pem` beside the usual keys, and rewrites it on every renewal, so the
        # Secret is mounted as it is and the node reloads that file (certificate_reload.py).
        "additionalOutputFormats": [{"type": "CombinedPEM"}],
        # Kafka's PEM keystore reads unencrypted PKCS#8 keys.
        "privateKey": {
            "algorithm": "ECDSA",
            "size": 256,
            "encoding": "PKCS8",
            "rotationPolicy": "Always",
        },
        # Kafka maps the subject to the principal `User:<CN>` (ssl.principal.mapping.rules).
        "commonName": model.names.node_principal,
        "usages": ["server auth", "client auth"],
        "issuerRef": issuer_ref(model),
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
    """Every Kafka node's; a ZooKeeper server's when the ensemble speaks TLS (zookeeper_tls)."""
    with_tls = zookeeper_tls.applies(model.config)
    return [
        certificate(model, n)
        for n in (*model.brokers, *model.quorum)
        if n.role != "zookeeper" or with_tls
    ]


def scram_secret_name(model: ClusterModel, user: str) -> str:
    return f"{model.config.cluster_name}-user-{user}"


def issuer_ref(model: ClusterModel) -> dict[str, str]:
    """The issuer of every node and client certificate: the stack's CA Issuer or the named one."""
    issuer = model.config.security.issuer
    if issuer.create:
        return {"name": model.names.ca, "kind": "Issuer", "group": "cert-manager.io"}
    return {"name": issuer.name or "", "kind": issuer.kind, "group": "cert-manager.io"}


def _cert_manager(kind: str, name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def issuer_objects(model: ClusterModel) -> list[dict[str, Any]]:
    """The stack's CA chain (bootstrap Issuer → CA Certificate → CA Issuer), or nothing when
    config names an existing issuer."""
    if not model.config.security.issuer.create:
        return []
    names, namespace = model.names, model.config.namespace
    return [
        _cert_manager("Issuer", names.bootstrap_issuer, namespace, {"selfSigned": {}}),
        _cert_manager(
            "Certificate",
            names.ca,
            namespace,
            {
                "isCA": True,
                "commonName": f"{model.config.cluster_name} kafkastack CA",
                "secretName": names.ca,
                "duration": "87600h",  # ten years: rotating the CA means re-trusting clients
                "renewBefore": "720h",
                "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Never"},
                "issuerRef": {
                    "name": names.bootstrap_issuer,
                    "kind": "Issuer",
                    "group": "cert-manager.io",
                },
            },
        ),
        _cert_manager("Issuer", names.ca, namespace, {"ca": {"secretName": names.ca}}),
    ]


def admin_certificate(model: ClusterModel) -> dict[str, Any] | None:
    """With mTLS client auth the admin Jobs (ACLs, dynamic settings) need a client certificate
    whose CN is the admin."""
    if model.config.security.client_auth != "mtls":
        return None
    return _cert_manager(
        "Certificate",
        model.names.admin_tls_secret,
        model.config.namespace,
        {
            "secretName": model.names.admin_tls_secret,
            "commonName": model.config.security.admin_user,
            **_lifetime(model),
            "privateKey": {"algorithm": "ECDSA", "size": 256, "encoding": "PKCS8"},
            "usages": ["client auth"],
            "issuerRef": issuer_ref(model),
        },
    )


def issuer_summary(model: ClusterModel) -> dict[str, str | bool]:
    """The `issuer` stack output: which issuer signs, whether the stack made it, where its CA
    is (a Secret's `ca.crt`; with an existing issuer, any node's `*-tls` Secret holds it)."""
    ref = issuer_ref(model)
    created = model.config.security.issuer.create
    ca_secret = model.names.ca if created else model.names.tls_secret(model.brokers[0].workload)
    return {"kind": ref["kind"], "name": ref["name"], "created": created, "ca_secret": ca_secret}
