"""ZooKeeper mode's security: SASL/DIGEST logins, znode ACLs, SCRAM users.

Every ZooKeeper session must authenticate (`enforce.auth`): the brokers and the tools log in as
one DIGEST user whose password is secret stack config (`password-zookeeper`), and brokers put
ACLs on the znodes they create (`zookeeper.set.acl`). Both JAAS files live in one Secret, built
from that password by the program: nothing secret is rendered into a ConfigMap.

SCRAM credentials live in ZooKeeper in this mode, so each broker's `scram-users` init container
writes them with `kafka-configs.sh --zookeeper` before the broker starts (passwords from the
users' Secrets); setting a credential again is harmless, so every start may repeat it.
"""

from __future__ import annotations

import shlex
from typing import Any

from infra.config import ZOOKEEPER_QUORUM_PASSWORD_KEY
from infra.model import labels, zookeeper_tls
from infra.model.cluster import ClusterModel
from infra.model.paths import CONFIG_DIR, KAFKA_BIN, KAFKA_ZK_JAAS_DIR, ZK_JAAS_DIR
from infra.model.resources import tool_jvm_env
from infra.model.secret_text import PASSWORD_SLOT
from infra.model.security import scram_secret_name

DIGEST_USER = "kafka"
DIGEST_LOGIN = "org.apache.zookeeper.server.auth.DigestLoginModule"
SERVER_JAAS = "server.conf"
# The servers' logins among themselves (quorum SASL), with their own password.
QUORUM_SERVER = "QuorumServer"
QUORUM_LEARNER = "QuorumLearner"
QUORUM_USER = "zookeeper"
QUORUM_PASSWORD_SLOT = "{quorum-password}"
QUORUM_SLOTS = {QUORUM_PASSWORD_SLOT: ZOOKEEPER_QUORUM_PASSWORD_KEY}
CLIENT_JAAS = "client.conf"


def server_settings() -> dict[str, str]:
    """zoo.cfg lines: SASL is the only way in, for clients and for peers.

    A server joins the ensemble (elections, following) only after logging in to its peers with
    the quorum password, which only the servers' JAAS file holds: a broker's DIGEST login, or
    anything else reaching the peer ports, cannot make it a voter. Switching this on in a
    running ensemble without quorum SASL needs ZooKeeper's three rolls (enableSasl, then
    learnerRequireSasl, then serverRequireSasl); a new ensemble starts with all three.
    """
    return {
        "authProvider.sasl": "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
        "enforce.auth.enabled": "true",
        "enforce.auth.schemes": "sasl",
        "sessionRequireClientSASLAuth": "true",
        "quorum.auth.enableSasl": "true",
        "quorum.auth.learnerRequireSasl": "true",
        "quorum.auth.serverRequireSasl": "true",
        "quorum.auth.learner.saslLoginContext": QUORUM_LEARNER,
        "quorum.auth.server.saslLoginContext": QUORUM_SERVER,
    }


def jaas_files() -> dict[str, str]:
    """The Secret's files, with `PASSWORD_SLOT` where the program puts the quoted password
    (and `QUORUM_PASSWORD_SLOT` the servers' own, in theirs only)."""
    quoted = PASSWORD_SLOT
    peer = QUORUM_PASSWORD_SLOT
    return {
        SERVER_JAAS: (
            f"Server {{\n  {DIGEST_LOGIN} required\n  user_{DIGEST_USER}={quoted};\n}};\n"
            f"{QUORUM_SERVER} {{\n  {DIGEST_LOGIN} required\n  user_{QUORUM_USER}={peer};\n}};\n"
            f'{QUORUM_LEARNER} {{\n  {DIGEST_LOGIN} required\n  username="{QUORUM_USER}"\n'
            f"  password={peer};\n}};\n"
        ),
        CLIENT_JAAS: (
            f'Client {{\n  {DIGEST_LOGIN} required\n  username="{DIGEST_USER}"\n'
            f"  password={quoted};\n}};\n"
        ),
    }


