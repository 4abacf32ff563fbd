"""A local control plane (real apiserver, scheduler, controller-manager; kwok nodes in 3 zones)
and the committed `local` stack provisioned onto it by the real Pulumi engine.

One cluster serves this folder's tests (package scope: it stops before the next tier runs). The
shared deployment is only read; a test that changes a stack (growth, destroy) provisions its own
copy under its own name, namespace and state.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.config import load_stack
from infra.engine import Engine
from infra.localcluster.control_plane import LocalKubernetes
from infra.localcluster.provision import local_engine, provision
from infra.model.cluster import ClusterModel
from infra.stack_config import StackConfig


@dataclass
class Deployed:
    kube: LocalKubernetes
    engine: Engine
    stack_file: Path
    config: StackConfig
    model: ClusterModel
    pods: list[dict[str, Any]]

    def nodes(self) -> dict[str, dict[str, str]]:
        return {
            n["metadata"]["name"]: n["metadata"]["labels"]
            for n in self.kube.objects("nodes", "default")
        }


def deploy(
    kube: LocalKubernetes, stack_file: Path, engine: Engine, expect_no_changes: bool = False
) -> Deployed:
    config = load_stack(stack_file.parent, "local")
    model = ClusterModel.from_config(config)
    done = provision(kube, stack_file, config, expect_no_changes=expect_no_changes, engine=engine)
    return Deployed(kube, engine, stack_file, config, model, done.pods)


@pytest.fixture(scope="package")
def kube() -> Iterator[LocalKubernetes]:
    cluster = LocalKubernetes("kafkastack-test")
    cluster.down()
    cluster.up()
    yield cluster
    cluster.down()


@pytest.fixture(scope="package")
def deployed(kube: LocalKubernetes, repo_root: Path) -> Deployed:
    """The committed `local` stack, as `make demo` provisions it. Tests only read it."""
    return deploy(kube, repo_root / "stacks" / "Pulumi.local.yaml", local_engine(kube))


@pytest.fixture
def own_stack(repo_root: Path, tmp_path: Path) -> Path:
    """A copy of the `local` stack under a name and namespace of this test's own."""
    name = f"t{uuid.uuid4().hex[:8]}"
    document = yaml.safe_load((repo_root / "stacks" / "Pulumi.local.yaml").read_text())
    document["config"]["kafkastack:cluster_name"] = name
    document["config"]["kafkastack:namespace"] = name
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    path = stacks / "Pulumi.local.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path
