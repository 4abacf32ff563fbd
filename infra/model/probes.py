"""Readiness probes that dial what really listens.

The kubelet's tcpSocket probe dials the pod IP from the node. A broker's CLIENT listener binds
every interface, so it answers there. A dual-mode controller listens only on its second-network
address, which the node cannot reach (macvlan/ipvlan children are cut off from their host), so
its probe runs inside the pod instead: it looks for the listening socket in the pod's own
/proc/net tables. That needs only `sh` and `grep` (any Kafka image has both), no network tool.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node

PERIOD_SECONDS = 10
TCP_LISTEN = "0A"  # the kernel's TCP_LISTEN state in /proc/net/tcp*
# ::ffff:0:0/96 as /proc/net/tcp6 prints it: four 32-bit words, each in host byte order.
IPV4_MAPPED_PREFIX = "0000000000000000FFFF0000"


def proc_net_pattern(address: str, port: int) -> str:
    """An extended regex matching a socket listening on `address:port` in /proc/net/tcp or tcp6.

    The kernel prints a socket's IPv4 address as the 32-bit word in host byte order (little-endian
    on x86-64 and arm64, so 10.20.0.1 reads 0100140A), and the JVM's IPv6 sockets bound to an
    IPv4 address show it as ::ffff:a.b.c.d, whose last word is that same text.
    """
    packed = ipaddress.IPv4Address(address).packed
    word = "".join(f"{b:02X}" for b in reversed(packed))
    return rf"^ *[0-9]+: ({IPV4_MAPPED_PREFIX})?{word}:{port:04X} [0-9A-F]+:[0-9A-F]+ {TCP_LISTEN} "


def listening_command(address: str, port: int) -> list[str]:
    pattern = proc_net_pattern(address, port)
    # -s: a kernel without IPv6 has no tcp6 table; a match in tcp still counts.
    return ["sh", "-c", f"grep -qsE '{pattern}' /proc/net/tcp /proc/net/tcp6"]


def readiness_probe(model: ClusterModel, node: Node) -> dict[str, Any]:
    p = model.ports
    if node.role == labels.BROKER:
        return {"tcpSocket": {"port": p.client}, "periodSeconds": PERIOD_SECONDS}
    if node.replication_ip is None:
        return {"tcpSocket": {"port": p.controller}, "periodSeconds": PERIOD_SECONDS}
    return {
        "exec": {"command": listening_command(node.replication_ip, p.controller)},
        "periodSeconds": PERIOD_SECONDS,
    }
