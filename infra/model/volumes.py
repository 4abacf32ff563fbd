"""The data volumes a stack provisions: provisioner, volume type, and what each volume is created
with, i.e. the sized need converted to the type's unit and checked against its documented limits
(spark_sizing/data/volume_types.yaml). Config validation and the StorageClasses both read this.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from infra.errors import ConfigError
from infra.stack_config import MAX_VOLUMES_PER_BROKER
from spark_sizing.volume_types import (
    ProvisionedVolume,
    VolumeLimitError,
    VolumeType,
    provision,
    types_of,
    volumes_needed,
)

if TYPE_CHECKING:
    from infra.stack_config import StackConfig

DEFAULT_PROVISIONERS = {
    "aws": "ebs.csi.aws.com",
    "gcp": "pd.csi.storage.gke.io",
    "azure": "disk.csi.azure.com",
    "openshift": "ebs.csi.aws.com",
    "local": "kubernetes.io/no-provisioner",
}
# The smallest broker metadata volume (the KRaft log a broker keeps beside its data).
BROKER_METADATA_GIB = 10


# The local cluster's provisioner of volumes that grow, for its real nodes only
# (infra/localcluster/loop_volumes.py): no cloud or OpenShift cluster has it.
LOCAL_LOOP_PROVISIONER = "kafkastack.io/loop"


def provisioner(c: StackConfig) -> str:
    return c.storage.provisioner or DEFAULT_PROVISIONERS[c.platform]


def volume_type(c: StackConfig) -> VolumeType | None:
    """The configured type, else the sized one when the provisioner has it, else the
    provisioner's default (a sizing done for gp3 deployed on GCP gets hyperdisk-balanced).
    None for a provisioner kafkastack knows no limits of: nothing to set, nothing to check."""
    known = {t.name: t for t in types_of(provisioner(c))}
    if not known:
        return None
    wanted = c.storage.type or c.sizing.cluster.storage_class.type
    if wanted in known:
        return known[wanted]
    if c.storage.type:
        raise ConfigError(
            f"kafkastack:storage.type: {c.storage.type!r} is not a volume type of "
            f"{provisioner(c)}; use one of {', '.join(known)} or remove it"
        )
    return next(iter(known.values()))


def per_volume_throughput_mb_s(c: StackConfig) -> float:
    """The broker's sized disk throughput spread over the volumes this stack gives it."""
    sized = c.sizing.cluster
    return sized.storage_class.throughput_mb_s * sized.data_volumes_per_broker / c.data_volumes


def data_volume(c: StackConfig) -> ProvisionedVolume | None:
    """What each broker data volume is created with; a ConfigError naming the key and the fix
    when it is outside its type's limits."""
    vt = volume_type(c)
    if vt is None:
        return None
    throughput = per_volume_throughput_mb_s(c)
    try:
        return provision(vt, c.data_volume_gib, throughput, c.sizing.cluster.storage_class.iops)
    except VolumeLimitError as err:
        raise _refusal(c, vt, err, throughput) from None


def quorum_volume(c: StackConfig) -> ProvisionedVolume | None:
    """Quorum volumes carry little: the type's floors."""
    vt = volume_type(c)
    return None if vt is None else provision(vt, c.sizing.cluster.quorum.storage_gib, 0, 0)


def broker_metadata_gib(c: StackConfig) -> int:
    """At least 10 GiB, and as large as the data class's IOPS need (gp3: 500 IOPS per GiB):
    the broker's metadata claim shares the data volumes' StorageClass."""
    volume = data_volume(c)
    per_gib = volume.type.iops.max_per_gib if volume else None
    if volume is None or volume.iops is None or not per_gib:
        return BROKER_METADATA_GIB
    return max(BROKER_METADATA_GIB, math.ceil(volume.iops / per_gib))


def _refusal(c: StackConfig, vt: VolumeType, err: VolumeLimitError, mb_s: float) -> ConfigError:
    per_broker_gib = c.data_volume_gib * c.data_volumes
    enough = volumes_needed(vt, per_broker_gib, mb_s * c.data_volumes, headroom=1.0)
    if enough > MAX_VOLUMES_PER_BROKER:
        fix = (
            f"no broker carries that on {MAX_VOLUMES_PER_BROKER} volumes or fewer; add brokers "
            "(`kafkastack size`, `kafkastack apply-sizing`)"
        )
    elif enough > c.data_volumes:
        fix = f"set kafkastack:storage.volumes_per_broker to {enough} or more (JBOD)"
    else:
        fix = "re-run `kafkastack size` and `kafkastack apply-sizing`"
    if err.field == "size_gib" and c.storage.size_gib:
        # The stack's own per-volume size: more brokers or volumes would not change it.
        fix = f"lower it to at most {vt.size_gib.max:g} GiB (it is per volume)"
        if enough > c.data_volumes and enough <= MAX_VOLUMES_PER_BROKER:
            fix += f" and set kafkastack:storage.volumes_per_broker to {enough} or more (JBOD)"
    key = {
        "size_gib": "storage.size_gib"
        if c.storage.size_gib
        else "sizing.cluster.storage_per_broker_gib",
        "throughput_mb_s": "sizing.cluster.storage_class.throughput_mb_s",
        "iops": "sizing.cluster.storage_class.iops",
    }.get(err.field, "storage.type")
    return ConfigError(f"kafkastack:{key}: {err}: {fix}")


def check(c: StackConfig) -> None:
    """Refuse a stack whose volumes its provider would refuse (claims would stay Pending)."""
    data_volume(c)
    quorum_volume(c)
