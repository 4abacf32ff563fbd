"""A failed nodes-tier proof reports how the nodes were: free disk, conditions out of order,
and what each kubelet said about evictions and images."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from infra.localcluster.control_plane import LocalKubernetes
from infra.localcluster.node_health import LINES_PER_NODE, diagnosis
from infra.localcluster.nodes import RealNodes


class StandInKube:
    """Answers `kubectl get nodes -o json` as the API server would."""

    def __init__(self, answer: subprocess.CompletedProcess[str]) -> None:
        self.answer = answer

    def kubectl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.answer


def node(name: str, **conditions: str) -> dict[str, Any]:
    listed = [{"type": t, "status": s} for t, s in conditions.items()]
    return {"metadata": {"name": name}, "status": {"conditions": listed}}


def test_the_report_names_pressure_and_the_kubelets_telling_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAFKASTACK_CACHE", str(tmp_path))
    nodes = RealNodes(LocalKubernetes("unit"), count=3)
    first, second, third = nodes.specs
    items = [
        node(first.name, Ready="True", DiskPressure="False", MemoryPressure="False"),
        node(second.name, Ready="False", DiskPressure="True", MemoryPressure="False"),
    ]
    answer = subprocess.CompletedProcess([], 0, json.dumps({"items": items}), "")
    monkeypatch.setattr(nodes, "kube", StandInKube(answer))
    second.dir.mkdir(parents=True)
    said = [f'I1127 eviction_manager.go:375] "Eviction manager: attempting to reclaim" n={i}'
            for i in range(LINES_PER_NODE + 2)]  # fmt: skip
    (second.dir / "kubelet.log").write_text(
        "\n".join(
            ["I1127 kubelet.go:1] unrelated", *said, 'I1127 image_gc_manager.go:1] "removing"']
        )
    )
    report = diagnosis(nodes).splitlines()
    assert report[0].startswith(f"free disk under {nodes.folder}: ")
    assert f"{first.name}: Ready, no pressure" in report
    assert f"{second.name}: Ready=False, DiskPressure=True" in report
    assert f"{third.name}: no Node object" in report
    kept = [line.strip() for line in report if line.startswith("  ")]
    assert len(kept) == LINES_PER_NODE and "removing" in kept[-1] and "unrelated" not in kept[0]
    assert kept[0] == said[3]
