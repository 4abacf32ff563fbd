"""What one node gives its pods: capacity less kube/system reservations and the eviction threshold
(the EKS AMI's formula, OpenShift's system-reserved defaults, as data in
`data/node_reservations.yaml`), less the daemon sets' share."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from spark_sizing.contract import NodeSizing
from spark_sizing.profiles import HardwareProfile

MIB_PER_GIB = 1024

# What kafkastack runs beside every Kafka server, in the same pod: each Kafka node's
# `keystore-reloader` (Kafka reloads a renewed TLS certificate) and each KRaft voter's
# `quorum-membership`. Their requests come out of the node's allocatable like the daemon sets',
# so a broker's request leaves room for them; infra/model/resources.py sizes the sidecar
# containers from these figures and counts them when it checks that a pod fits its node.
SIDECAR_CPU = 0.05  # vCPUs each sidecar requests
SIDECAR_MEMORY_GIB = 0.375  # GiB each sidecar requests (memory limit = request)
# At most: a broker that is also a KRaft voter (combined mode) runs both.
SIDECARS_PER_KAFKA_POD = 2


@cache
def _table() -> dict[str, Any]:
    text = (
        resources.files("spark_sizing").joinpath("data/node_reservations.yaml").read_text("utf-8")
    )
    table: dict[str, Any] = yaml.safe_load(text)
    return table


def _eks() -> dict[str, Any]:
    eks: dict[str, Any] = _table()["eks"]
    return eks


def node_memory_gib(nominal_gib: float) -> float:
    """What the kernel reports of an instance's nominal memory (32 GiB → 29.6 GiB)."""
    share: float = _table()["vm_memory_overhead"]["share"]
    return nominal_gib * (1 - share)


def reservations_source() -> str:
    return f"{_eks()['source']}, as of {_eks()['as_of']}"


def reserved_cpu(cores: float) -> float:
    """kube-reserved CPU: 6 % of the first core, 1 % of the second, 0.5 % of the next two,
    0.25 % of the rest (8 vCPUs: 0.06 + 0.01 + 0.01 + 0.01 = 0.09)."""
    left, reserved = cores, 0.0
    for tier_cores, share in _eks()["cpu_tiers"]:
        taken = left if tier_cores is None else min(left, tier_cores)
        reserved += taken * share
        left -= taken
    return reserved


def reserved_memory_gib(max_pods: int) -> float:
    """kube-reserved (255 MiB + 11 MiB per pod) + system-reserved + the hard eviction threshold."""
    e = _eks()
    mib = (
        e["memory_base_mib"]
        + e["memory_per_pod_mib"] * max_pods
        + e["system_reserved_memory_mib"]
        + e["eviction_hard_memory_mib"]
    )
    return float(mib) / MIB_PER_GIB


@dataclass(frozen=True)
class Allocatable:
    """Node allocatable (what the scheduler can place), vCPUs and GiB."""

    cpu: float
    memory_gib: float


def node_allocatable(cpu: float, memory_gib: float, max_pods: int) -> Allocatable:
    """m5.2xlarge (8 vCPU, 32 GiB, 58 pods): 8 − 0.09 = 7.91 vCPUs and
    32 × 0.925 − (255 + 11 × 58 + 100) MiB = 29.6 − 0.970 = 28.63 GiB."""
    return Allocatable(
        cpu=cpu - reserved_cpu(cpu),
        memory_gib=node_memory_gib(memory_gib) - reserved_memory_gib(max_pods),
    )


def openshift_allocatable(cpu: float, memory_gib: float) -> Allocatable:
    """m5.2xlarge on OpenShift: 8 − 0.5 = 7.5 vCPUs and 29.6 − 1 GiB − 100 MiB = 28.50 GiB."""
    o: dict[str, Any] = _table()["openshift"]
    reserved_mib = o["system_reserved_memory_mib"] + o["eviction_hard_memory_mib"]
    return Allocatable(
        cpu=cpu - o["system_reserved_cpu"],
        memory_gib=node_memory_gib(memory_gib) - float(reserved_mib) / MIB_PER_GIB,
    )


def node_sizing(
    profile: HardwareProfile, daemonset_cpu: float, daemonset_memory_gib: float
) -> NodeSizing:
    allocatable = node_allocatable(profile.cpu, profile.memory_gib, profile.max_pods)
    return NodeSizing(
        cpu=profile.cpu,
        memory_gib=profile.memory_gib,
        allocatable_cpu=round(allocatable.cpu, 3),
        allocatable_memory_gib=round(allocatable.memory_gib, 3),
        daemonset_cpu=daemonset_cpu,
        daemonset_memory_gib=daemonset_memory_gib,
    )
