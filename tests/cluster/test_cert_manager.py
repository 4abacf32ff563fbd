"""The local cluster's real cert-manager (infra/localcluster/cert_manager.py) against what the
stacks declare: its own CRDs accept every Issuer and Certificate of every committed stack with
strict field validation, and its controllers issue the local stack's chain and node certificate
as the brokers read them (PKCS#8 key, the combined PEM keystore, the names, the lifetime)."""

from __future__ import annotations

import base64
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID

from infra import pki, render
from infra.config import load_stack
from infra.localcluster import cert_manager
from infra.localcluster.control_plane import LocalKubernetes
from infra.model.cluster import ClusterModel
from infra.model.security import certificates, issuer_objects
from infra.security_config import duration_minutes

pytestmark = pytest.mark.cluster

STACKS = ("prod", "staging", "dev", "local")


def _cert_manager_objects(config_dir: Path, stack: str) -> list[dict[str, Any]]:
    objects = render.manifests(load_stack(config_dir, stack)).values()
    return [o for o in objects if o["apiVersion"].startswith("cert-manager.io/")]


@pytest.mark.parametrize("stack", STACKS)
def test_cert_manager_schema_accepts_every_object_the_stack_declares(
    kube: LocalKubernetes, repo_root: Path, stack: str
) -> None:
    objects = _cert_manager_objects(repo_root / "stacks", stack)
    assert {o["kind"] for o in objects} >= {"Certificate"}
    namespace = f"schema-{stack}"
    for obj in objects:
        obj["metadata"]["namespace"] = namespace
    kube.kubectl("create", "namespace", namespace)
    try:
        # Server-side dry run: the apiserver checks each object against the CRD's schema and,
        # with strict validation, refuses a field the schema lacks (it would drop it otherwise).
        reply = kube.kubectl(
            "apply", "--server-side", "--dry-run=server", "--validate=strict", "-o", "json",
            "-f", "-", stdin=yaml.safe_dump_all(objects), check=False,
        )  # fmt: skip
    finally:
        kube.kubectl("delete", "namespace", namespace, "--wait=false")
    assert reply.returncode == 0, reply.stderr
    accepted = json.loads(reply.stdout)
    items = accepted["items"] if accepted.get("kind") == "List" else [accepted]
    assert len(items) == len(objects)


def test_cert_manager_issues_the_chain_and_the_node_certificate_brokers_read(
    kube: LocalKubernetes, repo_root: Path, tmp_path: Path
) -> None:
    config = load_stack(repo_root / "stacks", "local")
    model = ClusterModel.from_config(config)
    namespace = "cert-manager-issues"
    node_certificate = certificates(model)[0]
    chain = issuer_objects(model)
    objects = [*chain, node_certificate]
    for obj in objects:
        obj["metadata"]["namespace"] = namespace
    kube.kubectl("create", "namespace", namespace)
    try:
        kube.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(objects))
        names = [o["metadata"]["name"] for o in objects if o["kind"] == "Certificate"]
        cert_manager.wait_ready(kube, namespace, names)
        reply = kube.kubectl(
            "get", "secret", "-n", namespace, node_certificate["spec"]["secretName"], "-o", "json"
        )
        secret = json.loads(reply.stdout)
    finally:
        kube.kubectl("delete", "namespace", namespace, "--wait=false")
    assert secret["type"] == "kubernetes.io/tls"
    data = {k: base64.b64decode(v) for k, v in secret["data"].items()}
    assert set(data) == {"tls.crt", "tls.key", "ca.crt", "tls-combined.pem"}
    assert data["tls.key"].startswith(b"-----BEGIN PRIVATE KEY-----")  # PKCS#8, unencrypted
    # CombinedPEM, as the node's Certificate asks: the key, then the chain (Kafka's keystore),
    # joined as the kafka tier's stand-in for cert-manager joins them.
    assert data["tls-combined.pem"] == pki.combined_pem(data["tls.key"], data["tls.crt"])
    cert = x509.load_pem_x509_certificate(data["tls.crt"])
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    spec = node_certificate["spec"]
    assert lifetime == datetime.timedelta(minutes=duration_minutes(spec["duration"]))
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sorted(names.get_values_for_type(x509.DNSName)) == sorted(spec["dnsNames"])
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert set(usages) == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
    # Signed by the stack's own CA (the CA Certificate of its chain), which it hands out.
    issuer = x509.load_pem_x509_certificate(data["ca.crt"])
    assert isinstance(issuer.public_key(), ec.EllipticCurvePublicKey)
    cert.verify_directly_issued_by(issuer)
    assert issuer.subject.rfc4514_string().endswith("kafkastack CA")
