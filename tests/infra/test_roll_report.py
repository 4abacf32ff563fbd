"""What a failed roll's report keeps of the Kafka pods' logs: the lines that tell why a partition
fell under min.insync.replicas, the quorum's elections and resignations that lead to a fencing
included (the open finding in docs/provisioning.md: a leaderless quorum, a re-election, then a
broker fenced for its late heartbeats), and nothing of the rest."""

from __future__ import annotations

import subprocess
from typing import Any

from infra.localcluster import disruptions
from infra.model import labels

# Lines as Kafka 4.3 logs them (kubelet timestamps first, as `kubectl logs --timestamps` gives).
T = "2026-11-29T08:21:04.123456789Z"
TOLD = [
    f"{T} [2026-11-29 08:21:04,120] INFO [RaftManager id=9000] Completed transition to "
    "Leader(localId=9000, epoch=7) from CandidateState(localId=9000, epoch=7) "
    "(org.apache.kafka.raft.QuorumState)",
    f"{T} [2026-11-29 08:21:06,300] INFO [RaftManager id=9000] Did not receive fetch request from "
    "the majority of the voters within 3000ms. Current fetched voters are [9000]. "
    "(org.apache.kafka.raft.LeaderState)",
    f"{T} [2026-11-29 08:21:09,010] INFO [QuorumController id=9000] Becoming the active "
    "controller at epoch 8, next write offset 1234. (org.apache.kafka.controller.QuorumController)",
    f"{T} [2026-11-29 08:21:18,700] INFO [QuorumController id=9000] Fencing broker 2 because its "
    "session has timed out. (org.apache.kafka.controller.ReplicationControlManager)",
    f"{T} [2026-11-29 08:21:14,000] WARN [BrokerLifecycleManager id=2] Unable to send a heartbeat "
    "because the RPC got timed out before it could be sent. (kafka.server.BrokerLifecycleManager)",
    f"{T} [2026-11-29 08:21:18,800] INFO [Partition proof-0 broker=1] Shrinking ISR from 1,2 to 1. "
    "(kafka.cluster.Partition)",
    f"{T} [2026-11-29 08:21:17,500] INFO [BrokerServer id=0] Transition from STARTED to "
    "SHUTTING_DOWN; controlled shutdown requested (kafka.server.BrokerServer)",
]
UNTOLD = [
    f"{T} [2026-11-29 08:21:05,000] INFO [LogLoader partition=proof-0] Loading producer state "
    "till offset 12 (kafka.log.UnifiedLog$)",
    f"{T} [2026-11-29 08:21:05,100] INFO [SocketServer listenerType=BROKER, nodeId=1] Enabling "
    "request processing. (kafka.network.SocketServer)",
]


class Kube:
    def __init__(self, logs: dict[str, str]) -> None:
        self.logs = logs

    def kubectl(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert argv[0] == "logs" and "--timestamps" in argv, argv
        return subprocess.CompletedProcess(argv, 0, self.logs[argv[1]], "")


class Stack:
    namespace = "kafka-local"

    def __init__(self, logs: dict[str, str]) -> None:
        self.kube = Kube(logs)

    def pods(self, component: str | None = None) -> list[dict[str, Any]]:
        names = {labels.BROKER: ["kafka-broker-0"], labels.CONTROLLER: ["kafka-controller-9000"]}
        return [{"metadata": {"name": n}} for n in names.get(component or "", [])]


def test_the_report_keeps_elections_resignations_fencing_and_heartbeats_and_drops_the_rest() -> (
    None
):
    controller = "\n".join([*TOLD[:4], *UNTOLD])
    broker = "\n".join([UNTOLD[1], *TOLD[4:]])
    stack = Stack({"kafka-controller-9000": controller, "kafka-broker-0": broker})
    history = disruptions.isr_history(stack)  # type: ignore[arg-type]
    assert history == {"kafka-broker-0": TOLD[4:], "kafka-controller-9000": TOLD[:4]}


def test_a_long_log_keeps_its_last_lines() -> None:
    many = [f"{T} INFO Shrinking ISR {i}" for i in range(disruptions.ISR_LOG_LINES + 5)]
    stack = Stack({"kafka-controller-9000": "", "kafka-broker-0": "\n".join(many)})
    history = disruptions.isr_history(stack)  # type: ignore[arg-type]
    assert history["kafka-broker-0"] == many[5:]
    assert history["kafka-controller-9000"] == ["(none)"]
