"""The loop volumes' FlexVolume driver, called as the kubelet calls it (the protocol's commands
and JSON, its output read as one stream), on this machine's loop devices: a first mount makes
the filesystem, the node's expansion grows the file and the mounted filesystem with the data in
place, an unmount gives the loop device back. Needs root."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from infra.localcluster import loop_volumes

pytestmark = pytest.mark.nodes
MIB = 2**20


def call(*args: str) -> tuple[int, dict[str, Any]]:
    """The driver's exit code and answer, its output read as the kubelet reads it: stdout and
    stderr as one (a tool's progress line there broke every node expansion)."""
    done = subprocess.run(
        [str(loop_volumes.DRIVER_SCRIPT), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    return done.returncode, json.loads(done.stdout)


def size_of(mounted: Path) -> int:
    stat = os.statvfs(mounted)
    return stat.f_blocks * stat.f_frsize


def loop_devices(file: Path) -> str:
    return subprocess.run(
        ["losetup", "--associated", str(file), "--noheadings", "--output", "NAME"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_a_volume_is_made_at_first_mount_and_grows_online_with_its_data(tmp_path: Path) -> None:
    file, mounted = tmp_path / "volumes" / "loop" / "pvc-1.img", tmp_path / "pod" / "data"
    spec = json.dumps({"file": str(file), "size": str(512 * MIB), "kubernetes.io/fsType": "xfs"})
    assert call("init") == (0, {"status": "Success", "capabilities": {"attach": False}})
    assert call("mount", str(mounted), spec)[1]["status"] == "Success"
    try:
        before = size_of(mounted)
        assert 400 * MIB < before <= 512 * MIB
        (mounted / "segment").write_bytes(b"k" * MIB)
        # The kubelet's node expansion, while mounted and in use: the disk (file), then the
        # filesystem.
        grown = call("expandfs", spec, "", "", str(1024 * MIB), str(512 * MIB))
        assert grown[1]["status"] == "Success", grown
        assert file.stat().st_size == 1024 * MIB
        assert size_of(mounted) > before + 400 * MIB
        assert (mounted / "segment").read_bytes() == b"k" * MIB
        # Asked again (the kubelet retries), nothing changes and nothing fails.
        assert call("expandfs", spec, "", "", str(1024 * MIB), str(512 * MIB))[0] == 0
    finally:
        unmounted = call("unmount", str(mounted))
    assert unmounted[1]["status"] == "Success"
    assert not os.path.ismount(mounted)
    # The loop device goes with the mount: the kernel detaches it once its last user closed
    # it, asynchronously (a full run once still saw /dev/loop0 right after the unmount).
    deadline = time.monotonic() + 30
    while (devices := loop_devices(file)) != "":
        assert time.monotonic() < deadline, f"{file} still on {devices} 30 s after its unmount"
        time.sleep(0.1)
    # Mounted again, the filesystem is the grown one with its data.
    assert call("mount", str(mounted), spec)[1]["status"] == "Success"
    try:
        assert size_of(mounted) > before + 400 * MIB
        assert (mounted / "segment").read_bytes() == b"k" * MIB
    finally:
        call("unmount", str(mounted))


def test_bad_calls_answer_failure_or_not_supported_naming_why(tmp_path: Path) -> None:
    code, answer = call("mount", str(tmp_path / "m"), "{}")
    assert code != 0 and answer["status"] == "Failure" and "lack file or size" in answer["message"]
    spec = json.dumps({"file": str(tmp_path / "never-mounted.img"), "size": str(512 * MIB)})
    code, answer = call("expandfs", spec, "", "", str(1024 * MIB), str(512 * MIB))
    assert code != 0 and "is not mounted" in answer["message"]
    # Any other call (attach, or the controller's expandvolume, which Kubernetes does not make
    # for FlexVolumes) is not supported: the caller then does its default.
    for command in ("attach", "expandvolume"):
        code, answer = call(command, spec, "node")
        assert answer == {"status": "Not supported", "message": command}
