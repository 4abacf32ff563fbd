"""A preview says when a change cannot roll: the protocol of a listener the nodes use among
themselves changes (infra/protocol_changes.py)."""

from __future__ import annotations

from typing import Any

from infra.model.templating import zookeeper_config
from infra.preview import StackPreview, markdown
from infra.protocol_changes import ProtocolChange, protocol_changes
from tests.infra.test_zookeeper_auth import model_of

SIZING = {"brokers": 3}


def config_map_step(name: str, before: str, after: str) -> dict[str, Any]:
    def state(protocols: str) -> dict[str, Any]:
        properties = f"node.id=0\nlistener.security.protocol.map={protocols}\n"
        return {
            "type": "kubernetes:core/v1:ConfigMap",
            "inputs": {"metadata": {"name": name}, "data": {"server.properties": properties}},
        }

    return {
        "op": "update",
        "urn": f"urn::{name}",
        "oldState": state(before),
        "newState": state(after),
    }


def test_a_controller_listener_moving_from_ssl_to_sasl_ssl_is_found_on_every_node() -> None:
    old = "CLIENT:SASL_PLAINTEXT,REPLICATION:SSL,CONTROLLER:SSL"
    new = "CLIENT:SASL_PLAINTEXT,REPLICATION:SSL,CONTROLLER:SASL_SSL"
    document = {
        "steps": [
            config_map_step("kafka-broker-1", old, new),
            config_map_step("kafka-broker-0", old, new),
            # A client listener's protocol is the clients' business, not the roll's.
            config_map_step("kafka-other", "CLIENT:PLAINTEXT", "CLIENT:SASL_SSL"),
        ]
    }
    assert protocol_changes(document) == [
        ProtocolChange("CONTROLLER", "SSL", "SASL_SSL", ("kafka-broker-0", "kafka-broker-1"))
    ]


def test_new_objects_and_unchanged_protocols_are_not_changes() -> None:
    same = "REPLICATION:SSL,CONTROLLER:SSL"
    created = config_map_step("kafka-broker-3", same, same)
    created["oldState"] = None
    document = {"steps": [config_map_step("kafka-broker-0", same, same), created]}
    assert protocol_changes(document) == []


def test_the_comment_says_the_change_cannot_roll_and_blocks_the_pipeline() -> None:
    change = ProtocolChange("CONTROLLER", "SSL", "SASL_SSL", ("kafka-broker-0",))
    preview = StackPreview("prod", [], SIZING, SIZING, [], protocol_changes=(change,))
    comment = markdown(preview)
    assert "**This change cannot roll**" in comment
    assert "> - CONTROLLER: SSL → SASL_SSL (`kafka-broker-0`)" in comment
    assert preview.blocked
    assert not StackPreview("prod", [], SIZING, SIZING, []).blocked


def test_an_ensemble_moving_to_tls_cannot_roll() -> None:
    # A server on TLS only and brokers or peers still on plaintext cannot talk.
    before, after = model_of(security={"replication_tls": False}), model_of()
    zk = after.quorum[0]
    step = config_map_step("kafka-zookeeper-1", "", "")
    step["oldState"]["inputs"]["data"] = {"zoo.cfg": zookeeper_config(before, zk)}
    step["newState"]["inputs"]["data"] = {"zoo.cfg": zookeeper_config(after, zk)}
    assert protocol_changes({"steps": [step]}) == [
        ProtocolChange("ZOOKEEPER", "PLAINTEXT", "TLS", ("kafka-zookeeper-1",))
    ]
    unchanged = config_map_step("kafka-zookeeper-1", "", "")
    unchanged["oldState"]["inputs"]["data"] = {"zoo.cfg": zookeeper_config(after, zk)}
    unchanged["newState"]["inputs"]["data"] = {"zoo.cfg": zookeeper_config(after, zk)}
    assert protocol_changes({"steps": [unchanged]}) == []
