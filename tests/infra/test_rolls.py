"""Day-2 changes roll one node at a time, and a changed config file rolls its node."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.model.declared import Concern, Declared
from infra.model.desired import desired_state
from tests.infra.conftest import config_of, sizing_cluster


def concerns(environment: str = "staging", **overrides: Any) -> dict[str, Concern]:
    model = ClusterModel.from_config(config_of(environment, **overrides))
    return {c.key: c for c in desired_state(model)}


def statefulsets(concern: Concern) -> list[Declared]:
    return [o for o in concern.objects if o.kind == "StatefulSet"]


def config_hashes(by_key: dict[str, Concern]) -> dict[str, str]:
    return {
        o.logical: o.manifest["spec"]["template"]["metadata"]["annotations"][labels.CONFIG_HASH]
        for key in ("quorum", "brokers")
        for o in statefulsets(by_key[key])
    }


def test_a_changed_broker_setting_changes_every_broker_pod_template_and_nothing_else() -> None:
    before = config_hashes(concerns())
    after = config_hashes(concerns(min_insync_replicas=1, replication_factor=2))
    brokers = {name for name in before if "broker" in name}
    assert brokers and all(before[name] != after[name] for name in brokers)
    # The same stack renders the same hashes: no roll without a change.
    assert config_hashes(concerns()) == before


def sizing(**cluster: Any) -> dict[str, Any]:
    return {"schema_version": "1.0", "source": "test", "cluster": sizing_cluster(**cluster)}


def quorum_sized(nodes: int) -> dict[str, Any]:
    return {**sizing_cluster()["quorum"], "nodes": nodes}


def manifests(environment: str, **overrides: Any) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (o.kind, o.logical): o.manifest
        for c in concerns(environment, **overrides).values()
        for o in c.objects
    }


@pytest.mark.parametrize(
    ("environment", "before", "after"),
    [
        # Dedicated controllers: 3 → 5 voters.
        (
            "staging",
            {"quorum": {"nodes": 3}, "sizing": sizing(quorum=quorum_sized(3))},
            {"quorum": {"nodes": 5}, "sizing": sizing(quorum=quorum_sized(5))},
        ),
        # Combined: two brokers more are two voters more.
        (
            "dev",
            {"quorum": {"combined": True}, "brokers": 3, "sizing": sizing(brokers=3)},
            {"quorum": {"combined": True}, "brokers": 5, "sizing": sizing(brokers=5)},
        ),
    ],
)
def test_a_change_of_the_voter_set_restarts_no_running_node(
    environment: str, before: dict[str, Any], after: dict[str, Any]
) -> None:
    """The voters' addresses reach every node's ConfigMap, for its next start; no pod template
    of a node that runs changes (every Kafka pod restarted for a new voter before)."""
    old, new = manifests(environment, **before), manifests(environment, **after)
    kept = [k for k in old if k[0] == "StatefulSet" and k in new]
    assert len(kept) >= 3 and [k for k in kept if old[k] != new[k]] == []
    assert len([k for k in new if k[0] == "StatefulSet"]) == len(kept) + 2
    # The running nodes' files do list the new voters, for whichever start comes next.
    files = [
        k for k in old if k[0] == "ConfigMap" and k[1].endswith("-config") and "haproxy" not in k[1]
    ]
    for key in files:
        text = "".join(new[key]["data"].values())
        assert text.count("controller.quorum.bootstrap.servers=") == 1
        (line,) = [
            x for x in text.splitlines() if x.startswith("controller.quorum.bootstrap.servers=")
        ]
        assert line.count(":") == 5, line


def test_kraft_controllers_then_brokers_each_after_the_previous_one() -> None:
    by_key = concerns()
    for key in ("quorum", "brokers"):
        chain = statefulsets(by_key[key])
        assert len(chain) >= 3
        assert chain[0].after == ()
        assert [o.after for o in chain[1:]] == [(prev.logical,) for prev in chain[:-1]]
    assert "quorum" in by_key["brokers"].after  # controllers roll before any broker


def test_nodes_that_cannot_start_alone_are_not_chained() -> None:
    # ZooKeeper servers are ready only in a quorum; combined brokers only with a majority.
    zookeeper = concerns("dev", kafka_version="3.9.1", quorum={"kind": "zookeeper", "nodes": 3})
    assert all(o.after == () for o in statefulsets(zookeeper["quorum"]))
    brokers = statefulsets(zookeeper["brokers"])
    assert [o.after for o in brokers[1:]] == [(prev.logical,) for prev in brokers[:-1]]
    combined = concerns("dev", quorum={"combined": True})
    assert all(o.after == () for o in statefulsets(combined["brokers"]))


def test_combined_brokers_of_a_running_cluster_change_one_after_another() -> None:
    # Once every voter answers (infra/active_controller.py), nothing needs to start alone: a
    # change restarts the combined brokers one at a time like any other broker.
    model = ClusterModel.from_config(config_of("dev", quorum={"combined": True}))
    running = {c.key: c for c in desired_state(replace(model, quorum_running=True))}
    chain = statefulsets(running["brokers"])
    assert len(chain) >= 3
    assert [o.after for o in chain[1:]] == [(prev.logical,) for prev in chain[:-1]]
    assert [o.logical for o in chain] == [n.workload for n in model.brokers]  # none known


def test_the_active_combined_broker_rolls_last() -> None:
    """In combined mode the voters are the brokers: the one leading the quorum goes last, so
    leadership moves once (the C2 roll that dipped to an ISR of 1 had restarted it first)."""
    model = ClusterModel.from_config(config_of("dev", quorum={"combined": True}))
    active = model.brokers[0]
    known = replace(model, quorum_running=True, active_controller=active.node_id)
    chain = statefulsets({c.key: c for c in desired_state(known)}["brokers"])
    assert [o.logical for o in chain] == [n.workload for n in [*model.brokers[1:], active]]
    assert [o.after for o in chain[1:]] == [(prev.logical,) for prev in chain[:-1]]


def sized(**broker: Any) -> dict[str, Any]:
    cluster = sizing_cluster()
    cluster["broker"] = {**cluster["broker"], **broker}
    return {"schema_version": "1.0", "source": "test", "cluster": cluster}


def settings_command(by_key: dict[str, Concern]) -> str:
    (job,) = by_key["settings"].objects
    command: str = job.manifest["spec"]["template"]["spec"]["containers"][0]["command"][2]
    return command


def test_settings_kafka_applies_while_running_change_no_pod_template() -> None:
    """More request threads (a new sizing) reach the running brokers through the settings Job:
    server.properties says so, yet no pod template changes, so nothing restarts."""
    before = concerns(sizing=sized())
    after = concerns(sizing=sized(num_io_threads=12, num_network_threads=6))
    assert config_hashes(after) == config_hashes(before)
    (broker_config, *_) = [o for o in after["brokers"].objects if o.kind == "ConfigMap"]
    assert "num.io.threads=12" in broker_config.manifest["data"]["server.properties"]
    assert "num.io.threads=8" in settings_command(before)
    assert (
        "--entity-type brokers --entity-default --alter --add-config "
        "min.insync.replicas=2,num.io.threads=12,num.network.threads=6,num.recovery.threads."
        "per.data.dir=2,num.replica.fetchers=3,unclean.leader.election.enable=false"
    ) in settings_command(after)
    # The Job runs once the brokers and their bootstrap Service are there.
    assert set(after["settings"].after) >= {"brokers", "services"}


def test_a_static_setting_next_to_a_dynamic_one_still_rolls() -> None:
    before = config_hashes(concerns(sizing=sized()))
    # num.io.threads and min.insync.replicas are dynamic; transaction.state.log.min.isr (which
    # follows min_insync_replicas) is not.
    after = config_hashes(concerns(sizing=sized(num_io_threads=12), min_insync_replicas=1))
    assert all(before[name] != after[name] for name in before if "broker" in name)


def test_the_active_controller_rolls_last_when_the_cluster_says_which() -> None:
    config = config_of()
    model = ClusterModel.from_config(config)
    active = model.quorum[0]
    ordered = {c.key: c for c in desired_state(replace(model, active_controller=active.node_id))}
    chain = statefulsets(ordered["quorum"])
    assert [o.logical for o in chain] == [n.workload for n in [*model.quorum[1:], active]]
    assert [o.after for o in chain[1:]] == [(prev.logical,) for prev in chain[:-1]]
    # Unknown (no cluster to ask): node order.
    unknown = statefulsets(concerns()["quorum"])
    assert [o.logical for o in unknown] == [n.workload for n in model.quorum]


def test_the_first_creation_starts_every_node_at_once() -> None:
    # Nothing runs yet to protect: a chain would only add up every node's start-up time.
    model = ClusterModel.from_config(config_of())
    first = {c.key: c for c in desired_state(replace(model, existing_workloads=frozenset()))}
    for key in ("quorum", "brokers"):
        assert len(statefulsets(first[key])) >= 3
        assert all(o.after == () for o in statefulsets(first[key]))
    assert "quorum" in first["brokers"].after  # still: brokers join a quorum that exists


ZOOKEEPER_MODE = {
    "kafka_version": "3.9.1",
    "quorum": {"kind": "zookeeper", "nodes": 3},
}


def test_zookeeper_servers_change_one_after_another_once_all_exist() -> None:
    model = ClusterModel.from_config(config_of("dev", **ZOOKEEPER_MODE))
    servers = {n.workload for n in model.quorum}
    running = {c.key: c for c in desired_state(replace(model, existing_workloads=servers))}
    chain = statefulsets(running["quorum"])
    assert [o.after for o in chain[1:]] == [(prev.logical,) for prev in chain[:-1]]
    # One server missing (or no answer): it could not become ready alone, so no chain.
    for existing in (frozenset(sorted(servers)[:2]), None):
        partial = {c.key: c for c in desired_state(replace(model, existing_workloads=existing))}
        assert all(o.after == () for o in statefulsets(partial["quorum"]))


def restart_values(model: ClusterModel) -> dict[str, str | None]:
    return {
        o.logical: o.manifest["spec"]["template"]["metadata"]["annotations"].get(
            labels.CERTIFICATE_RESTART
        )
        for key in ("quorum", "brokers")
        for o in statefulsets({c.key: c for c in desired_state(model)}[key])
    }


def test_a_renewal_zookeeper_cannot_reload_restarts_only_its_servers() -> None:
    # security.replication_tls (the default): the ensemble serves certificates it reads once.
    model = ClusterModel.from_config(config_of("dev", **ZOOKEEPER_MODE))
    server = model.quorum[1].workload
    before = config_hashes(
        {c.key: c for c in desired_state(replace(model, certificate_restarts={}))}
    )
    renewed = replace(model, certificate_restarts={server: "0123456789abcdef"})
    values = restart_values(renewed)
    assert values[server] == "0123456789abcdef"
    assert {v for k, v in values.items() if k != server} == {None}
    # The files' hash stays: the renewal is the only change, and only that server's template.
    assert config_hashes({c.key: c for c in desired_state(renewed)}) == before
    # Not asked (no cluster): the engine keeps the deployed value of each such node.
    unknown = {c.key: c for c in desired_state(replace(model, certificate_restarts=None))}
    path = f'spec.template.metadata.annotations["{labels.CERTIFICATE_RESTART}"]'
    assert all(path in o.ignore_changes for o in statefulsets(unknown["quorum"]))
    assert not any(path in o.ignore_changes for o in statefulsets(unknown["brokers"]))


def test_nodes_that_reload_their_certificate_never_restart_for_it() -> None:
    model = ClusterModel.from_config(config_of())  # Kafka 4.3: brokers and controllers reload
    unknown = {c.key: c for c in desired_state(replace(model, certificate_restarts=None))}
    assert not any(
        o.ignore_changes and "certificate-restart" in " ".join(o.ignore_changes)
        for key in ("quorum", "brokers")
        for o in statefulsets(unknown[key])
    )


def settings_job(by_key: dict[str, Concern]) -> dict[str, Any]:
    return next(o.manifest for o in by_key["settings"].objects if o.kind == "Job")


def test_a_changed_dynamic_setting_gets_a_job_of_another_name() -> None:
    """A Job cannot be updated, only replaced: under one name the engine deletes the old Job
    first, and the create raced that deletion ("already exists") on a loaded control plane."""
    job = settings_job(concerns())
    changed = settings_job(concerns(min_insync_replicas=1, replication_factor=2))
    assert job["metadata"]["name"] != changed["metadata"]["name"]
    assert job["metadata"]["name"].startswith("kafka-dynamic-settings-")
    for manifest in (job, changed):  # what selects and names it stays
        assert manifest["metadata"]["labels"][labels.NAME] == "kafka-dynamic-settings"
    assert settings_job(concerns()) == job  # the same settings, the same Job
