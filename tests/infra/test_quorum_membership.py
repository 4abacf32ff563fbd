"""A KRaft voter is formatted into the quorum once (infra/model/membership.py): what the voters'
pods render, the birth record's place in the desired state, the refusal, and the membership
script's decisions run by a real shell against a stand-in quorum tool."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from infra.config import parse_stack_config
from infra.errors import ConfigError
from infra.model import membership
from infra.model.cluster import ClusterModel
from infra.model.desired import desired_state
from infra.model.paths import CONFIG_DIR, KAFKA_BIN, METADATA_DIR
from infra.model.templating import node_files
from infra.model.workloads import kafka_statefulset
from tests.infra.conftest import base_values, config_of


def pod(model: ClusterModel, index: int, role: str = "voter") -> dict[str, Any]:
    node = model.voters[index] if role == "voter" else model.brokers[index]
    return dict(kafka_statefulset(model, node, "fast")["spec"]["template"]["spec"])


def format_script(spec: dict[str, Any]) -> str:
    init = next(c for c in spec["initContainers"] if c["name"] == "format-storage")
    return str(init["command"][2])


def test_a_voter_formats_the_initial_set_only_without_a_birth_record() -> None:
    model = ClusterModel.from_config(config_of())
    spec = pod(model, 2)
    script = format_script(spec)
    skip, birth, missing, rebirth = script.split("; fi; ")
    assert skip.startswith(f"if [ -f {METADATA_DIR}/meta.properties ]; then ")
    guard = f"[ -f {membership.RECORD_DIR}/born ] && [ ! -f {METADATA_DIR}/meta.properties ]"
    assert birth.startswith(f"if {guard}; then ")
    assert birth.endswith("--no-initial-controllers")
    assert "--initial-controllers" not in birth and "--add-scram" not in birth
    assert f"[ ! -s {membership.INITIAL_VOTERS_PATH} ]" in missing and "exit 1" in missing
    # The set is read from the ConfigMap, not written into the pod template: a later change of
    # `quorum.nodes` must not restart the voters (tests/infra/test_rolls.py).
    flag = f'--ignore-formatted --initial-controllers "$(cat {membership.INITIAL_VOTERS_PATH})"'
    assert flag in rebirth and model.initial_controllers not in script
    record = next(v for v in spec["volumes"] if v["name"] == membership.RECORD_VOLUME)
    assert record["configMap"] == {"name": "kafka-quorum-record", "optional": True}
    init = next(c for c in spec["initContainers"] if c["name"] == "format-storage")
    assert {
        "name": membership.RECORD_VOLUME,
        "mountPath": membership.RECORD_DIR,
        "readOnly": True,
    } in init["volumeMounts"]


def test_brokers_neither_read_the_record_nor_run_the_membership_container() -> None:
    model = ClusterModel.from_config(config_of())
    spec = pod(model, 0, role="broker")
    assert "quorum-membership" not in [c["name"] for c in spec["containers"]]
    assert membership.RECORD_VOLUME not in {v["name"] for v in spec["volumes"]}
    assert format_script(spec).endswith("--ignore-formatted --no-initial-controllers")


def test_the_membership_container_is_ready_only_as_a_voter() -> None:
    model = ClusterModel.from_config(config_of())
    spec = pod(model, 1)
    sidecar = spec["containers"][1]
    assert sidecar["name"] == membership.CONTAINER
    # Ready from its startup probe's first pass on, which never gives up; no probe runs after
    # it (the file stays: a readiness probe would only repeat the same exec on the node).
    probe = sidecar["startupProbe"]
    assert probe["exec"]["command"] == ["test", "-f", membership.VOTER_FILE]
    assert probe["failureThreshold"] == 2**31 - 1
    assert "readinessProbe" not in sidecar and "livenessProbe" not in sidecar
    script = sidecar["command"][2]
    # It asks the other voters, never itself, with its own node's properties.
    assert "--bootstrap-controller" in script and f"{CONFIG_DIR}/controller.properties" in script
    mounts = {m["name"] for m in sidecar["volumeMounts"]}
    assert mounts == {"config", "tls", "metadata", "controller-login", membership.STATE_VOLUME}


def test_the_birth_record_is_declared_after_every_voter() -> None:
    model = ClusterModel.from_config(config_of())
    quorum = next(c for c in desired_state(model) if c.key == "quorum")
    record = next(o for o in quorum.objects if o.logical == "kafka-quorum-record")
    assert set(record.after) == {v.workload for v in model.voters}
    combined = ClusterModel.from_config(
        config_of("dev", brokers=3, quorum={"kind": "kraft", "combined": True})
    )
    brokers = next(c for c in desired_state(combined) if c.key == "brokers")
    record = next(o for o in brokers.objects if o.logical == "kafka-quorum-record")
    assert set(record.after) == {b.workload for b in combined.brokers}


def test_a_zookeeper_ensemble_has_no_birth_record() -> None:
    model = ClusterModel.from_config(
        config_of(kafka_version="3.9.1", quorum={"kind": "zookeeper", "nodes": 3})
    )
    logical = {o.logical for c in desired_state(model) for o in c.objects}
    assert "kafka-quorum-record" not in logical


def test_skip_await_with_a_kraft_quorum_off_a_local_cluster_is_refused() -> None:
    with pytest.raises(ConfigError) as err:
        parse_stack_config(base_values(skip_await=True), "staging")
    assert str(err.value).startswith("kafkastack:skip_await: ")
    assert "set it to false" in str(err.value)
    assert config_of("local", platform="local", skip_await=True).skip_await


# describe --status and --replication as Kafka 4.3 prints them; 9002's entry holds the lost
# directory, its new one (NEW) fetches as an observer.
STATUS = (
    'CurrentVoters:          [{"id": 9000, "directoryId": "D0", "endpoints": []}, '
    '{"id": 9001, "directoryId": "D1", "endpoints": []}, '
    '{"id": 9002, "directoryId": "OLD", "endpoints": []}]\n'
)
HEADER = "NodeId  DirectoryId  LogEndOffset  Lag  LastFetchTimestamp  LastCaughtUpTimestamp  Status"


def run_membership(
    tmp_path: Path,
    replication_rows: list[str],
    status: str = STATUS,
    files: dict[str, str] | None = None,
    with_bootstrap: bool = False,
) -> list[str]:
    """The rendered script of voter 9002 with its in-pod paths under `tmp_path` and `files` in
    its config directory (by default its ConfigMap's), one pass: the stand-in tool logs each
    call (`with_bootstrap`: from `--bootstrap-controller` on) and the sleep ends the run."""
    model = ClusterModel.from_config(config_of())
    node = model.voters[2]
    script = membership.membership_script(model, node, "controller.properties")
    for path in (KAFKA_BIN, membership.STATE_DIR, METADATA_DIR, CONFIG_DIR):
        script = script.replace(path, str(tmp_path / path.strip("/")))
        (tmp_path / path.strip("/")).mkdir(parents=True, exist_ok=True)
    (tmp_path / METADATA_DIR.strip("/") / "meta.properties").write_text("directory.id=NEW\n")
    for name, text in (node_files(model, node) if files is None else files).items():
        (tmp_path / CONFIG_DIR.strip("/") / name).write_text(text)
    (tmp_path / "replication.txt").write_text("\n".join([HEADER, *replication_rows]) + "\n")
    (tmp_path / "status.txt").write_text(status)
    tool = tmp_path / KAFKA_BIN.strip("/") / "kafka-metadata-quorum.sh"
    calls = tmp_path / "calls.txt"
    flag = "--bootstrap-controller"
    kept = f"s/.*{flag}/{flag}/" if with_bootstrap else "s/.*admin.properties //"
    tool.write_text(
        "#!/bin/sh\n"
        f'echo "$@" | sed "{kept}" >> {calls}\n'
        f'case "$*" in *--status*) cat {tmp_path}/status.txt;; '
        f"*--replication*) cat {tmp_path}/replication.txt;; esac\n"
    )
    tool.chmod(0o755)
    script = script.replace("pause() {", "pause() { exit 0; ", 1)
    subprocess.run(["sh", "-c", script], check=True, timeout=30)
    return calls.read_text().splitlines()


def test_the_lost_entry_is_removed_while_the_other_voters_are_a_caught_up_majority(
    tmp_path: Path,
) -> None:
    calls = run_membership(
        tmp_path,
        [
            "9000  D0   120  0    1  1  Leader",
            "9001  D1   120  0    1  1  Follower",
            "9002  OLD  40   80   1  1  Follower",
            "9002  NEW  120  0    1  1  Observer",
        ],
    )
    assert calls[-1] == "remove-controller --controller-id 9002 --controller-directory-id OLD"


def test_it_asks_the_other_voters_its_mounted_properties_list_now(tmp_path: Path) -> None:
    """The voters are read from the ConfigMap's file at each call, never the pod template: a
    change of `quorum.nodes` reaches a running membership container without a restart."""
    model = ClusterModel.from_config(config_of())
    me = model.voters[2]
    others = [f"{v.replication_host}:{model.ports.controller}" for v in model.voters[:2]]
    calls = run_membership(tmp_path / "three", [], with_bootstrap=True)
    assert calls and all(
        c.startswith(f"--bootstrap-controller {','.join(others)} --command-config ") for c in calls
    )
    # The ConfigMap updated in place to five voters: the two new ones are asked too, not itself.
    grown = ClusterModel.from_config(config_of(quorum={"nodes": 5}))
    files = node_files(grown, next(v for v in grown.voters if v.node_id == me.node_id))
    describe = run_membership(tmp_path / "five", [], files=files, with_bootstrap=True)[0]
    asked = describe.split()[1].split(",")
    assert len(asked) == 4 and others[0] in asked and f"{me.replication_host}:" not in describe


def test_no_removal_while_another_voter_lags(tmp_path: Path) -> None:
    calls = run_membership(
        tmp_path,
        [
            "9000  D0   120  0    1  1  Leader",
            "9001  D1   100  20   1  1  Follower",
            "9002  OLD  40   80   1  1  Follower",
            "9002  NEW  120  0    1  1  Observer",
        ],
    )
    assert calls == ["describe --status", "describe --replication"]


def test_no_removal_while_the_new_directory_catches_up(tmp_path: Path) -> None:
    calls = run_membership(
        tmp_path,
        [
            "9000  D0   120  0    1  1  Leader",
            "9001  D1   120  0    1  1  Follower",
            "9002  OLD  40   80   1  1  Follower",
            "9002  NEW  90   30   1  1  Observer",
        ],
    )
    assert calls == ["describe --status", "describe --replication"]


def test_a_voter_set_it_cannot_read_never_leads_to_adding_a_second_entry(tmp_path: Path) -> None:
    # 9002 listed, but in a shape the script cannot take a directory id from: it must wait, not
    # take the entry for gone and add itself beside it (KIP-853 would accept two entries).
    drifted = STATUS.replace('"directoryId": "OLD"', '"directory": "OLD"')
    caught_up = ["9000  D0   120  0    1  1  Leader", "9002  NEW  120  0    1  1  Observer"]
    assert run_membership(tmp_path, caught_up, drifted) == ["describe --status"]
    no_voters = "LeaderId: 9000\n"
    assert run_membership(tmp_path / "none", caught_up, no_voters) == ["describe --status"]


def test_the_leader_is_read_from_the_status_and_none_during_an_election() -> None:
    status = "ClusterId:              abc\nLeaderId:               9001\nLeaderEpoch: 4\n"
    assert membership.leader_id(status) == 9001
    assert membership.leader_id(status.replace("9001", "-1")) is None
    assert membership.leader_id("ClusterId: abc\n") is None


def run_format(
    tmp_path: Path, spec: dict[str, Any], formatted: list[str], files: dict[str, str]
) -> list[str]:
    """The rendered format-storage script with its in-pod paths under `tmp_path`, `files` in its
    config directory (the node's ConfigMap) and `formatted` directories holding a
    meta.properties: the stand-in tool's calls."""
    script = format_script(spec)
    for path in (KAFKA_BIN, membership.RECORD_DIR, "/var/lib/kafka", CONFIG_DIR):
        script = script.replace(path, str(tmp_path / path.strip("/")))
    config = tmp_path / CONFIG_DIR.strip("/")
    config.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (config / name).write_text(text)
    for directory in formatted:
        (tmp_path / directory.strip("/")).mkdir(parents=True, exist_ok=True)
        (tmp_path / directory.strip("/") / "meta.properties").write_text("version=1\n")
    tool = tmp_path / KAFKA_BIN.strip("/") / "kafka-storage.sh"
    tool.parent.mkdir(parents=True, exist_ok=True)
    calls = tmp_path / "calls.txt"
    tool.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    tool.chmod(0o755)
    subprocess.run(["sh", "-c", script], check=True, timeout=30, capture_output=True, text=True)
    return calls.read_text().splitlines() if calls.exists() else []


def test_a_restart_on_formatted_volumes_starts_no_format_tool(tmp_path: Path) -> None:
    """Every pod start ran the tool's JVM to learn that nothing needed formatting."""
    model = ClusterModel.from_config(config_of())
    broker, voter = model.brokers[0], model.voters[0]
    assert (
        run_format(
            tmp_path / "broker",
            pod(model, 0, role="broker"),
            [*model.log_dirs, METADATA_DIR],
            node_files(model, broker),
        )
        == []
    )
    assert (
        run_format(tmp_path / "voter", pod(model, 0), [METADATA_DIR], node_files(model, voter))
        == []
    )


def test_an_unformatted_directory_still_reaches_the_tool(tmp_path: Path) -> None:
    model = ClusterModel.from_config(config_of())
    broker = pod(model, 0, role="broker")
    # A new data volume (or the metadata one lost) beside formatted ones: the tool formats it.
    [call] = run_format(
        tmp_path / "broker", broker, [METADATA_DIR], node_files(model, model.brokers[0])
    )
    assert call.startswith("format ")
    assert call.endswith("--ignore-formatted --no-initial-controllers")
    # The initial set, as the voter's ConfigMap holds it.
    files = node_files(model, model.voters[0])
    [call] = run_format(tmp_path / "voter", pod(model, 0), [], files)
    assert f"--initial-controllers {model.initial_controllers} " in call


def test_a_voter_without_its_initial_set_file_formats_nothing(tmp_path: Path) -> None:
    """An empty `--initial-controllers` must not reach the tool: the pod fails, saying why."""
    model = ClusterModel.from_config(config_of())
    files = node_files(model, model.voters[0])
    del files[membership.INITIAL_VOTERS_FILE]
    with pytest.raises(subprocess.CalledProcessError) as failed:
        run_format(tmp_path, pod(model, 0), [], files)
    assert f"{membership.INITIAL_VOTERS_PATH} is missing or empty" in failed.value.stdout
    assert not (tmp_path / "calls.txt").exists()
