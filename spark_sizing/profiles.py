"""Broker hardware profiles: built-in AWS instance types and custom YAML profiles.

Built-in figures are the sustained (baseline, never burst) per-broker EBS and network throughput
and the recommended partition replicas per broker from AWS MSK's public sizing script and workbook
(see docs/sizing.md, "Sources"). AWS publishes MiB/s; the model works in MB/s (10^6 bytes), so
profiles convert on load.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from spark_sizing.contract import first_error

MIB_IN_MB = 1.048576
DEFAULT_PROFILE = "m5.2xlarge"
# EBS's largest gp3/io2 volume; MSK caps broker storage at the same 16 TiB.
EBS_MAX_VOLUME_GIB = 16384.0


class HardwareProfile(BaseModel):
    """What one broker node can sustain. Throughputs in MB/s (10^6 bytes per second)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    cpu: float = Field(gt=0, description="vCPUs")
    memory_gib: float = Field(gt=0)
    disk_mb_s: float = Field(gt=0, description="sustained disk (EBS) throughput")
    disk_iops: int = Field(gt=0, description="sustained disk IOPS")
    network_mb_s: float = Field(gt=0, description="sustained network throughput")
    max_disk_gib: float = Field(gt=0, description="largest disk one broker may carry")
    recommended_partitions: int = Field(default=2000, gt=0, description="replicas per broker")
    volume_type: str = Field(default="gp3", description="storage class volume type")


def _aws(
    name: str, cpu: float, memory_gib: float, ebs_mib_s: float, net_mib_s: float
) -> HardwareProfile:
    size = name.split(".", 1)[1]
    # MSK: large/xlarge 1000 recommended, 2xlarge 2000, 4xlarge and up 4000.
    partitions = {"large": 1000, "xlarge": 1000, "2xlarge": 2000}.get(size, 4000)
    return HardwareProfile(
        name=name,
        cpu=cpu,
        memory_gib=memory_gib,
        disk_mb_s=round(ebs_mib_s * MIB_IN_MB, 2),
        # EBS-optimised baseline IOPS scale with bandwidth; 16k is gp3's per-volume ceiling.
        disk_iops=min(16000, max(3000, int(ebs_mib_s * 16))),
        network_mb_s=round(net_mib_s * MIB_IN_MB, 2),
        max_disk_gib=EBS_MAX_VOLUME_GIB,
        recommended_partitions=partitions,
    )


# (name, vCPU, memory GiB, EBS baseline MiB/s, network baseline MiB/s)
_M5 = [
    ("m5.large", 2, 8, 81, 96),
    ("m5.xlarge", 4, 16, 144, 160),
    ("m5.2xlarge", 8, 32, 250, 320),
    ("m5.4xlarge", 16, 64, 593.75, 640),
    ("m5.8xlarge", 32, 128, 850, 1280),
    ("m5.12xlarge", 48, 192, 1000, 1536),
    ("m5.16xlarge", 64, 256, 1000, 2560),
    ("m5.24xlarge", 96, 384, 1000, 3200),
]
_M7G = [
    ("m7g.large", 2, 8, 78.75, 117),
    ("m7g.xlarge", 4, 16, 156.25, 234),
    ("m7g.2xlarge", 8, 32, 312.5, 469),
    ("m7g.4xlarge", 16, 64, 625, 937),
    ("m7g.8xlarge", 32, 128, 1000, 1875),
    ("m7g.12xlarge", 48, 192, 1000, 2812),
    ("m7g.16xlarge", 64, 256, 1000, 3750),
]
# r6i baselines from AWS's EC2 instance specifications (EBS-optimised and network baseline);
# memory-heavy brokers keep more of the log in page cache.
_R6I = [
    ("r6i.large", 2, 16, 81.25, 97.5),
    ("r6i.xlarge", 4, 32, 156.25, 195),
    ("r6i.2xlarge", 8, 64, 312.5, 390),
    ("r6i.4xlarge", 16, 128, 625, 781),
    ("r6i.8xlarge", 32, 256, 1250, 1562),
]

BUILT_IN_PROFILES: dict[str, HardwareProfile] = {
    spec[0]: _aws(*spec) for spec in (*_M5, *_M7G, *_R6I)
}


class ProfileError(ValueError):
    """A profile name or file that cannot be used; the message says what to do."""


def load_profile(name_or_file: str) -> HardwareProfile:
    """A built-in profile by name, or a custom one from a YAML file."""
    if name_or_file in BUILT_IN_PROFILES:
        return BUILT_IN_PROFILES[name_or_file]
    path = Path(name_or_file)
    if path.suffix.lower() not in {".yaml", ".yml"} or not path.is_file():
        known = ", ".join(sorted(BUILT_IN_PROFILES))
        raise ProfileError(
            f"--profile {name_or_file!r}: not a built-in profile nor a YAML file. "
            f"Use one of: {known}; or a path to a .yaml file with keys "
            "name, cpu, memory_gib, disk_mb_s, disk_iops, network_mb_s, max_disk_gib."
        )
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ProfileError(f"--profile {path}: expected a mapping of profile fields at top level")
    data.setdefault("name", path.stem)
    try:
        return HardwareProfile.model_validate(data)
    except ValidationError as err:
        field, problem = first_error(err)
        raise ProfileError(f"--profile {path}: field {field!r}: {problem}") from None