def jaas_secret_name(model: ClusterModel) -> str:
    return f"{model.config.cluster_name}-zookeeper-jaas"


def jaas_option(path: str) -> str:
    return f"-Djava.security.auth.login.config={path}"


def client_jaas_option() -> str:
    """The JVM option brokers and tools log in to ZooKeeper with."""
    return jaas_option(f"{KAFKA_ZK_JAAS_DIR}/{CLIENT_JAAS}")


def server_jaas_option() -> str:
    return jaas_option(f"{ZK_JAAS_DIR}/{SERVER_JAAS}")


def jaas_volume(model: ClusterModel, role: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(volume, mount) of the JAAS Secret: ZooKeeper gets the server login, brokers the client's."""
    server = role == labels.ZOOKEEPER
    item = SERVER_JAAS if server else CLIENT_JAAS
    volume = {
        "name": "zookeeper-jaas",
        "secret": {
            "secretName": jaas_secret_name(model),
            "items": [{"key": item, "path": item}],
        },
    }
    mount = {
        "name": "zookeeper-jaas",
        "mountPath": ZK_JAAS_DIR if server else KAFKA_ZK_JAAS_DIR,
        "readOnly": True,
    }
    return volume, mount


def _zookeeper_connect(model: ClusterModel) -> tuple[str, str]:
    """(the ensemble's servers, the cluster's chroot)."""
    connect = str(model.metadata.quorum_settings(model)["zookeeper.connect"])
    servers, chroot = connect.split("/", 1)
    return servers, f"/{chroot}"


def scram_users_script(model: ClusterModel) -> str:
    servers, chroot = _zookeeper_connect(model)
    shell_tls = configs_tls = ""
    if zookeeper_tls.applies(model.config):
        # The tools take the zookeeper.* TLS keys of the broker's own server.properties (and
        # ignore the rest), so the client settings have one home.
        settings = f"{CONFIG_DIR}/server.properties"
        shell_tls, configs_tls = (
            f" -zk-tls-config-file {settings}",
            f" --zk-tls-config-file {settings}",
        )
    # The chroot exists once a broker or this container made it; `create` then fails harmlessly
    # (its last line, "Created" or "Node already exists", goes to the log), and any real failure
    # (ZooKeeper unreachable, login refused) stops the next command.
    lines = [
        f"{KAFKA_BIN}/zookeeper-shell.sh {shlex.quote(servers)}{shell_tls} create {chroot} 2>&1 "
        "| tail -n 1",
    ]
    for i, user in enumerate(model.config.security.users):
        lines.append(
            f"{KAFKA_BIN}/kafka-configs.sh --zookeeper {shlex.quote(servers + chroot)}"
            f"{configs_tls} --alter "
            f'--add-config "SCRAM-SHA-512=[password=$SCRAM_PASSWORD_{i}]" '
            f"--entity-type users --entity-name {shlex.quote(user)}"
        )
    return "set -e\n" + "\n".join(lines) + "\n"


def scram_users_init(
    model: ClusterModel, image: str, mounts: list[dict[str, Any]]
) -> dict[str, Any]:
    """The init container writing every SCRAM user into ZooKeeper before the broker starts."""
    env: list[dict[str, Any]] = [
        {"name": "KAFKA_OPTS", "value": client_jaas_option()},
        tool_jvm_env(),
    ]
    for i, user in enumerate(model.config.security.users):
        env.append(
            {
                "name": f"SCRAM_PASSWORD_{i}",
                "valueFrom": {
                    "secretKeyRef": {"name": scram_secret_name(model, user), "key": "password"}
                },
            }
        )
    return {
        "name": "scram-users",
        "image": image,
        "command": ["sh", "-c", scram_users_script(model)],
        "env": env,
        "volumeMounts": mounts,
    }
