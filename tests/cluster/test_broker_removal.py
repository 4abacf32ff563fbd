"""Fewer brokers through the real engine: the program asks the running cluster before declaring
anything, and refuses while it cannot tell that the brokers that go hold no replicas.

On this tier the API server is real (it lists the broker StatefulSets) and the pods are kwok's,
which run no Kafka and serve no `kubectl exec`: so the going brokers' metrics do not answer, and
the change is refused as unverified until the stack says `allow_unverified_broker_removal`. (A
broker that answers with replicas is refused with the drain command: tests/infra/
test_broker_removal.py, whose stand-in kubectl answers as the agents do.)
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from infra.engine import EngineError
from infra.localcluster.control_plane import LocalKubernetes
from infra.localcluster.provision import local_engine
from tests.cluster.conftest import deploy
from tests.cluster.test_engine import uids
from tests.infra.conftest import apply_sizing

pytestmark = pytest.mark.cluster
GONE_SECONDS = 60


def test_fewer_brokers_are_refused_before_anything_is_touched_unless_overridden(
    kube: LocalKubernetes, own_stack: Path, tmp_path: Path
) -> None:
    engine = local_engine(kube, tmp_path / "state")
    apply_sizing(own_stack.parent, "local", tmp_path, brokers=5, brokers_per_zone=[2, 2, 1])
    five = deploy(kube, own_stack, engine)
    name = five.config.cluster_name
    workloads = uids(five, "statefulsets")
    pods = uids(five, "pods")
    assert {f"{name}-broker-3", f"{name}-broker-4"} <= set(workloads)

    apply_sizing(own_stack.parent, "local", tmp_path, brokers=3, brokers_per_zone=[1, 1, 1])
    engine.select("local", own_stack)
    refusals = engine.preview("local").errors
    assert any("kafkastack:brokers: broker(s) 3 (" in r for r in refusals), refusals
    with pytest.raises(EngineError) as err:
        engine.up_events("local")
    message = " ".join(str(err.value).split())
    assert "kafkastack:brokers: broker(s) 3 (" in message and "4 (" in message, message
    assert "kafkastack drain --stack local --brokers 3,4" in message
    assert "allow_unverified_broker_removal" in message
    # Refused before any resource was declared: every workload and pod is still the same one.
    assert uids(five, "statefulsets") == workloads
    assert uids(five, "pods") == pods

    document = yaml.safe_load(own_stack.read_text())
    document["config"]["kafkastack:allow_unverified_broker_removal"] = True
    own_stack.write_text(yaml.safe_dump(document, sort_keys=False))
    three = deploy(kube, own_stack, engine)
    # The local stack skips Pulumi's awaits (kwok runs no Kafka), so `up` may return while the
    # API server still holds the deleted StatefulSets until their pods are gone (a foreground
    # deletion): a fresh-clone run read broker-3 there right after `up`.
    going = {f"{name}-broker-3", f"{name}-broker-4"}
    deadline = time.monotonic() + GONE_SECONDS
    while (left := uids(three, "statefulsets")).keys() & going and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left.keys() & going, left
    assert {k: v for k, v in workloads.items() if k in left} == left  # the rest kept
