"""The installers' shell scripts run under `set -o pipefail`: a pipe into a reader that stops
early (`head`, `grep -q`, `grep -m`) can kill the writer with SIGPIPE, and the whole set-up then
fails at random (exit 141: `busybox | head -1` failed a CI run's image build). Capture the
output first, or read all of it (`sed -n 1p`)."""

from __future__ import annotations

import os
import re
import struct
import subprocess
from pathlib import Path

import pytest

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


def go_command_line(repo_root: Path, tmp_path: Path, call: str, **env: str) -> list[str]:
    """The `go` command line lib.sh's `call` (gobuild/goinstall …) runs, through a stand-in
    `go` that prints its arguments one per line (only the flag composition is under test)."""
    fake = tmp_path / "fake-bin"
    fake.mkdir(exist_ok=True)
    (fake / "go").write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    (fake / "go").chmod(0o755)
    lib = repo_root / "scripts" / "toolchain" / "lib.sh"
    ran = subprocess.run(
        ["bash", "-c", f'source "{lib}" && {call}'],
        env={
            **os.environ,
            "PATH": f"{fake}:{os.environ['PATH']}",
            "KAFKASTACK_CACHE": str(tmp_path / "cache"),
            **env,
        },
        capture_output=True,
        text=True,
        check=True,
    )
    return ran.stdout.splitlines()


def test_parts_are_built_without_debug_information_keeping_the_callers_version_stamps(
    repo_root: Path, tmp_path: Path
) -> None:
    built = go_command_line(repo_root, tmp_path, 'gobuild -ldflags "-X v.V=1" -o out ./cmd/x')
    assert built == [
        "build", "-trimpath", "-gcflags=all=-dwarf=false", "-ldflags", "-s -w -X v.V=1",
        "-o", "out", "./cmd/x",
    ]  # fmt: skip
    installed = go_command_line(repo_root, tmp_path, "goinstall -ldflags=-X=v.V=2 a@v1 b@v1")
    assert installed == [
        "install", "-trimpath", "-gcflags=all=-dwarf=false", "-ldflags", "-s -w -X=v.V=2",
        "a@v1", "b@v1",
    ]  # fmt: skip
    plain = go_command_line(repo_root, tmp_path, "gobuild -tags a,b -o out .")
    assert plain[:4] == ["build", "-trimpath", "-gcflags=all=-dwarf=false", "-ldflags"]
    assert plain[4:] == ["-s -w", "-tags", "a,b", "-o", "out", "."]


def test_kafkastack_go_debug_keeps_the_debug_information(repo_root: Path, tmp_path: Path) -> None:
    call = 'gobuild -ldflags "-X v.V=1" -o out .'
    debug = go_command_line(repo_root, tmp_path, call, KAFKASTACK_GO_DEBUG="1")
    assert debug == ["build", "-trimpath", "-ldflags", "-X v.V=1", "-o", "out", "."]
    bare = go_command_line(repo_root, tmp_path, "gobuild -o out .", KAFKASTACK_GO_DEBUG="1")
    assert bare == ["build", "-trimpath", "-o", "out", "."]


def elf_section_names(binary: Path) -> set[str]:
    """The section names of a little-endian ELF64 file (what `readelf -S` lists)."""
    data = binary.read_bytes()
    (table,) = struct.unpack_from("<Q", data, 0x28)  # e_shoff
    entry, count, names_index = struct.unpack_from("<HHH", data, 0x3A)

    def section(i: int) -> tuple[int, int, int]:
        """(name offset, file offset, size) of section i."""
        name, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", data, table + i * entry)
        return name, offset, size

    _, offset, size = section(names_index)
    names = data[offset : offset + size]
    return {names[n : names.index(b"\0", n)].decode() for n, _, _ in map(section, range(count))}


@pytest.mark.toolchain
def test_a_part_built_without_debug_information_still_names_where_it_panicked(
    repo_root: Path, tmp_path: Path
) -> None:
    """Through the real `go`: the binary carries no DWARF section, and a panic's stack trace
    (what a crashed kubelet or provider leaves in its log) still names the function and line."""
    module = tmp_path / "module"
    module.mkdir()
    (module / "go.mod").write_text("module example.local/crash\n\ngo 1.22\n")
    (module / "main.go").write_text(
        'package main\n\nfunc crash() { panic("crashed") }\n\nfunc main() { crash() }\n'
    )
    lib = repo_root / "scripts" / "toolchain" / "lib.sh"
    binary = tmp_path / "crash"
    # Go's own build cache of the machine (the standard library compiled once), not the parts'.
    build = (
        f'source "{lib}" && export GOCACHE="$(env -u GOCACHE GOFLAGS= go env GOCACHE)" '
        f'&& gobuild -o "{binary}" .'
    )
    env = {**os.environ, "KAFKASTACK_CACHE": str(tmp_path / "cache")}
    env.pop("GOCACHE", None)
    subprocess.run(["bash", "-c", build], cwd=module, env=env, check=True, timeout=600)
    sections = elf_section_names(binary)
    assert ".text" in sections and ".debug_info" not in sections, sections
    crashed = subprocess.run([binary], capture_output=True, text=True, check=False)
    assert crashed.returncode == 2, crashed
    assert "main.crash(" in crashed.stderr and "main.go:3" in crashed.stderr, crashed.stderr


def test_kafkas_class_archive_shows_why_keytool_failed(repo_root: Path, tmp_path: Path) -> None:
    """The recording's TLS listener needs a keystore from the JRE's keytool. Its output went to
    /dev/null, so a failing keytool showed only the broker dying later on a missing keystore."""
    version = tmp_path / "kafka" / "4.3.1"
    (version / "lib").mkdir(parents=True)
    (version / ".complete").write_text("jars\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    keytool = bin_dir / "keytool"
    said = "keytool error: java.io.IOException: disk full"
    keytool.write_text(f"#!/bin/sh\necho '{said}' >&2\nexit 1\n")
    keytool.chmod(0o755)
    env = {
        **os.environ,
        "KAFKASTACK_CACHE": str(tmp_path),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
    }
    script = repo_root / "scripts" / "kafka" / "class-archive.sh"
    failed = subprocess.run(
        [script, "4.3.1"], env=env, capture_output=True, text=True, check=False, timeout=120
    )
    assert failed.returncode != 0, failed.stderr
    assert "keytool -genkeypair failed" in failed.stderr, failed.stderr
    assert said in failed.stderr, failed.stderr
