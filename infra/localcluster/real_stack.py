"""The local stack made to really run on the local cluster's three real nodes.

The committed `stacks/Pulumi.local.yaml` is sized for kwok's fake nodes (twelve brokers of 2 GiB,
five controllers of 2 CPUs, two HAProxy replicas, a Multus network, no waiting on readiness); the
real nodes share one machine of two cores. This writes a copy of it with the overrides below,
so stacks/ keeps only the committed config and the variant cannot drift from it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Literal

import yaml

from infra.config_base import NAMESPACE
from infra.localcluster import images

BROKERS = 3
# One broker (also a controller) per node, small enough that every node (each reporting the whole
# machine, 2 CPUs) still fits CoreDNS and the one HAProxy replica (it requests 1 CPU).
BROKER_CPU = 0.25
QUORUM_CPU = 0.25
MEMORY_GIB = 2.0
HEAP_GIB = 1.0  # whole GiB: the manifests give the JVM -Xmx<heap>g
ZOOKEEPER_SERVERS = 3  # the ZooKeeper-mode variant's ensemble, one server per zone
CONTROLLERS = 3  # the dedicated-controller variant's KRaft voters, one per zone
# How the variant keeps its metadata: the brokers are the KRaft voters (three nodes), KRaft
# controllers of their own, or a ZooKeeper ensemble (both on six nodes, two per zone).
Quorum = Literal["combined", "dedicated", "zookeeper"]
# The second network of the dual variant: one subnet per zone (zones in the stack's order),
# routed between zones by the host (the nodes' shared bridge is each subnet's router).
REPLICATION_SUBNETS = ("10.30.0.0/24", "10.30.1.0/24", "10.30.2.0/24")


def second_network(zones: list[str], bridge: str) -> dict[str, Any]:
    """`network` of the dual variant: the on-prem shape (static addresses per zone, the `ips`
    capability) with the `bridge` plugin on the cluster's host bridge, since every real node
    shares the machine's network stack (no NIC per node for macvlan to hang off)."""
    if len(zones) > len(REPLICATION_SUBNETS):
        raise ValueError(f"at most {len(REPLICATION_SUBNETS)} zones, got {zones}")
    return {
        "mode": "dual",
        "replication": {
            "subnets": dict(zip(zones, REPLICATION_SUBNETS, strict=False)),
            "plugin": "bridge",
            "master_interface": bridge,
        },
    }


def brokers_per_zone(brokers: int, zones: int) -> list[int]:
    """Zones in turn, as the sizing places brokers (racks.py)."""
    return [brokers // zones + (z < brokers % zones) for z in range(zones)]


def real_node_overrides(
    values: dict[str, Any], replication_bridge: str | None = None
) -> dict[str, Any]:
    """`kafkastack:` values (without prefix) of the local stack → its real-node variant: one
    pod network, or (given the host bridge of nodes that run Multus) the second network too."""
    result = copy.deepcopy(values)
    # Pulumi waits until every workload is Ready through its own probes.
    result["skip_await"] = False
    if replication_bridge is None:
        result["network"] = {"mode": "single"}
    else:
        result["network"] = second_network(list(result["zones"]), replication_bridge)
    result["brokers"] = BROKERS
    # Brokers and controllers never share a node (required anti-affinity), and there are three
    # nodes: the brokers are the KRaft controllers (combined mode, local/dev only).
    result["quorum"] = {"kind": "kraft", "combined": True}
    # The committed stack's other resource settings (its servers' JVM options) stay.
    result.setdefault("resources", {}).update(
        broker_cpu=BROKER_CPU, broker_memory_gib=MEMORY_GIB, broker_heap_gib=HEAP_GIB
    )
    result.setdefault("external", {})["replicas"] = 1
    # The CLIENT listener as production renders it (SCRAM over TLS; local/dev default to
    # plaintext SCRAM): the proofs' in-cluster clients log in through it.
    result.setdefault("security", {})["client_tls"] = True
    # The HAProxy image built here (uid and gid 99 like the public one): nothing can be pulled.
    # The committed stack already names the Kafka image built here.
    result.setdefault("images", {})["haproxy"] = {
        "image": images.HAPROXY.ref,
        "user": 99,
        "group": 99,
    }
    cluster = result["sizing"]["cluster"]
    zones = len(result["zones"])
    cluster["brokers"] = BROKERS
    cluster["brokers_per_zone"] = brokers_per_zone(BROKERS, zones)
    cluster["quorum"].update(cpu=QUORUM_CPU, memory_gib=MEMORY_GIB, heap_gib=HEAP_GIB)
    return result


def dedicated_controllers(values: dict[str, Any]) -> dict[str, Any]:
    """The real-node variant's values → its twin with KRaft controllers of their own, as prod
    runs them: brokers and controllers never share a node (required anti-affinity), so it runs
    on six nodes, two per zone. A change rolls the controllers first, then the brokers."""
    result = copy.deepcopy(values)
    result["quorum"] = {"kind": "kraft", "nodes": CONTROLLERS, "combined": False}
    result["sizing"]["cluster"]["quorum"].update(kind="kraft", nodes=CONTROLLERS)
    return result


def without_kraft_polling(polling: dict[str, Any]) -> dict[str, Any]:
    """A stack's `polling` for ZooKeeper mode: the metadata log's no-op interval is KRaft's
    alone (stack validation refuses it there); the followers' fetch wait stays."""
    return {k: v for k, v in polling.items() if k != "metadata_idle_interval_ms"}


def zookeeper_mode(values: dict[str, Any]) -> dict[str, Any]:
    """The real-node variant's values → its ZooKeeper-mode twin: Kafka 3.9 on the images built
    here, a three-server ensemble in place of the combined KRaft quorum. Brokers and ZooKeeper
    servers never share a node (required anti-affinity): it runs on six nodes, two per zone."""
    result = copy.deepcopy(values)
    result["kafka_version"] = images.KAFKA_ZOOKEEPER_MODE.tag
    result["quorum"] = {"kind": "zookeeper", "nodes": ZOOKEEPER_SERVERS}
    if "polling" in result:
        result["polling"] = without_kraft_polling(result["polling"])
    result["images"]["zookeeper"] = {"image": images.ZOOKEEPER.ref}
    result["sizing"]["cluster"]["quorum"].update(kind="zookeeper", nodes=ZOOKEEPER_SERVERS)
    return result


def write_real_node_stack(
    source: Path,
    target: Path,
    replication_bridge: str | None = None,
    quorum: Quorum = "combined",
) -> Path:
    """Write `target` (a Pulumi stack file) from the stack file `source` with the real-node
    overrides (`dual` on `replication_bridge` when given; the metadata quorum `quorum`
    says); provider settings and anything else beside our keys are kept."""
    document = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    raw = dict(document.get("config", {}) or {})
    prefix = f"{NAMESPACE}:"
    ours = {k.removeprefix(prefix): v for k, v in raw.items() if str(k).startswith(prefix)}
    others = {k: v for k, v in raw.items() if not str(k).startswith(prefix)}
    values = real_node_overrides(ours, replication_bridge)
    if quorum == "dedicated":
        values = dedicated_controllers(values)
    elif quorum == "zookeeper":
        values = zookeeper_mode(values)
    document["config"] = {**others, **{f"{prefix}{k}": v for k, v in values.items()}}
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        "# Generated by infra/localcluster/real_stack.py from "
        f"{source.name}: the local stack for real nodes.\n"
        + yaml.safe_dump(document, sort_keys=False),
        encoding="utf-8",
    )
    return target
