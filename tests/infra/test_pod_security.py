"""Every pod of every stack passes Pod Security "restricted", as its namespace enforces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra import render
from infra.config import load_stack
from infra.model import labels
from infra.stack_config import StackConfig
from tests.infra.conftest import OPENSHIFT, config_of
from tests.infra.restricted_profile import pod_specs, violations

STACKS = ["local", "dev", "staging", "prod"]


def pods(config: StackConfig) -> dict[str, dict[str, Any]]:
    """Pod specs of every rendered workload, by workload name."""
    return {
        name: spec
        for (kind, name), manifest in render.manifests(config).items()
        for spec in pod_specs(manifest)
    }


def component(spec_owner: str, config: StackConfig) -> str:
    return spec_owner.removeprefix(f"{config.cluster_name}-").split("-")[0]


@pytest.mark.parametrize("stack", STACKS)
def test_every_pod_of_every_stack_passes_the_restricted_profile(
    repo_root: Path, stack: str
) -> None:
    config = load_stack(repo_root / "stacks", stack)
    rendered = pods(config)
    # Every broker and quorum node, and HAProxy when the stack has it.
    assert len(rendered) >= config.broker_count + (0 if config.quorum.combined else 3)
    for name, spec in rendered.items():
        assert violations(spec) == [], name


@pytest.mark.parametrize("stack", STACKS)
def test_the_namespace_enforces_restricted(repo_root: Path, stack: str) -> None:
    config = load_stack(repo_root / "stacks", stack)
    namespace = render.manifests(config)[("Namespace", config.namespace)]
    for mode in ("enforce", "audit", "warn"):
        assert namespace["metadata"]["labels"][f"pod-security.kubernetes.io/{mode}"] == "restricted"


def test_the_profile_check_finds_what_restricted_forbids() -> None:
    bare = {"containers": [{"name": "kafka", "image": "apache/kafka:4.3.1"}]}
    assert violations(bare) == [
        "containers[kafka]: allowPrivilegeEscalation is not false",
        "containers[kafka]: runAsNonRoot is not true (pod or container)",
        "containers[kafka]: seccompProfile not RuntimeDefault or Localhost",
        "containers[kafka]: does not drop ALL capabilities",
    ]
    unsafe = {
        "hostNetwork": True,
        "securityContext": {"runAsUser": 0, "sysctls": [{"name": "kernel.msgmax", "value": "1"}]},
        "volumes": [{"name": "host", "hostPath": {"path": "/"}}],
        "containers": [
            {
                "name": "c",
                "ports": [{"containerPort": 80, "hostPort": 80}],
                "securityContext": {
                    "privileged": True,
                    "capabilities": {"add": ["SYS_ADMIN"], "drop": ["ALL"]},
                    "allowPrivilegeEscalation": False,
                    "runAsNonRoot": True,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
            }
        ],
    }
    assert set(violations(unsafe)) == {
        "hostNetwork",
        "hostPath volume host",
        "sysctl kernel.msgmax",
        "containers[c]: privileged",
        "containers[c]: adds capability SYS_ADMIN",
        "containers[c]: hostPort",
        "volume host: ['hostPath']",
        "pod: runAsUser 0",
        "containers[c]: adds a capability other than NET_BIND_SERVICE",
    }


def test_kafka_pods_run_as_the_images_user_and_own_their_volumes_through_fs_group() -> None:
    config = config_of("staging", images={"kafka": {"user": 1001, "group": 1002}})
    kafka_pods = 0
    for name, spec in pods(config).items():
        context = spec["securityContext"]
        if component(name, config) in (labels.BROKER, labels.CONTROLLER):
            assert (context["runAsUser"], context["runAsGroup"]) == (1001, 1002), name
            assert context["fsGroup"] == 1002
            kafka_pods += 1
        assert context["runAsNonRoot"] is True
        assert context["fsGroupChangePolicy"] == "OnRootMismatch"
    assert kafka_pods == config.broker_count + config.quorum_nodes


def test_openshift_leaves_the_ids_to_its_security_context_constraints() -> None:
    config = config_of("staging", **OPENSHIFT, external={"mode": "route"})
    rendered = pods(config)
    assert rendered
    for name, spec in rendered.items():
        assert violations(spec) == [], name
        context = spec["securityContext"]
        assert not {"runAsUser", "runAsGroup", "fsGroup"} & set(context), name
        assert context["runAsNonRoot"] is True


def test_kafkas_script_logs_go_to_a_volume_any_uid_can_write() -> None:
    """kafka-run-class.sh writes the GC log into `LOG_DIR` (default /opt/kafka/logs, the image
    user's): under OpenShift's assigned uid the JVM would not start."""
    config = config_of("staging", **OPENSHIFT, external={"mode": "route"})
    checked = 0
    for spec in pods(config).values():
        kafka = next((c for c in spec["containers"] if c["name"] == "kafka"), None)
        if kafka is None:
            continue
        log_dir = next(e["value"] for e in kafka["env"] if e["name"] == "LOG_DIR")
        mount = next(m for m in kafka["volumeMounts"] if m["mountPath"] == log_dir)
        volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
        assert volume == {"name": mount["name"], "emptyDir": {}}
        checked += 1
    assert checked == config.broker_count + config.quorum_nodes
