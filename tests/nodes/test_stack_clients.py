"""Clients inside the cluster network against the rendered stack's pods: the stack's own admin
login (SCRAM over TLS, its Secret's password, its CA) through the bootstrap Service and
through HAProxy, with Kafka's own tools from the stack's image
(infra/localcluster/pod_client.py)."""

from __future__ import annotations

from collections import Counter

from infra.localcluster.deployed import DeployedStack
from infra.localcluster.pod_client import lost, out_of_order


def test_acks_all_records_come_back_in_order_through_the_bootstrap_service(
    deployed_stack: DeployedStack,
) -> None:
    client = deployed_stack.client()
    topic = "proof-bootstrap"
    client.create_topic(topic, partitions=3)
    client.wait_isr(topic, 3)
    acked, errors = client.produce(topic, count=600, keys=12)
    assert len(acked) == 600 and errors == []
    # Records went to every partition (keys spread over them), each of three replicas.
    assert Counter(a.partition for a in acked).keys() == {0, 1, 2}
    consumed = client.consume(topic, expect=600)
    assert lost(acked, consumed) == []
    assert len(consumed) == 600
    assert out_of_order(consumed) == []


def test_external_clients_reach_every_broker_through_haproxy_and_plaintext_is_refused(
    deployed_stack: DeployedStack,
) -> None:
    client = deployed_stack.client()
    topic = "proof-external"
    client.create_topic(topic, partitions=3)
    states = client.wait_isr(topic, 3)
    # Each partition led by another broker: writing to all three needs every broker's SNI route.
    assert {s.leader for s in states.values()} == {b.node_id for b in deployed_stack.model.brokers}
    acked, errors = client.produce(topic, count=300, external=True)
    assert len(acked) == 300 and errors == []
    assert {a.partition for a in acked} == {0, 1, 2}
    consumed = client.consume(topic, expect=300, external=True)
    assert lost(acked, consumed) == [] and out_of_order(consumed) == []
    # The same login and address without TLS: HAProxy closes what is not a TLS ClientHello.
    assert client.external_plaintext_refused()
