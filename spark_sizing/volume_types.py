"""Block volume types and their provider-documented limits (data: `data/volume_types.yaml`).

One home for the sizing job (how many volumes a broker needs, what each must be provisioned with)
and for the StorageClasses `infra` renders: both call `provision`, so what is sized is what is
rendered. The model's MB/s is converted to the type's unit here, once, rounding up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

import yaml
from pydantic import BaseModel

from spark_sizing.contract import STRICT_CONFIG
from spark_sizing.units import ceil_whole, mb_s_to_mib_s

# Sizing keeps each volume at most this share of its type's size, IOPS and throughput ceilings:
# room to grow a volume in place (allowVolumeExpansion) before another one is needed.
DEFAULT_VOLUME_HEADROOM = 0.8


class Limits(BaseModel):
    model_config = STRICT_CONFIG

    min: float | None = None
    max: float | None = None
    max_per_gib: float | None = None
    per_gib: float | None = None
    max_per_iops: float | None = None


class VolumeType(BaseModel):
    model_config = STRICT_CONFIG

    name: str
    provisioner: str
    throughput_unit: Literal["MiB/s", "MB/s"] | None = None
    size_gib: Limits = Limits()
    iops: Limits = Limits()
    throughput: Limits = Limits()
    provisioned: list[Literal["iops", "throughput"]] = []
    source: str
    as_of: str
    note: str = ""

    def in_unit(self, mb_s: float) -> float:
        """A model throughput (MB/s) in this type's documented unit."""
        return mb_s_to_mib_s(mb_s) if self.throughput_unit == "MiB/s" else mb_s

    @property
    def cited(self) -> str:
        return f"{self.name} (per {self.source}, as of {self.as_of})"


@cache
def volume_types() -> dict[str, VolumeType]:
    text = resources.files("spark_sizing").joinpath("data/volume_types.yaml").read_text("utf-8")
    table = yaml.safe_load(text)["volume_types"]
    return {
        name: VolumeType.model_validate({"name": name, **entry}) for name, entry in table.items()
    }


def volume_type(name: str) -> VolumeType:
    types = volume_types()
    if name not in types:
        raise VolumeLimitError(
            "type", f"{name!r} is not a known volume type; use one of " + ", ".join(types)
        )
    return types[name]


def types_of(provisioner: str) -> list[VolumeType]:
    """The known volume types of a provisioner, its default (first listed) first."""
    return [t for t in volume_types().values() if t.provisioner == provisioner]


class VolumeLimitError(ValueError):
    """A volume outside its type's documented limits; `field` is the sized value at fault
    (type, size_gib, iops or throughput_mb_s) and the message says the fix."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ProvisionedVolume:
    """What one volume is created with, in the provider's units."""

    type: VolumeType
    size_gib: int
    iops: int | None  # None: not provisioned per volume
    throughput: int | None  # in type.throughput_unit; None: not provisioned per volume


