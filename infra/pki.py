"""X.509 issuance for the kafka tier's stand-in for cert-manager (the verify harness's throwaway
CA, infra/verify/certificates.py): it issues what the stack's `Certificate`s ask for (names,
addresses, usages) and writes their Secrets' files as cert-manager does. The local clusters run
cert-manager itself (infra/localcluster/cert_manager.py)."""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from infra.model.paths import COMBINED_PEM

# cert-manager's usage names, as a Certificate's `usages` lists them.
USAGES = {
    "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
    "client auth": ExtendedKeyUsageOID.CLIENT_AUTH,
}
# Clocks of the machines that read a fresh certificate may lag a little.
BACKDATE = datetime.timedelta(minutes=5)


def pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    """Unencrypted PKCS#8, as cert-manager writes `tls.key` and Kafka's PEM keystore reads it."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


@dataclass(frozen=True)
class Authority:
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    @property
    def pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    @property
    def key_pem(self) -> bytes:
        return pem_key(self.key)


def new_authority(name: str, validity: datetime.timedelta) -> Authority:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(key, hashes.SHA256())
    )
    return Authority(key, cert)


def sign(
    authority: Authority,
    common_name: str,
    dns_names: Sequence[str],
    ips: Sequence[str],
    validity: datetime.timedelta,
    usages: Sequence[str] = ("server auth", "client auth"),
    backdate: datetime.timedelta = BACKDATE,
) -> tuple[bytes, bytes]:
    """A new key and its certificate for these names, signed by `authority`: (key, cert) PEM,
    valid from `backdate` ago until `validity` from now."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    alt_names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns_names]
    alt_names += [x509.IPAddress(ipaddress.ip_address(a)) for a in ips]
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(authority.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - backdate)
        .not_valid_after(now + validity)
    )
    if alt_names:  # a client certificate has none: an empty extension is invalid
        builder = builder.add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
    extended = [USAGES[u] for u in usages if u in USAGES]
    if extended:
        builder = builder.add_extension(x509.ExtendedKeyUsage(extended), critical=False)
    cert = builder.sign(authority.key, hashes.SHA256())
    return pem_key(key), cert.public_bytes(serialization.Encoding.PEM)


def secret_data(
    authority: Authority, key_pem: bytes, cert_pem: bytes, combined: bool
) -> dict[str, bytes]:
    """What cert-manager writes into a Certificate's Secret: `tls.crt`, `tls.key`, `ca.crt`,
    and `tls-combined.pem` when the Certificate asks for the CombinedPEM output format."""
    data = {"tls.crt": cert_pem, "tls.key": key_pem, "ca.crt": authority.pem}
    if combined:
        data[COMBINED_PEM] = combined_pem(key_pem, cert_pem)
    return data


def combined_pem(key_pem: bytes, cert_pem: bytes) -> bytes:
    """The CombinedPEM output as cert-manager joins it (OutputFormatCombinedPEM): the key, a
    newline, the chain. tests/cluster/test_cert_manager.py holds it to the real one."""
    return key_pem + b"\n" + cert_pem


def asks_combined_pem(spec: dict[str, object]) -> bool:
    """Whether a Certificate's spec asks cert-manager for the CombinedPEM output format."""
    formats = spec.get("additionalOutputFormats") or []
    assert isinstance(formats, list)
    return any(isinstance(f, dict) and f.get("type") == "CombinedPEM" for f in formats)
