"""Fast StorageClasses per platform profile, and the volume claims of each workload."""

from __future__ import annotations

from typing import Any

from infra.model.cluster import ClusterModel

DEFAULT_PROVISIONERS = {
    "aws": "ebs.csi.aws.com",
    "gcp": "pd.csi.storage.gke.io",
    "azure": "disk.csi.azure.com",
    "openshift": "ebs.csi.aws.com",
    "local": "kubernetes.io/no-provisioner",
}


# One StorageClass per role: broker data, and quorum (controller or ZooKeeper) volumes.
ROLES = ("broker", "quorum")


def storage_class_names(model: ClusterModel) -> dict[str, str]:
    """role → StorageClass name; stable, since claims refer to it and a rename replaces it."""
    return {role: model.names.storage_class(role) for role in ROLES}


def _parameters(model: ClusterModel) -> dict[str, str]:
    c = model.config
    sized = c.sizing.cluster.storage_class
    volume_type = c.storage.type or sized.type
    provisioner = provisioner_of(model)
    if provisioner == "ebs.csi.aws.com":
        params = {"type": volume_type, "encrypted": "true", "iops": str(sized.iops)}
        if volume_type == "gp3":
            params["throughput"] = str(int(sized.throughput_mb_s / 1.048576))  # MiB/s
        return params
    if provisioner == "pd.csi.storage.gke.io":
        if volume_type.startswith("hyperdisk"):
            return {
                "type": volume_type,
                "provisioned-iops-on-create": str(sized.iops),
                "provisioned-throughput-on-create": f"{int(sized.throughput_mb_s)}Mi",
            }
        return {"type": "pd-ssd"}
    if provisioner == "disk.csi.azure.com":
        return {
            "skuName": "PremiumV2_LRS",
            "DiskIOPSReadWrite": str(sized.iops),
            "DiskMBpsReadWrite": str(int(sized.throughput_mb_s)),
        }
    return {}


def provisioner_of(model: ClusterModel) -> str:
    return model.config.storage.provisioner or DEFAULT_PROVISIONERS[model.config.platform]


def storage_class(model: ClusterModel, role: str) -> dict[str, Any]:
    """Always WaitForFirstConsumer (the volume follows the pod's zone), expandable, retained."""
    parameters = _parameters(model)
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
    return {
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class_name,
            "resources": {"requests": {"storage": f"{int(size_gib)}Gi"}},
        },
    }
