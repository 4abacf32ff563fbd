"""Workload manifests: one single-replica StatefulSet per broker / controller / ZooKeeper server.

One workload per node is what makes `broker.rack`, `node.id` and the replication address static
and rendered, and what makes scaling from 3 to 5 brokers a pure addition. Data lives in
volumeClaimTemplates: the StatefulSet controller creates the claims, so Pulumi never owns (and
never deletes) them, and the retention policy keeps them when a workload is deleted or scaled.
"""

from __future__ import annotations

from typing import Any

from infra.model import (
    certificate_reload,
    controller_login,
    labels,
    membership,
    metrics,
    stop_gate,
    templating,
    zookeeper_auth,
    zookeeper_tls,
)
from infra.model.cluster import ClusterModel
from infra.model.networks import pod_network_annotation
from infra.model.nodes import Node
from infra.model.paths import (
    CONFIG_DIR,
    METADATA_DIR,
    SCRIPT_LOG_DIR,
    SCRIPT_LOG_VOLUME,
    TLS_DIR,
    ZK_CONFIG_DIR,
    ZK_DATA_DIR,
    ZK_LOG_DIR,
    ZK_TLS_DIR,
)
from infra.model.pod_security import container_security_context, pod_security_context
from infra.model.probes import TERMINATION_GRACE_SECONDS, kafka_probes, zookeeper_probes
from infra.model.resources import INIT_STEP, server_jvm_env, server_resources, tool_jvm_env
from infra.model.security import scram_secret_name
from infra.model.storage import claim_template
from infra.model.volumes import broker_metadata_gib

# Read-only for everyone in the pod: readable whether or not a platform injects an fsGroup (an
# OpenShift SCC without one leaves the files root's), and nobody in the pod may write them.
TLS_FILE_MODE = 0o444


def _zone_affinity(node: Node, model: ClusterModel) -> dict[str, Any]:
    """Pinned to its zone; never on a node with another broker or any quorum pod."""
    avoid = [labels.BROKER, labels.CONTROLLER, labels.ZOOKEEPER]
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": labels.ZONE, "operator": "In", "values": [node.zone]}
                        ]
                    }
                ]
            }
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchLabels": {labels.INSTANCE: model.config.cluster_name},
                        "matchExpressions": [
                            {"key": labels.COMPONENT, "operator": "In", "values": avoid}
                        ],
                    },
                    "topologyKey": labels.HOSTNAME,
                }
            ]
        },
    }


def _tls_secret_volume(model: ClusterModel, node: Node) -> dict[str, Any]:
    # Mounted whole (no subPath), so the kubelet swaps in what cert-manager renews.
    return {
        "name": "tls",
        "secret": {
            "secretName": model.names.tls_secret(node.workload),
            "defaultMode": TLS_FILE_MODE,
        },
    }


