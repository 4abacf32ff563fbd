"""`kafkastack verify`: start a rendered stack for real, prove the basics, report, clean up."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from infra import render
from infra.stack_config import StackConfig
from infra.verify.errors import VerifyError
from infra.verify.processes import ProcessCluster


@dataclass(frozen=True)
class SmokeResult:
    brokers: dict[int, str]
    internal_acked: int
    external_expected: bool  # the stack has HAProxy in front: records must get through it
    external_acked: int
    partitions_on_distinct_racks: bool
    plaintext_refused: bool


def smoke(config: StackConfig, workdir: Path | None = None) -> SmokeResult:
    with tempfile.TemporaryDirectory(prefix="kafkastack-verify-") as tmp:
        root = workdir or Path(tmp)
        render.write(config, root / "render")
        cluster = ProcessCluster(root / "render", root / "run")
        try:
            cluster.start()
            return _check(cluster, config)
        finally:
            cluster.close()


def _check(cluster: ProcessCluster, config: StackConfig) -> SmokeResult:
    rf = min(config.replication_factor, len(cluster.brokers))
    created = cluster.client(
        "create_topic",
        topic="kafkastack-verify",
        partitions=len(cluster.brokers),
        rf=rf,
        config={"min.insync.replicas": config.min_insync_replicas},
    )
    if not created["ok"]:
        raise VerifyError(f"creating a topic failed: {created['error']}")
    described = cluster.client("describe", topic="kafkastack-verify")
    racks = described["racks"]
    distinct = all(
        len({racks[str(b)] for b in p["replicas"]}) == min(rf, len(set(racks.values())))
        for p in described["partitions"].values()
    )
    internal = cluster.client("produce", topic="kafkastack-verify", count=200)
    external_acked, refused = 0, True
    if cluster.haproxy_host is not None:
        external = cluster.client("produce", external=True, topic="kafkastack-verify", count=200)
        external_acked = len(external["acked"])
        probe = cluster.client(
            "plaintext_probe",
            host=cluster.topology["external"]["bootstrap_host"],
            port=cluster.topology["ports"]["external_advertised"],
        )
        refused = not probe["answered"]
    return SmokeResult(
        brokers={int(k): v for k, v in racks.items()},
        internal_acked=len(internal["acked"]),
        external_expected=cluster.haproxy_host is not None,
        external_acked=external_acked,
        partitions_on_distinct_racks=distinct,
        plaintext_refused=refused,
    )


def passed(result: SmokeResult) -> bool:
    """Every check the stack calls for: racks, in-cluster writes, and through HAProxy when the
    stack has it (writes acknowledged, plaintext refused)."""
    external_ok = result.external_acked > 0 if result.external_expected else True
    return (
        result.partitions_on_distinct_racks
        and result.internal_acked > 0
        and external_ok
        and result.plaintext_refused
    )
