"""The verify harness's client settings: what its clients present and check (the real
handshakes are on the kafka tier, tests/kafka/test_mtls.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from infra.verify import certificates
from infra.verify.clients import ClientAccess
from infra.verify.network import Host


@dataclass
class Access(ClientAccess):
    topology: dict[str, Any]
    password: str
    ca_file: Path
    client_host: Host
    admin_tls: Path | None


def access(tmp_path: Path, client_auth: str, protocol: str) -> Access:
    security = {"client_auth": client_auth, "client_protocol": protocol, "admin_user": "admin"}
    topology: dict[str, Any] = {"security": {**security, "users": ["admin"]}}
    admin_tls = certificates.issue_admin(certificates.new_authority(), topology, tmp_path)
    host = Host("client", 250, "10.30.0.250", None)
    return Access(topology, "secret", tmp_path / "ca.crt", host, admin_tls)


def test_mtls_clients_present_the_admins_certificate_and_verify_names(tmp_path: Path) -> None:
    settings = access(tmp_path, "mtls", "SSL").internal_security()
    assert settings["security.protocol"] == "SSL"
    assert settings["ssl.endpoint.identification.algorithm"] == "https"
    cert = x509.load_pem_x509_certificate(Path(settings["ssl.certificate.location"]).read_bytes())
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "admin"
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.CLIENT_AUTH]  # as the rendered Certificate asks
    assert Path(settings["ssl.key.location"]).is_file()
    assert "sasl.username" not in settings


def test_scram_over_tls_verifies_names_too(tmp_path: Path) -> None:
    cluster = access(tmp_path, "scram-sha-512", "SASL_SSL")
    assert cluster.admin_tls is None  # no client certificate without mTLS
    for settings in (cluster.internal_security(), cluster.external_security()):
        assert settings["ssl.endpoint.identification.algorithm"] == "https"
        assert settings["sasl.password"] == "secret"
