"""The Pod Security Standards' "restricted" profile (which includes "baseline"), as documented at
https://kubernetes.io/docs/concepts/security/pod-security-standards/ (policy version latest,
Kubernetes 1.36): each control is one check over a pod spec, returning what it forbids.

Written from the documented rules rather than taken from the apiserver, so the fast tier can
hold every rendered pod to them; the cluster tier shows the real admission agreeing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

BASELINE_CAPABILITIES = {
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
}
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ping_group_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
RESTRICTED_VOLUME_SOURCES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}
POD_TEMPLATE_KINDS = {"StatefulSet", "Deployment", "DaemonSet", "ReplicaSet", "Job"}


def pod_specs(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod spec(s) a workload object creates pods from."""
    kind, spec = manifest["kind"], manifest.get("spec", {})
    if kind == "Pod":
        return [spec]
    if kind in POD_TEMPLATE_KINDS:
        return [spec["template"]["spec"]]
    if kind == "CronJob":
        return [spec["jobTemplate"]["spec"]["template"]["spec"]]
    return []


def _containers(pod: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for c in pod.get(field) or []:
            yield f"{field}[{c['name']}]", c


def _baseline(pod: dict[str, Any]) -> Iterator[str]:
    psc = pod.get("securityContext") or {}
    if (psc.get("windowsOptions") or {}).get("hostProcess"):
        yield "hostProcess"
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(host):
            yield host
    for volume in pod.get("volumes") or []:
        if "hostPath" in volume:
            yield f"hostPath volume {volume['name']}"
    for sysctl in psc.get("sysctls") or []:
        if sysctl["name"] not in SAFE_SYSCTLS:
            yield f"sysctl {sysctl['name']}"
    contexts = [("pod", psc)] + [(n, c.get("securityContext") or {}) for n, c in _containers(pod)]
    for where, sc in contexts:
        if (sc.get("appArmorProfile") or {}).get("type") not in (
            None,
            "RuntimeDefault",
            "Localhost",
        ):
            yield f"{where}: appArmorProfile"
        selinux = sc.get("seLinuxOptions") or {}
        if (
            selinux.get("type", "") not in SELINUX_TYPES
            or selinux.get("user")
            or selinux.get("role")
        ):
            yield f"{where}: seLinuxOptions"
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            yield f"{where}: seccompProfile Unconfined"
    for where, c in _containers(pod):
        sc = c.get("securityContext") or {}
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            yield f"{where}: hostProcess"
        if sc.get("privileged"):
            yield f"{where}: privileged"
        for cap in set((sc.get("capabilities") or {}).get("add") or []) - BASELINE_CAPABILITIES:
            yield f"{where}: adds capability {cap}"
        if any(p.get("hostPort") for p in c.get("ports") or []):
            yield f"{where}: hostPort"
        if sc.get("procMount", "Default") != "Default":
            yield f"{where}: procMount"


def _restricted(pod: dict[str, Any]) -> Iterator[str]:
    psc = pod.get("securityContext") or {}
    for volume in pod.get("volumes") or []:
        sources = set(volume) - {"name"}
        if not sources <= RESTRICTED_VOLUME_SOURCES:
            yield f"volume {volume['name']}: {sorted(sources)}"
    if psc.get("runAsUser") == 0:
        yield "pod: runAsUser 0"
    pod_seccomp = (psc.get("seccompProfile") or {}).get("type") in ("RuntimeDefault", "Localhost")
    for where, c in _containers(pod):
        sc = c.get("securityContext") or {}
        if sc.get("allowPrivilegeEscalation") is not False:
            yield f"{where}: allowPrivilegeEscalation is not false"
        non_root = sc.get("runAsNonRoot")
        if non_root is False or (non_root is None and psc.get("runAsNonRoot") is not True):
            yield f"{where}: runAsNonRoot is not true (pod or container)"
        if sc.get("runAsUser") == 0:
            yield f"{where}: runAsUser 0"
        seccomp = (sc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost") and not (seccomp is None and pod_seccomp):
            yield f"{where}: seccompProfile not RuntimeDefault or Localhost"
        capabilities = sc.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            yield f"{where}: does not drop ALL capabilities"
        if set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
            yield f"{where}: adds a capability other than NET_BIND_SERVICE"


def violations(pod: dict[str, Any]) -> list[str]:
    """What in a pod spec Pod Security "restricted" forbids; empty when the pod passes."""
    return [*_baseline(pod), *_restricted(pod)]
