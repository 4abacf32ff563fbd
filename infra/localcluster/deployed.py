"""The real-node variant of the local stack, deployed once and kept for the proofs run against it.

`pulumi up` of the variant (real_stack.py) through the real engine, with its own state folder,
and a client pod (client_pod.py) to run Kafka's tools in. `ensure()` deploys again from scratch
when the nodes under it were replaced since (a test that restarts the real nodes drops their
volumes and pods), so callers never depend on what ran before them; `change()` rewrites a
setting of the variant and runs `pulumi up` again, which is how a day-2 change reaches it.
"""

from __future__ import annotations

import copy
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from infra.config import load_stack
from infra.config_base import NAMESPACE
from infra.engine import Engine, Preview
from infra.localcluster import loop_provisioner
from infra.localcluster.api_reads import api_time
from infra.localcluster.control_plane import LocalClusterError
from infra.localcluster.host_clients import HostAdmin
from infra.localcluster.node_config import replication_bridge
from infra.localcluster.nodes import RealNodes
from infra.localcluster.pod_client import PodClient
from infra.localcluster.provision import Provisioned, local_engine, provision
from infra.localcluster.real_stack import Quorum, write_real_node_stack
from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.model.storage import storage_class_names
from infra.stack_config import StackConfig

CLIENT_POD = "kafkastack-proof-client"


def pod_ready(pod: dict[str, Any]) -> bool:
    conditions = pod.get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


