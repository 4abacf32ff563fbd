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
from infra.model.pod_security import pod_security_context
from infra.model.security import scram_secret_name
from infra.security_config import AclConfig

# Under the Kafka image's own config tree, like the brokers' in-pod paths.
WORK_DIR = "/etc/kafka/acl-job"  # the admin's client config (memory emptyDir)
CA_DIR = "/etc/kafka/ca"
ADMIN_TLS_DIR = "/etc/kafka/admin-tls"
# The tool by its class through the runner every Kafka image has: the public image also has
# `kafka-acls.sh`, an image built with only the runner (the local one) does not.
ACL_COMMAND = "org.apache.kafka.tools.AclCommand"
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


def client_properties(model: ClusterModel) -> list[str]:
    """The admin's connection settings; the password is read from the environment at run time
    (`$ADMIN_PASSWORD`, expanded by the shell writing the file). The ACL Job's, and any
    in-cluster client's that acts as the admin (the local cluster's proofs)."""
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
    return [
        f"security.protocol={protocol}",
        "sasl.mechanism=SCRAM-SHA-512",
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{c.security.admin_user}" password="$ADMIN_PASSWORD";',
        *(truststore if c.client_tls else []),
    ]


def acl_script(model: ClusterModel) -> str:
    """The Job's shell script: write the admin's client config, then add every grant."""
    properties = f"{WORK_DIR}/admin.properties"
    lines = ["set -eu"]
    if model.config.security.client_auth == "mtls":
        lines.append(
            f"cat {ADMIN_TLS_DIR}/tls.key {ADMIN_TLS_DIR}/tls.crt > {WORK_DIR}/keystore.pem"
        )
    # An unquoted heredoc delimiter: the shell expands $ADMIN_PASSWORD, never the render.
    lines.append(f"cat > {properties} <<EOF")
    lines += client_properties(model)
    lines.append("EOF")
    bootstrap = f"{model.names.bootstrap_dns}:{model.ports.client}"
    for grant in model.config.security.acls:
        command = [
            f"{KAFKA_BIN}/kafka-run-class.sh",
            ACL_COMMAND,
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
        "name": "kafka-acls",
        # The brokers' image (`images.kafka`), not the public default: the one the cluster has.
        "image": f"{c.images.kafka.repository}:{c.kafka_version}",
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
    if env:
        container["env"] = env
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
                    # The image's own non-root user, as the brokers run it.
                    "securityContext": pod_security_context(model, c.images.kafka),
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }
