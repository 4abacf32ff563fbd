"""The installers' shell scripts run under `set -o pipefail`: a pipe into a reader that stops
early (`head`, `grep -q`, `grep -m`) can kill the writer with SIGPIPE, and the whole set-up then
fails at random (exit 141: `busybox | head -1` failed a CI run's image build). Capture the
output first, or read all of it (`sed -n 1p`)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

EARLY_READER = re.compile(r"\|\s*(head\b|grep\s+(-\w*[qm]|--quiet|--max-count))")


def shell_scripts(repo_root: Path) -> list[Path]:
    """The installers (scripts/images/<image>/ holds files of the images, not installers)."""
    scripts = sorted((repo_root / "scripts").glob("*.sh")) + sorted(
        (repo_root / "scripts").glob("*/*.sh")
    )
    return [*scripts, repo_root / ".ci" / "run"]


def test_no_installer_pipes_into_a_reader_that_stops_early(repo_root: Path) -> None:
    found = []
    for script in shell_scripts(repo_root):
        text = script.read_text(encoding="utf-8")
        assert "pipefail" in text or "lib.sh" in text, f"{script}: runs without pipefail"
        for number, line in enumerate(text.splitlines(), 1):
            code = line.split(" #", 1)[0]
            if not code.lstrip().startswith("#") and EARLY_READER.search(code):
                found.append(f"{script.relative_to(repo_root)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_giving_back_the_go_caches_succeeds_when_nothing_was_built(
    repo_root: Path, tmp_path: Path
) -> None:
    """A warm run builds nothing, so it finds no Go cache to give back: that is no error (the
    first version failed every warm `make test` there: `du` of a missing folder in a pipe)."""
    script = repo_root / "scripts" / "toolchain" / "drop-go-caches.sh"
    env = {**os.environ, "KAFKASTACK_CACHE": str(tmp_path)}
    nothing = subprocess.run([script], env=env, capture_output=True, text=True, check=False)
    assert nothing.returncode == 0, nothing.stderr
    assert "gave back Go's build and module caches (0 MiB)" in nothing.stderr
    build_cache = tmp_path / "build" / "go-build" / "ab"
    build_cache.mkdir(parents=True)
    (build_cache / "object").write_bytes(b"\0" * 3 * 1024 * 1024)
    given = subprocess.run([script], env=env, capture_output=True, text=True, check=False)
    assert given.returncode == 0, given.stderr
    size = re.search(r"caches \((\d+) MiB\)", given.stderr)
    assert size and int(size[1]) >= 3, given.stderr  # du counts whole blocks
    assert not (tmp_path / "build" / "go-build").exists()
