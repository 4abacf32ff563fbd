"""A node's rendered configuration and its StatefulSet, declared together."""

from __future__ import annotations

import pulumi

from infra.components.kubernetes import declare
from infra.model import labels, templating, workloads
from infra.model.cluster import ClusterModel, Node


def declare_node(
    parent: pulumi.Resource, name: str, model: ClusterModel, node: Node, storage_class: str
) -> None:
    # The rendered configuration, mounted read-only at the paths the properties name.
    declare(
        "ConfigMap",
        f"{name}-{node.workload}-config",
        {
            "metadata": {
                "name": model.names.config_map(node.workload),
                "namespace": model.config.namespace,
            },
            "data": templating.node_files(model, node),
        },
        parent,
    )
    manifest = (
        workloads.zookeeper_statefulset(model, node, storage_class)
        if node.role == labels.ZOOKEEPER
        else workloads.kafka_statefulset(model, node, storage_class)
    )
    if model.config.skip_await:
        manifest["metadata"].setdefault("annotations", {})["pulumi.com/skipAwait"] = "true"
    # The workload holds a node's identity (id, rack, address): keep its name stable.
    declare(
        "StatefulSet", f"{name}-{node.workload}", manifest, parent, protect=model.config.protected
    )
