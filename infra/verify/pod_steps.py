"""What a pod does beside its node's process, as the kubelet does it, for a node of a started
stack: its other containers (a KRaft voter's `quorum-membership`) start beside the process, as
rendered, in the same network and mount namespaces; its probes and `kubectl exec` run there too.

A process restart (`ProcessCluster.start_node`) is a container restart: the init containers do
not run again.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra.verify import pods
from infra.verify.errors import VerifyError

if TYPE_CHECKING:
    from infra.verify.processes import Node


KUBELET_PROBE_TIMEOUT = 1  # seconds, when a probe sets no timeoutSeconds
SETUP_ALLOWANCE_SECONDS = 5


class PodSteps:
    """A mixin of ProcessCluster: what it reads of the started cluster is declared here."""

    render_dir: Path
    secrets: dict[tuple[str, str], str]
    nodes: list[Node]

    def node(self, name: str) -> Node:
        raise NotImplementedError

    def start_node(self, name: str, wait: bool = True) -> None:
        raise NotImplementedError

    def stop_node(self, name: str, sig: int = signal.SIGTERM) -> None:
        raise NotImplementedError

    def _pod(self, node: Node) -> dict[str, Any]:
        raise NotImplementedError

    def _mount_script(self, node: Node, command: str, host_network: bool = False) -> str:
        raise NotImplementedError

    def _run_init_containers(self, node: Node) -> None:
        raise NotImplementedError

    def _start_sidecars(self, node: Node) -> None:
        for container in pods.sidecars(self._pod(node)):
            command = f"sh -c {shlex.quote(pods.command(container))}"
            with (node.workdir / f"{container['name']}.log").open("ab") as log:
                node.sidecars.append(
                    subprocess.Popen(
                        [
                            *("ip", "netns", "exec", node.host.namespace, "sh", "-c"),
                            self._mount_script(node, command),
                        ],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        env={**os.environ, **pods.environment(container, self.secrets)},
                    )
                )

    def _create_config_maps(self) -> None:
        """The ConfigMaps pods mount optionally, which Pulumi creates once the workloads that
        mount them are up (the voters' birth record, `after` every voter): called by `start`
        once every node has started."""
        for node in self.nodes:
            pod = self._pod(node)
            for name in pods.optional_config_maps(pod):
                pods.fill_config_map(
                    pod, node.workdir, pods.rendered(self.render_dir, "ConfigMap", name)
                )

    def ready(self, name: str, container: str) -> bool:
        return self.probe(name, container)[0]

    def probe(self, name: str, container: str) -> tuple[bool, str]:
        """The container's rendered exec readiness probe, run as the kubelet runs it: in the
        pod's namespaces, with the container's environment, cut off at its timeoutSeconds
        (plus `SETUP_ALLOWANCE_SECONDS` for the mounts the harness makes first), with all it
        started. Whether it passed, and what it printed (the kubelet's event text)."""
        spec = self._container(name, container)
        probe = spec["readinessProbe"]
        enter, env = self._in_pod(name, shlex.join(probe["exec"]["command"]), spec)
        timeout = probe.get("timeoutSeconds", KUBELET_PROBE_TIMEOUT) + SETUP_ALLOWANCE_SECONDS
        process = subprocess.Popen(
            enter,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            text=True,
            start_new_session=True,
        )
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            return False, f"{output}(timed out after {timeout} s)"
        return process.returncode == 0, output

    def pre_stop(self, name: str, output: Path, container: str = "kafka") -> subprocess.Popen[str]:
        """The container's rendered exec preStop hook, started as the kubelet starts it when the
        pod is deleted: in the pod's namespaces, with the container's environment, its output
        into `output`. The caller waits for it (the kubelet cuts it off at the pod's
        terminationGracePeriodSeconds) and stops the process after it, if it means to."""
        spec = self._container(name, container)
        command = spec["lifecycle"]["preStop"]["exec"]["command"]
        enter, env = self._in_pod(name, shlex.join(command), spec)
        with output.open("w") as sink:
            return subprocess.Popen(
                enter,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=env,
                text=True,
                start_new_session=True,
            )

    def _container(self, name: str, container: str) -> dict[str, Any]:
        return next(c for c in self._pod(self.node(name))["containers"] if c["name"] == container)

    def _in_pod(
        self, name: str, command: str, spec: dict[str, Any] | None
    ) -> tuple[list[str], dict[str, str]]:
        """The command line entering the pod's network and mount namespaces to run `command`,
        and its environment: the harness's, plus the container `spec`'s when one is given."""
        node = self.node(name)
        env = dict(os.environ)
        if spec is not None:
            env.update(pods.environment(spec, self.secrets))
        script = self._mount_script(node, command)
        return ["ip", "netns", "exec", node.host.namespace, "sh", "-c", script], env

    def exec_in(self, name: str, command: str, container: str | None = None) -> str:
        """What `kubectl exec [-c container]` does: `command` in the pod's namespaces, with its
        volumes and, when a container is named, that container's rendered environment."""
        spec = None if container is None else self._container(name, container)
        enter, env = self._in_pod(name, f"sh -c {shlex.quote(command)}", spec)
        result = subprocess.run(
            enter, capture_output=True, text=True, check=False, timeout=120, env=env
        )
        if result.returncode != 0:
            raise VerifyError(f"{name}: {command.split()[0]} failed: {result.stderr[-800:]}")
        return result.stdout
