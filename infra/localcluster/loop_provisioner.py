"""The provisioner of loop volumes (loop_volumes.py): a thread beside `pulumi up` that answers
each claim of a loop StorageClass, once the scheduler has placed its pod, with a volume of
exactly its size on that node, as a cloud's external provisioner does."""

from __future__ import annotations

import json
import threading

from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.local_volumes import VOLUME_NODE_LABEL, real_node_volumes
from infra.localcluster.loop_volumes import SELECTED_NODE, loop_classes, volume_for, waiting_claims

POLL_SECONDS = 1.0
MAX_ERRORS = 20


class LoopProvisioner:
    """Answers the cluster's waiting loop claims every `POLL_SECONDS` until stopped. A failed
    round is kept (`errors`) and tried again: a claim nobody answers keeps its pod Pending, and
    the deployment's wait for its pods reports the latest errors with it (provision.py)."""

    def __init__(self, kube: LocalKubernetes) -> None:
        self.kube = kube
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def provision_once(self) -> list[str]:
        """Create a volume for each waiting claim; the names of those created."""
        listed = self.kube.kubectl("get", "storageclasses", "-o", "json")
        classes = loop_classes(json.loads(listed.stdout)["items"])
        if not classes:
            return []
        listed = self.kube.kubectl("get", "pvc", "--all-namespaces", "-o", "json")
        folders = real_node_volumes(self.kube.workdir / "nodes")
        created = []
        for claim in waiting_claims(json.loads(listed.stdout)["items"], classes):
            node = claim["metadata"]["annotations"][SELECTED_NODE]
            if node not in folders:
                self._note(f"claim {claim['metadata']['name']}: {node} is no real node")
                continue
            reclaim = classes[claim["spec"]["storageClassName"]]
            volume = volume_for(claim, reclaim, folders[node], {VOLUME_NODE_LABEL: node})
            reply = self.kube.kubectl("create", "-f", "-", stdin=json.dumps(volume), check=False)
            if reply.returncode == 0:
                created.append(volume["metadata"]["name"])
            elif "AlreadyExists" not in reply.stderr:
                self._note(reply.stderr.strip())
        return created

    def _note(self, error: str) -> None:
        """Keep the latest errors only: a round that keeps failing repeats itself."""
        self.errors = [*self.errors[-(MAX_ERRORS - 1) :], error]

    def _run(self) -> None:
        # A cluster taken down under it ends it too.
        while not self._stop.wait(POLL_SECONDS) and self.kube.kubeconfig.is_file():
            try:
                self.provision_once()
            except (LocalClusterError, OSError, ValueError, KeyError) as err:
                self._note(str(err))

    def start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="loop-provisioner", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None


_RUNNING: dict[str, LoopProvisioner] = {}


def provisioning(kube: LocalKubernetes) -> LoopProvisioner:
    """The running provisioner of this cluster (one per cluster in this process), started."""
    provisioner = _RUNNING.setdefault(kube.name, LoopProvisioner(kube))
    provisioner.start()
    return provisioner


def stop_provisioning(cluster: str) -> None:
    provisioner = _RUNNING.pop(cluster, None)
    if provisioner is not None:
        provisioner.stop()
