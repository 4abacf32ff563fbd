"""Changes a rolling restart cannot carry: the security protocol of a listener the nodes use
among themselves (CONTROLLER: votes and metadata; REPLICATION: followers, the channel to the
active controller; in ZooKeeper mode the ensemble's client port, read from zoo.cfg: TLS once it
has a `secureClientPort`).

A node restarted with the new protocol and a node still running the old one cannot talk on that
listener (an SSL client meets a SASL_SSL server, or a plaintext one meets TLS). An ordered roll
restarts the first node, which then never catches up (its readiness never passes), so the roll
stops there; with a quorum of three, the second restart would leave no majority speaking one
protocol. Such a change has to restart every Kafka pod together: a short outage to plan, which a
preview must say before `pulumi up` starts the roll.

Read from `pulumi preview --json`: the old and new inputs of each ConfigMap step whose files set
`listener.security.protocol.map`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The listeners nodes use among themselves (broker_config: the same names in every mode).
ZOOKEEPER = "ZOOKEEPER"
BETWEEN_NODES = ("CONTROLLER", "REPLICATION", ZOOKEEPER)
PROTOCOL_MAP = "listener.security.protocol.map"


@dataclass(frozen=True)
class ProtocolChange:
    listener: str
    before: str
    after: str
    config_maps: tuple[str, ...]  # the ConfigMaps (Kubernetes names) that carry the change

    def sentence(self) -> str:
        names = ", ".join(f"`{n}`" for n in self.config_maps[:4])
        more = f" and {len(self.config_maps) - 4} more" if len(self.config_maps) > 4 else ""
        return f"{self.listener}: {self.before} → {self.after} ({names}{more})"


def protocol_maps(data: object) -> dict[str, str]:
    """Listener → protocol, from every properties file of a ConfigMap's `data`."""
    found: dict[str, str] = {}
    if not isinstance(data, dict):
        return found
    for text in data.values():
        if not isinstance(text, str):
            continue
        keys = {line.partition("=")[0].strip() for line in text.splitlines()}
        if "clientPort" in keys:  # a zoo.cfg (zookeeper_tls.py)
            found[ZOOKEEPER] = "TLS" if "secureClientPort" in keys else "PLAINTEXT"
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key.strip() != PROTOCOL_MAP:
                continue
            for pair in value.split(","):
                listener, _, protocol = pair.strip().partition(":")
                if listener and protocol:
                    found[listener] = protocol
    return found


def _inputs(state: object) -> dict[str, Any]:
    inputs = state.get("inputs") if isinstance(state, dict) else None
    return inputs if isinstance(inputs, dict) else {}


def protocol_changes(document: dict[str, Any]) -> list[ProtocolChange]:
    """The between-node listeners whose protocol a previewed update of the nodes' ConfigMaps
    changes, each with the ConfigMaps that change it."""
    changed: dict[tuple[str, str, str], list[str]] = {}
    for step in document.get("steps", []):
        old, new = _inputs(step.get("oldState")), _inputs(step.get("newState"))
        if not old or not new:
            continue  # a new or deleted object: no node runs both sides of it
        before, after = protocol_maps(old.get("data")), protocol_maps(new.get("data"))
        name = str((new.get("metadata") or {}).get("name") or step.get("urn", ""))
        for listener in BETWEEN_NODES:
            if listener in before and listener in after and before[listener] != after[listener]:
                changed.setdefault((listener, before[listener], after[listener]), []).append(name)
    return [
        ProtocolChange(listener, before, after, tuple(sorted(names)))
        for (listener, before, after), names in sorted(changed.items())
    ]
