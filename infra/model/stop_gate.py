"""A broker's stop waits while it is all that keeps a partition at min.insync.replicas.

Every stop of a broker pod goes through the kubelet: a roll's step (`pulumi up`), a drain's
eviction, a `kubectl delete pod`. Readiness (in_sync.py) makes each step of a roll wait until
the restarted broker is back in the in-sync sets, but it cannot see what happens to *another*
broker after that: on real nodes a broker was fenced for a late heartbeat just after the active
controller's restart, while the roll stopped the next broker, and partitions were in sync on one
broker for about a second (docs/provisioning.md, "Finding: a broker fenced"). Strimzi's
roller asks the same question before each restart; here there is no operator, so the pod asks
it itself, as its container's preStop hook, which the kubelet runs before it sends SIGTERM.

One look is two Kafka tools through the broker's own listener and identity (own_listener.py):
- KRaft: `kafka-metadata-quorum describe --replication`, the quorum leader's table of when each
  node last fetched the metadata log. A broker that has not fetched within `FRESH_MS` of the
  leader's own row (its clock) is about to be fenced (its session ends at 9 s by default), or
  cut off from a leader just elected (it is then missing from the table): it counts as away
  although the ISR still lists it. No leader, or a table the hook cannot read, is no answer;
- `kafka-topics --describe`: each topic's min.insync.replicas (its summary's `Configs`, which
  lists every value not Kafka's own default of 1, broker-wide ones included), and each
  partition's replicas, ISR and replicas being added.
It waits while a partition has this broker in its ISR, would keep fewer than min ISR live in-sync
replicas without it, and misses a replica whose return waiting can bring (out of the ISR and not
being added by a reassignment, or in it but not fetching). A partition whose every replica is in
sync and fetching while at min ISR (replicas = min.insync.replicas) is not waited for: no wait
makes stopping one of them safer. ZooKeeper mode has no quorum table: the ISR alone counts.

It looks again `POLL_SECONDS` after each look, for at most `GATE_SECONDS` from its start, then
lets the stop go on and exits non-zero: the kubelet records a `FailedPreStopHook` warning event
on the pod (its message is only "PreStopHook failed": the kubelet keeps a hook's output out of
events, in its own log). The bound is the grace period's (probes.TERMINATION_GRACE_SECONDS keeps
the controlled shutdown's whole budget after it): a replica that stays away (its node lost)
delays each stop by a minute, it does not hold the roll forever. A broker that is not RUNNING
(starting, recovering, shutting down) is in no in-sync set for long, and one whose agent does not
answer is a JVM gone or hung, whose restart waiting would only delay: both stop at once. A tool
that fails, or a line the hook cannot read, is a reason to wait (until the bound), never taken
as safe; so a broker whose own listener is dead (a liveness restart) waits out the bound.

`pulumi destroy` deletes the broker StatefulSets one after another (the roll's chain, the other
way round), each once its pod is gone: the first broker passes, and each later one finds
partitions missing the brokers already gone and waits out the bound, about a minute per broker.
A destroy is for a stack being thrown away (prod's are protected); deleting its namespace stops
the brokers together instead, whose hooks then pass at their first look.
"""

from __future__ import annotations

import shlex

from infra.model import in_sync, metrics
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node
from infra.model.paths import SCRIPT_LOG_DIR

GATE_SECONDS = 60
POLL_SECONDS = 5
# How long the hook can take at most: its last look (two tools) may begin just before the bound,
# which the shell's clock counts in whole seconds.
LONGEST_SECONDS = GATE_SECONDS + 2 * in_sync.DESCRIBE_SECONDS + 1
# A fetching broker's last fetch was within 0.5 s of the leader's clock on the kafka tier; one
# stopped fell 2 s behind within 2 s. Kafka fences it at 9 s (broker.session.timeout.ms).
FRESH_MS = 3000
SCRAPE_SECONDS = 5  # the agent answers on localhost within milliseconds when it answers at all
CLIENT_FILE = f"{SCRIPT_LOG_DIR}/stop-gate-client.properties"
ERRORS_FILE = f"{SCRIPT_LOG_DIR}/stop-gate-tool.err"
GATE_FUNCTION = "needed"  # the hook's shell function: one look at the partitions
# What the hook prints when nothing needs the broker, and before each wait (the kafka tier
# reads them, tests/kafka/test_stop_gate.py).
FREE = "nothing needs broker"
WAITING = "waiting"
GIVING_UP = "stopping anyway"
AT_ONCE = "it stops at once"
NOT_FETCHING = "not fetching"
FAILED_EVENT = "FailedPreStopHook"  # the kubelet's event reason for a hook that exited non-zero


def running_program() -> str:
    """busybox awk over the agent's figures: exit 0 when the broker is RUNNING."""
    return (
        f'$1 == "{metrics.BROKER_STATE}" {{ state = $2 }} '
        f'END {{ exit !(state != "" && state == {in_sync.BROKER_RUNNING}) }}'
    )


def fetching_program() -> str:
    """busybox awk over `kafka-metadata-quorum describe --replication` (a header row naming
    the columns): print `,id,id,…,` of the nodes whose last fetch is within `ms` of the
    leader's row; exit 1 (saying why) when there is no leader row or a column is missing."""
    return (
        'NR == 1 { if (!NF) { print "no quorum table"; bad = 1; exit 1 } '
        "for (i = 1; i <= NF; i++) col[$i] = i; "
        'if (!("NodeId" in col) || !("LastFetchTimestamp" in col) || !("Status" in col)) '
        '{ print "cannot read the quorum table: " $0; bad = 1; exit 1 } next } '
        'NF { n++; id[n] = $col["NodeId"]; at[n] = $col["LastFetchTimestamp"]; '
        'if ($col["Status"] == "Leader") now = at[n] } '
        'END { if (bad) exit 1; if (NR == 0) { print "no quorum table"; exit 1 } '
        'if (now == "") { print "the quorum has no leader"; exit 1 } '
        'out = ","; for (j = 1; j <= n; j++) if (now - at[j] <= ms) out = out id[j] ","; '
        "print out }"
    )


