"""A broker's readiness: RUNNING, trailing no leader, and in the in-sync set of its partitions.

Every step of a roll waits for the restarted broker to be ready before it stops the next one
(infra/model/desired.py), so "ready" must mean that stopping another broker now leaves every
partition they share at or above min.insync.replicas. Two figures of the broker's own JMX agent
come close: `BrokerState` 3 (RUNNING) and its replica fetchers' `MaxLag` 0. But a follower that
has caught up is only *one AlterPartition away* from the ISR: its leader asks the controller to
add it back, and if the next broker's controlled shutdown changes the partition's epoch first,
the controller rejects that request as stale and the leader retries later. Seen on real nodes
(docs/provisioning.md, "back in the in-sync set"): a broker Ready 5 s after RUNNING, the next
one stopped, and every partition had its leader alone in the ISR for 1–22 s. `MaxLag` also
reads 0 for a partition that lost its figure when its fetcher was rebuilt.

So the probe asks the ISR itself, once per process: when the cheap figures say caught up and the
broker has not been found in sync since its JVM started (the agent's
`process_start_time_seconds`, written to `MARK_FILE`), it describes every topic through the
broker's own REPLICATION listener and its own identity (own_listener.py) and passes only when
the broker is in the ISR of every partition that lists it as a replica, except:
- partitions without a leader: no follower can join their ISR, and waiting would keep a broker
  out of the bootstrap Service for a partition nobody can serve anyway (a cold start of the
  whole cluster, where the leader's broker is not back yet);
- partitions it is being added to by a reassignment (`Adding Replicas`): it joins their ISR when
  the copy ends, which may take hours; the throttled move is the reassignment's to watch.
From then on each probe reads only the agent's figures (a wget on localhost, no JVM) until the
broker's process restarts. The describe is a Kafka tool's JVM (a 128 MiB heap, the C1 compiler,
the serial collector: about a CPU-second) inside the broker's container, once per start: its
~0.2 GiB for a few seconds fit the GiB that stack validation keeps beyond the broker's heap
(resources.JVM_NON_HEAP_GIB), where page cache gives way first.
"""

from __future__ import annotations

import shlex

from infra.model import metrics, own_listener
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node
from infra.model.paths import KAFKA_BIN, SCRIPT_LOG_DIR
from infra.model.resources import sidecar_tool_environment

# Kafka's BrokerState while it serves: caught up with the metadata log and unfenced.
BROKER_RUNNING = 3
# On the pod's script-logs emptyDir: it outlives a restart of the container, so it holds the
# start time of the process found in sync, never a bare "yes" a restarted broker would inherit.
MARK_FILE = f"{SCRIPT_LOG_DIR}/in-sync-since"
CLIENT_FILE = f"{SCRIPT_LOG_DIR}/in-sync-client.properties"
ERRORS_FILE = f"{SCRIPT_LOG_DIR}/in-sync-describe.err"
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"  # kafka-topics.sh's class, 3.x and 4.x
QUORUM_COMMAND = "org.apache.kafka.tools.MetadataQuorumCommand"  # kafka-metadata-quorum.sh's
TOOL_NAMES = {TOPIC_COMMAND: "kafka-topics", QUORUM_COMMAND: "kafka-metadata-quorum"}
IN_SYNC_FUNCTION = "in_sync"  # the probe's shell function for its second step
# The describe makes several admin calls one after another (topics, their partitions, configs,
# the cluster, reassignments: the last goes on to the active controller); each is held to
# DESCRIBE_CALL_MS and the whole tool is killed after DESCRIBE_SECONDS, inside the probe's own
# timeout (probes.READINESS_TIMEOUT_SECONDS), so a slow cluster reads as "not ready" with the
# tool's last words, never as a probe the kubelet times out with a JVM left running.
DESCRIBE_REQUEST_MS = 5000
DESCRIBE_CALL_MS = 10000
DESCRIBE_SECONDS = 20
# Partitions named in a failing probe's output (the kubelet's event): the first few say enough.
PARTITIONS_SHOWN = 5


def caught_up_program() -> str:
    """busybox awk over the agent's figures: print the JVM's start time when the broker is
    RUNNING and its fetchers trail no leader; exit 1 otherwise (a missing figure included)."""
    return (
        f'$1 == "{metrics.BROKER_STATE}" {{ state = $2 }} '
        f'$1 == "{metrics.REPLICA_MAX_LAG}" {{ lag = $2 }} '
        f'$1 == "{metrics.PROCESS_START}" {{ started = $2 }} '
        f'END {{ if (state == {BROKER_RUNNING} && lag != "" && lag + 0 == 0 && started != "") '
        "print started; else exit 1 }"
    )


