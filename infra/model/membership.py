"""A KRaft voter's identity over its life: formatted into the quorum once, never reborn.

KIP-853 gives each voter's metadata directory an id so that a voter that lost its disk cannot
take its old place with an empty log (it could vote for, or become, a leader that lacks
committed records). So a voter formats with `--initial-controllers` only while the quorum is
being born; afterwards an empty metadata volume formats with `--no-initial-controllers` (a fresh
random directory id) and the controller starts as an observer. The pod's `quorum-membership`
container then turns it into the voter again through the dynamic quorum: it removes the voter
entry holding its node id under the old directory id, then adds itself, one step at a time and
only while the remaining voters keep a caught-up majority.

"The quorum was born" is a record, not a guess: a ConfigMap Pulumi creates once every voter's
StatefulSet is ready (`birth_record`), mounted optionally into the voters. Asking the other
voters instead cannot tell a quorum being born (no one answers yet) from one that is down while
this voter's disk was replaced, and guessing "born" there is exactly the unsafe rebirth. The
voters' deterministic directory ids (`ClusterModel.voter_directory_id`) stay, for the birth only:
every voter must write the same initial set, and a lost disk never reuses them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from infra.model import controller_login
from infra.model.broker_config import listener_protocols
from infra.model.cluster import ClusterModel
from infra.model.nodes import Node
from infra.model.paths import CONFIG_DIR, KAFKA_BIN, METADATA_DIR
from infra.model.quorum import BOOTSTRAP_SETTING, voter_address
from infra.model.resources import sidecar

# The initial voter set (`--initial-controllers`), a file of the voter's ConfigMap rather than
# part of its pod template: read only while the quorum is born, it must not restart every voter
# when `quorum.nodes` changes later (quorum.DISCOVERY_SETTINGS says the same of the list).
INITIAL_VOTERS_FILE = "initial-voters"
INITIAL_VOTERS_PATH = f"{CONFIG_DIR}/{INITIAL_VOTERS_FILE}"
RECORD_VOLUME = "quorum-record"
RECORD_DIR = "/etc/kafka/quorum-record"  # the birth record, when it exists
BORN_KEY = "born"
STATE_VOLUME = "quorum-state"
STATE_DIR = "/var/lib/kafka/quorum-state"  # the membership container's files (an emptyDir)
VOTER_FILE = f"{STATE_DIR}/voter"  # present once this pod's directory is a voter (its probe)
# The container's admin client config (the node's properties plus the controller listener's
# login), written at its start: operators and `kafkastack remove-voters` ask the quorum with it.
ADMIN_FILE = f"{STATE_DIR}/admin.properties"
CONTAINER = "quorum-membership"
# How often the membership container asks the quorum again while its pod is not a voter.
RETRY_SECONDS = 5
# The largest failureThreshold the API takes (an int32): about 340 years of 5 s probes.
NEVER_GIVE_UP = 2**31 - 1


def record_name(model: ClusterModel) -> str:
    return f"{model.config.cluster_name}-quorum-record"


def birth_record(model: ClusterModel) -> dict[str, Any]:
    """The ConfigMap whose existence says the quorum was born (declared after every voter)."""
    return {
        "metadata": {"name": record_name(model), "namespace": model.config.namespace},
        "data": {
            BORN_KEY: (
                f"The KRaft quorum of {model.config.cluster_name} was formed; a voter with an "
                "empty metadata volume now joins it as an observer with a new directory id "
                "(docs/provisioning.md, 'Quorum and recovery').\n"
            )
        },
    }


def voter_volumes(
    model: ClusterModel,
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """The voter pod's extra volumes, the record's mount and the state's mount."""
    volumes = [
        # Optional: absent while the quorum is being born, and the pod starts all the same.
        {"name": RECORD_VOLUME, "configMap": {"name": record_name(model), "optional": True}},
        {"name": STATE_VOLUME, "emptyDir": {"medium": "Memory"}},
    ]
    record = {"name": RECORD_VOLUME, "mountPath": RECORD_DIR, "readOnly": True}
    state = {"name": STATE_VOLUME, "mountPath": STATE_DIR}
    return volumes, record, state