def needed_program() -> str:
    """busybox awk over `kafka-topics --describe` (in_sync.describe_fields), with `id` the
    broker's, `fresh` the `,id,…,` of brokers fetching the metadata log and `everyone` 1 when
    there is no such list (ZooKeeper mode): print each partition that needs the broker to stay
    (see the module docstring); exit 1 when there is any, or a line it cannot read. When none
    needs it, it says how many partitions it read."""
    return (
        f"{in_sync.describe_fields()}"
        # A topic's summary: its min ISR is Kafka's default (1) unless Configs names another.
        'if (topic != "" && partition == "") { '
        'if (!listed) { unread++; print "cannot read: " $0; next } '
        "least[topic] = 1; "
        'if (match("," configs, /,min[.]insync[.]replicas=[0-9]+/)) '
        'least[topic] = substr("," configs, RSTART + 21, RLENGTH - 21) + 0; next } '
        'if (partition == "") next; '
        'if (!(topic in least)) { unread++; print "no summary read for " topic; next } '
        "partitions++; "
        'if (!index("," isr ",", "," id ",")) next; '
        'live = 0; n = split(isr, s, ","); '
        "for (j = 1; j <= n; j++) "
        'if (s[j] == id || everyone || index(fresh, "," s[j] ",")) live++; '
        "if (live - 1 >= least[topic]) next; "
        'away = ""; n = split(replicas, r, ","); '
        "for (j = 1; j <= n; j++) { b = r[j]; if (b == id) continue; "
        'synced = index("," isr ",", "," b ","); '
        'if (synced && (everyone || index(fresh, "," b ","))) continue; '
        'if (!synced && index("," adding ",", "," b ",")) continue; '
        f'away = away (away == "" ? "" : ",") b (synced ? " ({NOT_FETCHING})" : "") }} '
        'if (away == "") next; '
        f"needed++; if (needed <= {in_sync.PARTITIONS_SHOWN}) "
        'print topic "-" partition ": min.insync.replicas " least[topic] ", in sync on " isr '
        '", away: " away } '
        'END { if (needed) print needed " partition(s) would fall below min.insync.replicas '
        'without broker " id; else if (!unread) print partitions " partition(s) read"; '
        "exit (needed + unread > 0) }"
    )


def _zookeeper(model: ClusterModel) -> bool:
    """ZooKeeper mode: no metadata quorum to ask who fetches."""
    return model.config.quorum.kind == "zookeeper"


def _fetching_step(model: ClusterModel, node: Node) -> str:
    """Shell commands for the look's function: `fresh` set to the brokers fetching the
    metadata log (KRaft), or empty (ZooKeeper mode); `return 1` when the quorum cannot say."""
    if _zookeeper(model):
        return "fresh=; "
    ask = in_sync.own_tool(
        model,
        node,
        (CLIENT_FILE, ERRORS_FILE),
        in_sync.QUORUM_COMMAND,
        "describe --replication",
        "replication",
    )
    return (
        f'{ask}if ! fresh=$(printf "%s\\n" "$replication" | '
        f"busybox awk -v ms={FRESH_MS} {shlex.quote(fetching_program())}); then "
        'echo "$fresh"; return 1; fi; '
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
        f"{in_sync.own_client_config(model, node, CLIENT_FILE)}"
        f"{in_sync.own_describe(model, node, CLIENT_FILE, ERRORS_FILE)}"
        f"{_fetching_step(model, node)}"
        'printf "%s\\n" "$described" | '
        f'busybox awk -v id={node.node_id} -v fresh="$fresh" '
        f"-v everyone={int(_zookeeper(model))} {shlex.quote(needed_program())}; }}"
    )
    now = "$(busybox date +%s)"
    script = "\n".join(
        [
            # The bound counts from the hook's start; without a clock it cannot keep one.
            f'if ! started={now}; then echo "no clock to bound the wait: stopping at once"; '
            "exit 1; fi",
            f"deadline=$((started + {seconds}))",
            # Not RUNNING (starting, recovering, shutting down) is in no in-sync set for long,
            # and a silent agent is a JVM gone or hung, whose restart waiting would only delay.
            f"if ! busybox timeout -s KILL {SCRAPE_SECONDS} {scrape} | "
            f"busybox awk {shlex.quote(running_program())}; then",
            f'  echo "broker {node.node_id} is not RUNNING, or its agent does not answer: '
            f'{AT_ONCE}"; exit 0',
            "fi",
            look,
            f"while ! said=$({GATE_FUNCTION} 2>&1); do",
            '  printf "%s\\n" "$said"',
            f'  if [ $(({now} + {poll_seconds})) -gt "$deadline" ]; then',
            f'    echo "{GIVING_UP} after {seconds} s"; exit 1',
            "  fi",
            f'  echo "{WAITING} {poll_seconds} s"',
            f"  busybox sleep {poll_seconds}",
            "done",
            'printf "%s\\n" "$said"',
            f'echo "{FREE} {node.node_id} to stay"',
        ]
    )
    return ["sh", "-c", script]


def lifecycle(model: ClusterModel, node: Node) -> dict[str, object]:
    """The broker container's `lifecycle`: the gate before its stop."""
    return {"preStop": {"exec": {"command": pre_stop_command(model, node)}}}