def describe_fields() -> str:
    """The start of a busybox awk program over `kafka-topics --describe` (tab-separated
    `Key: value` fields, trailing blanks cut): `BEGIN`, then the rule for every line, left open
    for the program to go on and close. The line's fields are in `topic`, `partition`, `leader`,
    `replicas`, `isr`, `adding` and `configs` (`listed` when the line has `Configs`). A
    partition's line without a replica list or an ISR field is a format the program cannot
    read: it is counted in `unread` and printed, and the line skipped, so that it is never taken
    for "nothing there" (an empty ISR is a field, and is read)."""
    return (
        'BEGIN { FS = "\\t" } '
        '{ topic = partition = leader = replicas = isr = adding = configs = ""; '
        "listed = has_replicas = has_isr = 0; "
        'for (i = 1; i <= NF; i++) { v = $i; sub(/[ \\r]+$/, "", v); '
        "if (v ~ /^Topic:/) topic = substr(v, 8); "
        "else if (v ~ /^Partition:/) partition = substr(v, 12); "
        "else if (v ~ /^Leader:/) leader = substr(v, 9); "
        "else if (v ~ /^Replicas:/) { replicas = substr(v, 11); has_replicas = 1 } "
        "else if (v ~ /^Isr:/) { isr = substr(v, 6); has_isr = 1 } "
        "else if (v ~ /^Adding Replicas:/) adding = substr(v, 18); "
        "else if (v ~ /^Configs:/) { configs = substr(v, 10); listed = 1 } } "
        'if (partition != "" && (replicas == "" || !has_replicas || !has_isr)) '
        '{ unread++; print "cannot read: " $0; next } '
    )


def out_of_sync_program() -> str:
    """busybox awk over `kafka-topics --describe`, with `id` the broker's: print the partitions
    that list it as a replica, have a leader, are not adding it, and lack it in their ISR; exit 1
    when there is any, or a partition's line it cannot read (describe_fields). Other lines (a
    topic's summary, which has no `Partition:` field) are skipped."""
    return (
        f"{describe_fields()}"
        'if (partition == "" || leader == "none" || leader == "-1") next; '
        'me = "," id ","; '
        'if (index("," replicas ",", me) && !index("," isr ",", me) && !index("," adding ",", me)) '
        f"{{ out++; if (out <= {PARTITIONS_SHOWN}) "
        'print "not in the ISR of " topic "-" partition } } '
        'END { if (out) print out " partition(s) wait for this broker"; exit (out + unread > 0) }'
    )


def own_client_config(model: ClusterModel, node: Node, client_file: str) -> str:
    """A shell command writing the client config of the node's own tools (own_listener.py,
    with the describe's limits) to `client_file`, for `own_tool`'s calls after it."""
    properties = " ".join(
        shlex.quote(p)
        for p in own_listener.client_properties(
            model, node, request_ms=DESCRIBE_REQUEST_MS, api_ms=DESCRIBE_CALL_MS
        )
    )
    return f"printf '%s\\n' {properties} > {client_file}; "


def own_tool(
    model: ClusterModel,
    node: Node,
    files: tuple[str, str],
    main_class: str,
    arguments: str,
    into: str,
) -> str:
    """Shell commands for the body of a function: the Kafka tool `main_class` with `arguments`
    through the node's own listener with its own identity, its output in the variable `into`;
    when the tool fails, they print its last words and `return 1`. `files`: the client config
    (written by `own_client_config` before), and where the tool's errors go. The tool is held
    to `DESCRIBE_SECONDS` (see DESCRIBE_CALL_MS)."""
    client_file, errors_file = files
    listener = own_listener.own_listener(model, node)
    # The container's environment is the broker's: its heap, its agent on the metrics port
    # (KAFKA_OPTS) and its logging would all be the tool's too, so each is set for the tool.
    tool_env = " ".join(
        f"{name}={shlex.quote(value)}" for name, value in sidecar_tool_environment().items()
    )
    tool = (
        f"busybox timeout -s KILL {DESCRIBE_SECONDS} busybox env {tool_env} KAFKA_OPTS= "
        f"KAFKA_LOG4J_OPTS= {KAFKA_BIN}/kafka-run-class.sh {main_class} "
        f"{listener.flag} {listener.address} --command-config {client_file} {arguments}"
    )
    said = TOOL_NAMES.get(main_class, main_class)
    return (
        f"if ! {into}=$({tool} 2>{errors_file}); then "
        f'echo "{said} {arguments} failed"; tail -n 3 {errors_file}; return 1; fi; '
    )


def own_describe(model: ClusterModel, node: Node, client_file: str, errors_file: str) -> str:
    """`own_tool`: `kafka-topics --describe` into `described`."""
    return own_tool(
        model, node, (client_file, errors_file), TOPIC_COMMAND, "--describe", "described"
    )


def readiness_command(model: ClusterModel, node: Node) -> list[str]:
    """The broker container's readiness probe (see the module docstring)."""
    scrape = metrics.scrape_command(
        model.ports.metrics, (metrics.BROKER_STATE, metrics.REPLICA_MAX_LAG, metrics.PROCESS_START)
    )
    # The ISR step is a function of its own: the manifest reads as its two steps, and the
    # kafka tier runs this one on its own against real output (tests/kafka/test_readiness.py).
    in_sync = (
        f"{IN_SYNC_FUNCTION}() {{ "
        f"{own_client_config(model, node, CLIENT_FILE)}"
        f"{own_describe(model, node, CLIENT_FILE, ERRORS_FILE)}"
        'printf "%s\\n" "$described" | '
        f"busybox awk -v id={node.node_id} {shlex.quote(out_of_sync_program())}; }}"
    )
    script = "\n".join(
        [
            f"figures=$({scrape}) || exit 1",
            'started=$(printf "%s\\n" "$figures" | '
            f"busybox awk {shlex.quote(caught_up_program())}) || exit 1",
            f'[ "$(cat {MARK_FILE} 2>/dev/null)" = "$started" ] && exit 0',
            in_sync,
            f"{IN_SYNC_FUNCTION} || exit 1",
            f'echo "$started" > {MARK_FILE}',
        ]
    )
    return ["sh", "-c", script]
