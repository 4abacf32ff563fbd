"""Pod resources: what every container requests and is limited to, and the check that a pod fits
its node. The one home of container sizes: the Kafka and ZooKeeper servers (from the sizing), the
init containers, the admin Jobs and HAProxy.

Every container carries requests and limits for CPU and memory: a namespace whose ResourceQuota
caps `limits.cpu` or `limits.memory` refuses a pod with one container that has none.
Policy: memory limit = request (the broker is never OOM-killed below what it was promised, and
never grows into memory the node does not have). A server's CPU limit is what its node leaves to
pods after the daemon sets: the broker is alone on its node (required anti-affinity), so the
limit only says what the node could give anyway, and CFS quotas never throttle the network and
request threads below it (with no node figures, a small environment's custom profile, the limit
is the request).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infra.errors import ConfigError
from spark_sizing.allocatable import (
    SIDECAR_CPU,
    SIDECAR_MEMORY_GIB,
    node_sizing,
    openshift_allocatable,
)
from spark_sizing.contract import NodeSizing
from spark_sizing.formulas import SizingParameters
from spark_sizing.profiles import BUILT_IN_PROFILES

if TYPE_CHECKING:
    from infra.stack_config import StackConfig

# Heap is not all a JVM uses: metaspace, threads, direct buffers, GC structures.
JVM_NON_HEAP_GIB = 1.0
_EPSILON = 1e-6


def cpu_quantity(cpu: float) -> str:
    """Kubernetes' canonical form (7.4 → "7400m", 2 → "2"), as the API server stores it: a
    different spelling of the same amount would show as a change on every preview."""
    millis = round(cpu * 1000)
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def memory_quantity(gib: float) -> str:
    """Canonical too: 27.5 GiB → "28160Mi", 4 → "4Gi"."""
    mib = round(gib * 1024)
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


@dataclass(frozen=True)
class ContainerSize:
    """A container's CPU request and limit (vCPUs) and memory (GiB, limit = request)."""

    cpu: float
    cpu_limit: float
    memory_gib: float

    def manifest(self) -> dict[str, Any]:
        memory = memory_quantity(self.memory_gib)
        return {
            "requests": {"cpu": cpu_quantity(self.cpu), "memory": memory},
            "limits": {"cpu": cpu_quantity(self.cpu_limit), "memory": memory},
        }


# Init containers run one after another before the server starts, so the pod asks for the
# largest of them or its server, whichever is more: these never add to a Kafka pod's request.
# 512 MiB holds a Kafka tool's JVM (`kafka-storage format`, ZooKeeper mode's `kafka-configs`:
# 256 MiB default heap) as well as the shell steps (keystore, JMX agent download, myid).
INIT_STEP = ContainerSize(cpu=0.1, cpu_limit=1.0, memory_gib=0.5)
# The admin Jobs (ACLs, dynamic settings): a Kafka tool's JVM, once per change.
ADMIN_JOB = ContainerSize(cpu=0.25, cpu_limit=1.0, memory_gib=0.5)
# HAProxy passes TLS through (no termination): one core carries the router's sized capacity.
HAPROXY = ContainerSize(cpu=1.0, cpu_limit=2.0, memory_gib=1.0)
# A container beside a Kafka server for the pod's life (`keystore-reloader`, a voter's
# `quorum-membership`): mostly asleep, so a small request, which the sizing leaves room for
# (spark_sizing/allocatable.py); the limit lets a Kafka tool start without crawling.
SIDECAR = ContainerSize(cpu=SIDECAR_CPU, cpu_limit=0.5, memory_gib=SIDECAR_MEMORY_GIB)
# A Kafka tool's JVM in a sidecar, held to a small heap so heap and non-heap fit its memory
# (the tools' default heap is 256 MiB, too much beside the JVM's own share in 375 MiB).
SIDECAR_TOOL_HEAP = "-Xmx128m"
# A Kafka tool's JVM (an init container's, a sidecar's, an admin Job's) runs one action for
# seconds, so the image's broker-minded defaults (C2 compiler threads, G1's concurrent threads)
# cost it more CPU than they ever save: the C1 compiler alone and the serial collector start
# ConfigCommand on 1.1 CPU-seconds instead of 1.8, the storage tool on 0.8 instead of 1.2
# (measured with the image's class archive), and under a sidecar's 0.5-CPU limit that is wall
# time too. KAFKA_JVM_PERFORMANCE_OPTS replaces the defaults in kafka-run-class.sh (upstream's
# and the local image's alike).
TOOL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"
JVM_PERFORMANCE_VARIABLE = "KAFKA_JVM_PERFORMANCE_OPTS"


