"""Jobs that act on the running cluster as its admin, with the Kafka image's own tools.

The ACL Job (`acls.py`) and the dynamic broker config Job (`dynamic_config.py`) both run a shell
script that writes the admin's client config, then calls `kafka-*.sh` against the in-cluster
bootstrap. The admin authenticates as `admin_user`: its SCRAM password comes from its Secret
through the environment (never through the render), or with mTLS clients its certificate.
"""

from __future__ import annotations

import shlex
from typing import Any

from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.model.pod_security import container_security_context, pod_security_context
from infra.model.security import scram_secret_name

CA_DIR = "/etc/kafka/ca"
ADMIN_TLS_DIR = "/etc/kafka/admin-tls"


def client_properties(model: ClusterModel, work_dir: str) -> list[str]:
    """The admin's connection settings; the password is read from the environment at run time."""
    c = model.config
    truststore = [
        "ssl.truststore.type=PEM",
        f"ssl.truststore.location={CA_DIR}/ca.crt",
    ]
    if c.security.client_auth == "mtls":
        return [
            "security.protocol=SSL",
            "ssl.keystore.type=PEM",
            f"ssl.keystore.location={work_dir}/keystore.pem",
            *truststore,
        ]
    protocol = "SASL_SSL" if c.client_tls else "SASL_PLAINTEXT"
    return [
        f"security.protocol={protocol}",
        "sasl.mechanism=SCRAM-SHA-512",
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{c.security.admin_user}" password="$ADMIN_PASSWORD";',
        *(truststore if c.client_tls else []),
    ]


def admin_script(model: ClusterModel, work_dir: str, commands: list[list[str]]) -> str:
    """A script writing `<work_dir>/admin.properties`, then running each command, in which the
    word `{admin}` stands for that file (and `{bootstrap}` for the in-cluster bootstrap)."""
    properties = f"{work_dir}/admin.properties"
    lines = ["set -eu"]
    if model.config.security.client_auth == "mtls":
        lines.append(
            f"cat {ADMIN_TLS_DIR}/tls.key {ADMIN_TLS_DIR}/tls.crt > {work_dir}/keystore.pem"
        )
    # An unquoted heredoc delimiter: the shell expands $ADMIN_PASSWORD, never the render.
    lines.append(f"cat > {properties} <<EOF")
    lines += client_properties(model, work_dir)
    lines.append("EOF")
    bootstrap = f"{model.names.bootstrap_dns}:{model.ports.client}"
    for command in commands:
        words = [
            w.replace("{admin}", properties).replace("{bootstrap}", bootstrap) for w in command
        ]
        lines.append(shlex.join(words))
    return "\n".join(lines) + "\n"


def admin_job(
    model: ClusterModel, name: str, component: str, work_dir: str, script: str
) -> dict[str, Any]:
    """A Job running `script` in the Kafka image as the admin; retried while brokers start."""
    c = model.config
    volumes: list[dict[str, Any]] = [
        {"name": "work", "emptyDir": {"medium": "Memory"}},
        # Only the CA of a broker's certificate Secret: present whichever issuer signed it.
        {
            "name": "ca",
            "secret": {
                "secretName": model.names.tls_secret(model.brokers[0].workload),
                "items": [{"key": "ca.crt", "path": "ca.crt"}],
            },
        },
    ]
    mounts = [
        {"name": "work", "mountPath": work_dir},
        {"name": "ca", "mountPath": CA_DIR, "readOnly": True},
    ]
    env: list[dict[str, Any]] = []
    if c.security.client_auth == "mtls":
        volumes.append(
            {"name": "admin-tls", "secret": {"secretName": model.names.admin_tls_secret}}
        )
        mounts.append({"name": "admin-tls", "mountPath": ADMIN_TLS_DIR, "readOnly": True})
    else:
        env.append(
            {
                "name": "ADMIN_PASSWORD",
                "valueFrom": {
                    "secretKeyRef": {
                        "name": scram_secret_name(model, c.security.admin_user),
                        "key": "password",
                    }
                },
            }
        )
    container: dict[str, Any] = {
        "name": component,
        "image": f"{c.images.kafka.repository}:{c.kafka_version}",  # the brokers' image
        "command": ["sh", "-c", script],
        "volumeMounts": mounts,
        "resources": {
            "requests": {"cpu": "250m", "memory": "512Mi"},
            "limits": {"cpu": "1", "memory": "512Mi"},
        },
        "securityContext": container_security_context(),
    }
    if env:
        container["env"] = env
    job_labels = labels.component_labels(c.cluster_name, component.removeprefix("kafka-"), name)
    return {
        "metadata": {"name": name, "namespace": c.namespace, "labels": job_labels},
        "spec": {
            # Retries cover brokers still starting; each attempt runs the whole script again.
            "backoffLimit": 10,
            "template": {
                "metadata": {"labels": job_labels},
                "spec": {
                    "restartPolicy": "OnFailure",
                    # As the brokers run: the image's user (OpenShift's SCC assigns one there).
                    "securityContext": pod_security_context(model, c.images.kafka),
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }
