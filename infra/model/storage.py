"""Fast StorageClasses per platform profile, and the volume claims of each workload.

What each class provisions comes from infra/model/volumes.py: the sized need in the provider's
unit, rounded up, raised to the type's floors and checked against its ceilings.
"""

from __future__ import annotations

from typing import Any

from infra.model import volumes
from infra.model.cluster import ClusterModel
from spark_sizing.units import ceil_whole
from spark_sizing.volume_types import ProvisionedVolume

# One StorageClass per role: broker data, and quorum (controller or ZooKeeper) volumes.
ROLES = ("broker", "quorum")


def storage_class_names(model: ClusterModel) -> dict[str, str]:
    """role → StorageClass name; stable, since claims refer to it and a rename replaces it."""
    return {role: model.names.storage_class(role) for role in ROLES}


def _parameters(provisioner: str, volume: ProvisionedVolume | None) -> dict[str, str]:
    if volume is None:
        return {}
    name, iops, throughput = volume.type.name, volume.iops, volume.throughput
    if provisioner == "ebs.csi.aws.com":
        params = {"type": name, "encrypted": "true"}
        if iops is not None:
            params["iops"] = str(iops)
        if throughput is not None:
            params["throughput"] = str(throughput)  # MiB/s, the driver's unit
        return params
    if provisioner == "pd.csi.storage.gke.io":
        params = {"type": name}
        if iops is not None:
            params["provisioned-iops-on-create"] = str(iops)
        if throughput is not None:
            params["provisioned-throughput-on-create"] = f"{throughput}Mi"
        return params
    if provisioner == "disk.csi.azure.com":
        params = {"skuName": name}
        if iops is not None:
            params["DiskIOPSReadWrite"] = str(iops)
        if throughput is not None:
            params["DiskMBpsReadWrite"] = str(throughput)
        return params
    return {}


def provisioner_of(model: ClusterModel) -> str:
    return volumes.provisioner(model.config)


def storage_class(model: ClusterModel, role: str) -> dict[str, Any]:
    """Always WaitForFirstConsumer (the volume follows the pod's zone), expandable, retained."""
    c = model.config
    volume = volumes.data_volume(c) if role == "broker" else volumes.quorum_volume(c)
    parameters = _parameters(provisioner_of(model), volume)
    return {
        "metadata": {"name": model.names.storage_class(role)},
        "provisioner": provisioner_of(model),
        # An empty map is dropped by the API server; leaving it out keeps every diff quiet.
        **({"parameters": parameters} if parameters else {}),
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
        # A deleted claim must not take a broker's log with it.
        "reclaimPolicy": "Retain",
    }


def claim_template(name: str, storage_class_name: str, size_gib: float) -> dict[str, Any]:
    """Sizes round up: a claim never gets less than was sized."""
    return {
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class_name,
            "resources": {"requests": {"storage": f"{ceil_whole(size_gib)}Gi"}},
        },
    }
