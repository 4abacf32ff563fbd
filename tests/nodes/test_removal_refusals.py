"""Fewer brokers against the deployed stack's real pods: the variant's brokers are also its KRaft
voters, so going from 3 to 2 would delete a broker that holds replicas and a voter still in the
voter set. The program's checks (`pulumi preview`/`up` run them before declaring anything) read
the going broker's replica count from its own JMX agent and the voter set from a staying
voter's quorum-membership container, both through kubectl exec, and refuse, naming the commands
that make the change safe. Nothing is changed: both are reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from infra.broker_removal import check_broker_removal
from infra.config import load_stack
from infra.errors import ConfigError
from infra.localcluster.deployed import DeployedStack
from infra.stack_config import StackConfig
from infra.voter_removal import check_voter_removal


def two_brokers(stack: DeployedStack, tmp_path: Path) -> StackConfig:
    """The deployed stack file with one broker fewer (two zones, replication factor 2)."""
    document = yaml.safe_load(stack.stack_file.read_text(encoding="utf-8"))
    config = document["config"]
    config["kafkastack:brokers"] = 2
    config["kafkastack:zones"] = config["kafkastack:zones"][:2]
    config["kafkastack:replication_factor"] = 2
    config["kafkastack:min_insync_replicas"] = 1
    sized = config["kafkastack:sizing"]["cluster"]
    sized.update(brokers=2, zones=2, brokers_per_zone=[1, 1])
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.local.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    return load_stack(stacks, "local")


def test_one_broker_fewer_is_refused_on_the_pods_own_answers(
    deployed_stack: DeployedStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(deployed_stack.kube.kubeconfig))
    client = deployed_stack.client()
    client.create_topic("proof-removal", partitions=3)
    client.wait_isr("proof-removal", 3)  # every broker holds a replica of each partition
    two = two_brokers(deployed_stack, tmp_path)
    going = deployed_stack.model.brokers[2]

    with pytest.raises(ConfigError) as refused:
        check_broker_removal(two)
    message = str(refused.value)
    count = re.search(rf"broker\(s\) {going.node_id} \((\d+) replicas\)", message)
    assert count is not None, message
    assert int(count.group(1)) >= 3, message  # the proof topic's three partitions at least
    assert f"kafkastack drain --stack local --brokers {going.node_id} " in message

    with pytest.raises(ConfigError) as still_voter:
        check_voter_removal(two)
    message = str(still_voter.value)
    assert message.startswith(
        f"kafkastack:brokers: this change deletes KRaft voter(s) {going.node_id}, which are "
        "still in the voter set of 3"
    ), message
    assert "`kafkastack remove-voters --stack local`" in message
    # The same stack as deployed passes both: nothing goes.
    check_broker_removal(deployed_stack.model.config)
    check_voter_removal(deployed_stack.model.config)
