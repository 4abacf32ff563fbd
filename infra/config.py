"""The only reader of stack config: `kafkastack:*` keys → one frozen, validated `StackConfig`
(its model is `infra/stack_config.py`), and the rules across its sections (`check_safety`).

Every refusal is a `ConfigError` whose message names the key and the fix, raised before any
resource is declared. `parse_stack_config` is pure (a dict in, a model out) so tests, `render`
and the Pulumi program share one path.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from infra.config_base import NAMESPACE as NAMESPACE  # the readers of stack files import it here
from infra.config_base import refuse
from infra.errors import ConfigError
from infra.model import resources as pod_resources
from infra.model import volumes as data_volumes
from infra.model.naming import DNS_LABEL_MAX, MAX_CLUSTER_NAME, name_problem
from infra.network_config import NetworkConfig, check_unshared_ranges
from infra.network_rules import check_network
from infra.security_rules import check_security
from infra.stack_config import StackConfig
from infra.stack_documents import PASSWORD_KEY_PREFIX, read_stack_file, stack_values
from infra.zones import discover_zones
from spark_sizing.contract import SUPPORTED_SCHEMA_VERSIONS, first_error


def sizing_summary(config: StackConfig) -> dict[str, Any]:
    """What a capacity reviewer compares between two revisions (also a stack output)."""
    c = config.sizing.cluster
    summary: dict[str, Any] = {
        "brokers": c.brokers,
        "binding_constraint": c.binding_constraint,
        "peak_ingress_mb_s": c.peak_ingress_mb_s,
        "storage_per_broker_gib": c.storage_per_broker_gib,
        "quorum": f"{c.quorum.kind} × {c.quorum.nodes}",
    }
    if config.platform == "aws" and config.external.mode == "haproxy":
        # Who can reach the brokers is a reviewer's question too: a change to it shows here.
        summary["load_balancer"] = f"{config.external.load_balancer_scheme} NLB"
    return summary


def _first_error(err: ValidationError, prefix: str = NAMESPACE) -> ConfigError:
    key, problem = first_error(err)
    hint = {
        "required": "; set it in the stack file",
        "unknown key; check its spelling": " (docs/provisioning.md lists every key)",
    }.get(problem, "")
    return ConfigError(f"{prefix}:{key}: {problem}{hint}")


def parse_stack_config(
    values: dict[str, Any], environment: str, discovered_zones: list[str] | None = None
) -> StackConfig:
    """Validate raw `kafkastack:` values (without the prefix) into a safe `StackConfig`."""
    sizing = values.get("sizing")
    if isinstance(sizing, dict):
        version = sizing.get("schema_version")
        if version not in SUPPORTED_SCHEMA_VERSIONS:
            raise ConfigError(
                f"{NAMESPACE}:sizing.schema_version: {version!r} is not supported "
                f"(supported: {', '.join(sorted(SUPPORTED_SCHEMA_VERSIONS))}); "
                "re-run `kafkastack size` and `kafkastack apply-sizing` with this version"
            )
    if "environment" in values:
        raise ConfigError(
            f"{NAMESPACE}:environment: the stack's name says which environment it is "
            f"({environment}); remove the key"
        )
    try:
        config = StackConfig.model_validate({**values, "environment": environment})
    except ValidationError as err:
        raise _first_error(err) from None
    if config.zones == "auto":
        if not discovered_zones:
            raise ConfigError(
                f"{NAMESPACE}:zones: 'auto' needs AWS zone discovery; set {NAMESPACE}:region "
                "and AWS credentials, or list the zones"
            )
        config = config.model_copy(update={"zones": discovered_zones[:3]})
    check_safety(config)
    return config


_refuse = refuse  # infra/config_base.py: one shape of refusal for every config module


def check_safety(c: StackConfig) -> None:
    """The rules that keep a cluster safe; each names the key and the fix."""
    zones = list(c.zones)
    brokers = c.broker_count
    for key, value, limit in (
        ("cluster_name", c.cluster_name, MAX_CLUSTER_NAME),
        ("namespace", c.namespace, DNS_LABEL_MAX),
    ):
        problem = name_problem(value, limit)
        if problem:
            raise _refuse(key, f"{problem}: every object and host name of the stack starts with it")
    if c.kafka_major >= 4 and c.quorum.kind == "zookeeper":
        raise _refuse(
            "quorum.kind",
            f"Kafka {c.kafka_version} has no ZooKeeper mode; use kraft, "
            "or set kafka_version to 3.9.x",
        )
    if c.kafka_release < (3, 9, 0):
        raise _refuse("kafka_version", f"{c.kafka_version} is not supported; use 3.9.x or 4.x")
    if c.polling.metadata_idle_interval_ms is not None and c.quorum.kind != "kraft":
        raise _refuse(
            "polling.metadata_idle_interval_ms",
            "only KRaft controllers write a metadata log; remove it in ZooKeeper mode",
        )
    if c.quorum.combined and not c.small:
        raise _refuse(
            "quorum.combined",
            "combined broker+controller mode is for local/dev only; set it to false",
        )
    if c.quorum.combined and c.quorum.kind != "kraft":
        raise _refuse("quorum.combined", "only KRaft brokers can be controllers; set it to false")
    if c.quorum.combined and c.quorum.nodes is not None:
        raise _refuse(
            "quorum.nodes",
            "in combined mode every broker is a controller, so there is no count of its own "
            "to set; remove it",
        )
    if c.skip_await and c.quorum.kind == "kraft" and c.platform != "local":
        # The quorum's birth record is created after the voters are ready; created at once, it
        # would tell every voter of a new cluster to join a quorum that nobody formed.
        raise _refuse(
            "skip_await",
            "a KRaft quorum needs pulumi up to wait for its voters before recording its birth "
            "(docs/provisioning.md, 'Quorum and recovery'); set it to false (only a local kwok "
            "cluster, which runs no Kafka, may skip)",
        )
    if c.storage.provisioner == data_volumes.LOCAL_LOOP_PROVISIONER and c.platform != "local":
        # Its claims would wait forever for a volume: only the local cluster answers them.
        raise _refuse(
            "storage.provisioner",
            f"{c.storage.provisioner} is the local cluster's provisioner for its real nodes; "
            f"remove it (platform {c.platform} uses "
            f"{data_volumes.DEFAULT_PROVISIONERS[c.platform]}) or set platform: local",
        )
    if brokers < 3 and not c.small:
        raise _refuse("brokers", f"{brokers} brokers cannot survive a failure; use at least 3")
    if c.replication_factor > brokers:
        raise _refuse(
            "replication_factor",
            f"{c.replication_factor} > {brokers} brokers; lower it or add brokers",
        )
    if c.replication_factor < 2 and not c.small:
        raise _refuse(
            "replication_factor",
            f"{c.replication_factor}: a partition's only replica goes with its broker, and "
            f"{c.environment} keeps data through a failure; use 3",
        )
    if c.min_insync_replicas > c.replication_factor:
        raise _refuse(
            "min_insync_replicas",
            f"{c.min_insync_replicas} > replication_factor {c.replication_factor}: no acks=all "
            f"write could ever succeed; use at most {c.replication_factor}",
        )
    if c.min_insync_replicas >= c.replication_factor and c.replication_factor > 1:
        raise _refuse(
            "min_insync_replicas",
            f"{c.min_insync_replicas} ≥ replication_factor "
            f"{c.replication_factor}: one broker down would stop acks=all writes; "
            f"use {c.replication_factor - 1}",
        )
    nodes = c.quorum_nodes
    allowed = {"kraft": (3, 5), "zookeeper": (3, 5, 7)}[c.quorum.kind]
    if not c.quorum.combined and nodes not in allowed and not (c.small and nodes == 1):
        raise _refuse(
            "quorum.nodes",
            f"{nodes} {c.quorum.kind} nodes; use one of "
            f"{', '.join(map(str, allowed))} (odd: 2F+1 survives F failures)",
        )
    min_zones = 3 if c.environment == "prod" else 2
    if len(zones) < min_zones and not c.small:
        raise _refuse(
            "zones",
            f"{len(zones)} zone(s); {c.environment} needs at least {min_zones} "
            "so a zone outage keeps a majority",
        )
    # Rack-aware placement puts at most ceil(RF / zones) replicas of a partition in one zone;
    # what is left when that zone goes must still meet min ISR, or acks=all writes stop.
    survivors = c.replication_factor - math.ceil(c.replication_factor / len(zones))
    if len(zones) > 1 and survivors < c.min_insync_replicas and not c.small:
        raise _refuse(
            "zones",
            f"with {len(zones)} zones a zone outage leaves {survivors} of "
            f"{c.replication_factor} replicas, below min_insync_replicas "
            f"{c.min_insync_replicas}: acks=all writes would stop; "
            f"{_zone_outage_fix(c.replication_factor, c.min_insync_replicas, survivors)}",
        )
    if len(set(zones)) != len(zones):
        raise _refuse("zones", "zones are listed twice; list each once")
    if len(zones) > brokers:
        raise _refuse(
            "zones",
            f"{len(zones)} zones but {brokers} brokers leave a zone empty; "
            "add brokers or list fewer zones",
        )
    check_security(c)
    if c.external.mode != "none" and not c.external.tls:
        raise _refuse(
            "external.tls", "plaintext external access exposes data and credentials; set it to true"
        )
    if c.external.mode == "route" and c.platform != "openshift":
        raise _refuse(
            "external.mode",
            f"Routes are OpenShift's; platform {c.platform} has no router to serve them: use "
            "haproxy (or none)",
        )
    if "load_balancer_scheme" in c.external.model_fields_set and not (
        c.platform == "aws" and c.external.mode == "haproxy"
    ):
        raise _refuse(
            "external.load_balancer_scheme",
            "only an AWS NLB in front of HAProxy has a scheme (platform aws, external.mode "
            f"haproxy; this stack: {c.platform}, {c.external.mode}); remove the key",
        )
    sized = c.sizing.cluster.storage_per_broker_gib
    volumes = c.data_volumes
    if c.storage.size_gib is not None and c.storage.size_gib * volumes < sized and not c.small:
        raise _refuse(
            "storage.size_gib",
            f"{c.storage.size_gib:g} GiB × {volumes} volume(s) is "
            f"below the {sized:g} GiB per broker sizing requires; raise it or remove it",
        )
    if c.data_volume_gib <= 0:
        raise _refuse("storage.size_gib", "must be positive")
    check_network(c)
    data_volumes.check(c)
    pod_resources.check(c)


def _zone_outage_fix(replication_factor: int, min_isr: int, survivors: int) -> str:
    """The fewest zones whose outage leaves min ISR replicas, or a lower min ISR."""
    zones = next(
        z
        for z in range(2, replication_factor + 1)
        if replication_factor - math.ceil(replication_factor / z) >= min_isr
    )
    lower = f", or lower min_insync_replicas to {survivors}" if survivors >= 1 else ""
    return f"list at least {zones} zones{lower}"


def password_config_key(user: str) -> str:
    """The secret config key (without the namespace) holding a SCRAM user's password."""
    return f"{PASSWORD_KEY_PREFIX}{user}"


