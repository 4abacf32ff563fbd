"""The ZooKeeper mode (Kafka 3.9) on real nodes: the local stack's real-node variant with a
three-server ensemble, on the Kafka 3.9 and ZooKeeper images built here, comes up through
`pulumi up` with every pod Ready through its own probes (the servers answer `srvr` as leader or
follower), and the admin's SCRAM login, which only the brokers' `scram-users` init containers
wrote into ZooKeeper, carries an acks=all produce and its read-back from inside the cluster.

Then the cluster's cert-manager renews one server's certificate: ZooKeeper 3.8 reads its
certificate only at start, so the next `pulumi up` restarts that server and nothing else
(infra/certificate_restarts.py), and the cluster serves acks=all writes after it."""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

from infra.localcluster import cert_manager, images
from infra.localcluster.deployed import DeployedStack
from infra.localcluster.nodes import RealNodes
from infra.localcluster.pod_client import lost, out_of_order
from infra.localcluster.real_stack import BROKERS, ZOOKEEPER_SERVERS
from infra.model import labels
from infra.model.security import certificates

RECORDS = 300


def test_zookeeper_mode_serves_acks_all_with_the_scram_users_the_manifests_wrote(
    released_nodes: RealNodes, repo_root: Path, tmp_path: Path
) -> None:
    real_nodes = released_nodes
    started = time.monotonic()
    # Brokers and ZooKeeper servers never share a node: one node more per server. Every pod of
    # this stack runs Kafka 3.9's image (the client pod too): the new nodes skip Kafka 4.3's
    # (about 400 MiB unpacked and 15 s of import each).
    wanted = (*[i for i in images.ALL if i != images.KAFKA], *images.ZOOKEEPER_MODE)
    real_nodes.import_images(images.ZOOKEEPER_MODE)
    added = real_nodes.add(ZOOKEEPER_SERVERS, wanted=wanted)
    stack = DeployedStack(
        real_nodes, repo_root / "stacks" / "Pulumi.local.yaml", tmp_path, quorum="zookeeper"
    )
    try:
        stack.ensure()
        print(
            f"\nZooKeeper-mode stack Ready on {len(real_nodes.specs)} real nodes in "
            f"{time.monotonic() - started:.0f} s (pulumi up {stack.deploy_seconds:.0f} s)"
        )
        model = stack.model
        assert model.config.quorum.kind == "zookeeper"
        servers = stack.pods(labels.ZOOKEEPER)
        brokers = stack.pods(labels.BROKER)
        assert (len(servers), len(brokers)) == (ZOOKEEPER_SERVERS, BROKERS)
        # Every pod on a node of its own, from the images built here.
        assert len({p["spec"]["nodeName"] for p in servers + brokers}) == len(servers + brokers)
        assert {p["spec"]["containers"][0]["image"] for p in servers} == {images.ZOOKEEPER.ref}
        assert {p["spec"]["containers"][0]["image"] for p in brokers} == {
            f"{model.config.images.kafka.repository}:{images.KAFKA_ZOOKEEPER_MODE.tag}"
        }
        # ZooKeeper logs through the logback.xml the manifests mount in ZOOCFGDIR (its
        # pattern, not the image's default): zkServer.sh puts that folder on the classpath.
        log = real_nodes.kube.kubectl(
            "logs", "-n", stack.namespace, servers[0]["metadata"]["name"], "-c", "zookeeper"
        ).stdout
        manifests_pattern = r"^\[[\d-]+ [\d:]+,\d{3}\] INFO .* \(org\.apache\.zookeeper\."
        assert re.search(manifests_pattern, log, re.MULTILINE), log[:500]

        client = stack.client()
        topic = "proof-zookeeper-mode"
        client.create_topic(topic, partitions=3)
        client.wait_isr(topic, 3)
        acked, errors = client.produce(topic, count=RECORDS, keys=12)
        assert len(acked) == RECORDS and errors == []
        assert Counter(a.partition for a in acked).keys() == {0, 1, 2}
        consumed = client.consume(topic, expect=RECORDS)
        assert lost(acked, consumed) == [] and out_of_order(consumed) == []

        server = model.quorum[1]
        uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in stack.pods()}
        renewed = next(
            c["metadata"]["name"]
            for c in certificates(model)
            if c["spec"]["secretName"] == model.names.tls_secret(server.workload)
        )
        cert_manager.renew(stack.kube, stack.namespace, [renewed])
        roll_started = time.monotonic()
        rolled = stack.change(lambda values: None)
        stack.wait_ready()
        after = {p["metadata"]["name"]: p["metadata"]["uid"] for p in stack.pods()}
        replaced = sorted(name for name, uid in uids.items() if after.get(name) != uid)
        assert replaced == [model.names.pod(server.workload)], (replaced, rolled.changes)
        assert rolled.changes.get("update") == 1, rolled.changes
        acked, errors = client.produce(topic, count=RECORDS, keys=12)
        assert len(acked) == RECORDS and errors == []
        assert lost(acked, client.consume(topic, expect=2 * RECORDS)) == []
        print(
            f"renewed certificate of {server.workload}: it alone restarted, Ready again "
            f"{time.monotonic() - roll_started:.0f} s after `pulumi up` began"
        )
        print(f"ZooKeeper-mode proof done in {time.monotonic() - started:.0f} s")
    finally:
        stack.release()
        real_nodes.remove(added)
