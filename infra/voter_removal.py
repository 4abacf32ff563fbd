"""Fewer KRaft voters only once the voters that go have left the voter set (issue 14, "Quorum
and recovery").

Nothing removes a voter from a KIP-853 quorum by itself: a voter's StatefulSet deleted while it
is in the voter set leaves a quorum whose majority still counts it. 5 → 3 controllers that way
leaves 3 live voters of 5, so one more lost controller stops every metadata change (topic
creation, leader elections, ISR changes). So, as for fewer brokers (infra/broker_removal.py),
the program asks the running cluster before anything is declared, and refuses while a voter the
stack no longer declares is still a voter, naming `kafkastack remove-voters`. That command takes
them out through the dynamic quorum one at a time, each only while the voters that stay are a
caught-up majority, and waits until the voter set no longer lists it.

The quorum is asked where it can be from here: in a staying voter's `quorum-membership`
container, through `kubectl exec`, with the login that container uses (the controllers'
listener admits only Kafka pods). An API server that does not answer is already
broker_removal's refusal (one override for a cluster the program cannot ask); voter pods that do
not answer while voters would go are refused here unless the stack sets
`allow_unverified_voter_removal: true` for that one change.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from infra.broker_removal import node_id
from infra.config_base import NAMESPACE
from infra.errors import ConfigError
from infra.model import labels, membership
from infra.model.cluster import ClusterModel
from infra.model.quorum import voter_addresses
from infra.pod_metrics import kubectl, objects
from infra.stack_config import StackConfig

OVERRIDE_KEY = "allow_unverified_voter_removal"
# A JVM tool in a pod: seconds to start, more on a loaded node.
EXEC_TIMEOUT_SECONDS = 90
POLL_SECONDS = 2


class QuorumUnreachable(Exception):
    """No staying voter's pod answered the question (each one's reason, joined)."""


# (pod, container, shell command) → what it printed; raises QuorumUnreachable.
Exec = Callable[[str, str, str], str]


def kubectl_exec(namespace: str) -> Exec:
    def run(pod: str, container: str, command: str) -> str:
        reply = kubectl(
            *("exec", "-n", namespace, pod, "-c", container, "--", "sh", "-c", command),
            timeout=EXEC_TIMEOUT_SECONDS,
        )
        if isinstance(reply, str):
            raise QuorumUnreachable(f"{pod}: {reply}")
        return reply.stdout

    return run


@dataclass(frozen=True)
class VoterSet:
    """The running quorum as the staying voters' pods see it (`model`: the stack as declared)."""

    model: ClusterModel
    run: Exec

    @property
    def staying(self) -> set[int]:
        return {v.node_id for v in self.model.voters}

    def _tool(self, arguments: str) -> str:
        """`kafka-metadata-quorum ARGUMENTS` in the first staying voter's pod that answers."""
        tried, last = [], "the stack declares no voter"
        for voter in self.model.voters:
            pod = self.model.names.pod(voter.workload)
            command = f"{membership.quorum_tool(voter_addresses(self.model))} {arguments}"
            try:
                return self.run(pod, membership.CONTAINER, command)
            except QuorumUnreachable as err:
                tried.append(pod)
                last = str(err).removeprefix(f"{pod}: ")
        raise QuorumUnreachable(
            f"no voter pod answered `kafka-metadata-quorum {arguments.split(' --')[0]}` "
            f"(tried {', '.join(tried) or 'none'}); the last said: {last[-300:]}"
        )

    def voters(self) -> dict[int, str]:
        """Voter id → directory id."""
        status = self._tool("describe --status")
        found = membership.current_voters(status)
        if found is None:
            raise QuorumUnreachable(f"describe --status listed no voter set: {status[-300:]!r}")
        return found

    def going(self) -> dict[int, str]:
        """The voters this stack no longer declares, by id."""
        return {i: d for i, d in self.voters().items() if i not in self.staying}

    def staying_majority_caught_up(self) -> bool:
        """A majority of the staying voters in the set are Leader or Follower with no lag."""
        rows = membership.replication_rows(self._tool("describe --replication"))
        voting = {int(r["NodeId"]) for r in rows if r.get("Status") in ("Leader", "Follower")}
        members = voting & self.staying
        live = {
            int(r["NodeId"])
            for r in rows
            if int(r["NodeId"]) in members
            and r.get("Status") in ("Leader", "Follower")
            and r.get("Lag") == "0"
        }
        return bool(members) and len(live) * 2 > len(members)

    def remove(self, voter: int, directory: str) -> None:
        self._tool(
            f"remove-controller --controller-id {voter} --controller-directory-id {directory}"
        )


