"""A throwaway CA and per-node certificates, in the PEM files the rendered configs read.

In a cluster cert-manager writes tls.crt / tls.key / ca.crt and an init container joins key and
chain into keystore.pem; here the same two files are written directly (`infra/pki.py` issues).
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from infra import pki
from infra.pki import Authority

VALIDITY = datetime.timedelta(days=2)


def new_authority(name: str = "kafkastack verify CA") -> Authority:
    return pki.new_authority(name, VALIDITY)


def issue(
    authority: Authority, common_name: str, dns_names: list[str], ips: list[str], directory: Path
) -> None:
    """keystore.pem (unencrypted PKCS#8 key + certificate) and ca.crt in `directory`."""
    key_pem, cert_pem = pki.sign(authority, common_name, dns_names, ips, VALIDITY)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "keystore.pem").write_bytes(key_pem + cert_pem)
    (directory / "ca.crt").write_bytes(authority.pem)


def issue_admin(authority: Authority, topology: dict[str, Any], workdir: Path) -> Path | None:
    """With mTLS clients, the admin's client certificate (CN = admin user, client auth only) as
    cert-manager writes the rendered admin Certificate's Secret: tls.crt, tls.key, ca.crt."""
    security = topology["security"]
    if security["client_auth"] != "mtls":
        return None
    key_pem, cert_pem = pki.sign(
        authority, security["admin_user"], [], [], VALIDITY, usages=("client auth",)
    )
    directory = workdir / "admin-tls"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tls.key").write_bytes(key_pem)
    (directory / "tls.crt").write_bytes(cert_pem)
    (directory / "ca.crt").write_bytes(authority.pem)
    return directory
