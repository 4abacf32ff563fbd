"""The pure pieces around the engine: reading its preview, the working config, secret keys."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from infra.engine import (
    LOCAL_PASSPHRASE,
    SKIP_CHECKPOINTS,
    Engine,
    change_summary,
    error_diagnostics,
    steps_from_preview,
    working_config,
)
from infra.errors import ConfigError
from infra.stack_documents import read_stack_file, stack_values
from kafkastack.cli import app

STS = "kubernetes:apps/v1:StatefulSet"


def step(op: str, type_: str, name: str, **extra: object) -> dict[str, object]:
    state = {"type": type_, "inputs": {"metadata": {"name": name}}}
    return {
        "op": op,
        "urn": f"urn:pulumi:s::p::{type_}::logical-{name}",
        "newState": state,
        **extra,
    }


def test_a_replacement_reads_as_one_replace_step_named_by_its_kubernetes_name() -> None:
    document = {
        "steps": [
            step("create-replacement", STS, "kafka-broker-0"),
            step("replace", STS, "kafka-broker-0", diffs=["spec"]),
            step("delete-replaced", STS, "kafka-broker-0"),
            step("create", "kubernetes:core/v1:ConfigMap", "kafka-broker-3-config"),
            step("same", "kafkastack:index:KafkaCluster", "kafka"),
        ]
    }
    steps = steps_from_preview(document)
    assert [(s.op, s.kind, s.name) for s in steps] == [
        ("create", "ConfigMap", "kafka-broker-3-config"),
        ("replace", "StatefulSet", "kafka-broker-0"),
    ]
    assert [s.data_loss_risk for s in steps] == [False, True]


def test_deleting_a_claim_or_storage_class_is_a_data_loss_risk() -> None:
    steps = steps_from_preview(
        {
            "steps": [
                step("delete", "kubernetes:core/v1:PersistentVolumeClaim", "data-0"),
                step("update", "kubernetes:storage.k8s.io/v1:StorageClass", "fast"),
            ]
        }
    )
    assert {(s.op, s.data_loss_risk) for s in steps} == {("delete", True), ("update", False)}


def test_the_working_config_follows_the_stack_file_and_keeps_what_the_engine_wrote(
    tmp_path: Path,
) -> None:
    stack = tmp_path / "Pulumi.local.yaml"
    stack.write_text(yaml.safe_dump({"config": {"kafkastack:brokers": 3}}))
    previous = tmp_path / "working.yaml"
    previous.write_text(
        yaml.safe_dump(
            {
                "encryptionsalt": "v1:salt",
                "config": {
                    "kafkastack:brokers": 5,
                    "kafkastack:password-admin": {"secure": "v1:cipher"},
                },
            }
        )
    )
    merged = yaml.safe_load(working_config(stack, previous, {"kubernetes:context": "x"}))
    assert merged == {
        "config": {
            "kafkastack:brokers": 3,  # the stack file wins
            "kafkastack:password-admin": {"secure": "v1:cipher"},
            "kubernetes:context": "x",
        },
        "encryptionsalt": "v1:salt",
    }


def test_secret_password_keys_are_not_stack_settings() -> None:
    values = stack_values(
        {
            "kafkastack:brokers": 3,
            "kafkastack:password-admin": {"secure": "v1:x"},
            "kubernetes:renderYamlToDirectory": "/tmp/r",
        },
        "test",
    )
    assert values == {"brokers": 3}


@pytest.mark.parametrize("key", ["kafkastak:brokers", "brokers", "aws:region"])
def test_keys_outside_our_namespace_are_refused(tmp_path: Path, key: str) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump({"config": {key: 3}}))
    with pytest.raises(ConfigError, match="outside the kafkastack: namespace"):
        read_stack_file(path)


def test_render_refuses_to_replace_a_directory_that_is_not_a_render(tmp_path: Path) -> None:
    precious = tmp_path / "checkout"
    precious.mkdir()
    (precious / "README.md").write_text("keep me")
    result = CliRunner().invoke(app, ["render", "--stack", "local", "--out", str(precious)])
    assert result.exit_code == 2
    assert "is not an earlier render" in result.output
    assert (precious / "README.md").read_text() == "keep me"


def test_render_replaces_an_earlier_render(tmp_path: Path) -> None:
    out = tmp_path / "render"
    for _ in range(2):
        result = CliRunner().invoke(app, ["render", "--stack", "local", "--out", str(out)])
        assert result.exit_code == 0, result.output
    assert (out / "topology.json").is_file()


def test_thechange_summary_comes_from_the_up_event_stream() -> None:
    stream = "\n".join(
        [
            '{"sequence":0,"diagnosticEvent":{"message":"warning"}}',
            '{"sequence":9,"summaryEvent":{"resourceChanges":{"same":60,"create":2}}}',
            '{"sequence":10,"cancelEvent":{}}',
        ]
    )
    assert change_summary(stream) == {"same": 60, "create": 2}


def test_a_failed_up_says_which_resource_failed_and_why() -> None:
    job = "urn:pulumi:local::kafkastack::kubernetes:batch/v1:Job::dynamic-settings"
    stream = "\n".join(
        [
            '{"sequence":1,"diagnosticEvent":{"message":"info","severity":"info"}}',
            json.dumps(
                {
                    "sequence": 2,
                    "diagnosticEvent": {
                        "urn": job,
                        "prefix": "error: ",
                        "message": 'jobs.batch "dynamic-settings" already exists\n',
                        "severity": "error",
                    },
                }
            ),
            '{"sequence":3,"resOutputsEvent":{"metadata":{"op":"same"}}}',
            '{"sequence":4,"diagnosticEvent":{"message":"update failed\\n","severity":"error"}}',
        ]
    )
    assert error_diagnostics(stream) == [
        'dynamic-settings: jobs.batch "dynamic-settings" already exists',
        "update failed",
    ]


def test_a_real_stack_never_gets_an_empty_passphrase(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    assert "PULUMI_CONFIG_PASSPHRASE" not in Engine(state_dir=None).env()
    local = Engine(state_dir=None, passphrase=LOCAL_PASSPHRASE).env()
    assert local["PULUMI_CONFIG_PASSPHRASE"] == LOCAL_PASSPHRASE


def test_every_checkout_the_engine_runs_shares_one_typechecker_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path))
    monkeypatch.delenv("MYPY_CACHE_DIR", raising=False)
    base = Engine(state_dir=None, project_dir=tmp_path / "base-worktree").env()
    head = Engine(state_dir=None, project_dir=tmp_path / "checkout").env()
    assert base["MYPY_CACHE_DIR"] == head["MYPY_CACHE_DIR"] == str(tmp_path / "mypy")
    monkeypatch.setenv("MYPY_CACHE_DIR", "/srv/own-cache")
    assert Engine(state_dir=None).env()["MYPY_CACHE_DIR"] == "/srv/own-cache"


def _preview(deployed: tuple[int, ...] | None, declared: tuple[int, ...]) -> str:
    from infra.preview import StackPreview, markdown

    sizing = {"brokers": len(declared)}
    return markdown(StackPreview("prod", [], sizing, sizing, [], deployed, declared))


def test_a_preview_of_more_brokers_says_the_rebalance_step_is_due() -> None:
    comment = _preview((0, 1, 2), (0, 1, 2, 3, 4))
    assert "**Brokers 3 → 5**" in comment and "broker(s) 3, 4" in comment
    assert "kafkastack rebalance --stack prod" in comment


def test_a_preview_of_fewer_brokers_says_which_to_drain_first() -> None:
    comment = _preview((0, 1, 2, 3, 4), (0, 1, 2))
    assert "kafkastack drain --stack prod --brokers 3,4" in comment


def test_a_preview_that_deletes_controllers_says_to_remove_the_voters_first() -> None:
    from infra.engine import Step
    from infra.preview import StackPreview, going_voters, markdown
    from tests.infra.conftest import config_of

    five = config_of("prod", quorum={"kind": "kraft", "nodes": 5})
    three = config_of("prod", quorum={"kind": "kraft", "nodes": 3})
    steps = [
        Step("delete", "kubernetes:apps/v1:StatefulSet", "kafka-controller-9004"),
        Step("delete", "kubernetes:apps/v1:StatefulSet", "kafka-controller-9003"),
        Step("update", "kubernetes:apps/v1:StatefulSet", "kafka-controller-9000"),
        Step("delete", "kubernetes:core/v1:ConfigMap", "kafka-controller-9003"),
    ]
    going = going_voters(three, steps, (0, 1, 2), (0, 1, 2))
    assert going == (9003, 9004)
    assert going_voters(five, steps[2:], (0, 1, 2), (0, 1, 2)) == ()
    sizing = {"brokers": 3}
    comment = markdown(
        StackPreview("prod", steps, sizing, sizing, [], (0, 1, 2), (0, 1, 2), (), going)
    )
    assert "KRaft voter(s) 9003, 9004 would be deleted" in comment
    assert "`kafkastack remove-voters --stack prod`" in comment


def test_combined_brokers_that_go_are_voters_that_go() -> None:
    from infra.preview import going_voters
    from tests.infra.conftest import config_of

    combined = config_of("dev", brokers=3, quorum={"kind": "kraft", "combined": True})
    assert going_voters(combined, [], (0, 1, 2, 3, 4), (0, 1, 2)) == (3, 4)
    zookeeper = config_of(kafka_version="3.9.1", quorum={"kind": "zookeeper", "nodes": 3})
    assert going_voters(zookeeper, [], (0, 1, 2, 3), (0, 1, 2)) == ()


def test_a_preview_without_broker_changes_mentions_neither() -> None:
    for deployed in (None, (0, 1, 2)):
        comment = _preview(deployed, (0, 1, 2))
        assert "rebalance" not in comment and "drain" not in comment


def test_a_preview_says_who_can_reach_the_load_balancer() -> None:
    from infra.preview import StackPreview, markdown

    summary = {"brokers": 3, "load_balancer": "internet-facing NLB"}
    for before in (None, summary):
        comment = markdown(StackPreview("prod", [], before, summary, []))
        assert "External access: internet-facing NLB." in comment


def test_a_throwaway_state_runs_the_cli_in_a_home_of_the_cache_that_keeps_no_log(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cache, user = tmp_path / "cache", tmp_path / "user"
    monkeypatch.setenv("KAFKASTACK_CACHE", str(cache))
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("PULUMI_HOME", raising=False)
    (user / ".pulumi" / "plugins").mkdir(parents=True)
    # A CLI run before made the folder the automatic log goes to.
    (cache / "pulumi-home" / "logs").mkdir(parents=True)
    (cache / "pulumi-home" / "logs" / "pulumi-1.log").write_text("old")
    env = Engine(state_dir=tmp_path / "state", passphrase=LOCAL_PASSPHRASE).env()
    home = cache / "pulumi-home"
    assert env["PULUMI_HOME"] == str(home)
    assert (home / "logs").is_file()  # the CLI cannot make the folder, so it logs nothing
    assert (home / "plugins").resolve() == (user / ".pulumi" / "plugins").resolve()
    assert Engine(state_dir=tmp_path / "state", passphrase=LOCAL_PASSPHRASE).env() == env


def test_a_throwaway_state_is_written_once_per_command_and_a_users_state_after_every_step(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(SKIP_CHECKPOINTS, raising=False)
    throwaway = Engine(state_dir=tmp_path / "state", passphrase=LOCAL_PASSPHRASE)
    assert throwaway.env()[SKIP_CHECKPOINTS] == "true"
    # The user's backend, or a file backend under their own passphrase: the CLI's default.
    assert SKIP_CHECKPOINTS not in Engine(state_dir=None).env()
    assert SKIP_CHECKPOINTS not in Engine(state_dir=tmp_path / "their-backend").env()
    monkeypatch.setenv(SKIP_CHECKPOINTS, "false")
    assert throwaway.env()[SKIP_CHECKPOINTS] == "false"


# A stand-in CLI that, like pulumi's, ends its update on SIGINT (here a second) and writes its
# state last.
CANCELLING_CLI = """#!/bin/sh
trap 'sleep 1; echo written > "$STATE_MARK"; exit 255' INT
echo started > "$STARTED_MARK"
while :; do sleep 0.1; done
"""


def test_a_ctrl_c_lets_the_cli_end_its_update_and_write_its_state(tmp_path: Path) -> None:
    bin_dir = tmp_path / "cache" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "pulumi").write_text(CANCELLING_CLI)
    (bin_dir / "pulumi").chmod(0o755)
    started, state = tmp_path / "started", tmp_path / "state-written"
    # A terminal's foreground command takes SIGINT. A shell's background job (a runner's
    # `make test &`) starts with it ignored, which Python and the CLI's sh would keep: the
    # driver takes it as the terminal's command does (its children start with the default).
    driver = (
        "import signal, sys\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from infra.engine import Engine\n"
        "try:\n    Engine(state_dir=None).run('up')\n"
        "except KeyboardInterrupt:\n    sys.exit(130)\n"
    )
    env = {
        **os.environ,
        "KAFKASTACK_CACHE": str(tmp_path / "cache"),
        "STARTED_MARK": str(started),
        "STATE_MARK": str(state),
    }
    # Its own process group, as a terminal's command is: the Ctrl-C reaches it and the CLI.
    command = subprocess.Popen([sys.executable, "-c", driver], env=env, start_new_session=True)
    deadline = time.monotonic() + 30
    while not started.exists():
        assert command.poll() is None and time.monotonic() < deadline, "the CLI never started"
        time.sleep(0.05)
    try:
        os.killpg(command.pid, signal.SIGINT)
        assert command.wait(timeout=30) == 130
    finally:
        if command.poll() is None:  # nothing of it outlives the test
            os.killpg(command.pid, signal.SIGKILL)
            command.wait()
    assert state.read_text() == "written\n"  # not killed before it wrote its state


def test_the_users_own_state_and_home_stay_theirs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("PULUMI_HOME", raising=False)
    assert "PULUMI_HOME" not in Engine(state_dir=None).env()
    assert "PULUMI_HOME" not in Engine(state_dir=tmp_path / "their-backend").env()
    monkeypatch.setenv("PULUMI_HOME", "/srv/pulumi")
    throwaway = Engine(state_dir=tmp_path / "state", passphrase=LOCAL_PASSPHRASE).env()
    assert throwaway["PULUMI_HOME"] == "/srv/pulumi"
    assert not (tmp_path / "cache" / "pulumi-home").exists()