def sidecar_tool_environment() -> dict[str, str]:
    """The variables that start a Kafka tool beside a server as a tool: `SIDECAR_TOOL_HEAP`,
    `TOOL_JVM_OPTIONS` (a sidecar's env; the readiness probe's describe, in_sync.py)."""
    return {"KAFKA_HEAP_OPTS": SIDECAR_TOOL_HEAP, JVM_PERFORMANCE_VARIABLE: TOOL_JVM_OPTIONS}


def tool_jvm_env() -> dict[str, str]:
    """The environment entry that starts a container's Kafka tools with `TOOL_JVM_OPTIONS`."""
    return {"name": JVM_PERFORMANCE_VARIABLE, "value": TOOL_JVM_OPTIONS}


def server_jvm_env(c: StackConfig) -> list[dict[str, str]]:
    """A Kafka server's JVM options as the stack sets them (`resources.server_jvm_options`), or
    nothing: the image's start script then uses its own defaults."""
    options = c.resources.server_jvm_options
    return [{"name": JVM_PERFORMANCE_VARIABLE, "value": options}] if options else []


def sidecar(
    name: str, image: str, script: str, mounts: list[dict[str, Any]], log_dir: str
) -> dict[str, Any]:
    """A container beside a Kafka server running `script` in the image's shell: `SIDECAR`'s
    size, its Kafka tools' JVM held to `SIDECAR_TOOL_HEAP` and started as a tool
    (`TOOL_JVM_OPTIONS`), and their own logs in `log_dir`
    (the image's default may not be writable, e.g. under OpenShift's assigned uid)."""
    return {
        "name": name,
        "image": image,
        "command": ["sh", "-c", script],
        "env": [
            *({"name": k, "value": v} for k, v in sidecar_tool_environment().items()),
            {"name": "LOG_DIR", "value": log_dir},
        ],
        "resources": SIDECAR.manifest(),
        "volumeMounts": mounts,
    }


def server_resources(c: StackConfig, cpu: float, memory_gib: float) -> dict[str, Any]:
    """A Kafka or ZooKeeper server container: the sized request, limited as the policy says."""
    n = node(c)
    limit = cpu if n is None else max(cpu, n.allocatable_cpu - n.daemonset_cpu)
    return ContainerSize(cpu=cpu, cpu_limit=limit, memory_gib=memory_gib).manifest()


@dataclass(frozen=True)
class Resources:
    """What a pod requests: CPU, memory, and the JVM heap inside that memory."""

    cpu: float
    memory_gib: float
    heap_gib: float


def broker_request(c: StackConfig) -> Resources:
    """The sizing's broker resources, each overridable in `kafkastack:resources`."""
    sized, override = c.sizing.cluster.broker, c.resources
    return Resources(
        cpu=override.broker_cpu or sized.cpu,
        memory_gib=override.broker_memory_gib or sized.memory_gib,
        heap_gib=override.broker_heap_gib or sized.heap_gib,
    )


def node(c: StackConfig) -> NodeSizing | None:
    """The broker node as sized (schema 1.1), else as its built-in profile gives it; on OpenShift
    with OpenShift's reservations instead of the EKS AMI's the sizing assumes; with the daemon
    sets' share from `kafkastack:resources` when the stack says it."""
    sized = c.sizing.cluster.node
    if sized is None:
        profile = BUILT_IN_PROFILES.get(c.sizing.cluster.profile)
        if profile is None:
            return None
        defaults = SizingParameters()
        sized = node_sizing(profile, defaults.daemonset_cpu, defaults.daemonset_memory_gib)
    update: dict[str, float] = {}
    if c.platform == "openshift":
        allocatable = openshift_allocatable(sized.cpu, sized.memory_gib)
        update["allocatable_cpu"] = round(allocatable.cpu, 3)
        update["allocatable_memory_gib"] = round(allocatable.memory_gib, 3)
    if c.resources.daemonset_cpu is not None:
        update["daemonset_cpu"] = c.resources.daemonset_cpu
    if c.resources.daemonset_memory_gib is not None:
        update["daemonset_memory_gib"] = c.resources.daemonset_memory_gib
    return sized.model_copy(update=update)


def _reservations(c: StackConfig) -> str:
    table = "spark_sizing/data/node_reservations.yaml"
    if c.platform == "openshift":
        return f"OpenShift's default system-reserved ({table})"
    return f"the EKS AMI's kube-reserved ({table})"


def sidecars(c: StackConfig, role: str) -> int:
    """How many sidecars run beside the server of a `role` pod ("broker", "kraft" or
    "zookeeper"): every Kafka node has a `keystore-reloader`, every KRaft voter a
    `quorum-membership`, so a broker has 1 (2 when it is also a voter: `quorum.combined`), a
    dedicated KRaft controller 2, a ZooKeeper server none."""
    if role == "zookeeper":
        return 0
    if role == "kraft":
        return 2
    if role == "broker":
        return 1 + (1 if c.quorum.kind == "kraft" and c.quorum.combined else 0)
    raise ValueError(f"unknown pod role {role!r}")


