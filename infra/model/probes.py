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
"""

from __future__ import annotations

import ipaddress
import shlex
from typing import Any

from infra.model import labels, metrics
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node

PERIOD_SECONDS = 10
TCP_LISTEN = "0A"  # the kernel's TCP_LISTEN state in /proc/net/tcp*
# ::ffff:0:0/96 as /proc/net/tcp6 prints it: four 32-bit words, each in host byte order.
IPV4_MAPPED_PREFIX = "0000000000000000FFFF0000"

# Kafka's BrokerState while it serves: caught up with the metadata log and unfenced.
BROKER_RUNNING = 3
# A start-up may recover every log segment after an unclean stop (minutes on a broker with
# thousands of segments): the listener opens only after that, so liveness waits this long.
# Readiness is asked only once start-up has passed, and every step of a roll waits for it, so
# the check is frequent (a socket lookup): 10 s between checks cost 5 s per restart on average.
STARTUP_PERIOD_SECONDS = 2
STARTUP_FAILURE_THRESHOLD = 450  # 15 minutes
# Once started, a node whose listener is gone for a minute is restarted.
LIVENESS_FAILURE_THRESHOLD = 6
# A scrape of the JMX agent reads the MBeans it serves; on a busy broker that takes a while.
READINESS_TIMEOUT_SECONDS = 5
# Two passes in a row, 5 s apart: a broker whose fetchers have not answered yet also shows a
# lag of 0 for an instant after it turns RUNNING.
READINESS_PERIOD_SECONDS = 5
READINESS_SUCCESS_THRESHOLD = 2
# SIGTERM starts a controlled shutdown: leadership moves off, the logs are flushed and closed
# cleanly (no recovery at the next start). In ZooKeeper mode the broker retries its controlled
# shutdown request 3 times (30 s request timeout, 5 s backoff): 105 s at worst. KRaft's takes
# seconds (the controller fences it and moves its leaders). Killed earlier, a broker's next
# start recovers its logs (STARTUP_FAILURE_THRESHOLD).
TERMINATION_GRACE_SECONDS = 120


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


def caught_up_command(metrics_port: int) -> list[str]:
    """Exit 0 when the broker is RUNNING and trails no leader: its replica fetchers' largest lag
    behind their leaders' high watermark (MaxLag, in messages, over every partition it follows)
    is 0. A follower whose fetches reach the high watermark is in (or, one AlterPartition away,
    about to join) the ISR; the partitions it leads it is in the ISR of by definition. So a
    restarted broker turns ready once it is back in the in-sync set of all its partitions.

    The JMX agent in the broker's own JVM serves both figures on localhost: busybox `wget` (in
    apache/kafka's Alpine base and the local image) and `awk` read them without a JVM per probe.
    A missing figure (agent not up, broker starting) reads as not ready.

    MaxLag's limit, and a count of the followed partitions tried and dropped because idle
    partitions lose their figure after a fetcher rebuild: docs/provisioning.md ("caught up")."""
    wget = metrics.scrape_command(metrics_port, (metrics.BROKER_STATE, metrics.REPLICA_MAX_LAG))
    check = (
        f'$1 == "{metrics.BROKER_STATE}" {{ state = $2 }} '
        f'$1 == "{metrics.REPLICA_MAX_LAG}" {{ lag = $2 }} '
        f'END {{ exit !(state == {BROKER_RUNNING} && lag != "" && lag + 0 == 0) }}'
    )
    return ["sh", "-c", f"{wget} | busybox awk {shlex.quote(check)}"]


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
            "exec": {"command": caught_up_command(model.ports.metrics)},
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
            "timeoutSeconds": READINESS_TIMEOUT_SECONDS,
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
