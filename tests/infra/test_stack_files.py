"""Stack files that are not what they should be, read by `render` and `apply-sizing`: a clear
refusal naming the file and what to do, never a traceback, and a stack file `apply-sizing`
could not finish left exactly as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from infra.stack_documents import read_stack_file
from kafkastack.cli import app
from tests.infra.conftest import write_sizing

COMMITTED = Path(__file__).resolve().parents[2] / "stacks"


@pytest.fixture
def stacks(tmp_path: Path) -> Path:
    folder = tmp_path / "stacks"
    shutil.copytree(COMMITTED, folder)
    return folder


def _render(stacks: Path, stack: str = "staging") -> tuple[int, str]:
    out = stacks.parent / "out"
    args = ["render", "--stack", stack, "--stacks-dir", str(stacks), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def _apply(stacks: Path, sizing: Path, stack: str = "staging") -> tuple[int, str]:
    args = ["apply-sizing", "--sizing", str(sizing), "--stack", stack, "--stacks-dir", str(stacks)]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("config:\n  kafkastack:zones: [a, b\n", "not valid YAML"),
        ("config:\n\tkafkastack:zones: [a]\n", "not valid YAML"),
        ("- a\n- b\n", "is a list, not a stack file"),
        ("just words\n", "is a str, not a stack file"),
        ("", "no config: section"),
        ("confg:\n  kafkastack:zones: [a, b, c]\n", "top-level keys: confg"),
        ("config: hello\n", "config: is a str"),
    ],
)
def test_a_stack_file_that_is_not_one_is_refused_by_every_reader(
    stacks: Path, text: str, words: str
) -> None:
    stack_file = stacks / "Pulumi.staging.yaml"
    stack_file.write_text(text)
    sizing = write_sizing(stacks.parent)
    for code, output in (_render(stacks), _apply(stacks, sizing)):
        assert code == 2, output
        assert "Traceback" not in output
        assert str(stack_file) in output and words in output, output
    assert stack_file.read_text() == text


def test_a_key_written_twice_is_refused_where_yaml_would_keep_the_last(stacks: Path) -> None:
    stack_file = stacks / "Pulumi.staging.yaml"
    stack_file.write_text(stack_file.read_text() + "  kafkastack:brokers: 9\n")
    code, output = _render(stacks)
    assert code == 2 and "'kafkastack:brokers' is written twice" in output, output
    assert "line " in output


def test_a_file_that_is_not_utf8_is_refused(stacks: Path) -> None:
    (stacks / "Pulumi.staging.yaml").write_bytes(b"config:\n  kafkastack:zones: [\xff]\n")
    code, output = _render(stacks)
    assert code == 2 and "not UTF-8" in output, output


def test_a_password_in_clear_text_is_refused_with_the_command_that_keeps_it_secret(
    stacks: Path,
) -> None:
    stack_file = stacks / "Pulumi.staging.yaml"
    stack_file.write_text(stack_file.read_text() + "  kafkastack:password-admin: hunter2\n")
    code, output = _render(stacks)
    assert code == 2, output
    assert "kafkastack:password-admin is written in clear text" in output
    assert "pulumi config set --secret kafkastack:password-admin" in output


def test_a_sizing_apply_sizing_cannot_finish_leaves_the_stack_file_as_it_was(
    stacks: Path,
) -> None:
    stack_file = stacks / "Pulumi.prod.yaml"
    before = stack_file.read_text()
    sizing = write_sizing(stacks.parent)
    document = json.loads(sizing.read_text())
    document["cluster"]["storage_per_broker_gib"] = float("inf")  # json writes Infinity
    sizing.write_text(json.dumps(document))
    code, output = _apply(stacks, sizing, "prod")
    assert code == 2, output
    assert "cluster.storage_per_broker_gib" in output and "finite" in output, output
    assert stack_file.read_text() == before


@pytest.mark.parametrize(
    ("cluster", "words"),
    [
        (
            {"zones": 1, "brokers_per_zone": [3]},
            "sized for 1 zone(s), but stack prod lists 3 (kafkastack:zones); re-run "
            "`kafkastack size --zones 3`",
        ),
        (
            {"quorum": {"kind": "zookeeper", "nodes": 7, "cpu": 1.0, "memory_gib": 4.0,
                        "heap_gib": 2.0, "storage_gib": 64.0}},
            "sized for a zookeeper quorum, but stack prod runs kraft",
        ),
        ({"brokers": 15, "brokers_per_zone": [1, 1, 1]}, "does not spread 15 brokers over 3"),
        ({"brokers_per_zone": [100, -3, 1]}, "cluster.brokers_per_zone"),
    ],
)  # fmt: skip
def test_a_sizing_of_another_shape_is_refused_and_the_stack_file_kept(
    stacks: Path, cluster: dict[str, object], words: str
) -> None:
    stack_file = stacks / "Pulumi.prod.yaml"
    before = stack_file.read_text()
    code, output = _apply(stacks, write_sizing(stacks.parent, **cluster), "prod")
    assert code == 2, output
    assert words in output, output
    assert stack_file.read_text() == before


def test_a_sizing_file_that_is_not_text_is_refused(stacks: Path) -> None:
    sizing = stacks.parent / "sizing.json"
    sizing.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    code, output = _apply(stacks, sizing)
    assert code == 2 and "not UTF-8" in output, output


def test_a_merge_key_reads_as_yaml_means_it(stacks: Path) -> None:
    """`<<: *anchor` is YAML's way to share a block; a key after it overrides the merged one."""
    stack_file = stacks / "Pulumi.staging.yaml"
    shared = "x-shared: &waits\n  replica_fetch_wait_ms: 500\n  metadata_idle_interval_ms: 900\n"
    text = stack_file.read_text().replace("config:\n", shared + "config:\n", 1)
    text += "  kafkastack:polling:\n    <<: *waits\n    replica_fetch_wait_ms: 700\n"
    stack_file.write_text(text)
    values = read_stack_file(stack_file)
    assert values["polling"] == {"replica_fetch_wait_ms": 700, "metadata_idle_interval_ms": 900}