def _field(config: StackConfig) -> str:
    return "brokers" if config.quorum.combined else "quorum.nodes"


def remove_command(config: StackConfig) -> str:
    return f"kafkastack remove-voters --stack {config.environment}"


def check_voter_removal(config: StackConfig, run: Exec | None = None) -> None:
    """Refuse (ConfigError) a change that deletes KRaft voters still in the voter set, or may."""
    if config.quorum.kind != "kraft":
        return
    model = ClusterModel.from_config(config)
    component = labels.BROKER if config.quorum.combined else labels.CONTROLLER
    found = objects(
        config.namespace,
        "statefulsets",
        {labels.INSTANCE: config.cluster_name, labels.COMPONENT: component},
    )
    if isinstance(found, str):
        return  # the API server did not answer: infra/broker_removal.py has refused already
    declared = {v.workload for v in model.voters}
    deleted = sorted(s["metadata"]["name"] for s in found if s["metadata"]["name"] not in declared)
    deleted_ids = {node_id(w) for w in deleted}
    if not deleted:
        return
    quorum = VoterSet(model, run or kubectl_exec(config.namespace))
    field = f"{NAMESPACE}:{_field(config)}"
    try:
        voters = quorum.voters()
    except QuorumUnreachable as err:
        if config.allow_unverified_voter_removal:
            return
        raise ConfigError(
            f"{field}: this change deletes {', '.join(deleted)}, and no staying voter's pod "
            f"answered which nodes are KRaft voters ({err}); reach them and run again, run "
            f"`{remove_command(config)}` first, or set {NAMESPACE}:{OVERRIDE_KEY}: true for this "
            "change once you know none of them is a voter"
        ) from None
    still = sorted(i for i in voters if i in deleted_ids)
    if still:
        left = len(voters) - len(still)
        raise ConfigError(
            f"{field}: this change deletes KRaft voter(s) {', '.join(map(str, still))}, which "
            f"are still in the voter set of {len(voters)}: the quorum would keep counting them, "
            f"so with {left} live voters of {len(voters)} it could lose only "
            f"{max(left - (len(voters) // 2 + 1), 0)} more before metadata stops. Remove them "
            f"from the quorum first: `{remove_command(config)}`, then run again"
        )


def remove_voters(
    config: StackConfig,
    run: Exec,
    echo: Callable[[str], None],
    timeout: float = 600,
    dry_run: bool = False,
) -> list[int]:
    """Take every voter the stack no longer declares out of the voter set, one at a time, each
    once the staying voters are a caught-up majority; returns the ids removed (or to remove)."""
    if config.quorum.kind != "kraft":
        raise ConfigError(
            f"{NAMESPACE}:quorum.kind: {config.quorum.kind} has no KRaft voters to remove; "
            "a ZooKeeper ensemble's members are its zoo.cfg servers"
        )
    quorum = VoterSet(ClusterModel.from_config(config), run)
    going = quorum.going()
    # Removing voters while some that stay are not voters yet could shrink the set below what
    # the stack declares (down to one voter): they join first.
    absent = sorted(quorum.staying - set(quorum.voters()))
    if absent and going:
        raise ConfigError(
            f"{NAMESPACE}:{_field(config)}: {', '.join(map(str, absent))} of the voters this "
            "stack declares are not in the voter set yet; wait until their pods are Ready (their "
            "quorum-membership containers add them), then run again"
        )
    if not going:
        echo("every voter is one the stack declares: nothing to remove")
        return []
    order = sorted(going, reverse=True)
    echo(f"voters to remove, one at a time: {', '.join(map(str, order))}")
    if dry_run:
        return order
    deadline = time.monotonic() + timeout
    for voter in order:
        started = time.monotonic()
        while not quorum.staying_majority_caught_up():
            if time.monotonic() > deadline:
                raise QuorumUnreachable(
                    f"voter {voter} not removed: the voters that stay were no caught-up "
                    f"majority for {timeout:g} s (see `describe --replication`)"
                )
            time.sleep(POLL_SECONDS)
        echo(f"removing voter {voter} (directory {going[voter]})")
        quorum.remove(voter, going[voter])
        while voter in (now := quorum.voters()):
            if time.monotonic() > deadline:
                raise QuorumUnreachable(
                    f"voter {voter} is still in the voter set after {timeout:g} s"
                )
            time.sleep(POLL_SECONDS)
        echo(
            f"voter {voter} removed in {time.monotonic() - started:.1f} s; voters now "
            f"{', '.join(map(str, sorted(now)))}"
        )
    return order
