"""The `sizing.json` contract between the sizing job and the Pulumi programs.

Importable without pyspark: `infra/config.py` validates the sizing it finds in stack config with
these models. Bump `SCHEMA_VERSION` (and list it in `SUPPORTED_SCHEMA_VERSIONS`) on any change a
reader must know about; readers refuse versions they do not know.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

SCHEMA_VERSION = "1.2"
# 1.1 added `utilisation` and `zone_loss` to sizing.json, and `cluster.node` (the broker node's
# capacity and allocatable: broker requests fit it); a stack's sizing is the same shape.
# 1.2 added the `cpu` and `recovery` constraints (a binding constraint may be either), and
# `recovery`, `cost` and `profile_choice` to sizing.json; a stack's sizing is the same shape.
# 1.2 added `profile_figures` (each hardware figure used, measured or documented, and where from).
SUPPORTED_SCHEMA_VERSIONS: frozenset[str] = frozenset({"1.0", "1.1", "1.2"})

ConstraintName = Literal["ingress", "egress", "cpu", "storage", "recovery", "partitions", "minimum"]


# Every model read from a file someone may edit (sizing.json, profiles, prices, volume types,
# stack config): unknown keys are errors, so a typo is caught, not ignored; JSON's Infinity and
# NaN (YAML's .inf and .nan) are no count, size or rate.
STRICT_CONFIG = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class _Frozen(BaseModel):
    model_config = STRICT_CONFIG


class BrokerResources(_Frozen):
    """Per-broker compute: what the broker's node can allocate to it (heap + page cache)."""

    cpu: float = Field(gt=0, description="vCPUs requested per broker (fits node allocatable)")
    memory_gib: float = Field(gt=0, description="container memory request = limit, GiB")
    heap_gib: float = Field(gt=0, description="JVM heap per broker, GiB")
    num_network_threads: int = Field(ge=1, description="num.network.threads")
    num_io_threads: int = Field(ge=1, description="num.io.threads")


class StorageClassSizing(_Frozen):
    """Volume type and what each data volume must carry (its share of the broker's disk writes).

    The StorageClass converts to the type's unit (MiB/s for EBS) rounding up, raises to the type's
    floors and refuses its ceilings (spark_sizing/volume_types.py).
    """

    type: str = Field(description="volume type (spark_sizing/data/volume_types.yaml)")
    iops: int = Field(ge=0, description="IOPS per volume")
    throughput_mb_s: float = Field(ge=0, description="throughput each volume must carry, MB/s")


class NodeSizing(_Frozen):
    """One broker node: capacity, and allocatable after the kubelet's reservations."""

    cpu: float = Field(gt=0, description="vCPUs of the instance")
    memory_gib: float = Field(gt=0, description="memory of the instance, GiB")
    allocatable_cpu: float = Field(gt=0, description="capacity − kube/system reserved, vCPUs")
    allocatable_memory_gib: float = Field(gt=0, description="… − eviction threshold, GiB")
    daemonset_cpu: float = Field(ge=0, description="vCPUs left to daemon sets on every node")
    daemonset_memory_gib: float = Field(ge=0, description="GiB left to daemon sets")


class QuorumSizing(_Frozen):
    """Metadata quorum: KRaft controllers or a ZooKeeper ensemble."""

    kind: Literal["kraft", "zookeeper"]
    nodes: int = Field(ge=1, description="controllers or ZooKeeper servers (odd)")
    cpu: float = Field(gt=0)
    memory_gib: float = Field(gt=0)
    heap_gib: float = Field(gt=0)
    storage_gib: float = Field(gt=0, description="metadata log / snapshot volume, GiB")


class RouterSizing(_Frozen):
    """External access: HAProxy or OpenShift router replicas that carry client traffic only."""

    replicas: int = Field(ge=1)
    client_mb_s: float = Field(
        ge=0, description="peak produce + consume of external clients, through the routers"
    )
    capacity_mb_s_per_replica: float = Field(gt=0)


