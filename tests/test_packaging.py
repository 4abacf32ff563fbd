"""A non-editable install carries what the code reads at run time: templates, CRDs, samples."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path


def test_the_wheel_carries_every_template_crd_and_sample(repo_root: Path, tmp_path: Path) -> None:
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
            str(tmp_path),
            str(repo_root),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("kafkastack-*.whl")
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
    assert "spark_sizing/samples/projections.csv" in names
    assert "infra/engine.py" in names and "kafkastack/cli.py" in names
