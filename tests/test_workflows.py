"""The CI workflows pass actionlint (built by scripts/toolchain)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from infra.toolchain import bin_dir

pytestmark = pytest.mark.toolchain


def test_workflows_pass_actionlint(repo_root: Path) -> None:
    actionlint = bin_dir() / "actionlint"
    assert actionlint.is_file(), "actionlint missing: run scripts/toolchain/build-all.sh"
    workflows = sorted(str(p) for p in (repo_root / ".github" / "workflows").glob("*.yml"))
    assert workflows
    result = subprocess.run(
        [str(actionlint), *workflows], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
