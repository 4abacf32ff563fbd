"""Calibration arithmetic: from what real brokers carried to a hardware profile, and back from a
sizing to the throughput the sized cluster should sustain. Plain Python, no processes: the
measurement itself is `infra/verify/calibrate.py`.

The model's traffic accounting (docs/sizing.md, "Per cluster") read backwards: a cluster of B
brokers that acknowledges P MB/s of produce with RF r and acks=all writes P·r to disk and takes
P·r in over the network (producers and followers), spread over B brokers. At saturation that is
what one broker sustains, so disk_mb_s = network_mb_s = P·r / B. Broker traffic in + out is
P·r + P·(r−1) + consumed; divided by the CPU seconds the broker processes used it is the
MB/s one vCPU carries at 100 %.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from pathlib import Path

import yaml

from spark_sizing.contract import ProfileFigure, SizingReport
from spark_sizing.profiles import (
    BUILT_IN_PROFILES,
    BUILT_IN_SOURCE,
    PUBLISHED_MB_S_PER_VCPU_SOURCE,
    HardwareProfile,
    Measured,
)

MEASURED_FIELDS = ("disk_mb_s", "network_mb_s", "mb_s_per_vcpu")
# The resources a producer with acks=all loads (zone_loss.py's names); consumers add network out.
PRODUCE_PATH = ("disk writes", "network in")
FIGURE_UNITS = {
    "cpu": "vCPU",
    "memory_gib": "GiB",
    "disk_mb_s": "MB/s",
    "disk_iops": "IOPS",
    "network_mb_s": "MB/s",
    "max_disk_gib": "GiB",
    "recommended_partitions": "replicas",
    "mb_s_per_vcpu": "MB/s per vCPU",
}
# Warm-up rounds (JIT, page cache, leader elections) are discarded until two in a row agree
# within SETTLED of each other, at most `--warmups` of them (MAX_WARMUPS unless set: fewer gives
# a quicker look whose figures may still carry the JVMs' warm-up).
SETTLED = 0.10
MAX_WARMUPS = 4
METHOD = (
    "Kafka's ProducerPerformance (1 KiB records, acks=all, unthrottled) into an RF {rf} topic "
    "with min.insync.replicas {min_isr}, then ConsumerPerformance reading it back, on the brokers "
    "started from the stack's rendered configs (network namespaces, as `kafkastack verify`); "
    "warm-up rounds discarded until two agree within {settled} (at most {warmups}), "
    "the median of {rounds} rounds. "
    "disk_mb_s = network_mb_s = "
    "median produce MB/s × RF ÷ brokers; mb_s_per_vcpu = (produced × (2·RF − 1) + consumed) MB "
    "÷ CPU seconds of the broker processes (/proc utime + stime)"
)


class CalibrationError(ValueError):
    """A measurement the profile cannot be computed from; the message says what to check."""


@dataclass(frozen=True)
class CalibrationRun:
    """What the measured rounds of one cluster gave (warm-up excluded)."""

    brokers: int
    replication_factor: int
    produce_mb_s: list[float]  # cluster payload MB/s acknowledged, per round
    produced_mb: float  # payload MB acknowledged over the rounds
    consumed_mb: float  # payload MB read back over the rounds
    broker_cpu_seconds: float  # user + system, every broker process, over the rounds

    def check(self) -> None:
        if not self.produce_mb_s or self.produced_mb <= 0 or min(self.produce_mb_s) <= 0:
            raise CalibrationError(
                "no records were acknowledged: the measurement failed (check the brokers' logs)"
            )
        if self.broker_cpu_seconds <= 0:
            raise CalibrationError(
                "the broker processes used no CPU time in /proc: were they running here?"
            )

    @property
    def cluster_produce_mb_s(self) -> float:
        return statistics.median(self.produce_mb_s)

    @property
    def per_broker_mb_s(self) -> float:
        """Disk writes = network in of one broker at saturation: P·r / B."""
        return self.cluster_produce_mb_s * self.replication_factor / self.brokers

    @property
    def broker_traffic_mb(self) -> float:
        """In (producers + followers' copies) + out (replication to followers + consumers)."""
        r = self.replication_factor
        return self.produced_mb * (2 * r - 1) + self.consumed_mb

    @property
    def mb_s_per_vcpu(self) -> float:
        return self.broker_traffic_mb / self.broker_cpu_seconds


def calibrated_profile(
    base: HardwareProfile, run: CalibrationRun, provenance: Measured
) -> HardwareProfile:
    """The base profile with the measured figures in place of its documented ones."""
    run.check()
    return base.model_copy(
        update={
            "name": f"{base.name}-calibrated",
            "disk_mb_s": round(run.per_broker_mb_s, 3),
            "network_mb_s": round(run.per_broker_mb_s, 3),
            "mb_s_per_vcpu": round(run.mb_s_per_vcpu, 3),
            "measured": provenance,
        }
    )


def check_rounds(records: int, rounds: int, warmups: int) -> None:
    """What `kafkastack calibrate` is asked to run, before anything starts."""
    if records < 1:
        raise CalibrationError(f"--records {records}: must be ≥ 1")
    if rounds < 1:
        raise CalibrationError(f"--rounds {rounds}: must be ≥ 1")
    if warmups < 0:
        raise CalibrationError(f"--warmups {warmups}: must be ≥ 0")


def method(replication_factor: int, rounds: int, warmups: int = MAX_WARMUPS) -> str:
    return METHOD.format(
        rf=replication_factor,
        min_isr=max(1, replication_factor - 1),
        settled=f"{SETTLED * 100:g} %",
        warmups=warmups,
        rounds=rounds,
    )


def profile_document(profile: HardwareProfile) -> dict[str, object]:
    """What `--profile FILE` reads back: every field, the provenance last."""
    data = profile.model_dump(mode="json", exclude_none=True)
    measured = data.pop("measured", None)
    return {**data, **({"measured": measured} if measured else {})}


def profile_figures(profile: HardwareProfile) -> list[ProfileFigure]:
    """Each figure the sizing used, and whether it was measured (when, where) or documented."""
    measured = profile.measured
    if measured is not None:
        documented = f"base profile {measured.base_profile}: " + _documented(measured.base_profile)
        measured_source = (
            f"measured {measured.measured_at} on {measured.host} ({measured.cpu_model}, "
            f"{measured.host_cpus} CPUs), Kafka {measured.kafka_version}, stack "
            f"{measured.stack}, {measured.brokers} brokers (kafkastack calibrate)"
        )
    else:
        documented = _documented(profile.name)
        measured_source = ""
    figures = []
    for field, unit in FIGURE_UNITS.items():
        value = getattr(profile, field)
        if value is None:
            continue
        was_measured = measured is not None and field in measured.fields
        figures.append(
            ProfileFigure(
                field=field,
                value=float(value),
                unit=unit,
                measured=was_measured,
                source=measured_source
                if was_measured
                else _published(profile, field) or documented,
            )
        )
    return figures


def _published(profile: HardwareProfile, field: str) -> str | None:
    """The source of a figure every profile shares unless its file says otherwise."""
    if field == "mb_s_per_vcpu" and "mb_s_per_vcpu" not in profile.model_fields_set:
        return PUBLISHED_MB_S_PER_VCPU_SOURCE
    return None


def _documented(name: str) -> str:
    if name in BUILT_IN_PROFILES:
        return BUILT_IN_SOURCE
    return "custom profile file"


def predicted_produce_mb_s(report: SizingReport) -> float:
    """Produce MB/s at which the sized cluster's first produce-path resource (disk writes,
    network in) reaches 100 % of its profile capacity: the projection's peak ingress scaled by
    1 ÷ the highest of those utilisations at the sized broker count."""
    utilisation = [u.utilisation for u in report.utilisation if u.resource in PRODUCE_PATH]
    if not utilisation or max(utilisation) <= 0:
        raise CalibrationError(
            "the sizing has no disk writes / network in utilisation (schema ≥ 1.1, with ingress)"
        )
    return report.cluster.peak_ingress_mb_s / max(utilisation)


def loop_projection(path: Path, peak_mb_s: float) -> Path:
    """The projection a closed loop sizes with a calibrated profile (bench/calibration_loop.py,
    tests/kafka/test_calibration.py): one topic peaking at `peak_mb_s` over three months, RF 3,
    min ISR 2, one consumer group."""
    rows = [
        "topic,period_start,produce_mb_s,produce_mb_s_peak,consumer_groups,retention_hours,"
        "replication_factor,min_insync_replicas"
    ]
    rows += [
        f"orders,2026-0{month}-01,{peak_mb_s / 2:.4f},{peak_mb_s:.4f},1,1,3,2"
        for month in (1, 2, 3)
    ]
    path.write_text("\n".join(rows) + "\n")
    return path


def check_out_path(out: Path) -> None:
    """Before anything is measured: `--out` must be a .yaml file `--profile` can read back, in a
    folder that exists and can be written."""
    if out.suffix.lower() not in {".yaml", ".yml"}:
        raise CalibrationError(f"--out {out}: must end in .yaml or .yml (what --profile reads)")
    folder = out.parent
    if not folder.is_dir():
        raise CalibrationError(f"--out {out}: folder {folder} does not exist; create it first")
    if (
        out.is_dir()
        or not os.access(folder, os.W_OK)
        or (out.exists() and not os.access(out, os.W_OK))
    ):
        raise CalibrationError(f"--out {out}: cannot write there; choose a writable path")


def write_profile(profile: HardwareProfile, out: Path) -> None:
    header = (
        "# Written by `kafkastack calibrate`; use with `kafkastack size --profile "
        f"{out.name}`.\n# Measured figures: see `measured:` (the rest are the base profile's).\n"
    )
    body = yaml.safe_dump(profile_document(profile), sort_keys=False, allow_unicode=True, width=100)
    out.write_text(header + body, encoding="utf-8")
