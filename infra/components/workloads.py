"""A node's rendered configuration and its StatefulSet, declared together."""

from __future__ import annotations

import pulumi

from infra.components.kubernetes import declare
from infra.model import labels, templating, workloads
from infra.model.cluster import ClusterModel, Node


def node_config_files(model: ClusterModel, node: Node) -> dict[str, str]:
    """The files mounted into the node's config directory, exactly as `render` writes them."""
    if node.role == labels.ZOOKEEPER:
        return {
            "zoo.cfg": templating.zookeeper_config(model, node),
            "log4j.properties": templating.logging_config(model),
        }
    files = {
        "log4j2.yaml"
        if model.config.kafka_major >= 4
        else "log4j.properties": templating.logging_config(model),
        "jmx-exporter.yaml": templating.jmx_exporter_config(model, node.role),
    }
    if node.role == labels.BROKER:
        files["server.properties"] = templating.broker_config(model, node)
    else:
        files["controller.properties"] = templating.controller_config(model, node)
    return files


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
            "data": node_config_files(model, node),
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
