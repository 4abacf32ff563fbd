"""`StackConfig`: what a stack's `kafkastack:*` keys say, validated field by field.

Only models and what follows from them live here; reading a stack and the rules across
sections (`check_safety`) are in `infra/config.py`, and the rules of one section that need the
whole config in `infra/network_rules.py` and `infra/security_rules.py`. Nothing here imports
those, so the model (`infra/model`) can name `StackConfig` without an import cycle.
"""

from __future__ import annotations

import base64
import math
import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from infra.access_config import ExternalConfig
from infra.config_base import StrictModel
from infra.image_config import ImagesConfig
from infra.network_config import NetworkConfig
from infra.security_config import SecurityConfig
from spark_sizing.contract import StackSizing

SMALL_ENVIRONMENTS = frozenset({"local", "dev"})
Platform = Literal["aws", "gcp", "azure", "openshift", "local"]
_Model = StrictModel  # defined in infra/config_base.py, shared with the section modules
# A broker's JBOD `log.dirs`: more volumes than this per broker is a sign to add brokers instead.
MAX_VOLUMES_PER_BROKER = 16


# Counts and sizes: never zero or below (nor a yes/no value: config_base.StrictModel).
Count = Annotated[int, Field(ge=1)]
Amount = Annotated[float, Field(gt=0)]
ZoneName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class QuorumConfig(_Model):
    kind: Literal["kraft", "zookeeper"] = "kraft"
    nodes: Count | None = Field(
        default=None, description="controllers or ZooKeeper servers; sizing"
    )
    combined: bool = Field(default=False, description="brokers are also controllers (local/dev)")


class StorageConfig(_Model):
    provisioner: str | None = Field(
        default=None, min_length=1, description="overrides the platform default"
    )
    size_gib: Amount | None = Field(default=None, description="per data volume; default: sizing")
    volumes_per_broker: Count | None = Field(default=None, le=MAX_VOLUMES_PER_BROKER)
    type: str | None = Field(default=None, description="volume type; default: sizing")


# Options that size the heap: the heap is the sizing's (`broker_heap_gib`), in KAFKA_HEAP_OPTS.
_HEAP_OPTION = re.compile(r"-(Xm[sx]|XX:(Max|Min|Initial)(HeapSize|RAMPercentage)=)")


class ResourcesConfig(_Model):
    """Overrides of sizing: the broker's (small environments: a kwok cluster has no real capacity)
    and what the nodes' daemon sets take."""

    broker_cpu: Amount | None = None
    broker_memory_gib: Amount | None = None
    broker_heap_gib: Amount | None = None
    # What the daemon sets (CNI, DNS, log and metrics agents, ...) request on every node; the
    # default is the sizing's (`kafkastack size`: 0.5 vCPU and 1 GiB).
    daemonset_cpu: float | None = Field(default=None, ge=0, description="vCPUs per node")
    daemonset_memory_gib: float | None = Field(default=None, ge=0, description="GiB per node")
    # The Kafka servers' KAFKA_JVM_PERFORMANCE_OPTS, in place of the image's defaults (G1 and both
    # JIT compilers): the committed local stack runs the C1 compiler alone (docs/provisioning.md).
    server_jvm_options: str | None = Field(
        default=None,
        description="JVM options of brokers and controllers in place of the image's "
        "KAFKA_JVM_PERFORMANCE_OPTS; the heap is the sizing's",
    )

    @field_validator("server_jvm_options")
    @classmethod
    def _jvm_options(cls, value: str | None) -> str | None:
        if value is None:
            return None
        words = value.split()
        if not words:
            raise ValueError("is empty: leave the key out to keep the image's JVM options")
        if any(mark in value for mark in "'\"$`\\"):
            raise ValueError(
                "the image's start script splits the options on spaces and passes each word as "
                "it is: write them without quotes, $ or backslashes"
            )
        for word in words:
            if not word.startswith("-"):
                raise ValueError(f"{word!r} is not a JVM option: each starts with '-'")
            if _HEAP_OPTION.match(word):
                raise ValueError(
                    f"{word} sizes the heap, which follows the sizing: set "
                    "resources.broker_heap_gib instead"
                )
        return value


