"""A node of the cluster: one broker, controller or ZooKeeper server."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Node:
    """One broker, controller or ZooKeeper server: a one-replica StatefulSet pinned to a zone."""

    role: str
    node_id: int
    workload: str
    zone: str
    client_host: str
    replication_ip: str | None
    external_host: str | None = None

    @property
    def replication_host(self) -> str:
        """Where replication/controller traffic goes: the replication network when there is one."""
        return self.replication_ip or self.client_host

    @property
    def replication_bind(self) -> str:
        """Where REPLICATION/CONTROLLER listen: only the second network's address when there is
        one (nothing else reaches them), every interface otherwise (NetworkPolicy guards the
        port; binding a DNS name would fail while the pod's record is not yet published)."""
        return self.replication_ip or "0.0.0.0"
