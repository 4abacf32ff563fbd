"""The CI workflows pass actionlint (built by scripts/toolchain)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain


def test_workflows_pass_actionlint(repo_root: Path) -> None:
    cache = Path(os.environ.get("KAFKASTACK_CACHE", Path.home() / ".cache" / "kafkastack"))
    actionlint = cache / "bin" / "actionlint"
    assert actionlint.is_file(), "actionlint missing: run scripts/toolchain/build-all.sh"
    workflows = sorted(str(p) for p in (repo_root / ".github" / "workflows").glob("*.yml"))
    assert workflows
    result = subprocess.run(
        [str(actionlint), *workflows], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
