"""`kafkastack render --engine pulumi`: the real engine and provider yield the mock's objects."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from infra.toolchain import cache_dir
from kafkastack.cli import app

pytestmark = pytest.mark.engine


def rendered(out: Path) -> dict[tuple[str, str], Any]:
    return {
        (p.parent.name, p.stem): yaml.safe_load(p.read_text())
        for p in sorted((out / "kubernetes").glob("*/*.yaml"))
    }


def as_stored(obj: dict[str, Any]) -> dict[str, Any]:
    """A Secret as the provider hands it over: `stringData` folded into base64 `data`."""
    if obj["kind"] != "Secret" or "stringData" not in obj:
        return obj
    folded = {k: v for k, v in obj.items() if k != "stringData"}
    folded["data"] = {
        k: base64.b64encode(v.encode()).decode() for k, v in obj["stringData"].items()
    }
    return folded


@pytest.mark.parametrize("stack", ["local", "dev", "prod"])
def test_the_engine_render_yields_the_same_objects_as_the_mock_render(
    tmp_path: Path, stack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The render's engine state is a throwaway: nothing of it goes into the user's home (the
    # CLI's automatic log went to ~/.pulumi/logs, 3–5 MB a command; infra/engine.py).
    monkeypatch.setenv("KAFKASTACK_CACHE", str(cache_dir()))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PULUMI_HOME", raising=False)
    for engine in ("mock", "pulumi"):
        result = CliRunner().invoke(
            app,
            ["render", "--stack", stack, "--out", str(tmp_path / engine), "--engine", engine],
        )
        assert result.exit_code == 0, result.output
    mock, real = rendered(tmp_path / "mock"), rendered(tmp_path / "pulumi")
    assert len(real) >= 30
    assert set(real) == set(mock)
    for key, obj in real.items():
        assert obj == as_stored(mock[key]), key
    # Both renders write the same config files and topology beside the objects.
    for name in ("topology.json", "config"):
        assert (tmp_path / "pulumi" / name).exists()
    assert not (tmp_path / "home").exists()
    assert (cache_dir() / "pulumi-home" / "logs").is_file()
