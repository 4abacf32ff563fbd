"""A copy of this project in its own git repository, for the real Pulumi engine to run.

Each test bends a copy (a stack file, a line of the program) and runs the engine on it, so
nothing a test does reaches the checkout or another test.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kafkastack.cli import app
from tests.infra.conftest import apply_sizing

# What `pulumi up` runs: the program, its templates, the sizing contract, the stacks, and the
# settings of the typechecker Pulumi.yaml runs before the program (pyproject.toml: mypy strict),
# as in any checkout. Without them mypy checked the copies leniently, and each switch between a
# copy and a checkout (the suite's two lanes run both) threw away the shared mypy cache: 25-30
# CPU-s of a full check each time, up to seven times a suite run.
PROGRAM = ("Pulumi.yaml", "pyproject.toml", "infra", "templates", "spark_sizing", "stacks")


@dataclass(frozen=True)
class Project:
    root: Path

    @property
    def stacks(self) -> Path:
        return self.root / "stacks"

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-qm", message)
        return self.git("rev-parse", "HEAD")

    def edit_stack(self, stack: str, **values: object) -> None:
        path = self.stacks / f"Pulumi.{stack}.yaml"
        document = yaml.safe_load(path.read_text())
        for key, value in values.items():
            document["config"][f"kafkastack:{key}"] = value
        path.write_text(yaml.safe_dump(document, sort_keys=False))

    def edit_code(self, relative: str, old: str, new: str) -> None:
        path = self.root / relative
        text = path.read_text()
        assert old in text, f"{relative} no longer has {old!r}: update the test"
        path.write_text(text.replace(old, new))

    def apply_sizing(self, stack: str, tmp: Path, **cluster: object) -> None:
        apply_sizing(self.stacks, stack, tmp, **cluster)

    def preview(self, stack: str, base: str) -> tuple[int, str]:
        result = CliRunner().invoke(
            app,
            [
                "preview",
                "--stack",
                stack,
                "--base",
                base,
                "--markdown",
                "--stacks-dir",
                str(self.stacks),
            ],
        )
        return result.exit_code, result.output


@pytest.fixture
def project(repo_root: Path, tmp_path: Path) -> Project:
    root = tmp_path / "project"
    root.mkdir()
    for name in PROGRAM:
        source = repo_root / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, root / name)
    (root / ".venv").symlink_to(repo_root / ".venv")
    (root / ".gitignore").write_text(".venv\n")
    copy = Project(root)
    copy.git("init", "-q")
    copy.commit("base")
    return copy
