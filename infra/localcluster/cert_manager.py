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
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra import toolchain
from infra.localcluster import host

if TYPE_CHECKING:
    from infra.localcluster.control_plane import LocalKubernetes

BINARY = "cert-manager-controller"
CERTIFICATES = "certificates.cert-manager.io"
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


@contextlib.contextmanager
def _alone(kube: LocalKubernetes) -> Iterator[None]:
    """One start or stop of this cluster's controllers at a time: two `up()`s at once would
    otherwise start two controllers, which (no leader election here) would both issue."""
    with host.exclusive(kube.workdir / "cert-manager.lock"):
        yield


def ensure_running(kube: LocalKubernetes, timeout: float = 60) -> None:
    """Start the controllers for `kube` unless they run, and wait until they do (main.go says
    so once every controller is built and the informers started). They outlive the caller,
    like the control plane's processes, until `stop`."""
    try:
        binary = toolchain.binary(BINARY)
    except toolchain.ToolchainError as err:
        raise CertManagerError(f"{err} (scripts/toolchain/build-cert-manager.sh)") from None
    argv = [binary, _kubeconfig_flag(kube), f"--cluster-resource-namespace={RESOURCE_NAMESPACE}"]
    with _alone(kube):
        if _running_pid(kube) is not None:
            return
        log = log_file(kube)
        offset = log.stat().st_size if log.exists() else 0
        with log.open("ab") as out:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
            )
        _pid_file(kube).write_text(str(proc.pid))
        deadline = time.monotonic() + timeout
        while RUNNING not in _read_from(log, offset):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise CertManagerError(
                    f"cert-manager's controllers did not start (exit {proc.poll()}): "
                    f"{_read_from(log, offset)[-1500:].decode(errors='replace')}"
                )
            time.sleep(0.2)


# What main.go prints once its controllers run.
RUNNING = b": running ["


def _read_from(log: Path, offset: int) -> bytes:
    with log.open("rb") as text:
        text.seek(offset)
        return text.read()


def stop(kube: LocalKubernetes, grace: float = 10) -> None:
    """Stop this cluster's controllers (SIGTERM, then SIGKILL after `grace` seconds)."""
    if not kube.workdir.is_dir():
        return
    with _alone(kube):
        pid = _running_pid(kube)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            # Only while the number still names this cluster's controller (not a reused pid).
            if _alive(pid) and _running_pid(kube) == pid:
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
    return {c["metadata"]["name"]: c for c in kube.objects(CERTIFICATES, namespace)}


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
    grew and it is Ready): a new key and certificate in its Secret. `timeout` covers it all."""
    deadline = time.monotonic() + timeout
    before = wait_ready(kube, namespace, names, timeout)
    for name in names:
        _ask_renewal(kube, namespace, name)
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


def _ask_renewal(kube: LocalKubernetes, namespace: str, name: str, attempts: int = 5) -> None:
    """Set `Issuing=True` on the Certificate's status as cmctl does: in place of an `Issuing`
    condition already there (the conditions are a list keyed by type), nothing if it is already
    issuing (the new revision comes anyway). The patch names the resourceVersion it read, so a
    controller's concurrent update is not overwritten: on a conflict it reads and tries again."""
    for _ in range(attempts):
        reply = kube.kubectl("get", CERTIFICATES, name, "-n", namespace, "-o", "json")
        certificate = json.loads(reply.stdout)
        conditions = certificate.get("status", {}).get("conditions", [])
        if any(c["type"] == "Issuing" and c["status"] == "True" for c in conditions):
            return
        issuing = {
            "type": "Issuing",
            "status": "True",
            "reason": "ManuallyTriggered",
            "message": "Certificate re-issuance manually triggered",
            "lastTransitionTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "observedGeneration": certificate["metadata"]["generation"],
        }
        patch = {
            "metadata": {"resourceVersion": certificate["metadata"]["resourceVersion"]},
            "status": {"conditions": [*(c for c in conditions if c["type"] != "Issuing"), issuing]},
        }
        result = kube.kubectl(
            "patch", CERTIFICATES, name, "-n", namespace, "--subresource=status",
            "--type=merge", "-p", json.dumps(patch), check=False,
        )  # fmt: skip
        if result.returncode == 0:
            return
        if "the object has been modified" not in result.stderr:
            raise CertManagerError(f"asking cert-manager to renew {name}: {result.stderr}")
    raise CertManagerError(f"asking cert-manager to renew {name}: {attempts} conflicts in a row")
