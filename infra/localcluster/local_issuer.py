"""The local cluster's stand-in for cert-manager: it issues the stack's Certificates itself.

No cert-manager runs on the local cluster (nothing can be pulled, and building and serving it
is not done yet), yet the brokers' and controllers' pods mount the Secrets their `Certificate`s
name and do not start without them. While `provision()` runs `pulumi up`, `LocalIssuer` writes
each of those Secrets as cert-manager would (type `kubernetes.io/tls`, keys `tls.crt`, `tls.key`
as unencrypted PKCS#8, `ca.crt`, and `tls-combined.pem` when the Certificate asks for the
CombinedPEM output), valid for the Certificate's `duration`, signed by one CA per cluster kept
in the cluster's folder, for the names and addresses the Certificate lists. `renew()` issues
them anew, as cert-manager does when a certificate reaches its renewal time (or `cmctl renew`
asks): the proofs call it instead of waiting `renew_before`. What it does not do: renew on its
own, or follow the issuer a Certificate names (every one is signed by the cluster's CA). The
Certificates stay declared, so a real cluster's cert-manager is unaffected.
"""

from __future__ import annotations

import base64
import datetime
import threading
from pathlib import Path
from typing import Any

import yaml

from infra import pki
from infra.localcluster.control_plane import LocalKubernetes
from infra.security_config import duration_minutes

CA_VALIDITY = datetime.timedelta(days=900)


class LocalCA:
    """One CA per cluster, created on first use in `folder` and reused after."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        cert_file, key_file = folder / "ca.crt", folder / "ca.key"
        if not (cert_file.is_file() and key_file.is_file()):
            folder.mkdir(parents=True, exist_ok=True)
            created = pki.new_authority("kafkastack local CA", CA_VALIDITY)
            key_file.write_bytes(created.key_pem)
            key_file.chmod(0o600)
            cert_file.write_bytes(created.pem)
        self.authority = pki.Authority.load(cert_file.read_bytes(), key_file.read_bytes())

    @property
    def pem(self) -> bytes:
        return self.authority.pem

    def secret(self, certificate: dict[str, Any]) -> dict[str, Any]:
        """The Secret cert-manager would write for this Certificate object."""
        spec = certificate["spec"]
        if spec.get("isCA"):
            ca = {"tls.crt": self.pem, "tls.key": self.authority.key_pem, "ca.crt": self.pem}
            return _tls_secret(certificate, ca)
        dns = list(spec.get("dnsNames", []))
        key_pem, cert_pem = pki.sign(
            self.authority,
            spec.get("commonName", dns[0]),
            dns,
            list(spec.get("ipAddresses", [])),
            datetime.timedelta(minutes=duration_minutes(spec["duration"])),
            usages=list(spec.get("usages", [])),
            # As cert-manager issues: valid from the moment it is issued, which is how the
            # program tells a renewal from what a pod started with (certificate_restarts.py).
            backdate=datetime.timedelta(0),
        )
        data = pki.secret_data(self.authority, key_pem, cert_pem, pki.asks_combined_pem(spec))
        return _tls_secret(certificate, data)


def _tls_secret(certificate: dict[str, Any], data: dict[str, bytes]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {
            "name": certificate["spec"]["secretName"],
            "namespace": certificate["metadata"]["namespace"],
            "labels": {"kafkastack.io/issued-by": "local-issuer"},
        },
        "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
    }


def renew(kube: LocalKubernetes, certificates: list[dict[str, Any]]) -> None:
    """Every Certificate's Secret issued anew now (new key, new serial), as cert-manager writes
    it on renewal: the kubelets then swap the mounted files of the pods using it."""
    ca = LocalCA(kube.workdir / "local-ca")
    documents = yaml.safe_dump_all([ca.secret(c) for c in certificates], sort_keys=False)
    kube.kubectl("apply", "--server-side", "-f", "-", stdin=documents)


class LocalIssuer:
    """Writes the Secrets of `certificates` once their namespace exists (Pulumi creates it),
    in a thread beside `pulumi up`: the pods that mount them wait for them meanwhile."""

    def __init__(
        self, kube: LocalKubernetes, certificates: list[dict[str, Any]], poll: float = 0.5
    ) -> None:
        self.kube = kube
        self.certificates = certificates
        self.poll = poll
        self.ca = LocalCA(kube.workdir / "local-ca")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="local-issuer", daemon=True)
        self.error: BaseException | None = None
        self.issued: list[str] = []

    def __enter__(self) -> LocalIssuer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        try:
            namespaces = {c["metadata"]["namespace"] for c in self.certificates}
            while namespaces and not self._stop.is_set():
                ready = {n for n in namespaces if self._exists(n)}
                if ready:
                    self._issue(
                        [c for c in self.certificates if c["metadata"]["namespace"] in ready]
                    )
                    namespaces -= ready
                self._stop.wait(self.poll)
        except BaseException as err:  # reported by provision() after `pulumi up`
            self.error = err

    def _exists(self, namespace: str) -> bool:
        return self.kube.kubectl("get", "namespace", namespace, check=False).returncode == 0

    def _issue(self, certificates: list[dict[str, Any]]) -> None:
        missing = [
            c
            for c in certificates
            if self.kube.kubectl(
                "get", "secret", "-n", c["metadata"]["namespace"], c["spec"]["secretName"],
                check=False,
            ).returncode != 0
        ]  # fmt: skip
        # Kept across runs like cert-manager's: a second `up` changes no pod.
        secrets = [self.ca.secret(c) for c in missing]
        if secrets:
            documents = yaml.safe_dump_all(secrets, sort_keys=False)
            self.kube.kubectl("apply", "--server-side", "-f", "-", stdin=documents)
        self.issued += [c["spec"]["secretName"] for c in certificates]
