"""The local cluster's cert-manager: cert-manager's own controllers and CustomResourceDefinitions.

scripts/toolchain/build-cert-manager.sh builds the controllers from cert-manager's published
module (through a small main package of ours: the module proxy refuses the module of
cert-manager's own binary) and keeps the module's CRDs beside them. Every local cluster installs
those CRDs, so the apiserver checks the stacks' Issuers and Certificates against cert-manager's
real schema, and runs the controllers as a host process beside its control plane, as kwokctl
runs the control plane's own: they issue the stack's certificates, renew them when due, and
renew at once when asked the way `cmctl renew` asks (`renew` below).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra import toolchain

if TYPE_CHECKING:
    from infra.localcluster.control_plane import LocalKubernetes

BINARY = "cert-manager-controller"
# ClusterIssuers keep their Secrets here (the stacks use namespaced Issuers).
RESOURCE_NAMESPACE = "kube-system"


class CertManagerError(RuntimeError):
    """cert-manager is missing or did not do what was asked; the message says what to do."""


def crd_folder() -> Path:
    """cert-manager's CRDs as its module publishes them (build-cert-manager.sh)."""
    version = toolchain.pinned_versions()["CERT_MANAGER_VERSION"]
    folder = toolchain.cache_dir() / "cert-manager" / version / "crds"
    if not (folder / "cert-manager.io_certificates.yaml").is_file():
        raise CertManagerError(
            f"cert-manager {version}'s CRDs are not in {folder}: run `make toolchain` "
            "(scripts/toolchain/build-cert-manager.sh)"
        )
    return folder


def _pid_file(kube: LocalKubernetes) -> Path:
    return kube.workdir / "cert-manager.pid"


def log_file(kube: LocalKubernetes) -> Path:
    return kube.workdir / "cert-manager.log"


def _running_pid(kube: LocalKubernetes) -> int | None:
    """The pid of this cluster's controller process, if it runs (the pid file alone could name
    a process that reused the number: its command line must name this cluster's kubeconfig)."""
    try:
        pid = int(_pid_file(kube).read_text())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None
    return pid if _kubeconfig_flag(kube).encode() in cmdline else None


def _kubeconfig_flag(kube: LocalKubernetes) -> str:
    return f"--kubeconfig={kube.kubeconfig}"


def ensure_running(kube: LocalKubernetes) -> None:
    """Start the controllers for `kube` unless they run. They outlive the caller, like the
    control plane's processes, until `stop`."""
    if _running_pid(kube) is not None:
        return
    try:
        binary = toolchain.binary(BINARY)
    except toolchain.ToolchainError as err:
        raise CertManagerError(f"{err} (scripts/toolchain/build-cert-manager.sh)") from None
    argv = [
        binary,
        _kubeconfig_flag(kube),
        f"--cluster-resource-namespace={RESOURCE_NAMESPACE}",
    ]
    with log_file(kube).open("ab") as log:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    _pid_file(kube).write_text(str(proc.pid))


def stop(kube: LocalKubernetes, grace: float = 10) -> None:
    """Stop this cluster's controllers (SIGTERM, then SIGKILL after `grace` seconds)."""
    pid = _running_pid(kube)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _pid_file(kube).unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _certificates(kube: LocalKubernetes, namespace: str) -> dict[str, dict[str, Any]]:
    reply = kube.kubectl("get", "certificates.cert-manager.io", "-n", namespace, "-o", "json")
    return {c["metadata"]["name"]: c for c in json.loads(reply.stdout)["items"]}


def ready(certificate: dict[str, Any]) -> bool:
    status = certificate.get("status", {})
    return any(
        c["type"] == "Ready"
        and c["status"] == "True"
        and c.get("observedGeneration") == certificate["metadata"]["generation"]
        for c in status.get("conditions", [])
    )


def wait_ready(
    kube: LocalKubernetes, namespace: str, names: list[str], timeout: float = 120
) -> dict[str, int]:
    """Wait until cert-manager reports each named Certificate Ready; their revisions."""
    deadline = time.monotonic() + timeout
    while True:
        current = _certificates(kube, namespace)
        pending = [n for n in names if n not in current or not ready(current[n])]
        if not pending:
            return {n: int(current[n]["status"].get("revision", 0)) for n in names}
        if time.monotonic() > deadline:
            raise CertManagerError(
                f"cert-manager did not make {pending} Ready in {timeout:.0f} s "
                f"(namespace {namespace}); its log: {log_file(kube)}"
            )
        time.sleep(0.5)


def renew(kube: LocalKubernetes, namespace: str, names: list[str], timeout: float = 120) -> None:
    """Renew the named Certificates now, as `cmctl renew` asks cert-manager to (an `Issuing`
    condition on the Certificate's status), and wait until each was issued anew (its revision
    grew and it is Ready): a new key and certificate in its Secret."""
    before = wait_ready(kube, namespace, names, timeout)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    current = _certificates(kube, namespace)
    for name in names:
        certificate = current[name]
        issuing = {
            "type": "Issuing",
            "status": "True",
            "reason": "ManuallyTriggered",
            "message": "Certificate re-issuance manually triggered",
            "lastTransitionTime": now,
            "observedGeneration": certificate["metadata"]["generation"],
        }
        conditions = [*certificate["status"].get("conditions", []), issuing]
        kube.kubectl(
            "patch", "certificates.cert-manager.io", name, "-n", namespace,
            "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"conditions": conditions}}),
        )  # fmt: skip
    deadline = time.monotonic() + timeout
    while True:
        after = wait_ready(kube, namespace, names, max(deadline - time.monotonic(), 1))
        if all(after[n] > before[n] for n in names):
            return
        if time.monotonic() > deadline:
            raise CertManagerError(
                f"cert-manager did not renew {[n for n in names if after[n] <= before[n]]} in "
                f"{timeout:.0f} s (namespace {namespace}); its log: {log_file(kube)}"
            )
        time.sleep(0.5)
