"""`kafkastack doctor`: every engine part, its version and origin; mismatches fail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from infra.toolchain import parts, pinned_versions
from kafkastack.cli import app


def fake_binary(bin_dir: Path, name: str, prints: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\necho '{prints}'\n")
    path.chmod(0o755)


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path))
    # Only the cache counts: nothing of the same name elsewhere on PATH.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    (tmp_path / "bin").mkdir()
    (tmp_path / "stamps").mkdir()
    return tmp_path


def test_a_cli_of_another_version_than_the_sdk_fails_with_the_expected_one(
    empty_cache: Path,
) -> None:
    fake_binary(empty_cache / "bin", "pulumi", "v3.100.0")
    (empty_cache / "stamps" / "pulumi.origin").write_text("built from the module proxy\n")
    cli = next(p for p in parts() if p.name == "pulumi")
    want = pinned_versions()["PULUMI_VERSION"].lstrip("v")
    assert (cli.version, cli.origin, cli.ok) == ("v3.100.0", "built from the module proxy", False)
    assert cli.note == f"expected {want}"
    result = CliRunner().invoke(app, ["doctor"], env={**os.environ, "COLUMNS": "250"})
    assert result.exit_code == 1
    assert f"expected {want}" in result.output


def test_missing_parts_say_how_to_get_them(empty_cache: Path) -> None:
    missing = {p.name: p for p in parts() if p.version == "missing"}
    assert {"pulumi", "pulumi-language-python", "pulumi-resource-kubernetes"} <= set(missing)
    node_parts = {"kubelet", "kube-proxy", "containerd", "coredns", "multus"}
    assert {"kubelet", "coredns", "multus"} <= set(missing)
    for part in missing.values():
        target = "nodes-toolchain" if part.name in node_parts else "toolchain"
        assert not part.ok and f"make {target}`" in part.note, part


def test_the_sdk_packages_match_the_pinned_engine() -> None:
    pins = pinned_versions()
    sdk = {p.name: p for p in parts() if p.name.startswith("python: ")}
    assert sdk["python: pulumi"].version == pins["PULUMI_VERSION"].lstrip("v")
    assert sdk["python: pulumi-kubernetes"].version == pins["PULUMI_KUBERNETES_VERSION"].lstrip("v")
    assert all(p.ok for p in sdk.values())