def _at_most(free: float) -> str:
    """A figure to request that fits: rounded down, so 27.255 reads 27.25, never 27.26."""
    return f"{math.floor(round(free * 100, 6)) / 100:.2f}"


def _sidecars_share(count: int, each: float) -> str:
    return f" and {count * each:g} to the pod's sidecars ({count} × {each:g})" if count else ""


def check(c: StackConfig) -> None:
    """Refuse requests no node of the sized profile can allocate beside its daemon sets and the
    pod's sidecars (the pod would stay Pending)."""
    broker = broker_request(c)
    broker_key = {
        "cpu": "resources.broker_cpu" if c.resources.broker_cpu else "sizing.cluster.broker.cpu",
        "memory": "resources.broker_memory_gib"
        if c.resources.broker_memory_gib
        else "sizing.cluster.broker.memory_gib",
        "heap": "resources.broker_heap_gib"
        if c.resources.broker_heap_gib
        else "sizing.cluster.broker.heap_gib",
    }
    q = c.sizing.cluster.quorum
    pods = [("broker", broker.cpu, broker.memory_gib, broker.heap_gib, broker_key)]
    if not c.quorum.combined:
        quorum_key = {
            "cpu": "sizing.cluster.quorum.cpu",
            "memory": "sizing.cluster.quorum.memory_gib",
            "heap": "sizing.cluster.quorum.heap_gib",
        }
        pods.append((c.quorum.kind, q.cpu, q.memory_gib, q.heap_gib, quorum_key))
    n = node(c)
    if n is None and not c.small:
        raise ConfigError(
            f"kafkastack:sizing.cluster.node: profile {c.sizing.cluster.profile!r} is not built "
            "in and the sizing does not say what its nodes can allocate; re-run `kafkastack size` "
            "and `kafkastack apply-sizing` (sizing schema 1.1)"
        )
    for role, cpu, memory, heap, key in pods:
        if heap + JVM_NON_HEAP_GIB > memory + _EPSILON:
            raise ConfigError(
                f"kafkastack:{key['heap']}: a {heap:g} GiB heap leaves no room in the {memory:g} "
                f"GiB {role} container (the JVM needs ~{JVM_NON_HEAP_GIB:g} GiB beyond its heap); "
                f"use at most {memory - JVM_NON_HEAP_GIB:g}"
            )
        if n is None:
            continue
        # The server shares its pod with its sidecars: their requests add to the pod's.
        count = sidecars(c, role)
        free_cpu = n.allocatable_cpu - n.daemonset_cpu - count * SIDECAR_CPU
        free_memory = n.allocatable_memory_gib - n.daemonset_memory_gib - count * SIDECAR_MEMORY_GIB
        profile = c.sizing.cluster.profile
        on = f"a {profile} node on {c.platform}"
        _check_daemon_sets(c, on, free_cpu, free_memory)
        if cpu > free_cpu + _EPSILON:
            raise ConfigError(
                f"kafkastack:{key['cpu']}: {cpu:g} vCPUs per {role} cannot be scheduled: {on} "
                f"allocates {n.allocatable_cpu:g} of its {n.cpu:g} after {_reservations(c)}, "
                f"{n.daemonset_cpu:g} of them to daemon sets (resources.daemonset_cpu)"
                f"{_sidecars_share(count, SIDECAR_CPU)}; request at most {_at_most(free_cpu)} or "
                "size for a larger profile"
            )
        if memory > free_memory + _EPSILON:
            raise ConfigError(
                f"kafkastack:{key['memory']}: {memory:g} GiB per {role} cannot be scheduled: "
                f"{on} allocates {n.allocatable_memory_gib:g} of its {n.memory_gib:g} GiB after "
                f"{_reservations(c)}, {n.daemonset_memory_gib:g} of them to daemon sets "
                f"(resources.daemonset_memory_gib){_sidecars_share(count, SIDECAR_MEMORY_GIB)}; "
                f"request at most {_at_most(free_memory)} or size for a larger profile"
            )


def _check_daemon_sets(c: StackConfig, on: str, free_cpu: float, free_memory: float) -> None:
    """Daemon sets that leave a node nothing are their key's fault, not the broker's."""
    for free, kind, unit in ((free_cpu, "cpu", "vCPUs"), (free_memory, "memory_gib", "GiB")):
        if free > _EPSILON:
            continue
        overridden = getattr(c.resources, f"daemonset_{kind}") is not None
        key = (
            f"resources.daemonset_{kind}" if overridden else f"sizing.cluster.node.daemonset_{kind}"
        )
        raise ConfigError(
            f"kafkastack:{key}: daemon sets would take all {unit} {on} can allocate, leaving "
            "nothing for Kafka; lower it to what they request on every node"
        )
