"""The rendered local stack (its real-node variant) on the three real nodes, through the real
engine: every pod Ready through its own probes, and how long that takes."""

from __future__ import annotations

from infra.localcluster.deployed import DeployedStack, pod_ready
from infra.model import labels, stop_gate

SETTINGS = "dynamic-settings"  # the component label of the dynamic settings Job's pod
# The class archive the local image was built with (scripts/images/build.sh).
CLASS_ARCHIVE = "/opt/kafka/kafka.jsa"


def test_local_stack_is_ready_on_real_nodes(deployed_stack: DeployedStack) -> None:
    done = deployed_stack.provisioned
    assert done is not None
    # skip_await is off: `pulumi up` returned once the workloads were Ready; every pod says so.
    # The dynamic settings Job ran to completion (`pulumi up` awaited it); the rest serve.
    settings = [
        p
        for p in deployed_stack.job_pods()
        if p["metadata"]["labels"][labels.COMPONENT] == SETTINGS
    ]
    assert settings and all(p["status"]["phase"] == "Succeeded" for p in settings), settings
    pods = deployed_stack.pods()
    roles = sorted(p["metadata"]["labels"][labels.COMPONENT] for p in pods)
    # The brokers are the KRaft controllers (combined: three nodes, and the two roles never
    # share one); HAProxy in front.
    assert roles == sorted([labels.BROKER] * 3 + [labels.HAPROXY]), roles
    real = set(deployed_stack.nodes.ready())
    assert {p["spec"]["nodeName"] for p in pods} <= real
    assert [p["metadata"]["name"] for p in pods if not pod_ready(p)] == []
    assert done.changes.get("create", 0) > 0
    # Each broker's JVM maps the image's class archive: the rendered command and options keep
    # the classpath it was dumped for (a JVM drops an archive that does not match, quietly).
    for pod in deployed_stack.pods(labels.BROKER):
        name = pod["metadata"]["name"]
        maps = deployed_stack.kube.kubectl(
            "exec", "-n", deployed_stack.namespace, name, "-c", "kafka", "--",
            "cat", "/proc/1/maps",
        ).stdout  # fmt: skip
        assert CLASS_ARCHIVE in maps, name
    # A broker's preStop hook, as the live pod carries it, run in its container: the image has
    # what it needs (busybox's timeout, date and sleep, the Kafka tools), and the describe
    # through the broker's own listener finds every partition in sync, so the stop goes on.
    broker = deployed_stack.pods(labels.BROKER)[0]
    kafka = next(c for c in broker["spec"]["containers"] if c["name"] == "kafka")
    hook = deployed_stack.kube.kubectl(
        "exec", "-n", deployed_stack.namespace, broker["metadata"]["name"], "-c", "kafka", "--",
        *kafka["lifecycle"]["preStop"]["exec"]["command"],
    ).stdout  # fmt: skip
    assert stop_gate.FREE in hook and stop_gate.WAITING not in hook, hook
    seconds = deployed_stack.deploy_seconds
    print(f"\nlocal stack Ready on real nodes in {seconds:.0f} s (pulumi up included)")
