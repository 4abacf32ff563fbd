"""The stack's Jobs (the ACL Job), run as rendered on the client host, like an in-cluster pod.

The Job's command runs unchanged inside the client host's network namespace and a mount
namespace of its own: emptyDir volumes are fresh folders of the run, Secret volumes come from
the rendered Secrets or, for certificate Secrets, from the harness's own PEM files, and its
environment is resolved as the kubelet would.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from infra.model import labels
from infra.model.paths import KAFKA_BIN
from infra.verify import pods
from infra.verify.errors import VerifyError
from infra.verify.mounts import mount_script

if TYPE_CHECKING:
    from infra.verify.processes import ProcessCluster


def rendered_job(render_dir: Path, name: str) -> dict[str, Any]:
    """The rendered Job `name` (its name label: the Job's own name carries its content's hash,
    infra/model/admin_client.py)."""
    jobs = [
        yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted((render_dir / "kubernetes" / "Job").glob("*.yaml"))
    ]
    found = [job for job in jobs if job["metadata"]["labels"].get(labels.NAME) == name]
    if len(found) != 1:
        raise VerifyError(f"{render_dir}: {len(found)} rendered Jobs named {name}: render again")
    return dict(found[0])


def run_job(
    cluster: ProcessCluster, name: str, timeout: float = 300, render_dir: Path | None = None
) -> str:
    """Run the rendered Job `name` to completion; its output, or VerifyError when it fails.

    `render_dir`: another render of the stack (a changed config) than the one the cluster runs.
    """
    job = rendered_job(render_dir or cluster.render_dir, name)
    pod = job["spec"]["template"]["spec"]
    workdir = cluster.workdir / f"job-{name}"
    workdir.mkdir(parents=True, exist_ok=True)
    issued = {
        entry["certificate"]["secret"]: cluster.node(entry["name"]).workdir / "tls"
        for entry in (*cluster.topology["brokers"], *cluster.topology["quorum_nodes"])
    }
    if cluster.admin_tls is not None:
        issued[cluster.topology["security"]["admin_tls_secret"]] = cluster.admin_tls
    mounts = pods.secret_volumes(pod, cluster.secrets, workdir, issued)
    container = pod["containers"][0]
    paths = {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
    for volume in pod.get("volumes", []):
        if "emptyDir" in volume and volume["name"] in paths:
            folder = workdir / f"empty-{volume['name']}"
            folder.mkdir(parents=True, exist_ok=True)
            mounts.append((folder, paths[volume["name"]]))
    mounts.append((cluster.workdir / "kafka-bin", KAFKA_BIN))
    command = pods.command(container)
    namespace = cluster.client_host.namespace
    script = mount_script(mounts, workdir / "mounts", namespace, f"sh -c {shlex.quote(command)}")
    result = subprocess.run(
        ["ip", "netns", "exec", namespace, "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **pods.environment(container, cluster.secrets)},
    )
    if result.returncode != 0:
        raise VerifyError(f"Job {name} failed: {result.stdout[-1000:]}{result.stderr[-1000:]}")
    return result.stdout