def voter_format_script(format_command: str, birth_flags: str) -> str:
    """`format_command` plus the quorum flags: the initial set (`birth_flags`) only while no
    birth record exists, or on a formatted volume (`--ignore-formatted` keeps a restart a no-op);
    on an empty volume of a born quorum, a new directory id and no initial set."""
    return (
        f"if [ -f {RECORD_DIR}/{BORN_KEY} ] && [ ! -f {METADATA_DIR}/meta.properties ]; then "
        "echo 'the quorum exists and the metadata volume is empty: "
        "formatting a new directory id to join as an observer'; "
        # --ignore-formatted: a combined voter's data directories may be formatted still.
        f"exec {format_command} --ignore-formatted --no-initial-controllers; fi; "
        f"if [ ! -s {INITIAL_VOTERS_PATH} ]; then "
        f"echo '{INITIAL_VOTERS_PATH} is missing or empty: the ConfigMap of this node is not "
        "the one kafkastack renders'; exit 1; fi; "
        f"exec {format_command} --ignore-formatted {birth_flags}"
    )


def quorum_tool(bootstrap: str, command_config: str = ADMIN_FILE) -> str:
    """`kafka-metadata-quorum` aimed at the voters in `bootstrap` (quorum.voter_addresses),
    logged in with the membership container's admin file; run it in that container."""
    return (
        f"{KAFKA_BIN}/kafka-metadata-quorum.sh --bootstrap-controller {bootstrap} "
        f"--command-config {command_config}"
    )


def current_voters(status: str) -> dict[int, str] | None:
    """Voter id → directory id from `describe --status`; None when it lists no voter set."""
    for line in status.splitlines():
        if line.startswith("CurrentVoters:"):
            try:
                return {
                    int(v["id"]): str(v["directoryId"]) for v in json.loads(line.split(":", 1)[1])
                }
            except (ValueError, KeyError, TypeError):
                return None
    return None


def leader_id(status: str) -> int | None:
    """The quorum leader's node id from `describe --status` (the active controller); None when
    it names none (-1 during an election)."""
    for line in status.splitlines():
        if line.startswith("LeaderId:"):
            value = line.split(":", 1)[1].strip()
            return int(value) if value.isdigit() else None
    return None


def replication_rows(text: str) -> list[dict[str, str]]:
    """`describe --replication` as rows by its header (NodeId, DirectoryId, Lag, Status, …)."""
    rows = [line.split() for line in text.splitlines() if line.strip()]
    if not rows:
        return []
    header = rows[0]
    return [dict(zip(header, row, strict=False)) for row in rows[1:]]