# The newest Kafka major release whose configs, tools and images the project has checked.
NEWEST_KAFKA_MAJOR = 4


def _is_kafka_uuid(value: str) -> bool:
    """Kafka's Uuid.fromString: 16 bytes in unpadded base64url. Not one of the ids Kafka keeps
    for itself (0 and 1), and not starting with '-', which the tools' argument parser reads as
    an option: Kafka's own random ids never start with it."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}", value):
        return False
    raw = base64.urlsafe_b64decode(value + "==")
    return len(raw) == 16 and int.from_bytes(raw, "big") > 1


# Kafka refuses to start a broker whose replica.fetch.wait.max.ms passes replica.socket.timeout.ms
# or replica.lag.time.max.ms (30 s each). Well below that: every delay the wait adds (below)
# grows with it, and 10 s is already twenty times Kafka's own.
MAX_REPLICA_FETCH_WAIT_MS = 10_000
# Kafka's 0 (no no-op records at all) is refused: the metadata log's freshness figures (KIP-835)
# would then stand still on an idle cluster. A minute keeps them moving.
MAX_METADATA_IDLE_MS = 60_000


class PollingConfig(_Model):
    """How often idle Kafka servers wake each other; Kafka's defaults (500 ms each) unless set.

    Longer waits make an idle cluster cheaper (the local stack's idle servers: 41 % less CPU)
    at the price of latency where a partition is quiet: a consumer reading from a follower
    in its rack sees a quiet partition's last records up to the fetch wait late, a throttled
    move's fetch may idle that long, and a follower may start fetching a partition whose
    leader just moved only when its fetcher's pending fetch returns (docs/provisioning.md,
    "Idle polling")."""

    replica_fetch_wait_ms: int | None = Field(
        default=None,
        ge=1,
        le=MAX_REPLICA_FETCH_WAIT_MS,
        description="replica.fetch.wait.max.ms: how long a follower's fetch waits at its "
        "leader for data",
    )
    metadata_idle_interval_ms: int | None = Field(
        default=None,
        ge=1,
        le=MAX_METADATA_IDLE_MS,
        description="metadata.max.idle.interval.ms (KRaft): how often the active controller "
        "appends a no-op record to an idle metadata log, which every node then fetches",
    )


class StackConfig(_Model):
    environment: str
    kafka_version: str = "4.3.1"
    namespace: str = "kafka"
    cluster_name: str = "kafka"
    cluster_id: str = Field(default="", description="KRaft cluster id; default derived from name")
    platform: Platform = "aws"
    region: str | None = None
    zones: Annotated[list[ZoneName], Field(min_length=1)] | Literal["auto"]
    brokers: Count | None = Field(default=None, description="minimum brokers; sizing may add more")
    replication_factor: Count = 3
    min_insync_replicas: Count = 2
    quorum: QuorumConfig = QuorumConfig()
    network: NetworkConfig = NetworkConfig()
    storage: StorageConfig = StorageConfig()
    external: ExternalConfig = ExternalConfig()
    security: SecurityConfig = SecurityConfig()
    resources: ResourcesConfig = ResourcesConfig()
    polling: PollingConfig = PollingConfig()
    images: ImagesConfig = ImagesConfig()
    skip_await: bool = Field(default=False, description="never wait on readiness (kwok, CI)")
    allow_unverified_broker_removal: bool = Field(
        default=False,
        description="remove brokers even when the running cluster cannot say that they hold no "
        "partition replicas (infra/broker_removal.py); for one change, then back to false",
    )
    allow_unverified_voter_removal: bool = Field(
        default=False,
        description="delete KRaft voters' StatefulSets even when no staying voter's pod can say "
        "that they left the voter set (infra/voter_removal.py); for one change, then back to false",
    )
    allow_unready_nodes: bool = Field(
        default=False,
        description="apply a change although a broker, controller or ZooKeeper server of the "
        "stack is not Ready: the change that repairs it (infra/unready_nodes.py); for one "
        "change, then back to false",
    )
    protect: bool | None = Field(
        default=None,
        description="Pulumi `protect` on the namespace, storage classes and workloads, so "
        "`pulumi destroy` or a replacement stops instead; default: on in prod",
    )
    sizing: StackSizing

    @field_validator("kafka_version")
    @classmethod
    def _release_version(cls, value: str) -> str:
        if not re.fullmatch(r"\d+\.\d+\.\d+", value):
            raise ValueError(
                f"{value!r} is not a Kafka release; name one exactly, such as 4.3.1 or 3.9.1 "
                "(the image tag and the jars are pinned to it)"
            )
        return value

    @field_validator("kafka_version")
    @classmethod
    def _known_major(cls, value: str) -> str:
        if int(value.split(".")[0]) > NEWEST_KAFKA_MAJOR:
            raise ValueError(
                f"{value}: Kafka {value.split('.')[0]}.x is not supported yet (its configs and "
                f"tools are unchecked); use 3.9.x or {NEWEST_KAFKA_MAJOR}.x"
            )
        return value

    @field_validator("cluster_id")
    @classmethod
    def _kraft_cluster_id(cls, value: str) -> str:
        # It is spliced into the storage format command: only a real id may get there.
        if value and not _is_kafka_uuid(value):
            raise ValueError(
                f"{value!r} is not a Kafka cluster id: 22 characters of base64url (A-Z, a-z, "
                "0-9, '-', '_') as `kafka-storage.sh random-uuid` prints; or remove the key to "
                "derive one from the cluster's name"
            )
        return value

    @property
    def kafka_release(self) -> tuple[int, int, int]:
        major, minor, patch = (int(part) for part in self.kafka_version.split("."))
        return major, minor, patch

    @property
    def kafka_major(self) -> int:
        return self.kafka_release[0]

    @property
    def broker_count(self) -> int:
        """The stack's minimum or the sizing's count, whichever is larger."""
        return max(self.brokers or 0, self.sizing.cluster.brokers)

    @property
    def quorum_nodes(self) -> int:
        """Controllers or ZooKeeper servers: as configured, else as sized for this kind."""
        if self.quorum.nodes is not None:
            return self.quorum.nodes
        sized = self.sizing.cluster.quorum
        return sized.nodes if sized.kind == self.quorum.kind else 3

    @property
    def data_volumes(self) -> int:
        return self.storage.volumes_per_broker or self.sizing.cluster.data_volumes_per_broker

    @property
    def data_volume_gib(self) -> float:
        if self.storage.size_gib is not None:
            return self.storage.size_gib
        return float(math.ceil(self.sizing.cluster.storage_per_broker_gib / self.data_volumes))

    @property
    def small(self) -> bool:
        return self.environment in SMALL_ENVIRONMENTS

    @property
    def protected(self) -> bool:
        return self.protect if self.protect is not None else self.environment == "prod"

    @property
    def client_tls(self) -> bool:
        """The in-cluster CLIENT listener is encrypted (SASL_SSL or SSL); off by default only
        in local/dev, whose harness reads the traffic."""
        tls = self.security.client_tls
        return tls if tls is not None else (not self.small or self.security.client_auth == "mtls")

    @property
    def authorization(self) -> bool:
        """Authorizer with super.users and deny-by-default; off by default only in local/dev."""
        enabled = self.security.authorization
        return enabled if enabled is not None else not self.small

    @property
    def controller_login(self) -> bool:
        """KRaft nodes log in to the CONTROLLER listener with SASL/PLAIN over TLS instead of a
        client certificate (infra/model/controller_login.py): KRaft with TLS between nodes."""
        return self.quorum.kind == "kraft" and self.security.replication_tls
