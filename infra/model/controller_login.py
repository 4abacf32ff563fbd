"""How KRaft nodes authenticate each other on the CONTROLLER listener: SASL/PLAIN over TLS.

Why not a client certificate, as on REPLICATION: a KRaft node's raft client (the connections it
opens to the controllers for votes and metadata fetches) is built once, when the process starts
(`KafkaRaftManager`), and unlike every other client channel of a node (replica fetchers, the
channel to the active controller, transaction markers) it is never registered for dynamic
reconfiguration (Kafka 3.9.1 and 4.3.1). A renewed keystore never reaches it: once the
certificate its process started with expires, every new connection it opens is refused by peers
that require a client certificate (shown on Kafka 4.3.1), and a restart within `renew_before`
would be the only cure. With SASL_SSL and no client certificate asked on this listener
(`listener.name.controller.ssl.client.auth=none`), the raft client presents none: TLS still
encrypts, the client still checks the server's certificate against the CA (`ca.crt`, which a
renewal does not change) and its name, and the server side reloads its keystore like every other
listener (certificate_reload.py).

Why PLAIN: SCRAM credentials live in the metadata log that controllers fetch through this very
listener (a restarted or new controller could not log in to read them; KAFKA-15513), GSSAPI
needs a KDC and OAUTHBEARER an identity provider. PLAIN sends the password inside TLS only.

The login: the nodes' principal (already a super user, `broker_config.super_users`) with the
password of secret stack config `password-controller`, which the program writes into one Secret
(never a ConfigMap): the server's JAAS file (`controller.KafkaServer`: its own login for the raft
client and the channel to the active controller, and the one user it accepts) and the client's
(`KafkaClient`, for the node's tools that reach the listener: a dedicated controller's keystore
reloader and a voter's quorum membership). Each JVM reads its file through
`-Djava.security.auth.login.config`. Only Kafka pods mount it, and the NetworkPolicies admit the
controller port only from Kafka pods.
"""

from __future__ import annotations

from typing import Any

from infra.model.cluster import ClusterModel
from infra.model.paths import CONTROLLER_LOGIN_DIR, TRUSTSTORE_FILE
from infra.model.secret_text import PASSWORD_SLOT

MECHANISM = "PLAIN"
PLAIN_LOGIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SERVER_JAAS = "server.conf"
CLIENT_JAAS = "client.conf"
VOLUME = "controller-login"
# As the TLS Secret's (workloads.TLS_FILE_MODE): readable without an injected fsGroup; every
# container of the pod runs as the image's user.
FILE_MODE = 0o444


def applies(model: ClusterModel) -> bool:
    return model.config.controller_login


def secret_name(model: ClusterModel) -> str:
    return f"{model.config.cluster_name}-controller-login"


def jaas_files(model: ClusterModel) -> dict[str, str]:
    """The Secret's files, with `PASSWORD_SLOT` where the program puts the quoted password. A
    listener-prefixed section (`controller.KafkaServer`) serves the CONTROLLER listener alone."""
    user = model.names.node_principal
    login = f'{PLAIN_LOGIN} required\n  username="{user}"\n  password={PASSWORD_SLOT}'
    return {
        SERVER_JAAS: (
            f"controller.KafkaServer {{\n  {login}\n  user_{user}={PASSWORD_SLOT};\n}};\n"
        ),
        CLIENT_JAAS: f"KafkaClient {{\n  {login};\n}};\n",
    }


def server_settings(serves_listener: bool) -> dict[str, object]:
    """Properties of a node that reaches the controllers (every KRaft node) and, when it
    `serves_listener` (a controller, a combined broker), of the listener itself."""
    values: dict[str, object] = {"sasl.mechanism.controller.protocol": MECHANISM}
    if serves_listener:
        values["listener.name.controller.sasl.enabled.mechanisms"] = MECHANISM
        # Kafka asks SASL_SSL clients for no certificate unless this says so; written out, so
        # that a future default taken from the broker-wide `ssl.client.auth` changes nothing.
        values["listener.name.controller.ssl.client.auth"] = "none"
    return values


def client_properties() -> list[str]:
    """What a node's tool needs, besides `tool_env`, to reach the CONTROLLER listener."""
    return [
        "security.protocol=SASL_SSL",
        f"sasl.mechanism={MECHANISM}",
        "ssl.truststore.type=PEM",
        f"ssl.truststore.location={TRUSTSTORE_FILE}",
    ]


def _option(name: str) -> str:
    return f"-Djava.security.auth.login.config={CONTROLLER_LOGIN_DIR}/{name}"


def server_jvm_option() -> str:
    return _option(SERVER_JAAS)


def tool_env() -> dict[str, str]:
    """The environment of a container whose Kafka tools log in to the CONTROLLER listener."""
    return {"name": "KAFKA_OPTS", "value": _option(CLIENT_JAAS)}


def volume(model: ClusterModel) -> tuple[dict[str, Any], dict[str, Any]]:
    """(volume, mount) of the login Secret."""
    return (
        {"name": VOLUME, "secret": {"secretName": secret_name(model), "defaultMode": FILE_MODE}},
        {"name": VOLUME, "mountPath": CONTROLLER_LOGIN_DIR, "readOnly": True},
    )