class ClusterSizing(_Frozen):
    brokers: int = Field(ge=1)
    zones: int = Field(ge=1)
    brokers_per_zone: list[int]
    binding_constraint: ConstraintName
    constraints: dict[str, int] = Field(description="broker count each constraint alone needs")
    profile: str = Field(description="hardware profile the counts were computed for")
    peak_ingress_mb_s: float = Field(ge=0)
    peak_egress_mb_s: float = Field(ge=0, description="consumer egress at peak")
    replication_mb_s: float = Field(ge=0, description="follower fetch traffic at peak")
    storage_per_broker_gib: float = Field(ge=0)
    data_volumes_per_broker: int = Field(default=1, ge=1, description="JBOD volumes per broker")
    partitions_total: int = Field(ge=0, description="partition replicas included")
    replication_factor: int = Field(ge=1, description="highest RF among topics")
    min_insync_replicas: int = Field(ge=1)
    broker: BrokerResources
    node: NodeSizing | None = Field(default=None, description="schema 1.1; else the profile's")
    storage_class: StorageClassSizing
    quorum: QuorumSizing
    router: RouterSizing


class TopicSizing(_Frozen):
    topic: str
    partitions: int = Field(ge=1)
    replication_factor: int = Field(ge=1)
    peak_ingress_mb_s: float = Field(ge=0)
    peak_egress_mb_s: float = Field(ge=0)
    storage_gib: float = Field(ge=0)
    partitions_pinned: bool = False


class ResourceUtilisation(_Frozen):
    """One broker resource at the chosen broker count, normally and with one zone down."""

    resource: str = Field(description="disk writes, network in, network out, storage, ...")
    unit: str = Field(description="MB/s (10^6 B/s), GiB or partition replicas")
    capacity_per_broker: float = Field(gt=0, description="what one broker sustains or holds")
    target: float = Field(gt=0, description="share of capacity allowed normally")
    zone_down_limit: float = Field(gt=0, description="share allowed with one zone down")
    brokers_needed: int = Field(ge=0, description="brokers this resource alone needs")
    per_broker: float = Field(ge=0, description="load per broker at the chosen count")
    utilisation: float = Field(ge=0, description="per_broker / capacity_per_broker")
    zone_down_per_broker: float | None = Field(
        default=None, description="load per surviving broker with one zone down (none: 1 zone)"
    )
    zone_down_utilisation: float | None = None


class ZoneLoss(_Frozen):
    """Whether acks=all writes continue with any one zone down (rack-aware placement)."""

    zones: int = Field(ge=1)
    writes_survive: bool
    topics_losing_writes: int = Field(ge=0)
    detail: str


class Recovery(_Frozen):
    """Re-replicating one lost broker's data at the chosen count (spark_sizing/recovery.py)."""

    data_per_broker_gib: float = Field(ge=0, description="data one broker holds, GiB")
    rate_mb_s: float = Field(ge=0, description="rate its replacement can take it in, MB/s")
    limited_by: str = Field(description="disk writes, network in or the throttle")
    hours: float | None = Field(description="time to re-replicate it; none: no room at all")
    target_hours: float = Field(gt=0, description="--recovery-hours")
    brokers_needed: int = Field(ge=1, description="brokers the target alone needs")


class CostPart(_Frozen):
    """One line of the monthly bill."""

    part: str = Field(description="instances, volumes, provisioned IOPS, ..., cross-zone ...")
    monthly: float | None = Field(description="per month in `currency`; none: no price known")
    detail: str = Field(description="the quantities and prices it was computed from")


class CostEstimate(_Frozen):
    """Monthly cost of the brokers at the horizon (spark_sizing/costs.py)."""

    currency: str
    region: str
    prices_source: str = Field(description="where the prices come from, and their date")
    total_monthly: float = Field(ge=0, description="sum of the priced parts")
    complete: bool = Field(description="every part had a price")
    cross_zone_gb_month: float = Field(ge=0, description="GB (10^9 B) crossing zones a month")
    parts: list[CostPart]


class ProfileCandidate(_Frozen):
    """One profile sized for the same projection (`--profile auto`)."""

    profile: str
    brokers: int | None = Field(description="none: the profile cannot carry the load")
    binding_constraint: str | None
    utilisation: dict[str, float] = Field(
        default_factory=dict, description="per resource, at the count, normally"
    )
    monthly_cost: float | None
    meets_constraints: bool
    note: str = Field(description="why it was not chosen, or what it lacks")