def _tls_volumes(
    model: ClusterModel, node: Node
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    volumes = [
        *metrics.agent_volumes(model),
        _tls_secret_volume(model, node),
        {"name": "config", "configMap": {"name": model.names.config_map(node.workload)}},
        {"name": SCRIPT_LOG_VOLUME, "emptyDir": {}},
    ]
    mounts = [
        *metrics.agent_mounts(model),
        {"name": "tls", "mountPath": TLS_DIR, "readOnly": True},
        {"name": "config", "mountPath": CONFIG_DIR},
        {"name": SCRIPT_LOG_VOLUME, "mountPath": SCRIPT_LOG_DIR},
    ]
    return volumes, mounts


def skip_when_formatted(directories: list[str]) -> str:
    """A shell prefix ending the init container when every directory already holds its
    `meta.properties`: what `--ignore-formatted` would conclude, without starting the tool's JVM
    (seconds of CPU at every pod start, and each step of a roll waits for it). A directory
    without it (a new JBOD volume, a voter's lost metadata volume) falls through to the tool."""
    formatted = " && ".join(f"[ -f {d}/meta.properties ]" for d in directories)
    return f"if {formatted}; then echo 'every log directory is formatted'; exit 0; fi; "


def _format_storage_init(
    model: ClusterModel, node: Node, image: str, config_file: str, mounts: list[dict[str, Any]]
) -> dict[str, Any]:
    """`kafka-storage format` once per volume set: restarts are no-ops.

    Voters format with the full initial voter set (dynamic quorum, KIP-853) only while the
    quorum is being born (infra/model/membership.py); brokers join it.
    """
    env: list[dict[str, Any]] = [tool_jvm_env()]
    format_command = (
        f"/opt/kafka/bin/kafka-storage.sh format -t {model.cluster_id} "
        f"-c {CONFIG_DIR}/{config_file}"
    )
    if node in model.voters:
        quorum_flag = f'--initial-controllers "$(cat {membership.INITIAL_VOTERS_PATH})"'
        if model.config.security.client_auth == "scram-sha-512":
            # SCRAM credentials live in the metadata log: seed them when the quorum is born,
            # reading each password from its Secret (never from the rendered command).
            for i, user in enumerate(model.config.security.users):
                env.append(
                    {
                        "name": f"SCRAM_PASSWORD_{i}",
                        "valueFrom": {
                            "secretKeyRef": {
                                "name": scram_secret_name(model, user),
                                "key": "password",
                            }
                        },
                    }
                )
                # Quoted, the password may start and end with `"` (the tool strips one pair);
                # what it cannot carry is refused (secret_text.KRAFT_SCRAM_REFUSALS).
                quorum_flag += (
                    f' --add-scram "SCRAM-SHA-512=[name={user},password=\\"$SCRAM_PASSWORD_{i}\\"]"'
                )
        script = membership.voter_format_script(format_command, quorum_flag)
    else:
        script = f"{format_command} --ignore-formatted --no-initial-controllers"
    # What the tool formats: the data directories (brokers) and the metadata log's.
    directories = [*model.log_dirs, METADATA_DIR] if node.role == labels.BROKER else [METADATA_DIR]
    script = skip_when_formatted(directories) + script
    return {
        "name": "format-storage",
        "image": image,
        "command": ["sh", "-c", script],
        "env": env,
        "volumeMounts": mounts,
    }


def _logging_env(model: ClusterModel) -> dict[str, str]:
    return {"name": "KAFKA_LOG4J_OPTS", "value": templating.log4j_opts(model, CONFIG_DIR)}


def _kafka_opts(model: ClusterModel) -> str:
    options = metrics.kafka_opts(model)
    if model.config.quorum.kind == "zookeeper":
        options += " " + zookeeper_auth.client_jaas_option()
    if controller_login.applies(model):
        options += " " + controller_login.server_jvm_option()
    return options


def kafka_statefulset(model: ClusterModel, node: Node, storage_class_name: str) -> dict[str, Any]:
    """A broker or a KRaft controller."""
    c = model.config
    image = f"{c.images.kafka.repository}:{c.kafka_version}"
    is_broker = node.role == labels.BROKER
    config_file = "server.properties" if is_broker else "controller.properties"
    pod_labels = labels.component_labels(c.cluster_name, node.role, node.workload)
    volumes, mounts = _tls_volumes(model, node)
    if controller_login.applies(model):
        login_volume, login_mount = controller_login.volume(model)
        volumes.append(login_volume)
        mounts.append(login_mount)
    claims: list[dict[str, Any]] = []
    if is_broker:
        resources = model.broker_resources
        cpu, memory, heap = resources.cpu, resources.memory_gib, resources.heap_gib
        for i, path in enumerate(model.log_dirs):
            claims.append(claim_template(f"data-{i}", storage_class_name, model.data_volume_gib))
            mounts.append({"name": f"data-{i}", "mountPath": path})
    else:
        q = c.sizing.cluster.quorum
        cpu, memory, heap = q.cpu, q.memory_gib, q.heap_gib
    claims.append(
        claim_template(
            "metadata",
            storage_class_name,
            c.sizing.cluster.quorum.storage_gib if not is_broker else broker_metadata_gib(c),
        )
    )
    mounts.append({"name": "metadata", "mountPath": METADATA_DIR})
    ports = [{"name": "metrics", "containerPort": model.ports.metrics}]
    if is_broker:
        ports += [
            {"name": "client", "containerPort": model.ports.client},
            {"name": "replication", "containerPort": model.ports.replication},
            {"name": "external", "containerPort": model.ports.external},
        ]
    else:
        ports.append({"name": "controller", "containerPort": model.ports.controller})
    container = {
        "name": "kafka",
        "image": image,
        "command": ["/opt/kafka/bin/kafka-server-start.sh", f"{CONFIG_DIR}/{config_file}"],
        "env": [
            {"name": "KAFKA_HEAP_OPTS", "value": f"-Xms{heap:g}g -Xmx{heap:g}g"},
            _logging_env(model),
            {"name": "KAFKA_OPTS", "value": _kafka_opts(model)},
            {"name": "LOG_DIR", "value": SCRIPT_LOG_DIR},
            *server_jvm_env(c),
        ],
        "ports": ports,
        "resources": server_resources(c, cpu, memory),
        "volumeMounts": mounts,
        **kafka_probes(model, node),
    }
    if is_broker:
        container["lifecycle"] = stop_gate.lifecycle(model, node)
    init = metrics.agent_init(model, image)
    containers = [container]
    if model.metadata.brokers_format_storage:
        format_mounts = mounts
        if node in model.voters:
            extra, record, state = membership.voter_volumes(model)
            volumes += extra
            format_mounts = [*mounts, record]
            # What the membership container reads: the node's config, TLS files and directory.
            sidecar_mounts = [
                {**m, "readOnly": True} if m["name"] == "metadata" else m
                for m in mounts
                if m["name"] in ("config", "tls", "metadata", controller_login.VOLUME)
            ]
            containers.append(
                membership.membership_container(
                    model, node, image, config_file, [*sidecar_mounts, state]
                )
            )
        init.append(_format_storage_init(model, node, image, config_file, format_mounts))
    if certificate_reload.reloads(model, node):
        reloader, reloader_state = certificate_reload.reloader(model, node, image, mounts)
        containers.append(reloader)
        volumes.append(reloader_state)
    if c.quorum.kind == "zookeeper":
        jaas_volume, jaas_mount = zookeeper_auth.jaas_volume(model, node.role)
        volumes.append(jaas_volume)
        mounts.append(jaas_mount)
        if c.security.client_auth == "scram-sha-512":
            step_mounts = [jaas_mount]
            if zookeeper_tls.applies(c):
                # Over TLS it reads the broker's own ZooKeeper client settings and certificate.
                step_mounts += [m for m in mounts if m["name"] in ("config", "tls")]
            init.append(zookeeper_auth.scram_users_init(model, image, step_mounts))
    pod_context = pod_security_context(model, c.images.kafka)
    return _statefulset(model, node, pod_labels, containers, init, volumes, claims, pod_context)


def zookeeper_statefulset(
    model: ClusterModel, node: Node, storage_class_name: str
) -> dict[str, Any]:
    c = model.config
    q = c.sizing.cluster.quorum
    pod_labels = labels.component_labels(c.cluster_name, node.role, node.workload)
    jaas_volume, jaas_mount = zookeeper_auth.jaas_volume(model, node.role)
    volumes = [
        {"name": "config", "configMap": {"name": model.names.config_map(node.workload)}},
        jaas_volume,
    ]
    container = {
        "name": "zookeeper",
        "image": c.images.zookeeper.image,
        "command": ["zkServer.sh", "start-foreground", f"{ZK_CONFIG_DIR}/zoo.cfg"],
        "env": [
            {"name": "JVMFLAGS", "value": f"-Xms{q.heap_gib:g}g -Xmx{q.heap_gib:g}g"},
            {"name": "ZOOCFGDIR", "value": ZK_CONFIG_DIR},
            {"name": "SERVER_JVMFLAGS", "value": zookeeper_auth.server_jaas_option()},
        ],
        "ports": [
            {"name": "client", "containerPort": model.ports.zookeeper_client},
            {"name": "peer", "containerPort": model.ports.zookeeper_peer},
            {"name": "election", "containerPort": model.ports.zookeeper_election},
        ],
        "resources": server_resources(c, q.cpu, q.memory_gib),
        "volumeMounts": [
            {"name": "config", "mountPath": ZK_CONFIG_DIR},
            {"name": "snapshots", "mountPath": ZK_DATA_DIR},
            {"name": "txlog", "mountPath": ZK_LOG_DIR},
            jaas_mount,
        ],
        **zookeeper_probes(zookeeper_tls.plain_client_host(c, node), model.ports.zookeeper_client),
    }
    if zookeeper_tls.applies(c):
        volumes.append(_tls_secret_volume(model, node))
        container["volumeMounts"].append({"name": "tls", "mountPath": ZK_TLS_DIR, "readOnly": True})
    myid = {
        "name": "myid",
        "image": c.images.zookeeper.image,
        "command": ["sh", "-c", f"echo {node.node_id} > {ZK_DATA_DIR}/myid"],
        "volumeMounts": [{"name": "snapshots", "mountPath": ZK_DATA_DIR}],
    }
    claims = [
        claim_template("snapshots", storage_class_name, q.storage_gib),
        # The transaction log gets a device of its own (ZooKeeper's first performance rule).
        claim_template("txlog", storage_class_name, max(10.0, q.storage_gib / 4)),
    ]
    pod_context = pod_security_context(model, c.images.zookeeper)
    return _statefulset(model, node, pod_labels, [container], [myid], volumes, claims, pod_context)


def _pod_metadata(model: ClusterModel, node: Node, pod_labels: dict[str, str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"labels": pod_labels}
    annotations = pod_network_annotation(model, node)
    if annotations:  # the provider drops an empty map: leave it out so diffs stay quiet
        metadata["annotations"] = annotations
    return metadata


def _statefulset(
    model: ClusterModel,
    node: Node,
    pod_labels: dict[str, str],
    containers: list[dict[str, Any]],
    init_containers: list[dict[str, Any]],
    volumes: list[dict[str, Any]],
    claims: list[dict[str, Any]],
    pod_context: dict[str, Any],
) -> dict[str, Any]:
    for container in [*init_containers, *containers]:
        container["securityContext"] = container_security_context()
    for container in init_containers:
        container["resources"] = INIT_STEP.manifest()
    service = (
        model.names.brokers_service if node.role == labels.BROKER else model.names.quorum_service
    )
    return {
        "metadata": {
            "name": node.workload,
            "namespace": model.config.namespace,
            "labels": pod_labels,
        },
        "spec": {
            "replicas": 1,
            "serviceName": service,
            "podManagementPolicy": "Parallel",
            "selector": {
                "matchLabels": {
                    labels.NAME: node.workload,
                    labels.INSTANCE: model.config.cluster_name,
                }
            },
            "persistentVolumeClaimRetentionPolicy": {
                "whenDeleted": "Retain",
                "whenScaled": "Retain",
            },
            "template": {
                "metadata": _pod_metadata(model, node, pod_labels),
                "spec": {
                    "securityContext": pod_context,
                    "affinity": _zone_affinity(node, model),
                    # Time for a controlled shutdown (probes.py has the figures).
                    "terminationGracePeriodSeconds": TERMINATION_GRACE_SECONDS,
                    "initContainers": init_containers,
                    "containers": containers,
                    "volumes": volumes,
                },
            },
            "volumeClaimTemplates": claims,
        },
    }
