"""A Kafka client pod inside the local cluster's network, for the proofs against the stack's pods.

It runs the stack's own Kafka image (its tools, through `kafka-run-class.sh`, as the image
carries no per-tool scripts) and logs in as the stack's admin with the stack's own material:
the admin Jobs' client config (the Secret the program fills with the admin's quoted password),
the CA from a broker's certificate Secret. Nothing here is a
hand-made broker or client config. External clients reach HAProxy under the names the brokers
advertise, which the pod resolves to HAProxy's Service (`hostAliases`), as a real client's DNS
would to the load balancer.
"""

from __future__ import annotations

from typing import Any

from infra.model import acls, admin_client, resources
from infra.model.cluster import ClusterModel
from infra.model.pod_security import container_security_context, pod_security_context

WORK_DIR = acls.WORK_DIR  # the client configs (memory emptyDir), where the ACL Job keeps its own
CLIENT_PROPERTIES = f"{WORK_DIR}/admin.properties"
PRODUCER_PROPERTIES = f"{WORK_DIR}/producer.properties"
# Idempotent, acks=all, and patient enough to ride out a failover rather than fail records.
# VerifiableProducer sets retries=0 unless its config says otherwise, which idempotence refuses.
PRODUCER_SETTINGS = (
    "acks=all",
    "enable.idempotence=true",
    "retries=2147483647",
    "delivery.timeout.ms=300000",
)
# The tools' own logs and the background runs' output; the image's /tmp is the only writable
# folder besides the volumes.
RUN_DIR = "/tmp"


def client_script(model: ClusterModel) -> str:
    """Write the admin's client config and a producer config from it, then wait for work."""
    admin = f"{admin_client.ADMIN_CLIENT_DIR}/{admin_client.ADMIN_PROPERTIES}"
    lines = ["set -eu", f"cp {admin} {CLIENT_PROPERTIES}", f"cp {admin} {PRODUCER_PROPERTIES}"]
    lines += [f"echo {setting} >> {PRODUCER_PROPERTIES}" for setting in PRODUCER_SETTINGS]
    lines.append("exec sleep infinity")
    return "\n".join(lines) + "\n"


def client_pod(
    model: ClusterModel, name: str, host_aliases: dict[str, list[str]]
) -> dict[str, Any]:
    """The client pod `name` in the stack's namespace; `host_aliases`: address → host names."""
    c = model.config
    image = f"{c.images.kafka.repository}:{c.kafka_version}"
    container: dict[str, Any] = {
        "name": "client",
        "image": image,
        # Images are built here and imported into each node; nothing can be pulled.
        "imagePullPolicy": "IfNotPresent",
        "command": ["sh", "-c", client_script(model)],
        # Its tools start as the stack's own tool containers do (the proofs' load of 20
        # records/s needs no C2 compiler either).
        "env": [{"name": "LOG_DIR", "value": RUN_DIR}, resources.tool_jvm_env()],
        "volumeMounts": [
            {"name": "work", "mountPath": WORK_DIR},
            {"name": "ca", "mountPath": acls.CA_DIR, "readOnly": True},
            {
                "name": "admin-client",
                "mountPath": admin_client.ADMIN_CLIENT_DIR,
                "readOnly": True,
            },
        ],
        "securityContext": container_security_context(),
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": c.namespace},
        "spec": {
            "automountServiceAccountToken": False,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "securityContext": pod_security_context(model, c.images.kafka),
            "hostAliases": [
                {"ip": address, "hostnames": names} for address, names in host_aliases.items()
            ],
            "containers": [container],
            "volumes": [
                {"name": "work", "emptyDir": {"medium": "Memory"}},
                # Only the CA of a broker's certificate Secret: present whichever issuer signed it.
                {
                    "name": "ca",
                    "secret": {
                        "secretName": model.names.tls_secret(model.brokers[0].workload),
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    },
                },
                {
                    "name": "admin-client",
                    "secret": {"secretName": model.names.admin_client_secret},
                },
            ],
        },
    }


def external_host_names(model: ClusterModel) -> list[str]:
    """Every name an external client dials: the bootstrap host and each broker's."""
    brokers = [b.external_host for b in model.brokers if b.external_host]
    return [model.names.external_bootstrap, *brokers]