class ProfileChoice(_Frozen):
    """Which profile `--profile auto` chose among the candidates, and why."""

    chosen: str
    reason: str
    candidates: list[ProfileCandidate]


class ProfileFigure(_Frozen):
    """One figure of the hardware profile the sizing used, and where it came from."""

    field: str = Field(description="profile field, e.g. disk_mb_s")
    value: float
    unit: str
    measured: bool = Field(description="measured by `kafkastack calibrate`, else documented")
    source: str = Field(description="when, where and how it was measured, or its document")


class InputStats(_Frozen):
    rows_read: int = Field(ge=0)
    rows_accepted: int = Field(ge=0)
    rows_rejected: int = Field(ge=0)
    duplicates_dropped: int = Field(default=0, ge=0)


class SizingReport(_Frozen):
    """The whole `sizing.json`."""

    schema_version: str = SCHEMA_VERSION
    generated_at: str
    parameters: dict[str, str | int | float | bool | None]
    cluster: ClusterSizing
    topics: list[TopicSizing]
    inputs: InputStats
    warnings: list[str] = Field(default_factory=list)
    utilisation: list[ResourceUtilisation] = Field(default_factory=list)
    zone_loss: ZoneLoss | None = None
    recovery: Recovery | None = None
    cost: CostEstimate | None = None
    profile_choice: ProfileChoice | None = None
    profile_figures: list[ProfileFigure] = Field(default_factory=list)


class StackSizing(_Frozen):
    """What `kafkastack apply-sizing` writes under `kafkastack:sizing` in a stack file.

    Per-topic rows stay in sizing.json: a stack needs the cluster shape, and 10k topics in stack
    config would drown every `pulumi preview` diff.
    """

    schema_version: str
    source: str = Field(description="path or URL of the sizing.json it came from")
    cluster: ClusterSizing


def first_error(err: ValidationError) -> tuple[str, str]:
    """The first problem validation found, as (dotted field, what is wrong): the one phrasing
    of validation errors wherever kafkastack reports them (stack config, sizing, profiles, CLI)."""
    first = err.errors()[0]
    # pydantic names the branch of a union it tried (`list[constrained-str]`): not a key.
    field = ".".join(str(p) for p in first["loc"] if not _union_branch(p))
    if first["type"] == "extra_forbidden":
        return field, "unknown key; check its spelling"
    if first["type"] == "missing":
        return field, "required"
    if first["type"] == "value_error":  # a validator's own sentence, without pydantic's prefix
        return field, str(first["ctx"]["error"])
    return field, _plainly(first["type"], first.get("ctx", {}), first["input"], first["msg"])


def _union_branch(part: str | int) -> bool:
    return isinstance(part, str) and ("[" in part or part.startswith("constrained-"))


def _plainly(kind: str, ctx: dict[str, object], value: object, message: str) -> str:
    """pydantic's sentence for the common problems, said as what the value must be."""
    bounds = {
        "greater_than_equal": ("at least", "ge"),
        "greater_than": ("above", "gt"),
        "less_than_equal": ("at most", "le"),
        "less_than": ("below", "lt"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"{value!r} is out of range: must be {words} {ctx[key]}"
    if kind in ("int_parsing", "int_from_float", "int_type"):
        return f"{value!r} is not a whole number"
    if kind in ("float_parsing", "float_type"):
        return f"{value!r} is not a number"
    if kind in ("bool_parsing", "bool_type"):
        return f"{value!r} is not true or false"
    if kind == "finite_number":
        return "must be a finite number, not .nan or .inf"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "too_short":
        return f"must list at least {ctx.get('min_length', 1)} item(s)"
    if kind in ("model_type", "dict_type"):
        return f"must be a mapping of keys (key: value lines), not {type(value).__name__}"
    if kind == "list_type":
        return f"must be a list (- item lines, or [a, b]), not {type(value).__name__}"
    if kind == "string_type" and isinstance(value, int | float):
        return f"must be text: write {value!r} in quotes, as the docs show"
    return message
