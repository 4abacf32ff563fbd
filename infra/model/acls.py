"""The ACL Job: grants for the stack's declared users, applied with the Kafka image's own tool.

With authorization on, a user may do only what an ACL allows. The Job runs `kafka-acls.sh --add`
once per grant in `security.acls`, as the admin (a super user), against the in-cluster bootstrap.
Adding an ACL that exists is a no-op, so the Job can run again at any time; a changed grant list
changes the Job's pod template, which Pulumi applies by replacing the Job. The Job only adds:
removing a grant from config leaves it in the cluster until `kafka-acls.sh --remove` is run.
"""

from __future__ import annotations

from typing import Any

from infra.model import admin_client
from infra.model.admin_client import admin_job, admin_script
from infra.model.cluster import ClusterModel
from infra.model.paths import KAFKA_BIN
from infra.security_config import AclConfig

# Under the Kafka image's own config tree, like the brokers' in-pod paths.
WORK_DIR = "/etc/kafka/acl-job"  # the admin's client config (memory emptyDir)
CA_DIR = admin_client.CA_DIR
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


def acl_script(model: ClusterModel) -> str:
    """The Job's shell script: write the admin's client config, then add every grant."""
    commands = [
        [
            f"{KAFKA_BIN}/kafka-run-class.sh",
            ACL_COMMAND,
            "--bootstrap-server",
            "{bootstrap}",
            "--command-config",
            "{admin}",
            *grant_arguments(grant),
        ]
        for grant in model.config.security.acls
    ]
    return admin_script(model, WORK_DIR, commands)


def acl_job(model: ClusterModel) -> dict[str, Any] | None:
    """The Job, or None when authorization is off or no grant is declared."""
    c = model.config
    if not c.authorization or not c.security.acls:
        return None
    return admin_job(model, model.names.acl_job, "kafka-acls", WORK_DIR, acl_script(model))
