"""Fewer KRaft voters are refused while a voter that goes is still in the voter set, and
`kafkastack remove-voters` takes them out one at a time, each behind a caught-up majority.

A stand-in `kubectl` on PATH answers as the API server and the voters' pods would: `get
statefulsets` lists the deployed voters, `exec … kafka-metadata-quorum …` answers `describe
--status`/`--replication` from a state file and applies `remove-controller` to it. The kafka
tier (tests/kafka/test_voter_removal.py) runs the removal on real controllers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from infra import voter_removal
from infra.errors import ConfigError
from infra.model import membership
from infra.model.cluster import ClusterModel
from infra.stack_config import StackConfig
from infra.voter_removal import check_voter_removal
from kafkastack.cli import app
from tests.infra.conftest import base_values, config_of, stand_in_kubectl

FAKE_KUBECTL = r"""#!/usr/bin/env python3
import json, os, re, sys
path = os.environ["FAKE_STATE"]
state = json.load(open(path))
state["calls"].append(sys.argv[1:])
def save():
    json.dump(state, open(path, "w"))
if sys.argv[1] == "get":
    save()
    print(json.dumps({"items": [{"metadata": {"name": n}} for n in state["statefulsets"]]}))
    sys.exit(0)
pod, command = sys.argv[sys.argv.index("-n") + 2], sys.argv[-1]
if pod in state["silent"]:
    save()
    sys.stderr.write("error: unable to upgrade connection: container not found\n")
    sys.exit(1)
voters = state["voters"]
if "remove-controller" in command:
    voter = re.search(r"--controller-id (\d+)", command).group(1)
    directory = re.search(r"--controller-directory-id (\S+)", command).group(1)
    assert voters[voter] == directory, (voters, voter, directory)
    del voters[voter]
    state["removed"].append(int(voter))
elif "describe --status" in command:
    listed = [{"id": int(i), "directoryId": d, "endpoints": ["CONTROLLER://x:9093"]}
              for i, d in voters.items()]
    print("ClusterId:              abc\nLeaderId:               9000")
    print("CurrentVoters:          " + json.dumps(listed))
    print("CurrentObservers:       []")
elif "describe --replication" in command:
    # Each answer uses up one entry of a voter's lag script (the last one stays).
    print("NodeId DirectoryId LogEndOffset Lag LastFetchTimestamp LastCaughtUpTimestamp Status")
    for i, d in voters.items():
        lags = state["lags"].get(i, [0])
        lag = lags.pop(0) if len(lags) > 1 else lags[0]
        role = "Leader" if i == "9000" else "Follower"
        print(f"{i}  {d}  100  {lag}  1  1  {role}")
save()
"""


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(voter_removal, "POLL_SECONDS", 0.05)


def deployed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: StackConfig, **state: Any
) -> Path:
    """A running cluster as `config` left it: its voters' StatefulSets and voter set."""
    model = ClusterModel.from_config(config)
    stand_in_kubectl(tmp_path, monkeypatch, FAKE_KUBECTL)
    path = tmp_path / "state.json"
    document = {
        "statefulsets": [v.workload for v in model.voters],
        "voters": {str(v.node_id): f"dir{v.node_id}" for v in model.voters},
        "lags": {},
        "silent": [],
        "calls": [],
        "removed": [],
        **state,
    }
    path.write_text(json.dumps(document))
    monkeypatch.setenv("FAKE_STATE", str(path))
    return path


