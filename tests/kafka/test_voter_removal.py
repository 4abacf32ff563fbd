"""5 → 3 → 5 KRaft controllers on real Kafka. `remove_voters` (what `kafkastack remove-voters`
runs, here through the pods' own `exec` instead of kubectl's) takes the two voters the smaller
stack no longer declares out of the voter set, one at a time, while acks=all produce goes on;
afterwards the quorum is the three that stay, so it survives the two going away and one more
stopping. Then the stack grows back: two new controllers with empty volumes start one after the
other (as `pulumi up` chains them) and their rendered `quorum-membership` containers add them."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from infra.errors import ConfigError
from infra.model import membership
from infra.model.cluster import ClusterModel
from infra.verify.errors import VerifyError
from infra.verify.processes import ProcessCluster
from infra.voter_removal import QuorumUnreachable, VoterSet, remove_voters
from tests.infra.conftest import config_of
from tests.kafka.checks import FAILOVER_REPORTS, create
from tests.kafka.conftest import stack_values, start_cluster

pytestmark = pytest.mark.kafka
FIVE = {"kind": "kraft", "nodes": 5}
THREE = {"kind": "kraft", "nodes": 3}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    """5 dedicated controllers, 3 brokers."""
    started = start_cluster(tmp_path_factory.mktemp("voter-removal"), brokers=3, quorum=FIVE)
    yield started
    started.close()


def pod_exec(cluster: ProcessCluster) -> Any:
    """`kubectl exec POD -c CONTAINER -- sh -c COMMAND`, as the harness runs a pod's steps."""

    def run(pod: str, container: str, command: str) -> str:
        try:
            return cluster.exec_in(pod.removesuffix("-0"), command, container=container)
        except VerifyError as err:
            raise QuorumUnreachable(str(err)) from None

    return run


def producing_while(cluster: ProcessCluster, topic: str, busy: Callable[[], bool]) -> int:
    """acks=all batches until `busy()` is false, each one acked whole; how many records."""
    produced = 0
    while busy():
        reply = cluster.client("produce", topic=topic, count=20, keys=5)
        assert len(reply["acked"]) == 20 and not reply["errors"], reply["errors"][:3]
        produced += 20
    return produced


def test_voters_leave_and_join_one_at_a_time_under_load(cluster: ProcessCluster) -> None:
    five = config_of("local", **stack_values(3, quorum=FIVE))
    three = config_of("local", **stack_values(3, quorum=THREE))
    staying = ClusterModel.from_config(three)
    # The smaller stack aims its tools at the same three controllers the running one has.
    assert [v.replication_host for v in staying.voters] == [
        n.entry["replication_ip"] for n in cluster.quorum[:3]
    ]
    before = VoterSet(ClusterModel.from_config(five), pod_exec(cluster)).voters()
    assert sorted(before) == [9000, 9001, 9002, 9003, 9004]
    create(cluster, "voter-removal", partitions=3)

    said: list[str] = []
    failure: list[BaseException] = []

    def remove() -> None:
        try:
            remove_voters(three, pod_exec(cluster), said.append, timeout=300)
        except (ConfigError, QuorumUnreachable) as err:
            failure.append(err)

    worker = threading.Thread(target=remove)
    started = time.monotonic()
    worker.start()
    produced = producing_while(cluster, "voter-removal", worker.is_alive)
    worker.join()
    elapsed = time.monotonic() - started
    assert not failure, failure
    removals = [line for line in said if line.startswith("removing voter")]
    assert [line.split()[2] for line in removals] == ["9004", "9003"], said
    after = VoterSet(staying, pod_exec(cluster)).voters()
    assert sorted(after) == [9000, 9001, 9002]
    assert all(after[i] == before[i] for i in after)  # the staying voters kept their directories

    # What `pulumi up` does next: the two StatefulSets go. Then one more controller stops: two
    # of three voters are a majority, where two of the old five would not have been.
    for name in (n.name for n in cluster.quorum[3:]):
        cluster.stop_pod(name)
    cluster.stop_pod(cluster.quorum[2].name)
    create(cluster, "after-voter-removal", partitions=3)  # a metadata change needs the quorum
    reply = cluster.client("produce", topic="after-voter-removal", count=200, keys=5)
    assert len(reply["acked"]) == 200 and not reply["errors"], reply["errors"][:3]
    cluster.start_pod(cluster.quorum[2].name)

    # Back to 5: `pulumi up` creates each new controller with an empty claim, the next one once
    # the previous is ready (a voter: its membership container's readiness).
    grown = time.monotonic()
    joined = produced_growing = 0
    for node in cluster.quorum[3:]:
        shutil.rmtree(node.workdir / "metadata")
        (node.workdir / "metadata").mkdir()
        cluster.start_pod(node.name)
        deadline = time.monotonic() + 300

        def joining(name: str = node.name, by: float = deadline) -> bool:
            return not cluster.ready(name, membership.CONTAINER) and time.monotonic() < by

        produced_growing += producing_while(cluster, "voter-removal", joining)
        assert cluster.ready(node.name, membership.CONTAINER), node.workdir
        joined += 1
    grown_in = time.monotonic() - grown
    final = VoterSet(ClusterModel.from_config(five), pod_exec(cluster)).voters()
    assert sorted(final) == [9000, 9001, 9002, 9003, 9004]
    # New directories: a voter that left never comes back under its old id.
    assert final[9003] != before[9003] and final[9004] != before[9004]
    assert joined == 2
    FAILOVER_REPORTS.append(
        f"KRaft voters 5 → 3: two removed one at a time in {elapsed:.1f} s "
        f"({produced} records acked with acks=all meanwhile); with the two gone and one more "
        f"stopped, the three-voter quorum still created a topic. 3 → 5: two new controllers "
        f"voters in {grown_in:.1f} s ({produced_growing} records acked meanwhile)"
    )
