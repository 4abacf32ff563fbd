"""The second network through real Multus, on the local stack's variant in prod's shape
on-prem (`network.mode: dual`: a subnet per zone, static addresses through the `ips`
capability, the `bridge` plugin on the nodes' shared host bridge; KRaft controllers of their
own): every broker and controller has the interface and address the model planned, REPLICATION
and CONTROLLER listen there, and under a replicated produce the followers receive the
replicated bytes on that interface, not on the pod network's."""

from __future__ import annotations

from infra.localcluster.deployed import DeployedStack
from infra.model import labels, networks
from tests.nodes.pods import assert_on_the_second_network

POD_INTERFACE = "eth0"
MEGABYTES = 20
TOPIC = "second-network-load"


def _counters(stack: DeployedStack, pod: str) -> dict[str, int]:
    """rx/tx bytes of the pod's interface and of its second network's, read inside the pod."""
    paths = [
        f"/sys/class/net/{iface}/statistics/{way}_bytes"
        for iface in (POD_INTERFACE, networks.SECOND_INTERFACE)
        for way in ("rx", "tx")
    ]
    values = stack.kube.kubectl(
        "exec", "-n", stack.namespace, pod, "-c", "kafka", "--", "cat", *paths
    ).stdout.split()
    keys = [p.split("/")[4] + "." + p.rsplit("/", 1)[1].split("_")[0] for p in paths]
    return dict(zip(keys, map(int, values), strict=True))


def test_replication_runs_on_the_multus_network(dual_stack: DeployedStack) -> None:
    stack = dual_stack
    model = stack.model
    assert model.address_plan and model.address_plan.zoned
    assert_on_the_second_network(stack, labels.BROKER)
    assert_on_the_second_network(stack, labels.CONTROLLER)

    # A replicated produce from the client pod: one partition on every broker (RF 3, acks=all).
    client = stack.client()
    client.create_topic(TOPIC, partitions=1)
    state = client.wait_isr(TOPIC, len(model.brokers))[0]
    broker_pods = {b.node_id: model.names.pod(b.workload) for b in model.brokers}
    assert sorted(state.isr) == sorted(broker_pods), state
    followers = [broker_pods[i] for i in broker_pods if i != state.leader]
    before = {pod: _counters(stack, pod) for pod in broker_pods.values()}
    client.fill(TOPIC, MEGABYTES)
    # acks=all with every replica in sync: both followers hold every record.
    assert sorted(client.describe(TOPIC)[TOPIC][0].isr) == sorted(broker_pods)
    after = {pod: _counters(stack, pod) for pod in broker_pods.values()}
    grown = {pod: {key: after[pod][key] - before[pod][key] for key in after[pod]} for pod in after}
    payload = MEGABYTES * 1_000_000
    print(f"\npayload {payload} B; interface byte growth per broker pod: {grown}")
    for pod in followers:
        # A follower fetches the whole payload from the leader over the second network...
        assert grown[pod][f"{networks.SECOND_INTERFACE}.rx"] >= payload, grown
        # ...and receives far less on the pod network (metadata, probes, the stop gate's looks).
        assert grown[pod][f"{POD_INTERFACE}.rx"] < payload / 10, grown
    leader_pod = broker_pods[state.leader]
    # The leader sends the payload to both followers over the second network.
    assert grown[leader_pod][f"{networks.SECOND_INTERFACE}.tx"] >= 2 * payload, grown