# Brokers' and tools' SASL/DIGEST password at ZooKeeper (ZooKeeper mode only).
ZOOKEEPER_PASSWORD_KEY = f"{PASSWORD_KEY_PREFIX}zookeeper"
# ZooKeeper servers' password among themselves (quorum SASL): brokers never hold it.
ZOOKEEPER_QUORUM_PASSWORD_KEY = f"{PASSWORD_KEY_PREFIX}zookeeper-quorum"
# KRaft nodes' SASL/PLAIN password on the CONTROLLER listener (infra/model/controller_login.py).
CONTROLLER_PASSWORD_KEY = f"{PASSWORD_KEY_PREFIX}controller"


def secret_keys(config: StackConfig) -> list[str]:
    """Every secret config key (without the namespace) the stack reads."""
    keys = []
    if config.security.client_auth == "scram-sha-512":
        keys += [password_config_key(user) for user in config.security.users]
    if config.quorum.kind == "zookeeper":
        keys += [ZOOKEEPER_PASSWORD_KEY, ZOOKEEPER_QUORUM_PASSWORD_KEY]
    if config.controller_login:
        keys.append(CONTROLLER_PASSWORD_KEY)
    return keys


def load_values(values: dict[str, Any], environment: str) -> StackConfig:
    """Validate `kafkastack:` values, discovering zones first when they say `auto`."""
    discovered = None
    if values.get("zones") == "auto":
        discovered = discover_zones(values.get("region"))
    return parse_stack_config(values, environment, discovered)


