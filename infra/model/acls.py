"""The ACL Job: grants for the stack's declared users, applied with the Kafka image's own tool.

With authorization on, a user may do only what an ACL allows. The Job runs `kafka-acls.sh --add`
once per grant in `security.acls`, as the admin (a super user), against the in-cluster bootstrap.
Adding an ACL that exists is a no-op, so the Job can run again at any time; a changed grant list
changes the Job's pod template, which Pulumi applies by replacing the Job. The Job only adds:
removing a grant from config leaves it in the cluster until `kafka-acls.sh --remove` is run.
"""

from __future__ import annotations

import shlex
from typing import Any

from infra.model import labels
from infra.model.cluster import ClusterModel
from infra.model.paths import KAFKA_BIN
from infra.model.secret_text import PASSWORD_SLOT, jaas_quoted, properties_escaped
from infra.security_config import AclConfig

# Under the Kafka image's own config tree, like the brokers' in-pod paths.
WORK_DIR = "/etc/kafka/acl-job"  # the admin's client config (memory emptyDir)
CA_DIR = "/etc/kafka/ca"
ADMIN_TLS_DIR = "/etc/kafka/admin-tls"
ADMIN_CLIENT_DIR = "/etc/kafka/acl-admin"  # the SCRAM admin's client config (a Secret)
ADMIN_PROPERTIES = "admin.properties"
RESOURCE_FLAGS = {
    "topic": "--topic",
    "group": "--group",
    "transactional-id": "--transactional-id",
}


def grant_arguments(grant: AclConfig) -> list[str]:
    """kafka-acls.sh arguments (after the connection flags) adding one grant."""
    args = ["--add", "--force", "--allow-principal", f"User:{grant.user}"]
    for operation in grant.operations:
        args += ["--operation", operation]
    if grant.resource == "cluster":
        args.append("--cluster")
    else:
        args += [RESOURCE_FLAGS[grant.resource], grant.name]
        args += ["--resource-pattern-type", grant.pattern]
    return args


def _client_properties(model: ClusterModel) -> list[str]:
    """The admin's connection settings; over SCRAM, `PASSWORD_SLOT` where the program puts the
    password (the file is a Secret, see `admin_client_files`)."""
    c = model.config
    truststore = [
        "ssl.truststore.type=PEM",
        f"ssl.truststore.location={CA_DIR}/ca.crt",
    ]
    if c.security.client_auth == "mtls":
        return [
            "security.protocol=SSL",
            "ssl.keystore.type=PEM",
            f"ssl.keystore.location={WORK_DIR}/keystore.pem",
            *truststore,
        ]
    protocol = "SASL_SSL" if c.client_tls else "SASL_PLAINTEXT"
    user = properties_escaped(jaas_quoted(c.security.admin_user))
    return [
        f"security.protocol={protocol}",
        "sasl.mechanism=SCRAM-SHA-512",
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f"username={user} password={PASSWORD_SLOT};",
        *(truststore if c.client_tls else []),
    ]


def admin_client_files(model: ClusterModel) -> dict[str, str]:
    """The SCRAM admin's client config (the ACL Job's Secret), `PASSWORD_SLOT` for the password:
    the program quotes the password into it, which no shell expansion could do."""
    return {ADMIN_PROPERTIES: "\n".join(_client_properties(model)) + "\n"}


def acl_script(model: ClusterModel) -> str:
    """The Job's shell script: the admin's client config, then add every grant."""
    lines = ["set -eu"]
    if model.config.security.client_auth == "mtls":
        properties = f"{WORK_DIR}/admin.properties"
        lines.append(
            f"cat {ADMIN_TLS_DIR}/tls.key {ADMIN_TLS_DIR}/tls.crt > {WORK_DIR}/keystore.pem"
        )
        lines.append(f"cat > {properties} <<'EOF'")
        lines += _client_properties(model)
        lines.append("EOF")
    else:
        properties = f"{ADMIN_CLIENT_DIR}/{ADMIN_PROPERTIES}"
    bootstrap = f"{model.names.bootstrap_dns}:{model.ports.client}"
    for grant in model.config.security.acls:
        command = [
            f"{KAFKA_BIN}/kafka-acls.sh",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            properties,
            *grant_arguments(grant),
        ]
        lines.append(shlex.join(command))
    return "\n".join(lines) + "\n"


def acl_job(model: ClusterModel) -> dict[str, Any] | None:
    """The Job, or None when authorization is off or no grant is declared."""
    c = model.config
    if not c.authorization or not c.security.acls:
        return None
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
        {"name": "work", "mountPath": WORK_DIR},
        {"name": "ca", "mountPath": CA_DIR, "readOnly": True},
    ]
    if c.security.client_auth == "mtls":
        volumes.append(
            {"name": "admin-tls", "secret": {"secretName": model.names.admin_tls_secret}}
        )
        mounts.append({"name": "admin-tls", "mountPath": ADMIN_TLS_DIR, "readOnly": True})
    else:
        volumes.append(
            {"name": "admin-client", "secret": {"secretName": model.names.acl_admin_secret}}
        )
        mounts.append({"name": "admin-client", "mountPath": ADMIN_CLIENT_DIR, "readOnly": True})
    container: dict[str, Any] = {
        "name": "kafka-acls",
        "image": f"apache/kafka:{c.kafka_version}",
        "command": ["sh", "-c", acl_script(model)],
        "volumeMounts": mounts,
        "resources": {
            "requests": {"cpu": "250m", "memory": "512Mi"},
            "limits": {"cpu": "1", "memory": "512Mi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    job_labels = labels.component_labels(c.cluster_name, "acls", model.names.acl_job)
    return {
        "metadata": {
            "name": model.names.acl_job,
            "namespace": c.namespace,
            "labels": job_labels,
        },
        "spec": {
            # Retries cover brokers still starting; each attempt re-adds every grant.
            "backoffLimit": 10,
            "template": {
                "metadata": {"labels": job_labels},
                "spec": {
                    "restartPolicy": "OnFailure",
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 1000,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }
