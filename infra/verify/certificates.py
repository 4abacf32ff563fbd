"""A throwaway CA and per-node certificates, in the files of the Secrets the pods mount.

In a cluster cert-manager writes each node's Secret (`tls.crt`, `tls.key`, `ca.crt` and the
CombinedPEM `tls-combined.pem` the rendered configs read) and the kubelet swaps the mounted
files when it renews one; here `infra/pki.py` issues the same keys into the folder mounted at the
Secret's path, each file replaced whole, so a renewal mid-run looks to Kafka as it would in a pod.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

from infra import pki
from infra.pki import Authority

VALIDITY = datetime.timedelta(days=2)


def new_authority(name: str = "kafkastack verify CA") -> Authority:
    return pki.new_authority(name, VALIDITY)


def _write_secret(directory: Path, data: dict[str, bytes]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for key, value in data.items():
        part = directory / f".{key}.part"
        part.write_bytes(value)
        os.replace(part, directory / key)


def issue(
    authority: Authority,
    wanted: dict[str, Any],
    directory: Path,
    validity: datetime.timedelta = VALIDITY,
) -> bytes:
    """A new key and certificate for what a node's rendered Certificate asks (its topology
    entry's `certificate`), written as cert-manager fills the node's Secret; the certificate."""
    key_pem, cert_pem = pki.sign(
        authority, wanted["common_name"], wanted["dns_names"], wanted["ip_addresses"], validity
    )
    _write_secret(directory, pki.secret_data(authority, key_pem, cert_pem, combined=True))
    return cert_pem


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
    _write_secret(directory, pki.secret_data(authority, key_pem, cert_pem, combined=False))
    return directory
