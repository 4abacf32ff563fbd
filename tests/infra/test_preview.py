"""Pull-request previews from renders: additions only when brokers grow, risks flagged."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from typer.testing import CliRunner

from kafkastack.cli import app
from tests.infra.conftest import base_values, sizing_cluster


def stack_file(path: Path, **overrides: object) -> None:
    values = base_values(**overrides)
    path.write_text(yaml.safe_dump({"config": {f"kafkastack:{k}": v for k, v in values.items()}}))


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def repo_with_change(tmp_path: Path, before: dict[str, object], after: dict[str, object]) -> Path:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    git(tmp_path, "init", "-q")
    stack_file(stacks / "Pulumi.staging.yaml", **before)
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base")
    stack_file(stacks / "Pulumi.staging.yaml", **after)
    return stacks


def preview(stacks: Path) -> tuple[int, str]:
    result = CliRunner().invoke(
        app,
        [
            "preview",
            "--stack",
            "staging",
            "--base",
            "HEAD",
            "--markdown",
            "--stacks-dir",
            str(stacks),
        ],
    )
    return result.exit_code, result.output


def sizing(brokers: int) -> dict[str, object]:
    return {"schema_version": "1.0", "source": "t", "cluster": sizing_cluster(brokers=brokers)}


def test_growing_brokers_previews_as_additions_only(tmp_path: Path) -> None:
    stacks = repo_with_change(tmp_path, {"sizing": sizing(3)}, {"sizing": sizing(5)})
    code, comment = preview(stacks)
    assert code == 0, comment
    assert "| brokers | 3 | 5 |" in comment
    assert "| create | StatefulSet | kafka-broker-4 |" in comment
    assert "| replace |" not in comment and "| delete |" not in comment
    assert "data-loss risk" not in comment


def test_shrinking_and_storage_changes_are_flagged(tmp_path: Path) -> None:
    stacks = repo_with_change(
        tmp_path,
        {"sizing": sizing(5)},
        {"sizing": sizing(3), "storage": {"provisioner": "pd.csi.storage.gke.io"}},
    )
    code, comment = preview(stacks)
    assert code == 3  # data-loss risks make the preview fail a pipeline that gates on it
    assert "| delete | StatefulSet | kafka-broker-4 | ⚠ data-loss risk |" in comment
    assert "| replace | StorageClass | kafka-broker-fast | ⚠ data-loss risk |" in comment
    assert "Data-loss risk" in comment


def test_unchanged_stack_has_no_changes(tmp_path: Path) -> None:
    stacks = repo_with_change(tmp_path, {"sizing": sizing(3)}, {"sizing": sizing(3)})
    code, comment = preview(stacks)
    assert code == 0 and "No object changes." in comment
