"""Broker hardware profiles: built-in AWS instance types and custom YAML profiles.

Built-in figures are the sustained (baseline, never burst) figures EC2 documents per instance
type, in EC2's own units, converted once on load to the model's MB/s (spark_sizing/units.py):
- EBS-optimised baseline bandwidth in Mbps (÷8) and baseline IOPS: "Amazon EBS-optimized instance
  types", https://docs.aws.amazon.com/ec2/latest/instancetypes/gp.html and .../mo.html;
- network baseline bandwidth in Gbps (×125): the same pages' network specifications;
- maximum pods per node (for the node's reserved memory): the EKS AMI's eni-max-pods.txt,
  https://github.com/awslabs/amazon-eks-ami;
- recommended partition replicas per broker: AWS MSK's sizing guidance;
- broker traffic one vCPU carries (`mb_s_per_vcpu`): AKalculator's published assumption, below.
Figures as recorded on 2026-11-23 (docs/sizing.md, "Sources").
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from spark_sizing.contract import STRICT_CONFIG, first_error
from spark_sizing.units import gbps_to_mb_s, mbps_to_mb_s, mib_s_to_mb_s
from spark_sizing.volume_types import volume_types

DEFAULT_PROFILE = "m5.2xlarge"
# Data one broker may hold: MSK's 16 TiB per broker, kept as a bound on how long re-replicating a
# lost broker takes. Volumes are a separate matter (spark_sizing/volume_types.py: JBOD).
MAX_BROKER_STORAGE_GIB = 16384.0
# Kubernetes' default --max-pods, for profiles that do not say.
DEFAULT_MAX_PODS = 110
# Broker traffic one vCPU carries at 100 %: AKalculator ("Produce/Consume per vCPU",
# https://2minutestreaming.com/apache-kafka-calculator/resources/assumptions/produce-consume-per-vcpu
# as read 2026-11-23) assumes one vCPU serves 5 MiB/s of produce and 15 MiB/s of consume at once,
# for RF 3 topics; a broker doing that also receives 10 MiB/s and sends 10 MiB/s of replication,
# so the four flows the model counts (client in, replication in, replication out, consumer out)
# add to 40 MiB/s = 41.94 MB/s. AKalculator calls it conservative; `kafkastack calibrate` writes a
# measured figure into a profile YAML.
PUBLISHED_MB_S_PER_VCPU = mib_s_to_mb_s(5 + 10 + 10 + 15)
PUBLISHED_MB_S_PER_VCPU_SOURCE = "AKalculator's produce/consume per vCPU (as read 2026-11-23)"
BUILT_IN_SOURCE = "EC2 instance-type specifications, EKS AMI, MSK (as of 2026-11-23)"


class Measured(BaseModel):
    """Provenance of a profile written by `kafkastack calibrate`: which figures were measured,
    when, where and how; every other figure is the base profile's documented one."""

    model_config = STRICT_CONFIG

    measured_at: str = Field(description="when the measurement ended, ISO 8601 UTC")
    host: str = Field(description="machine the brokers ran on")
    cpu_model: str = Field(description="the host's CPU model (/proc/cpuinfo)")
    host_cpus: int = Field(gt=0, description="CPUs the host has, shared by every process")
    kafka_version: str
    stack: str = Field(description="stack whose rendered configs the brokers ran")
    brokers: int = Field(gt=0, description="brokers of the measured cluster")
    method: str = Field(description="what ran and how the figures follow from it")
    base_profile: str = Field(description="profile the other figures come from")
    fields: list[str] = Field(min_length=1, description="profile fields that were measured")
    records: int = Field(gt=0, description="records per measured round")
    rounds: int = Field(gt=0)
    produce_mb_s: list[float] = Field(description="cluster produce MB/s of each measured round")


class HardwareProfile(BaseModel):
    """What one broker node can sustain. Throughputs in MB/s (10^6 bytes per second)."""

    model_config = STRICT_CONFIG

    name: str
    cpu: float = Field(gt=0, description="vCPUs")
    memory_gib: float = Field(gt=0)
    disk_mb_s: float = Field(gt=0, description="sustained disk (EBS) throughput, MB/s")
    disk_iops: int = Field(gt=0, description="sustained disk IOPS")
    network_mb_s: float = Field(gt=0, description="sustained network throughput, MB/s")
    max_disk_gib: float = Field(gt=0, description="largest storage one broker may carry, GiB")
    recommended_partitions: int = Field(default=2000, gt=0, description="replicas per broker")
    volume_type: str = Field(default="gp3", description="volume type (data/volume_types.yaml)")
    max_pods: int = Field(default=DEFAULT_MAX_PODS, gt=0, description="pods per node (kubelet)")
    mb_s_per_vcpu: float = Field(
        default=PUBLISHED_MB_S_PER_VCPU,
        gt=0,
        description="broker traffic (client in + replication in + replication out + consumer "
        "out) one vCPU carries at 100 %, MB/s",
    )
    measured: Measured | None = Field(
        default=None, description="which figures `kafkastack calibrate` measured, and how"
    )

    @model_validator(mode="after")
    def _measured_fields_exist(self) -> HardwareProfile:
        if self.measured is not None:
            known = set(type(self).model_fields) - {"name", "measured"}
            unknown = sorted(set(self.measured.fields) - known)
            if unknown:
                raise ValueError(
                    f"measured.fields names {', '.join(unknown)}, not a profile figure; "
                    f"use some of {', '.join(sorted(known))}"
                )
        return self


