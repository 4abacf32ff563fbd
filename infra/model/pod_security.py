"""Security contexts that pass Pod Security "restricted", and the namespace labels enforcing it.

Every pod runs as its image's non-root user with the image's group as `fsGroup`: a fresh volume
arrives owned by root, and the kubelet hands it to that group so Kafka can write its log dirs.
On OpenShift the restricted SCC assigns each namespace its own uid range and fsGroup, and a
fixed uid outside that range is refused, so the ids are left out there and the SCC fills them.
"""

from __future__ import annotations

from typing import Any

from infra.image_config import ImageUser
from infra.model.cluster import ClusterModel

# The Pod Security Standard every namespace of the stack enforces; audit and warn say the same
# so `kubectl apply` and the audit log name a violation before anything is refused.
POD_SECURITY_LEVEL = "restricted"
POD_SECURITY_MODES = ("enforce", "audit", "warn")


def namespace_labels() -> dict[str, str]:
    return {f"pod-security.kubernetes.io/{mode}": POD_SECURITY_LEVEL for mode in POD_SECURITY_MODES}


def pod_security_context(model: ClusterModel, image: ImageUser) -> dict[str, Any]:
    context: dict[str, Any] = {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
        # Only a volume whose root is not yet the group's is walked: restarts of a broker
        # with terabytes of segments stay fast.
        "fsGroupChangePolicy": "OnRootMismatch",
    }
    if model.config.platform != "openshift":
        context.update({"runAsUser": image.user, "runAsGroup": image.group, "fsGroup": image.group})
    return context


def container_security_context() -> dict[str, Any]:
    """For every container and init container: no capability, no way to gain one."""
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
