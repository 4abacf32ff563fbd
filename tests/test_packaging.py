"""A non-editable install carries what the code reads at run time: templates, CRDs, data."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path


def test_the_wheel_carries_every_template_crd_and_sample(repo_root: Path, tmp_path: Path) -> None:
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources.
    source = tmp_path / "source"
    for name in ("pyproject.toml", "README.md", "infra", "spark_sizing", "kafkastack", "templates"):
        path = repo_root / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(path, source / name)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("kafkastack-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {
        f"kafkastack_templates/{p.relative_to(repo_root / 'templates').as_posix()}"
        for p in (repo_root / "templates").rglob("*.j2")
    }
    assert templates and templates <= names
    crds = {
        f"infra/localcluster/crds/{p.name}"
        for p in (repo_root / "infra" / "localcluster" / "crds").glob("*.yaml")
    }
    assert crds and crds <= names
    # The real nodes' volume driver, installed from the package into each kubelet's folder.
    assert "infra/localcluster/loop_volume_driver.sh" in names
    assert "spark_sizing/samples/projections.csv" in names
    # Volume-type limits and node reservations are data read at run time.
    assert {
        "spark_sizing/data/volume_types.yaml",
        "spark_sizing/data/node_reservations.yaml",
    } <= names
    assert "infra/engine.py" in names and "kafkastack/cli.py" in names
