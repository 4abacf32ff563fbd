"""A broker's stop waits while it is all that keeps a partition at min.insync.replicas.

Every stop of a broker pod goes through the kubelet: a roll's step (`pulumi up`), a drain's
eviction, a `kubectl delete pod`. Readiness (in_sync.py) makes each step of a roll wait until
the restarted broker is back in the in-sync sets, but it cannot see what happens to *another*
broker after that: on real nodes a broker was once fenced for a late heartbeat just after the
active controller's restart, the roll stopped the next broker, and partitions were in sync on
one broker for about a second (docs/provisioning.md, "Open finding"). Strimzi's roller asks
the same question before each restart; here there is no operator, so the pod asks it itself,
as its container's preStop hook, which the kubelet runs before it sends SIGTERM.

The hook describes the partitions that are at or under their topic's min.insync.replicas
(`kafka-topics --describe --at-min-isr-partitions --under-min-isr-partitions`, through the
broker's own listener and identity, own_listener.py) and waits while any of them lists this
broker in its ISR *and* misses another of its replicas: stopping the broker would take it
below min ISR, and the missing replica coming back is what waiting can bring. A partition whose
every replica is in sync while at min ISR (replicas = min.insync.replicas) is not waited for:
no wait makes stopping one of its replicas safe. Replicas a reassignment is adding are not
counted as missing: they join the ISR when their copy ends, which may take hours.

It asks every `POLL_SECONDS` for at most `GATE_SECONDS`, then lets the stop go on and exits
non-zero, so the kubelet records a `FailedPreStopHook` event naming the partitions. The bound is
the grace period's (probes.TERMINATION_GRACE_SECONDS keeps the controlled shutdown's whole
budget after it): a replica that stays away (its node lost) delays each stop by a minute, it
does not hold the roll forever. A broker that is not serving (starting, recovering, its agent
silent) is in no in-sync set for long: it stops at once. When every broker stops at once
(`pulumi destroy`), each hook asks while the others still serve, finds every partition in sync
and passes: one describe per broker.
"""

from __future__ import annotations

import shlex

from infra.model import in_sync, metrics
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node
from infra.model.paths import SCRIPT_LOG_DIR

GATE_SECONDS = 60
POLL_SECONDS = 5
# How long the hook can take at most: its last describe may begin just before the bound.
LONGEST_SECONDS = GATE_SECONDS + in_sync.DESCRIBE_SECONDS
SCRAPE_SECONDS = 5  # the agent answers on localhost within milliseconds when it answers at all
CLIENT_FILE = f"{SCRIPT_LOG_DIR}/stop-gate-client.properties"
ERRORS_FILE = f"{SCRIPT_LOG_DIR}/stop-gate-describe.err"
REPORT = "--at-min-isr-partitions --under-min-isr-partitions"
GATE_FUNCTION = "needed"  # the hook's shell function: one look at the partitions
# What the hook prints when nothing needs the broker, and before each wait (the kafka tier
# reads them, tests/kafka/test_stop_gate.py).
FREE = "nothing needs broker"
WAITING = "waiting"
GIVING_UP = "stopping anyway"
FAILED_EVENT = "FailedPreStopHook"  # the kubelet's event reason for a hook that exited non-zero


def running_program() -> str:
    """busybox awk over the agent's figures: exit 0 when the broker is RUNNING."""
    return (
        f'$1 == "{metrics.BROKER_STATE}" {{ state = $2 }} '
        f'END {{ exit !(state != "" && state == {in_sync.BROKER_RUNNING}) }}'
    )


def needed_program() -> str:
    """busybox awk over the describe's partitions at or under min ISR (tab-separated
    `Key: value` fields), with `id` the broker's: print each partition that lists it in its
    ISR and misses another replica not being added; exit 1 when there is any, or a line it
    cannot read (it cannot say the stop is safe then)."""
    return (
        'BEGIN { FS = "\\t" } '
        '{ topic = partition = replicas = isr = adding = ""; '
        "for (i = 1; i <= NF; i++) { "
        "if ($i ~ /^Topic: /) topic = substr($i, 8); "
        "else if ($i ~ /^Partition: /) partition = substr($i, 12); "
        "else if ($i ~ /^Replicas: /) replicas = substr($i, 11); "
        "else if ($i ~ /^Isr: /) isr = substr($i, 6); "
        "else if ($i ~ /^Adding Replicas: /) adding = substr($i, 18) } "
        'if (partition != "" && replicas == "") { unread++; print "cannot read: " $0; next } '
        'if (replicas == "" || !index("," isr ",", "," id ",")) next; '
        'missing = ""; n = split(replicas, r, ","); '
        "for (j = 1; j <= n; j++) "
        'if (!index("," isr ",", "," r[j] ",") && !index("," adding ",", "," r[j] ",")) '
        'missing = missing (missing == "" ? "" : ",") r[j]; '
        'if (missing == "") next; '
        f"needed++; if (needed <= {in_sync.PARTITIONS_SHOWN}) "
        'print topic "-" partition ": in sync on " isr " only, replica(s) " missing " away" } '
        'END { if (needed) print needed " partition(s) would fall below min.insync.replicas '
        'without broker " id; exit (needed + unread > 0) }'
    )


def pre_stop_command(
    model: ClusterModel,
    node: Node,
    seconds: int = GATE_SECONDS,
    poll_seconds: int = POLL_SECONDS,
) -> list[str]:
    """The broker container's preStop hook (see the module docstring); `seconds`,
    `poll_seconds`: its bound and its pause between looks."""
    scrape = metrics.scrape_command(model.ports.metrics, (metrics.BROKER_STATE,))
    look = (
        f"{GATE_FUNCTION}() {{ "
        f"{in_sync.own_describe(model, node, CLIENT_FILE, ERRORS_FILE, REPORT)}"
        'printf "%s\\n" "$described" | '
        f"busybox awk -v id={node.node_id} {shlex.quote(needed_program())}; }}"
    )
    now = "$(busybox date +%s)"
    script = "\n".join(
        [
            f"if ! busybox timeout -s KILL {SCRAPE_SECONDS} {scrape} | "
            f"busybox awk {shlex.quote(running_program())}; then",
            f'  echo "broker {node.node_id} is not serving: it stops at once"; exit 0',
            "fi",
            look,
            f"deadline=$(({now} + {seconds}))",
            f"while ! said=$({GATE_FUNCTION} 2>&1); do",
            '  printf "%s\\n" "$said"',
            f'  if [ $(({now} + {poll_seconds})) -gt "$deadline" ]; then',
            f'    echo "{GIVING_UP} after {seconds} s"; exit 1',
            "  fi",
            f'  echo "{WAITING} {poll_seconds} s"',
            f"  busybox sleep {poll_seconds}",
            "done",
            f'echo "{FREE} {node.node_id} to stay"',
        ]
    )
    return ["sh", "-c", script]


def lifecycle(model: ClusterModel, node: Node) -> dict[str, object]:
    """The broker container's `lifecycle`: the gate before its stop."""
    return {"preStop": {"exec": {"command": pre_stop_command(model, node)}}}
