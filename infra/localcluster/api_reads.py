"""The harness's reads of the local cluster's API, made by this process over HTTPS.

The proofs poll pods and nodes every half second or second for minutes. A kubectl per poll cost
about 0.1 CPU-s (its start and its discovery requests), over 2,000 of them in a run, on the two
cores the cluster under test shares; here a read is one GET with the kubeconfig's own client
certificate. kubectl stays the way for everything else: writes, exec, logs, and any kind not
listed in `KINDS`.
"""

from __future__ import annotations

import calendar
import http.client
import json
import ssl
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml


def api_time(text: str) -> float:
    """An API object's time (RFC 3339 in UTC, whole seconds, as `startTime` and events' times
    are written) as epoch seconds."""
    return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))


@dataclass(frozen=True)
class Resource:
    group_version: str  # the API path's prefix: `api/v1`, `apis/apps/v1`
    plural: str
    namespaced: bool


_PODS = Resource("api/v1", "pods", True)
_CLAIMS = Resource("api/v1", "persistentvolumeclaims", True)
_VOLUMES = Resource("api/v1", "persistentvolumes", False)
# The kinds the harness polls, by the names it gives kubectl (plural or short).
KINDS: dict[str, Resource] = {
    "pod": _PODS,
    "pods": _PODS,
    "nodes": Resource("api/v1", "nodes", False),
    "pvc": _CLAIMS,
    "persistentvolumeclaims": _CLAIMS,
    "pv": _VOLUMES,
    "persistentvolumes": _VOLUMES,
    "statefulsets": Resource("apis/apps/v1", "statefulsets", True),
}
TIMEOUT_S = 30


class ApiReadError(RuntimeError):
    """The API server did not answer a read, or refused it."""


@dataclass(frozen=True)
class _Access:
    host: str
    port: int
    context: ssl.SSLContext


_ACCESS: dict[tuple[Path, int], _Access] = {}


def _access(kubeconfig: Path) -> _Access:
    """The server and TLS identity of the kubeconfig's current context, read again whenever
    the file changes (a cluster made anew under the same name has new ports and certificates)."""
    key = (kubeconfig, kubeconfig.stat().st_mtime_ns)
    if key not in _ACCESS:
        config = yaml.safe_load(kubeconfig.read_text(encoding="utf-8"))
        context = _named(config["contexts"], config["current-context"])["context"]
        cluster = _named(config["clusters"], context["cluster"])["cluster"]
        user = _named(config["users"], context["user"])["user"]
        tls = ssl.create_default_context(cafile=cluster["certificate-authority"])
        tls.load_cert_chain(user["client-certificate"], user["client-key"])
        server = urlsplit(cluster["server"])
        _ACCESS[key] = _Access(server.hostname or "127.0.0.1", server.port or 443, tls)
    return _ACCESS[key]


def _named(entries: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(e for e in entries if e["name"] == name)


def _path(kind: str, namespace: str | None, name: str = "") -> str:
    resource = KINDS[kind]
    scope = f"/namespaces/{namespace}" if resource.namespaced and namespace else ""
    return f"/{resource.group_version}{scope}/{resource.plural}" + (f"/{name}" if name else "")


def _get(kubeconfig: Path, path: str) -> dict[str, Any] | None:
    """The JSON the API server answers, or None for 404."""
    access = _access(kubeconfig)
    connection = http.client.HTTPSConnection(
        access.host, access.port, context=access.context, timeout=TIMEOUT_S
    )
    try:
        connection.request("GET", path, headers={"Accept": "application/json"})
        response = connection.getresponse()
        body = response.read()
    except OSError as err:
        raise ApiReadError(f"GET {path}: {err}") from None
    finally:
        connection.close()
    if response.status == 404:
        return None
    if response.status != 200:
        raise ApiReadError(f"GET {path}: {response.status} {body[:500]!r}")
    reply: dict[str, Any] = json.loads(body)
    return reply


def items(kubeconfig: Path, kind: str, namespace: str | None) -> list[dict[str, Any]]:
    """Every object of `kind` in `namespace` (every namespace: None; a kind of the whole
    cluster ignores it), each with its `kind` and `apiVersion` as `kubectl get -o json` lists
    them (the API's list leaves them out of its items)."""
    path = _path(kind, namespace)
    listed = _get(kubeconfig, path)
    if listed is None:
        raise ApiReadError(f"GET {path}: the API server serves no such kind")
    item_kind = str(listed["kind"]).removesuffix("List")
    return [
        {"kind": item_kind, "apiVersion": listed["apiVersion"], **item}
        for item in listed.get("items") or []
    ]


def item(kubeconfig: Path, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
    """The object, or None when there is none."""
    return _get(kubeconfig, _path(kind, namespace, name))
