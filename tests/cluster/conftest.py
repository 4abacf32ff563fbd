"""A local control plane (real apiserver, scheduler, controller-manager; kwok nodes in 3 zones)
with the `local` stack's rendered objects applied server-side."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from infra import render
from infra.config import load_stack
from infra.localcluster.cluster import LocalKubernetes
from infra.model.cluster import ClusterModel


@dataclass
class Deployed:
    kube: LocalKubernetes
    model: ClusterModel
    render_dir: Path
    pods: list[dict[str, Any]]

    def nodes(self) -> dict[str, dict[str, str]]:
        return {
            n["metadata"]["name"]: n["metadata"]["labels"]
            for n in self.kube.objects("nodes", "default")
        }


@pytest.fixture(scope="session")
def deployed(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    kube = LocalKubernetes("kafkastack-test")
    kube.down()
    kube.up()
    config = load_stack(repo_root / "stacks", "local")
    model = ClusterModel.from_config(config)
    out = tmp_path_factory.mktemp("render-local")
    render.write(config, out)
    kube.apply_rendered(out / "kubernetes")
    expected = len(model.brokers) + len(model.quorum) + model.haproxy_replicas
    pods = kube.wait_scheduled(config.namespace, expected)
    yield Deployed(kube, model, out, pods)
    kube.down()
