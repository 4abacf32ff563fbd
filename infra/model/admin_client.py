"""Jobs that act on the running cluster as its admin, with the Kafka image's own tools.

The ACL Job (`acls.py`) and the dynamic broker config Job (`dynamic_config.py`) both run a shell
script that calls Kafka's tools against the in-cluster bootstrap as `admin_user`. Over SCRAM the
admin's client config is a Secret the program fills (`admin_client_files`): the password is
quoted into its JAAS line by `secret_text`, which no shell expansion could do for every password.
With mTLS clients the script writes the config beside the admin's certificate.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.model.pod_security import container_security_context, pod_security_context
from infra.model.resources import ADMIN_JOB, tool_jvm_env
from infra.model.secret_text import PASSWORD_SLOT, jaas_quoted, properties_escaped

CA_DIR = "/etc/kafka/ca"
ADMIN_TLS_DIR = "/etc/kafka/admin-tls"
ADMIN_CLIENT_DIR = "/etc/kafka/admin-client"  # the SCRAM admin's client config (a Secret)
ADMIN_PROPERTIES = "admin.properties"


def client_properties(model: ClusterModel, work_dir: str) -> list[str]:
    """The admin's connection settings; over SCRAM, `PASSWORD_SLOT` where the program puts the
    password (`admin_client_files`)."""
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
        f"username={properties_escaped(jaas_quoted(c.security.admin_user))} "
        f"password={PASSWORD_SLOT};",
        *(truststore if c.client_tls else []),
    ]


def admin_client_files(model: ClusterModel) -> dict[str, str]:
    """The SCRAM admin's client config (the admin Jobs' Secret); `PASSWORD_SLOT`: its password."""
    return {ADMIN_PROPERTIES: "\n".join(client_properties(model, ADMIN_CLIENT_DIR)) + "\n"}


def admin_script(model: ClusterModel, work_dir: str, commands: list[list[str]]) -> str:
    """A script running each command, in which the word `{admin}` stands for the admin's client
    config (and `{bootstrap}` for the in-cluster bootstrap); with mTLS it writes that config."""
    lines = ["set -eu"]
    if model.config.security.client_auth == "mtls":
        properties = f"{work_dir}/{ADMIN_PROPERTIES}"
        lines.append(
            f"cat {ADMIN_TLS_DIR}/tls.key {ADMIN_TLS_DIR}/tls.crt > {work_dir}/keystore.pem"
        )
        lines.append(f"cat > {properties} <<'EOF'")
        lines += client_properties(model, work_dir)
        lines.append("EOF")
    else:
        properties = f"{ADMIN_CLIENT_DIR}/{ADMIN_PROPERTIES}"
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
    if c.security.client_auth == "mtls":
        volumes.append(
            {"name": "admin-tls", "secret": {"secretName": model.names.admin_tls_secret}}
        )
        mounts.append({"name": "admin-tls", "mountPath": ADMIN_TLS_DIR, "readOnly": True})
    else:
        volumes.append(
            {"name": "admin-client", "secret": {"secretName": model.names.admin_client_secret}}
        )
        mounts.append({"name": "admin-client", "mountPath": ADMIN_CLIENT_DIR, "readOnly": True})
    container: dict[str, Any] = {
        "name": component,
        "image": f"{c.images.kafka.repository}:{c.kafka_version}",  # the brokers' image
        "command": ["sh", "-c", script],
        "env": [tool_jvm_env()],
        "volumeMounts": mounts,
        "resources": ADMIN_JOB.manifest(),
        "securityContext": container_security_context(),
    }
    job_labels = labels.component_labels(c.cluster_name, component.removeprefix("kafka-"), name)
    spec = {
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
    }
    # A Job's template cannot change: a new one replaces it. Named by its content, the new Job
    # is created before the old one is deleted; under one name the create had to wait for the
    # delete, which a stack that skips Pulumi's awaits (kwok) does not, and on a loaded API
    # server the create met the old Job still being deleted. The name label stays `name`.
    digest = labels.content_hash({"spec": json.dumps(spec, sort_keys=True)})[:8]
    return {
        "metadata": {"name": f"{name}-{digest}", "namespace": c.namespace, "labels": job_labels},
        "spec": spec,
    }
