"""A KRaft voter that lost its metadata volume, started again through its rendered pod steps:
it must not rejoin under its old directory id (KIP-853), and its membership container makes it
a voter again under a new one while the quorum keeps a majority and acks=all produce works."""

from __future__ import annotations

import shutil
import time

import pytest

from infra.model import membership
from infra.verify.processes import ProcessCluster
from tests.kafka.checks import FAILOVER_REPORTS, create

pytestmark = pytest.mark.kafka
SIDECAR = membership.CONTAINER


@pytest.fixture
def cluster(three_brokers: ProcessCluster) -> ProcessCluster:
    return three_brokers


def quorum(cluster: ProcessCluster, asking: str, what: str) -> str:
    """`kafka-metadata-quorum describe --<what>` from a voter's pod, as an operator would: in
    its membership container, with the client config and login that container uses."""
    port = cluster.topology["ports"]["controller"]
    controllers = ",".join(f"{n.entry['replication_ip']}:{port}" for n in cluster.quorum)
    return cluster.exec_in(
        asking,
        "/opt/kafka/bin/kafka-metadata-quorum.sh --bootstrap-controller "
        f"{controllers} --command-config {membership.ADMIN_FILE} "
        f"describe --{what}",
        container=SIDECAR,
    )


def voters(status: str) -> dict[int, str]:
    found = membership.current_voters(status)
    assert found is not None, status
    return found


replication = membership.replication_rows


def high_watermark(status: str) -> int:
    """The metadata log's committed offset from `describe --status`."""
    line = next((x for x in status.splitlines() if x.startswith("HighWatermark:")), None)
    assert line is not None, status
    return int(line.split(":", 1)[1])


def directory_id(cluster: ProcessCluster, name: str) -> str:
    meta = (cluster.node(name).workdir / "metadata" / "meta.properties").read_text()
    return next(x.split("=", 1)[1] for x in meta.splitlines() if x.startswith("directory.id="))


def test_voter_with_a_lost_volume_rejoins_under_a_new_directory_id(
    cluster: ProcessCluster,
) -> None:
    names = [n.name for n in cluster.quorum]
    lost, asking = names[2], names[0]
    lost_id = cluster.node(lost).entry["node_id"]
    born = voters(quorum(cluster, asking, "status"))
    assert len(born) == 3
    assert born[lost_id] == directory_id(cluster, lost)
    others = {k: v for k, v in born.items() if k != lost_id}
    create(cluster, "quorum-recovery", partitions=3)

    cluster.stop_pod(lost)
    # The volume is lost: the replacement claim is empty.
    shutil.rmtree(cluster.node(lost).workdir / "metadata")
    (cluster.node(lost).workdir / "metadata").mkdir()
    started = time.monotonic()
    cluster.start_pod(lost)
    fresh = directory_id(cluster, lost)
    # The old code formats the initial voter set again: the same directory id, an empty log.
    assert fresh != born[lost_id], "the voter took its old directory id with an empty log"
    # The others have been voters since the birth: their membership containers say so.
    assert all(cluster.ready(n, SIDECAR) for n in names if n != lost)

    produced, samples = 0, 0
    committed = high_watermark(quorum(cluster, asking, "status"))
    deadline = time.monotonic() + 300
    while not cluster.ready(lost, SIDECAR):
        assert time.monotonic() < deadline, cluster.node(lost).workdir / f"{SIDECAR}.log"
        status = quorum(cluster, asking, "status")
        current = voters(status)
        # Only the lost voter's entry changes (old, none, then new); the others stay voters.
        assert {k: v for k, v in current.items() if k != lost_id} == others, current
        # A majority of the voters keeps committing throughout: the leader appends a record at
        # least every 500 ms and the high watermark moves only once a majority has it. (A
        # follower's lag is not the measure: one fetch behind the leader reads as lag 1.)
        now_committed = high_watermark(status)
        assert now_committed > committed, status
        committed = now_committed
        reply = cluster.client("produce", topic="quorum-recovery", count=20, keys=5)
        assert len(reply["acked"]) == 20 and not reply["errors"], reply["errors"][:3]
        produced, samples = produced + 20, samples + 1
    elapsed = time.monotonic() - started

    final = voters(quorum(cluster, asking, "status"))
    assert final == {**born, lost_id: fresh}
    rows = replication(quorum(cluster, asking, "replication"))
    ours = next(r for r in rows if r["NodeId"] == str(lost_id) and r["DirectoryId"] == fresh)
    assert ours["Status"] in ("Leader", "Follower"), rows
    # The leader may list the lost directory a while longer, as an observer it no longer hears.
    old = [r for r in rows if r["DirectoryId"] == born[lost_id]]
    assert all(r["Status"] == "Observer" for r in old), rows
    reply = cluster.client("produce", topic="quorum-recovery", count=200, keys=5)
    assert len(reply["acked"]) == 200 and not reply["errors"], reply["errors"][:3]
    FAILOVER_REPORTS.append(
        f"KRaft voter {lost_id} replaced after a lost metadata volume: a voter again "
        f"{elapsed:.1f} s after its pod started ({samples} quorum samples, {produced} records "
        "acked with acks=all meanwhile)"
    )