class DeployedStack:
    """The variant on `nodes`, written from `source` (the committed local stack file) into
    `workdir` (stack file and engine state), with the `quorum` real_stack.py writes."""

    def __init__(
        self,
        nodes: RealNodes,
        source: Path,
        workdir: Path,
        quorum: Quorum = "combined",
        second_network: bool = False,
    ) -> None:
        self.nodes = nodes
        self.quorum = quorum
        if second_network and not nodes.multus:
            raise LocalClusterError("a second network needs real nodes that run Multus")
        # `network.mode: dual` on the nodes' replication bridge.
        self.replication_bridge = replication_bridge(nodes.kube.name) if second_network else None
        self.kube = nodes.kube
        self.source = source
        self.workdir = workdir
        self.stack_file = workdir / "stacks" / "Pulumi.local.yaml"
        self._deployed_on: list[str] = []
        # Whether the cluster may hold anything of this deployment (from the first `pulumi up`
        # on, successful or not, until a release): a second release finds nothing to free.
        self._holding = False
        self.deploy_seconds = 0.0
        self.provisioned: Provisioned | None = None
        self.config: StackConfig | None = None
        self._client: PodClient | None = None

    @property
    def model(self) -> ClusterModel:
        assert self.config is not None, "deploy first (ensure())"
        return ClusterModel.from_config(self.config)

    @property
    def namespace(self) -> str:
        return self.model.config.namespace

    def _node_uids(self) -> list[str]:
        reply = self.kube.kubectl(
            "get",
            "nodes",
            "-l",
            "kafkastack.io/node=real",
            "-o",
            "jsonpath={.items[*].metadata.uid}",
        )
        return sorted(reply.stdout.split())

    def ensure(self) -> DeployedStack:
        """Deployed on the nodes running now, every pod Ready, with a client pod."""
        if not self._deployed_on or self._deployed_on != self._node_uids():
            self._deploy()
        self.wait_ready()
        return self

    def release(self) -> None:
        """Remove the deployment (namespace and volumes) so another stack may use the nodes; the
        next `ensure()` deploys it again from scratch."""
        if self.config is not None and self._holding:
            self.kube.release_stack(self.namespace, list(storage_class_names(self.model).values()))
        loop_provisioner.stop_provisioning(self.kube.name)
        self._deployed_on = []
        self._holding = False
        self._drop_client()

    def _deploy(self) -> None:
        self._drop_client()  # of the deployment this one replaces, before its folder goes
        if self.config is not None and self._holding:  # an earlier one, on nodes that are gone
            self.kube.release_stack(self.namespace, list(storage_class_names(self.model).values()))
        shutil.rmtree(self.workdir, ignore_errors=True)
        write_real_node_stack(
            self.source, self.stack_file, self.replication_bridge, quorum=self.quorum
        )
        self.config = load_stack(self.stack_file.parent, "local")
        started = time.monotonic()
        self._holding = True
        self.provisioned = self._up()
        self.deploy_seconds = time.monotonic() - started
        self._deployed_on = self._node_uids()

    def _engine(self) -> Engine:
        """The real engine with this deployment's own state folder."""
        return local_engine(self.kube, self.workdir / "state")

    def _up(self) -> Provisioned:
        assert self.config is not None
        return provision(self.kube, self.stack_file, self.config, engine=self._engine())

    def change(self, values_edit: Callable[[dict[str, Any]], None]) -> Provisioned:
        """Apply `values_edit` to the variant's `kafkastack:` values and `pulumi up` the result."""
        self.edit(values_edit)
        return self._up()

    def preview(self) -> Preview:
        """`pulumi preview` of the stack file as it is now (what a pull request runs)."""
        assert self.config is not None, "deploy first (ensure())"
        engine = self._engine()
        engine.select(self.config.environment, self.stack_file)
        return engine.preview(self.config.environment)

    def edit(self, values_edit: Callable[[dict[str, Any]], None]) -> None:
        """Apply `values_edit` to the variant's `kafkastack:` values in its stack file, as a user
        edits theirs; nothing reaches the cluster until `change` (or a `pulumi up`). Until then
        `config` and `model` describe the edited file, not what runs."""
        document = yaml.safe_load(self.stack_file.read_text(encoding="utf-8"))
        prefix = f"{NAMESPACE}:"
        values = {
            k.removeprefix(prefix): copy.deepcopy(v)
            for k, v in document["config"].items()
            if k.startswith(prefix)
        }
        values_edit(values)
        document["config"].update({f"{prefix}{k}": v for k, v in values.items()})
        self.stack_file.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        self.config = load_stack(self.stack_file.parent, "local")

    def pods(self, component: str | None = None) -> list[dict[str, Any]]:
        """The stack's serving pods (a Job's pods, which run to completion, are `job_pods`)."""
        pods = self.kube.objects("pods", self.namespace)
        ours = [p for p in pods if labels.component_of(p) and not _of_a_job(p)]
        if component is None:
            return ours
        return [p for p in ours if labels.component_of(p) == component]

    def events(self, reason: str, since: float = 0.0) -> list[str]:
        """The stack namespace's events of this `reason` (the kubelet's `FailedPreStopHook`,
        say) last seen at or after `since` (epoch seconds), each as `object: message`."""
        found = []
        for event in self.kube.objects("events", self.namespace):
            seen = event.get("lastTimestamp") or event["metadata"]["creationTimestamp"]
            if event.get("reason") == reason and api_time(seen) >= int(since):
                found.append(f"{event['involvedObject'].get('name')}: {event.get('message', '')}")
        return found

    def job_pods(self) -> list[dict[str, Any]]:
        return [p for p in self.kube.objects("pods", self.namespace) if _of_a_job(p)]

    def wait_ready(self, timeout: float = 300) -> None:
        """Until the stack's every pod exists and is Ready (through its own probes)."""
        deadline = time.monotonic() + timeout
        expected = self.model.pod_count
        while True:
            pods = self.pods()
            if len(pods) >= expected and all(pod_ready(p) for p in pods):
                return
            if time.monotonic() > deadline:
                states = {p["metadata"]["name"]: p.get("status", {}).get("phase") for p in pods}
                raise AssertionError(f"stack pods not Ready after {timeout}s: {states}")
            time.sleep(1)

    def broker_pod(self, node_id: int) -> str:
        """The pod of the broker with this node id."""
        model = self.model
        for broker in model.brokers:
            if broker.node_id == node_id:
                return model.names.pod(broker.workload)
        raise KeyError(f"no broker with node id {node_id}")

    def client(self) -> PodClient:
        """The client pod, started on first use (on the first real node), with the stack's
        admin on this host for the proofs' questions."""
        if self._client is None:
            admin = HostAdmin(self.kube, self.model, self.workdir / "host-admin")
            client = PodClient(self.kube, self.model, CLIENT_POD, admin)
            client.delete()
            self.kube.kubectl(
                "wait", "--for=delete", f"pod/{CLIENT_POD}", "-n", self.namespace,
                "--timeout=60s", check=False,
            )  # fmt: skip
            client.start(node=self.nodes.specs[0].name)
            self._client = client
        return self._client

    def _drop_client(self) -> None:
        """Forget the client of a deployment that is gone, ending its admin process."""
        if self._client is not None:
            self._client.admin.close()
        self._client = None


def _of_a_job(pod: dict[str, Any]) -> bool:
    return any(o.get("kind") == "Job" for o in pod["metadata"].get("ownerReferences", []))
