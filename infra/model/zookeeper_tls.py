"""ZooKeeper mode's TLS: brokers reach the ensemble, and its servers each other, only over TLS.

It follows `security.replication_tls` (TLS between nodes): the metadata the brokers keep in
ZooKeeper (topic configs, ACLs, SCRAM credentials) crosses the network as replication does.

- Each ZooKeeper server has a cert-manager Certificate like every Kafka node (security.py) and
  reads its Secret's PEM files as they are: `tls-combined.pem` (key, then chain) is its
  keystore, `ca.crt` its truststore; PEM needs no keystore password.
- Its client port is TLS only (`secureClientPort`) on the address brokers dial, and asks for a
  client certificate of the stack's CA (ZooKeeper's default `ssl.clientAuth=need`): a broker
  offers its node certificate. SASL/DIGEST still decides who may log in (zookeeper_auth.py).
- A plaintext client port stays for the pod itself, on 127.0.0.1: the kubelet's probes ask it
  four-letter words through bash (probes.py), with no TLS client in the image.
- The quorum and election ports are TLS too (`sslQuorum`). Peers are not checked by host
  name (`ssl.quorum.hostnameVerification=false`): ZooKeeper would match a connecting peer's
  source address, or that address's reverse DNS name, against its certificate, and a pod's
  source address is neither known when its certificate is issued nor named in DNS before it is
  ready. A peer still needs a certificate of the stack's CA and the quorum password.
- Brokers (and the `scram-users` init container, through `--zk-tls-config-file` on the
  broker's own server.properties) connect with Netty and their node certificate, checking the
  server's name against the one they dial (Kafka's default endpoint identification).

ZooKeeper 3.8 reads its certificate once, at start (only the quorum's can be reloaded, and
not from a Secret's swapped files): a renewed certificate reaches a server at its next restart,
which must come within `security.certificates.renew_before` of the renewal, one server at a
time: the next `pulumi up` rolls it (infra/certificate_restarts.py). Brokers read theirs at
each new connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infra.model.nodes import Node
from infra.model.paths import COMBINED_PEM, KEYSTORE_FILE, TRUSTSTORE_FILE, ZK_TLS_DIR

if TYPE_CHECKING:
    from infra.stack_config import StackConfig

NETTY_SERVER = "org.apache.zookeeper.server.NettyServerCnxnFactory"
NETTY_CLIENT = "org.apache.zookeeper.ClientCnxnSocketNetty"
LOOPBACK = "127.0.0.1"


def applies(config: StackConfig) -> bool:
    return config.quorum.kind == "zookeeper" and config.security.replication_tls


def plain_client_host(config: StackConfig, node: Node) -> str:
    """Where the server's plaintext client port listens (and its probes dial)."""
    return LOOPBACK if applies(config) else node.replication_host


def server_settings() -> dict[str, str]:
    """zoo.cfg lines for the TLS client port's and the quorum's keys (the ports: zoo.cfg.j2)."""
    keystore, truststore = f"{ZK_TLS_DIR}/{COMBINED_PEM}", f"{ZK_TLS_DIR}/ca.crt"
    return {
        # TLS needs Netty; the plain loopback port is served by the same factory.
        "serverCnxnFactory": NETTY_SERVER,
        "ssl.keyStore.location": keystore,
        "ssl.keyStore.type": "PEM",
        "ssl.trustStore.location": truststore,
        "ssl.trustStore.type": "PEM",
        "ssl.clientAuth": "need",
        "sslQuorum": "true",
        "ssl.quorum.keyStore.location": keystore,
        "ssl.quorum.keyStore.type": "PEM",
        "ssl.quorum.trustStore.location": truststore,
        "ssl.quorum.trustStore.type": "PEM",
        "ssl.quorum.clientAuth": "need",
        "ssl.quorum.hostnameVerification": "false",
    }


def broker_settings() -> dict[str, object]:
    """A broker's ZooKeeper client over TLS with its own node certificate (its Secret's files,
    as its listeners read them)."""
    return {
        "zookeeper.ssl.client.enable": True,
        "zookeeper.clientCnxnSocket": NETTY_CLIENT,
        "zookeeper.ssl.keystore.location": KEYSTORE_FILE,
        "zookeeper.ssl.keystore.type": "PEM",
        "zookeeper.ssl.truststore.location": TRUSTSTORE_FILE,
        "zookeeper.ssl.truststore.type": "PEM",
    }
