"""The harness's in-pod paths: covered by overlays in the process's own mount namespace."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from infra.verify.errors import VerifyError
from infra.verify.mounts import mount_script, overlaid_directory, overlays


def test_a_path_the_host_lacks_is_covered_at_its_nearest_existing_parent(tmp_path: Path) -> None:
    missing = tmp_path / "etc" / "kafka" / "config"
    assert overlaid_directory(str(missing)) == PurePosixPath(tmp_path)


def test_a_path_with_no_parent_but_root_is_refused() -> None:
    with pytest.raises(VerifyError, match="no parent directory on this host but /"):
        overlaid_directory("/kafkastack-no-such-top-level/conf")


def test_nested_covers_collapse_into_the_outer_one(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    targets = [str(tmp_path / "a" / "x"), str(tmp_path / "a" / "b" / "y")]
    assert overlays(targets) == [PurePosixPath(tmp_path / "a")]


def test_the_script_makes_mount_points_only_after_covering_their_parent(tmp_path: Path) -> None:
    base = tmp_path / "host"
    base.mkdir()
    source = tmp_path / "run" / "config"
    target = str(base / "kafka" / "config")
    script = mount_script([(source, target)], tmp_path / "run" / "mounts", "ns", "true")
    lines = script.splitlines()
    overlay = next(i for i, line in enumerate(lines) if "mount -t overlay" in line)
    make = next(i for i, line in enumerate(lines) if line == f"mkdir -p {target}")
    assert f"lowerdir={base}," in lines[overlay] and lines[overlay].endswith(str(base))
    assert overlay < make
    assert lines[-1] == "exec true"


def test_a_run_folder_under_a_covered_directory_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "run" / "data"
    target = str(tmp_path / "pod" / "data")  # its nearest parent is tmp_path itself
    with pytest.raises(VerifyError, match="use a run folder elsewhere"):
        mount_script([(source, target)], tmp_path / "scratch", "ns", "true")