def membership_script(model: ClusterModel, node: Node, config_file: str) -> str:
    """The membership container's script (see the module docstring); it ends sleeping, ready."""
    node_id = node.node_id
    admin_file = '"$admin"'
    discovery = re.escape(BOOTSTRAP_SETTING)
    own = voter_address(model, node)
    voters_of_mine = (
        f"sed -n 's/^CurrentVoters:[[:space:]]*//p' | "
        f'grep -o \'"id": *{node_id}, *"directoryId": *"[^"]*"\' | '
        'sed \'s/.*"directoryId": *"//; s/"$//\''
    )
    # describe --replication: NodeId DirectoryId LogEndOffset Lag LastFetch LastCaughtUp Status
    caught_up = f'awk -v dir="$me" \'$1 == {node_id} && $2 == dir && $4 == 0 {{print "yes"}}\''
    majority = (
        f'awk -v dir="$old" \'($7 == "Leader" || $7 == "Follower") && '
        f"!($1 == {node_id} && $2 == dir) {{n++; if ($4 == 0) live++}} "
        'END {if (n > 0 && live * 2 > n) print "yes"}\''
    )
    # KRaft nodes log in to the controllers (controller_login.py; the JAAS file is the
    # container's KAFKA_OPTS).
    login = (
        f" echo sasl.mechanism={controller_login.MECHANISM};"
        if controller_login.applies(model)
        else ""
    )
    lines = [
        "trap 'exit 0' TERM",
        f"rm -f {VOTER_FILE}",
        f"pause() {{ sleep {RETRY_SECONDS} & wait $!; }}",
        # The node's own properties (node id, directory, listener) plus what its admin client
        # needs to reach the controllers' listener: add-controller reads both from one file.
        f"admin={ADMIN_FILE}",
        f"{{ cat {CONFIG_DIR}/{config_file}; "
        f"echo security.protocol={listener_protocols(model, node)['CONTROLLER']};{login} "
        f'}} > "$admin"',
        # The other voters, never itself (it may not be one yet), read from the mounted file
        # at each call: after a change of `quorum.nodes` it lists the new set, no restart needed.
        f"others() {{ sed -n 's/^{discovery}=//p' {CONFIG_DIR}/{config_file} | tr , '\\n' | "
        f"grep -vxF '{own}' | tr '\\n' , | sed 's/,$//'; }}",
        f'quorum() {{ {quorum_tool("$(others)", command_config=admin_file)} "$@"; }}',
        f"me=$(sed -n 's/^directory.id=//p' {METADATA_DIR}/meta.properties)",
        # A directory of the initial set is a voter from the quorum's first record: ready
        # without asking (during the birth no majority answers yet).
        f"initial=$(cat {INITIAL_VOTERS_PATH})",
        f'case ",$initial," in *",{node_id}@"*":$me,"*) '
        f'echo "voter {node_id}: directory $me is in the initial voter set"; '
        f"touch {VOTER_FILE};; esac",
        f"while [ ! -f {VOTER_FILE} ]; do",
        '  if ! status=$(quorum describe --status 2>&1); then echo "$status" | tail -n 1; '
        "pause; continue; fi",
        f'  old=$(echo "$status" | {voters_of_mine})',
        # Fail closed: a status this script cannot read (no voter list, or this node listed
        # without a directory id it can parse) must never lead to adding a second entry.
        '  if ! echo "$status" | grep -q \'^CurrentVoters:\' || { [ -z "$old" ] && '
        "echo \"$status\" | sed -n 's/^CurrentVoters:[[:space:]]*//p' | "
        f"grep -q '\"id\": *{node_id}[,}}]'; }}; then "
        f'echo "voter {node_id}: cannot read the voter set, waiting"; pause; continue; fi',
        f'  if [ "$old" = "$me" ]; then echo "voter {node_id}: directory $me is a voter"; '
        f"touch {VOTER_FILE}; break; fi",
        "  if ! replication=$(quorum describe --replication 2>&1); then "
        'echo "$replication" | tail -n 1; pause; continue; fi',
        f'  if [ "$(echo "$replication" | {caught_up})" != yes ]; then '
        f'echo "observer {node_id} ($me) is catching up"; pause; continue; fi',
        '  if [ -n "$old" ]; then',
        # Removing the old entry must leave a voter set whose caught-up members are a majority.
        f'    if [ "$(echo "$replication" | {majority})" != yes ]; then '
        f'echo "voter {node_id} keeps its old entry $old: the other voters are no caught-up '
        'majority yet"; pause; continue; fi',
        f'    echo "removing voter {node_id} with the lost directory $old"',
        f'    quorum remove-controller --controller-id {node_id} --controller-directory-id "$old"',
        "  else",
        f'    echo "adding observer {node_id} ($me) as a voter"',
        "    quorum add-controller",
        "  fi",
        "  pause",
        "done",
        "while :; do sleep 3600 & wait $!; done",
    ]
    return "\n".join(lines) + "\n"


def membership_container(
    model: ClusterModel, node: Node, image: str, config_file: str, mounts: list[dict[str, Any]]
) -> dict[str, Any]:
    """The voter pod's second container: it makes the pod's directory a voter, once, and is
    ready only then, so a roll or a drain never takes another voter while this one is not one."""
    container = sidecar(
        CONTAINER, image, membership_script(model, node, config_file), mounts, STATE_DIR
    )
    if controller_login.applies(model):
        container["env"].append(controller_login.tool_env())
    # A startup probe, not a readiness probe: the script never removes the file once it is a
    # voter, so a readiness probe would repeat the same exec every few seconds for the pod's
    # life, and each exec is a runc process on the node (1.2 CPU-s a minute per voter pod on
    # real nodes, measured). A startup probe stops at its first pass; with no readiness probe
    # the container is ready from then. It never gives up: a container that cannot become a
    # voter yet waits unready, as its script waits on the quorum; a restart would change nothing.
    container["startupProbe"] = {
        "exec": {"command": ["test", "-f", VOTER_FILE]},
        "periodSeconds": RETRY_SECONDS,
        "failureThreshold": NEVER_GIVE_UP,
    }
    return container