def provision(
    vt: VolumeType, size_gib: float, throughput_mb_s: float, iops: int
) -> ProvisionedVolume:
    """The provisioning that carries `throughput_mb_s` and `iops` on one volume of `size_gib`.

    Floors are raised to (a gp3 volume gets at least 125 MiB/s and 3,000 IOPS); IOPS are raised to
    what the throughput needs under the type's throughput-per-IOPS ratio; anything above a
    ceiling is refused with the fix, never silently cut.
    """
    size = max(ceil_whole(size_gib), ceil_whole(vt.size_gib.min or 1))
    if vt.size_gib.max is not None and size > vt.size_gib.max:
        raise VolumeLimitError(
            "size_gib",
            f"{size} GiB per volume is above the {vt.size_gib.max:g} GiB of {vt.cited}; "
            "spread it over more volumes per broker",
        )
    unit = vt.throughput_unit or "MB/s"
    need = ceil_whole(vt.in_unit(throughput_mb_s)) if throughput_mb_s > 0 else 0
    t = vt.throughput
    throughput = max(need, ceil_whole(t.min or 0)) if "throughput" in vt.provisioned else None
    carried = throughput if throughput is not None else need
    if t.max is not None and carried > t.max:
        raise VolumeLimitError(
            "throughput_mb_s",
            f"{carried} {unit} per volume is above the {t.max:g} {unit} of {vt.cited}; "
            "spread it over more volumes per broker",
        )
    if t.per_gib is not None and need > t.per_gib * size:
        raise VolumeLimitError(
            "throughput_mb_s",
            f"{need} {unit} per volume is more than a {size} GiB volume delivers "
            f"({t.per_gib:g} {unit} per GiB, {vt.cited}); use at least "
            f"{math.ceil(need / t.per_gib)} GiB per volume or a type with provisioned throughput",
        )
    wanted_iops = iops
    if t.max_per_iops:
        # More throughput needs more IOPS: raise them rather than refuse (gp3 0.25 MiB/s per IOPS).
        wanted_iops = max(wanted_iops, ceil_whole(carried / t.max_per_iops))
    provisioned_iops = None
    if "iops" in vt.provisioned:
        provisioned_iops = max(wanted_iops, ceil_whole(vt.iops.min or 0))
        if vt.iops.max is not None and provisioned_iops > vt.iops.max:
            raise VolumeLimitError(
                "iops",
                f"{provisioned_iops} IOPS per volume is above the {vt.iops.max:g} of {vt.cited}; "
                "spread the load over more volumes per broker",
            )
        per_gib = vt.iops.max_per_gib
        if per_gib is not None and provisioned_iops > per_gib * size:
            raise VolumeLimitError(
                "size_gib",
                f"{provisioned_iops} IOPS need a volume of at least "
                f"{math.ceil(provisioned_iops / per_gib)} GiB ({per_gib:g} IOPS per GiB, "
                f"{vt.cited}); raise the volume size",
            )
    return ProvisionedVolume(type=vt, size_gib=size, iops=provisioned_iops, throughput=throughput)


def volumes_needed(
    vt: VolumeType, per_broker_gib: float, per_broker_mb_s: float, headroom: float
) -> int:
    """Volumes per broker so each stays within `headroom` of its type's size, throughput and
    IOPS ceilings (JBOD: Kafka spreads partitions over its log directories)."""
    counts = [1]
    if vt.size_gib.max is not None:
        counts.append(math.ceil(per_broker_gib / (vt.size_gib.max * headroom)))
    in_unit = vt.in_unit(per_broker_mb_s)
    if vt.throughput.max is not None:
        counts.append(math.ceil(in_unit / (vt.throughput.max * headroom)))
    if vt.throughput.max_per_iops and vt.iops.max is not None:
        iops = in_unit / vt.throughput.max_per_iops
        counts.append(math.ceil(iops / (vt.iops.max * headroom)))
    return max(counts)


@dataclass(frozen=True)
class VolumeLayout:
    """A broker's data volumes: how many, and what each carries (throughput in MB/s)."""

    volumes: int
    size_gib: float
    throughput_mb_s: float
    provisioned: ProvisionedVolume


def volume_layout(
    vt: VolumeType, per_broker_gib: float, per_broker_mb_s: float, headroom: float
) -> VolumeLayout:
    volumes = volumes_needed(vt, per_broker_gib, per_broker_mb_s, headroom)
    throughput_mb_s = float(ceil_whole(per_broker_mb_s / volumes))
    size = per_broker_gib / volumes
    per_gib = vt.iops.max_per_gib
    if vt.throughput.max_per_iops and per_gib:
        # A small, fast volume needs the size its IOPS require (gp3: 500 IOPS per GiB).
        iops = max(vt.in_unit(throughput_mb_s) / vt.throughput.max_per_iops, vt.iops.min or 0)
        size = max(size, iops / per_gib)
    provisioned = provision(vt, size, throughput_mb_s, 0)
    return VolumeLayout(volumes, size, throughput_mb_s, provisioned)
