"""Nodes that cannot reload a renewed certificate restart once after each renewal, at the next
`pulumi up`, in the ordered roll.

ZooKeeper 3.8 servers read their certificate only at start (infra/model/zookeeper_tls.py), and
Kafka 3.9's dedicated controllers refuse the keystore reloader's request
(infra/model/certificate_reload.py). cert-manager renews their Secrets `renew_before` the expiry,
outside Pulumi, so the program asks the cluster, for each such node, whether its Secret holds a
certificate issued after the node's container started: then the pod still serves an older one,
and the node's pod template gets that certificate's fingerprint
(`kafkastack.dev/certificate-restart`). `pulumi preview` shows the change and `pulumi up` rolls
those nodes one at a time, each after the previous one is ready, as any change. Otherwise the
template keeps the value the cluster's StatefulSet has, so nothing restarts. Hence: run
`pulumi up` within `renew_before` of a renewal (a scheduled pipeline does).

Each answer is optional: a node whose Secret or pod cannot be read keeps the deployed value;
when the cluster cannot be asked at all, the engine keeps the deployed value (ignoreChanges).
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes

from infra.model import certificate_reload, labels
from infra.model.cluster import ClusterModel
from infra.pod_metrics import named
from infra.stack_config import StackConfig

FINGERPRINT_CHARS = 16


def _certificate(namespace: str, secret: str) -> x509.Certificate | None:
    data = ((named(namespace, "secret", secret) or {}).get("data") or {}).get("tls.crt")
    if not data:
        return None
    try:
        return x509.load_pem_x509_certificate(base64.b64decode(data))
    except ValueError:
        return None


def _started(pod: dict[str, Any] | None, container: str) -> datetime.datetime | None:
    """When the pod's `container` last started, as its status says."""
    for status in ((pod or {}).get("status") or {}).get("containerStatuses") or []:
        running = (status.get("state") or {}).get("running") or {}
        if status.get("name") == container and running.get("startedAt"):
            started = str(running["startedAt"]).replace("Z", "+00:00")
            return datetime.datetime.fromisoformat(started)
    return None


def deployed_value(statefulset: dict[str, Any] | None) -> str | None:
    template = ((statefulset or {}).get("spec") or {}).get("template") or {}
    value = ((template.get("metadata") or {}).get("annotations") or {}).get(
        labels.CERTIFICATE_RESTART
    )
    return str(value) if value else None


def certificate_restarts(
    config: StackConfig, workloads: dict[str, dict[str, Any]] | None
) -> dict[str, str] | None:
    """Workload → the value its pod template carries; `workloads`: the stack's StatefulSets
    (infra/stack_workloads.py), None when the cluster could not be asked (then None)."""
    if workloads is None:
        return None
    model = ClusterModel.from_config(config)
    values: dict[str, str] = {}
    for node in (*model.brokers, *model.quorum):
        if not certificate_reload.restarts_on_renewal(model, node):
            continue
        if node.workload not in workloads:
            continue  # created now: it starts with whatever its Secret holds
        kept = deployed_value(workloads[node.workload])
        certificate = _certificate(config.namespace, model.names.tls_secret(node.workload))
        pod = named(config.namespace, "pod", model.names.pod(node.workload))
        started = _started(pod, "zookeeper" if node.role == labels.ZOOKEEPER else "kafka")
        if certificate and started and certificate.not_valid_before_utc > started:
            fingerprint = certificate.fingerprint(hashes.SHA256()).hex()
            values[node.workload] = fingerprint[:FINGERPRINT_CHARS]
        elif kept:
            values[node.workload] = kept
    return values
