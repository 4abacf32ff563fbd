"""Every port a Kafka cluster's pods and services use, in one place."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ports:
    client: int = 9092
    replication: int = 9091
    controller: int = 9093
    external: int = 9094
    metrics: int = 9404
    zookeeper_client: int = 2181
    zookeeper_peer: int = 2888
    zookeeper_election: int = 3888
    haproxy: int = 443
    route: int = 443