def read(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def controllers(nodes: int, **overrides: Any) -> StackConfig:
    return config_of(quorum={"kind": "kraft", "nodes": nodes}, **overrides)


def test_deleting_controllers_still_in_the_voter_set_is_refused_naming_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = deployed(tmp_path, monkeypatch, controllers(5))
    with pytest.raises(ConfigError) as refused:
        check_voter_removal(controllers(3))
    message = str(refused.value)
    assert message.startswith("kafkastack:quorum.nodes: ")
    assert "voter(s) 9003, 9004" in message and "voter set of 5" in message
    assert "`kafkastack remove-voters --stack staging`" in message
    # It asked a voter that stays, in its membership container, with that container's login.
    execs = [c for c in read(state)["calls"] if c[0] == "exec"]
    assert execs and all(c[c.index("-c") + 1] == membership.CONTAINER for c in execs)
    assert f"--command-config {membership.ADMIN_FILE}" in execs[0][-1]
    assert execs[0][3] == "kafka-controller-9000-0"


def test_once_the_voters_that_go_have_left_the_set_the_change_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ClusterModel.from_config(controllers(5))
    deployed(
        tmp_path,
        monkeypatch,
        controllers(5),
        voters={str(v.node_id): f"dir{v.node_id}" for v in model.voters[:3]},
    )
    check_voter_removal(controllers(3))


def test_the_same_voters_or_more_ask_no_pod(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = deployed(tmp_path, monkeypatch, controllers(3))
    check_voter_removal(controllers(3))
    check_voter_removal(controllers(5))
    assert [c[0] for c in read(state)["calls"]] == ["get", "get"]


def test_combined_brokers_that_go_while_voters_are_refused_on_the_brokers_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    combined = {"kind": "kraft", "combined": True}
    deployed(tmp_path, monkeypatch, config_of("dev", brokers=5, quorum=combined))
    with pytest.raises(ConfigError, match=r"^kafkastack:brokers: .*voter\(s\) 3, 4"):
        check_voter_removal(config_of("dev", brokers=3, quorum=combined))


def test_silent_voter_pods_refuse_unless_the_stack_accepts_it_for_this_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    silent = [f"kafka-controller-{i}-0" for i in range(9000, 9005)]
    deployed(tmp_path, monkeypatch, controllers(5), silent=silent)
    with pytest.raises(ConfigError) as refused:
        check_voter_removal(controllers(3))
    message = str(refused.value)
    assert "no staying voter's pod answered" in message and "container not found" in message
    assert "kafkastack:allow_unverified_voter_removal: true" in message
    check_voter_removal(controllers(3, allow_unverified_voter_removal=True))


def test_zookeeper_ensembles_are_not_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = deployed(tmp_path, monkeypatch, controllers(5))
    check_voter_removal(config_of(kafka_version="3.9.1", quorum={"kind": "zookeeper", "nodes": 3}))
    assert read(state)["calls"] == []


def stacks_with(tmp_path: Path, config_values: dict[str, Any]) -> Path:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    document = {"config": {f"kafkastack:{k}": v for k, v in base_values(**config_values).items()}}
    (stacks / "Pulumi.staging.yaml").write_text(json.dumps(document))
    return stacks


def remove_voters(stacks: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        app, ["remove-voters", "--stack", "staging", "--stacks-dir", str(stacks), *extra]
    )


def test_remove_voters_takes_them_out_one_at_a_time_highest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = deployed(tmp_path, monkeypatch, controllers(5))
    stacks = stacks_with(tmp_path, {"quorum": {"kind": "kraft", "nodes": 3}})
    result = remove_voters(stacks)
    assert result.exit_code == 0, result.output
    after = read(state)
    assert after["removed"] == [9004, 9003]
    assert sorted(after["voters"]) == ["9000", "9001", "9002"]
    # Each removal waited for its predecessor to leave the set before the next one began.
    commands = [c[-1] for c in after["calls"] if c[0] == "exec"]
    second = next(i for i, c in enumerate(commands) if "--controller-id 9003" in c)
    assert any("describe --status" in c for c in commands[:second])
    assert (
        "voter 9004 removed in" in result.output
        and "voters now 9000, 9001, 9002, 9003" in result.output
    )
    # Run again: nothing left to remove.
    again = remove_voters(stacks)
    assert again.exit_code == 0 and "nothing to remove" in again.output


def test_remove_voters_waits_for_a_caught_up_majority_of_the_voters_that_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two of the three staying voters lag behind for a few answers, then catch up.
    state = deployed(
        tmp_path, monkeypatch, controllers(5), lags={"9001": [40, 12, 0], "9002": [55, 30, 0]}
    )
    stacks = stacks_with(tmp_path, {"quorum": {"kind": "kraft", "nodes": 3}})
    result = remove_voters(stacks)
    assert result.exit_code == 0, result.output
    commands = [c[-1] for c in read(state)["calls"] if c[0] == "exec"]
    first = next(i for i, c in enumerate(commands) if "remove-controller" in c)
    assert sum("describe --replication" in c for c in commands[:first]) == 3


def test_remove_voters_gives_up_without_removing_when_no_majority_catches_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = deployed(tmp_path, monkeypatch, controllers(5), lags={"9001": [40], "9002": [55]})
    stacks = stacks_with(tmp_path, {"quorum": {"kind": "kraft", "nodes": 3}})
    result = remove_voters(stacks, "--timeout", "1")
    assert result.exit_code == 2
    assert (
        "voter 9004 not removed: the voters that stay were no caught-up majority" in result.output
    )
    assert read(state)["removed"] == []


def test_remove_voters_waits_for_every_voter_that_stays_to_be_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 9001 and 9002 are not voters (yet): removing 9003 and 9004 would leave 9000 alone.
    voters = {"9000": "dir9000", "9003": "dir9003", "9004": "dir9004"}
    state = deployed(tmp_path, monkeypatch, controllers(5), voters=voters)
    stacks = stacks_with(tmp_path, {"quorum": {"kind": "kraft", "nodes": 3}})
    result = remove_voters(stacks)
    assert result.exit_code == 2
    assert "kafkastack:quorum.nodes: 9001, 9002 of the voters this stack declares" in result.output
    assert read(state)["removed"] == []


def test_remove_voters_dry_run_names_them_and_removes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = deployed(tmp_path, monkeypatch, controllers(5))
    stacks = stacks_with(tmp_path, {"quorum": {"kind": "kraft", "nodes": 3}})
    result = remove_voters(stacks, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "voters to remove, one at a time: 9004, 9003" in result.output
    assert read(state)["removed"] == []


def test_remove_voters_refuses_a_zookeeper_stack_naming_the_key(tmp_path: Path) -> None:
    stacks = stacks_with(
        tmp_path, {"kafka_version": "3.9.1", "quorum": {"kind": "zookeeper", "nodes": 3}}
    )
    result = remove_voters(stacks)
    assert result.exit_code == 2
    assert "kafkastack:quorum.kind: zookeeper has no KRaft voters" in result.output