def _aws(
    name: str,
    cpu: float,
    memory_gib: float,
    ebs_baseline_mbps: float,
    ebs_baseline_iops: int,
    network_baseline_gbps: float,
    max_pods: int,
) -> HardwareProfile:
    size = name.split(".", 1)[1]
    # MSK: large/xlarge 1000 recommended, 2xlarge 2000, 4xlarge and up 4000.
    partitions = {"large": 1000, "xlarge": 1000, "2xlarge": 2000}.get(size, 4000)
    return HardwareProfile(
        name=name,
        cpu=cpu,
        memory_gib=memory_gib,
        disk_mb_s=mbps_to_mb_s(ebs_baseline_mbps),
        disk_iops=ebs_baseline_iops,
        network_mb_s=gbps_to_mb_s(network_baseline_gbps),
        max_disk_gib=MAX_BROKER_STORAGE_GIB,
        recommended_partitions=partitions,
        max_pods=max_pods,
    )


# (name, vCPU, memory GiB, EBS baseline Mbps, EBS baseline IOPS, network baseline Gbps, max pods)
_M5 = [
    ("m5.large", 2, 8, 650, 3600, 0.75, 29),
    ("m5.xlarge", 4, 16, 1150, 6000, 1.25, 58),
    ("m5.2xlarge", 8, 32, 2300, 12000, 2.5, 58),
    ("m5.4xlarge", 16, 64, 4750, 18750, 5, 234),
    ("m5.8xlarge", 32, 128, 6800, 30000, 10, 234),
    ("m5.12xlarge", 48, 192, 9500, 40000, 12, 234),
    ("m5.16xlarge", 64, 256, 13600, 60000, 20, 737),
    ("m5.24xlarge", 96, 384, 19000, 80000, 25, 737),
]
_M7G = [
    ("m7g.large", 2, 8, 630, 3600, 0.937, 29),
    ("m7g.xlarge", 4, 16, 1250, 6000, 1.876, 58),
    ("m7g.2xlarge", 8, 32, 2500, 12000, 3.75, 58),
    ("m7g.4xlarge", 16, 64, 5000, 20000, 7.5, 234),
    ("m7g.8xlarge", 32, 128, 10000, 40000, 15, 234),
    ("m7g.12xlarge", 48, 192, 15000, 60000, 22.5, 234),
    ("m7g.16xlarge", 64, 256, 20000, 80000, 30, 737),
]
# Memory-heavy brokers keep more of the log in page cache.
_R6I = [
    ("r6i.large", 2, 16, 650, 3600, 0.781, 29),
    ("r6i.xlarge", 4, 32, 1250, 6000, 1.562, 58),
    ("r6i.2xlarge", 8, 64, 2500, 12000, 3.125, 58),
    ("r6i.4xlarge", 16, 128, 5000, 20000, 6.25, 234),
    ("r6i.8xlarge", 32, 256, 10000, 40000, 12.5, 234),
]

BUILT_IN_PROFILES: dict[str, HardwareProfile] = {
    spec[0]: _aws(*spec) for spec in (*_M5, *_M7G, *_R6I)
}


class ProfileError(ValueError):
    """A profile name or file that cannot be used; the message says what to do."""


def load_profile(name_or_file: str, option: str = "--profile") -> HardwareProfile:
    """A built-in profile by name, or a custom one from a YAML file; errors name `option`, the
    command-line option it came from (--profile, --candidate-profile, --base-profile)."""
    if name_or_file in BUILT_IN_PROFILES:
        return BUILT_IN_PROFILES[name_or_file]
    path = Path(name_or_file)
    if path.suffix.lower() not in {".yaml", ".yml"} or not path.is_file():
        known = ", ".join(sorted(BUILT_IN_PROFILES))
        raise ProfileError(
            f"{option} {name_or_file!r}: not a built-in profile nor a YAML file. "
            f"Use one of: {known}; or a path to a .yaml file with keys "
            "name, cpu, memory_gib, disk_mb_s, disk_iops, network_mb_s, max_disk_gib "
            "(optionally mb_s_per_vcpu)."
        )
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ProfileError(f"{option} {path}: expected a mapping of profile fields at top level")
    data.setdefault("name", path.stem)
    try:
        profile = HardwareProfile.model_validate(data)
    except ValidationError as err:
        field, problem = first_error(err)
        raise ProfileError(f"{option} {path}: field {field!r}: {problem}") from None
    if profile.volume_type not in volume_types():
        raise ProfileError(
            f"{option} {path}: field 'volume_type': {profile.volume_type!r} is not a known volume "
            f"type; use one of {', '.join(volume_types())} (spark_sizing/data/volume_types.yaml)"
        )
    return profile
