"""The placement table people read after `make demo`: workload → zone → node."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from infra.localcluster.control_plane import LocalKubernetes
from infra.model import labels

ORDER = {labels.BROKER: 0, labels.CONTROLLER: 1, labels.ZOOKEEPER: 1, labels.HAPROXY: 2}


def placement_table(pods: list[dict[str, Any]], kube: LocalKubernetes) -> Table:
    zones = {
        n["metadata"]["name"]: n["metadata"]["labels"].get(labels.ZONE, "?")
        for n in kube.objects("nodes", "default")
    }
    table = Table(title="Placement")
    for column in ("pod", "role", "zone", "node", "phase"):
        table.add_column(column)
    rows = sorted(
        pods,
        key=lambda p: (
            ORDER.get(p["metadata"]["labels"].get(labels.COMPONENT, ""), 9),
            p["metadata"]["name"],
        ),
    )
    for pod in rows:
        node = pod["spec"].get("nodeName", "")
        table.add_row(
            pod["metadata"]["name"],
            pod["metadata"]["labels"].get(labels.COMPONENT, ""),
            zones.get(node, "-"),
            node or "(pending)",
            pod["status"].get("phase", ""),
        )
    return table
