"""Probes of Kafka pods: started, alive, and ready meaning "caught up".

Start-up and liveness dial what really listens. The kubelet's tcpSocket probe dials the pod IP
from the node. A broker's CLIENT listener binds every interface, so it answers there. A
dual-mode controller listens only on its second-network address, which the node cannot reach
(macvlan/ipvlan children are cut off from their host), so its probe runs inside the pod instead:
it looks for the listening socket in the pod's own /proc/net tables. That needs only `sh` and
`grep` (any Kafka image has both), no network tool.

A broker is ready only once it has caught up: a listening socket is there long before the
restarted broker is back in the in-sync set of its partitions, and an ordered roll (Pulumi waits
for each StatefulSet to be ready before it updates the next) that moved on then would stop the
next broker while the first still lags: partitions they share fall under min.insync.replicas.
What "caught up" reads is in_sync.py.
"""

from __future__ import annotations

import ipaddress
import shlex
from typing import Any

from infra.model import in_sync, labels, stop_gate
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node

PERIOD_SECONDS = 10
TCP_LISTEN = "0A"  # the kernel's TCP_LISTEN state in /proc/net/tcp*
# ::ffff:0:0/96 as /proc/net/tcp6 prints it: four 32-bit words, each in host byte order.
IPV4_MAPPED_PREFIX = "0000000000000000FFFF0000"

# A start-up may recover every log segment after an unclean stop (minutes on a broker with
# thousands of segments): the listener opens only after that, so liveness waits this long.
# Readiness is asked only once start-up has passed, and every step of a roll waits for it, so
# the check is frequent (a socket lookup): 10 s between checks cost 5 s per restart on average.
STARTUP_PERIOD_SECONDS = 2
STARTUP_FAILURE_THRESHOLD = 450  # 15 minutes
# Once started, a node whose listener is gone for a minute is restarted.
LIVENESS_FAILURE_THRESHOLD = 6
# A busy node may take a while to accept a connection or run the socket lookup.
LIVENESS_TIMEOUT_SECONDS = 5
# Readiness also runs a Kafka tool's JVM once per start (in_sync.py): seconds on a busy node.
READINESS_TIMEOUT_SECONDS = 30
# Two passes in a row, 5 s apart: a broker whose fetchers have not answered yet also shows a
# lag of 0 for an instant after it turns RUNNING.
READINESS_PERIOD_SECONDS = 5
READINESS_SUCCESS_THRESHOLD = 2
# SIGTERM starts a controlled shutdown: leadership moves off, the logs are flushed and closed
# cleanly (no recovery at the next start). In ZooKeeper mode the broker retries its controlled
# shutdown request 3 times (30 s request timeout, 5 s backoff): 105 s at worst. KRaft's takes
# seconds (the controller fences it and moves its leaders). Killed earlier, a broker's next
# start recovers its logs (STARTUP_FAILURE_THRESHOLD). A broker's preStop hook may hold the
# SIGTERM back first (stop_gate.py), within the same grace period.
SHUTDOWN_SECONDS = 120
TERMINATION_GRACE_SECONDS = stop_gate.LONGEST_SECONDS + SHUTDOWN_SECONDS


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


def _listener_check(model: ClusterModel, node: Node) -> dict[str, Any]:
    """The handler that says the node's own listener accepts connections."""
    p = model.ports
    if node.role == labels.BROKER:
        return {"tcpSocket": {"port": p.client}}
    if node.replication_ip is None:
        return {"tcpSocket": {"port": p.controller}}
    return {"exec": {"command": listening_command(node.replication_ip, p.controller)}}


def readiness_probe(model: ClusterModel, node: Node) -> dict[str, Any]:
    if node.role == labels.BROKER:
        return {
            "exec": {"command": in_sync.readiness_command(model, node)},
            "periodSeconds": READINESS_PERIOD_SECONDS,
            "timeoutSeconds": READINESS_TIMEOUT_SECONDS,
            "successThreshold": READINESS_SUCCESS_THRESHOLD,
        }
    return {**_listener_check(model, node), "periodSeconds": PERIOD_SECONDS}


def kafka_probes(model: ClusterModel, node: Node) -> dict[str, Any]:
    """A broker's or KRaft controller's startup, liveness and readiness probes."""
    listener = _listener_check(model, node)
    return {
        "startupProbe": {
            **listener,
            "periodSeconds": STARTUP_PERIOD_SECONDS,
            "failureThreshold": STARTUP_FAILURE_THRESHOLD,
        },
        "livenessProbe": {
            **listener,
            "periodSeconds": PERIOD_SECONDS,
            "timeoutSeconds": LIVENESS_TIMEOUT_SECONDS,
            "failureThreshold": LIVENESS_FAILURE_THRESHOLD,
        },
        "readinessProbe": readiness_probe(model, node),
    }


def four_letter_word_probe(host: str, port: int, word: str, expect: str) -> dict[str, Any]:
    """An exec probe asking ZooKeeper a four-letter word (whitelisted in zoo.cfg) over bash's
    /dev/tcp on its plaintext port: the image needs no netcat or TLS client, and the JVM is not
    started once per probe."""
    script = (
        f"exec 3<>/dev/tcp/{host}/{port} && printf {word} >&3 && grep -q {shlex.quote(expect)} <&3"
    )
    return {"exec": {"command": ["bash", "-c", script]}, "periodSeconds": 10, "timeoutSeconds": 5}


def zookeeper_probes(host: str, port: int) -> dict[str, Any]:
    """Ready when serving as leader or follower (`srvr` says its Mode), alive when it answers;
    `host`: where its plaintext port listens (zookeeper_tls.plain_client_host)."""
    return {
        "readinessProbe": four_letter_word_probe(host, port, "srvr", "Mode: "),
        "livenessProbe": {
            **four_letter_word_probe(host, port, "ruok", "imok"),
            "initialDelaySeconds": 30,
            "failureThreshold": 6,
        },
    }
