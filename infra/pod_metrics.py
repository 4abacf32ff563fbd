"""Asking the running cluster, from the machine that runs the program, through `kubectl`: the
objects that exist, and the series a pod's own JMX agent serves on localhost (`kubectl exec`).

No network path from here to the pods is needed, only the API server. Every answer is optional:
no kubectl, no kubeconfig, an unreachable API server, a pod without its agent or a timeout give
None, and each caller says what None means for it (infra/active_controller.py,
infra/broker_removal.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

from infra.model import metrics
from infra.toolchain import bin_dir

TIMEOUT_SECONDS = 15


def kubectl_binary() -> str | None:
    # Yours on PATH, else the one `make toolchain` built (the engine's PATH may lack the cache).
    cached = bin_dir() / "kubectl"
    return shutil.which("kubectl") or (str(cached) if cached.is_file() else None)


def kubectl(*args: str, timeout: float = TIMEOUT_SECONDS) -> subprocess.CompletedProcess[str] | str:
    """kubectl's reply, or why there is none (no kubectl, a timeout, a non-zero exit)."""
    binary = kubectl_binary()
    if binary is None:
        return "no kubectl on PATH or in the toolchain cache"
    try:
        result = subprocess.run(
            [binary, *args], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return f"kubectl {args[0]} gave no answer in {timeout:g} s"
    except OSError as err:
        return f"kubectl could not start: {err}"
    if result.returncode != 0:
        return (result.stderr.strip() or result.stdout.strip() or "no output")[-300:]
    return result


def objects(namespace: str, kind: str, selector: dict[str, str]) -> list[dict[str, Any]] | str:
    """The objects of `kind` matching every label of `selector`, or why they cannot be listed."""
    labels = ",".join(f"{k}={v}" for k, v in selector.items())
    reply = kubectl("get", kind, "-n", namespace, "-l", labels, "-o", "json")
    if isinstance(reply, str):
        return reply
    try:
        return list(json.loads(reply.stdout)["items"])
    except (ValueError, KeyError):
        return f"kubectl get {kind}: not a list of objects"


def named(namespace: str, kind: str, name: str) -> dict[str, Any] | None:
    """The object, or None when it cannot be read (absent, or no answer)."""
    reply = kubectl("get", kind, name, "-n", namespace, "-o", "json")
    if isinstance(reply, str):
        return None
    try:
        found = json.loads(reply.stdout)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def scrape(namespace: str, pod: str, port: int, names: tuple[str, ...]) -> dict[str, float] | None:
    """The named series the pod's agent serves (label-less: one value per name), or None."""
    command = metrics.scrape_command(port, names)
    reply = kubectl("exec", "-n", namespace, pod, "-c", "kafka", "--", "sh", "-c", command)
    if isinstance(reply, str):
        return None
    values = {}
    for line in reply.stdout.splitlines():
        name, _, value = line.partition(" ")
        if name in names:
            try:
                values[name] = float(value)
            except ValueError:
                return None
    return values
