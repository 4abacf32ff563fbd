"""A renewed certificate reaches the running brokers on real nodes, with no restart.

The cluster's real cert-manager renews every node's certificate, asked the way `cmctl renew`
asks it (what it does on its own at renewal time); the real kubelets swap the mounted files, and
each pod's rendered
`keystore-reloader` makes its broker load them. Every TLS listener (EXTERNAL, REPLICATION,
CONTROLLER: the variant's brokers are the voters) must then serve the renewed certificate, from
the same pods and containers, and clients keep working.
"""

from __future__ import annotations

import socket
import ssl
import time
from pathlib import Path

from cryptography import x509

from infra.localcluster import cert_manager
from infra.localcluster.deployed import DeployedStack
from infra.localcluster.pod_client import lost
from infra.model import labels
from infra.model.security import certificates

# The kubelet syncs a pod's Secret volumes about once a minute; the reloader looks every 30 s.
DEADLINE_SECONDS = 300


def served_serial(address: str, port: int, name: str, ca: Path, identity: Path) -> int:
    """The serial of the certificate served at address:port, verified for `name`; the node's
    own certificate is presented where the listener asks for one."""
    context = ssl.create_default_context(cafile=str(ca))
    context.load_cert_chain(str(identity / "tls.crt"), str(identity / "tls.key"))
    with (
        socket.create_connection((address, port), timeout=10) as sock,
        context.wrap_socket(sock, server_hostname=name) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def secret_files(stack: DeployedStack, secret: str, folder: Path) -> dict[str, bytes]:
    data = stack.kube.secret_data(stack.namespace, secret)
    folder.mkdir(parents=True, exist_ok=True)
    for key, value in data.items():
        (folder / key).write_bytes(value)
    return data


def test_renewed_certificates_reach_every_broker_listener_without_a_restart(
    deployed_stack: DeployedStack, tmp_path: Path
) -> None:
    stack, model = deployed_stack, deployed_stack.model
    identity = tmp_path / "identity"
    # The stack's own CA, as cert-manager issued it (the clients' truststore).
    ca = tmp_path / "ca.crt"
    ca.write_bytes(secret_files(stack, model.names.ca, tmp_path / "ca")["ca.crt"])
    brokers = stack.pods(labels.BROKER)
    restarts = {
        p["metadata"]["uid"]: [c["restartCount"] for c in p["status"]["containerStatuses"]]
        for p in brokers
    }
    ports = {"external": model.ports.external, "replication": model.ports.replication}
    ports["controller"] = model.ports.controller
    listeners = {
        (node.workload, listener): (pod["status"]["podIP"], port, node.client_host)
        for node in model.brokers
        for pod in brokers
        if pod["metadata"]["labels"][labels.NAME] == node.workload
        for listener, port in ports.items()
    }
    assert len(listeners) == 3 * len(model.brokers)

    def serials() -> dict[tuple[str, str], int]:
        return {k: served_serial(*where, ca, identity) for k, where in listeners.items()}

    secret_files(stack, model.names.tls_secret(model.brokers[0].workload), identity)
    first = serials()

    cert_manager.renew(
        stack.kube, stack.namespace, [c["metadata"]["name"] for c in certificates(model)]
    )
    renewed = {
        node.workload: x509.load_pem_x509_certificate(
            secret_files(stack, model.names.tls_secret(node.workload), tmp_path / node.workload)[
                "tls.crt"
            ]
        ).serial_number
        for node in model.brokers
    }
    assert all(renewed[w] != first[(w, listener)] for (w, listener) in listeners)
    secret_files(stack, model.names.tls_secret(model.brokers[0].workload), identity)

    started = time.monotonic()
    while True:
        now = serials()
        stale = sorted(k for k in listeners if now[k] != renewed[k[0]])
        if not stale or time.monotonic() - started > DEADLINE_SECONDS:
            break
        time.sleep(3)
    assert not stale, f"still serving the old certificate after {DEADLINE_SECONDS} s: {stale}"
    print(
        f"renewed certificates served on {len(listeners)} listeners "
        f"{time.monotonic() - started:.0f} s after the renewal"
    )
    after = stack.pods(labels.BROKER)
    assert {
        p["metadata"]["uid"]: [c["restartCount"] for c in p["status"]["containerStatuses"]]
        for p in after
    } == restarts
    # Clients on new connections, through the bootstrap Service and through HAProxy.
    client = stack.client()
    topic = "proof-renewed"
    client.create_topic(topic, partitions=3)
    client.wait_isr(topic, 3)
    acked, errors = client.produce(topic, count=300, external=True)
    assert len(acked) == 300 and errors == []
    assert lost(acked, client.consume(topic, expect=300)) == []