def load_stack(stacks_dir: Path, environment: str) -> StackConfig:
    """Read and validate `stacks/Pulumi.<environment>.yaml` without a Pulumi engine, and refuse
    a second-network range that another stack of the folder uses too."""
    config = load_values(read_stack_file(stacks_dir / f"Pulumi.{environment}.yaml"), environment)
    check_unshared_ranges(environment, config.network, _sibling_networks(stacks_dir, environment))
    return config


def _sibling_networks(stacks_dir: Path, environment: str) -> dict[str, NetworkConfig]:
    """The network config of every other stack in the folder; one that does not parse is its
    own stack's problem, reported when that stack is loaded."""
    networks = {}
    for path in sorted(stacks_dir.glob("Pulumi.*.yaml")):
        other = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
        if other == environment:
            continue
        try:
            raw = read_stack_file(path).get("network", {})
            networks[other] = NetworkConfig.model_validate(raw)
        except (ConfigError, ValidationError, yaml.YAMLError):
            continue
    return networks


def _engine_value(text: str) -> Any:
    # The engine hands every value over as text: objects and lists as JSON, scalars as written.
    # Scalars stay text; validation turns "3" or "true" into the field's type.
    return json.loads(text) if text[:1] in "[{" else text


def from_pulumi() -> StackConfig:
    """Inside `pulumi up/preview`: the config the engine runs with, validated like everywhere else.

    That is the stack file, or the file named by `--config-file`. Every key is listed, not just
    the ones asked for, so unknown keys are refused as in a stack file; secrets are skipped here
    and read by name through `pulumi.Config`.
    """
    import pulumi
    from pulumi.runtime.config import CONFIG

    raw = {key: _engine_value(str(value)) for key, value in CONFIG.get().items()}
    return load_values(stack_values(raw, f"stack {pulumi.get_stack()}"), pulumi.get_stack())
