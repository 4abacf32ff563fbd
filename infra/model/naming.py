"""Every resource and host name comes from here (Strimzi's KafkaResources idea)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Kubernetes object names that are also DNS labels (pods, Services, the `job-name` and
# `controller-revision-hash` labels): lowercase letters, digits and '-', at most 63 characters.
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_LABEL_MAX = 63
# The longest name built on the cluster's: a StatefulSet's revision label adds 11 characters to
# `<cluster>-controller-9004` (63 in all), a Job's name 26 (`-dynamic-settings-` and a hash).
MAX_CLUSTER_NAME = 30


def name_problem(value: str, limit: int) -> str | None:
    """Why `value` cannot start the stack's object names, or None."""
    if not DNS_LABEL.fullmatch(value):
        return (
            f"{value!r} is not a DNS label: use lowercase letters, digits and '-', starting "
            "and ending with a letter or digit"
        )
    if len(value) > limit:
        return f"{value!r} has {len(value)} characters; at most {limit}"
    return None


# A DNS name (a Service's cluster domain, an external domain): DNS labels joined by dots.
DNS_NAME_MAX = 253


def dns_name_problem(value: str) -> str | None:
    """Why `value` cannot be a host name's domain, or None."""
    labels = value.split(".")
    if not value or any(not DNS_LABEL.fullmatch(label) for label in labels):
        return (
            f"{value!r} is not a DNS name: dot-separated labels of lowercase letters, digits "
            "and '-', each starting and ending with a letter or digit"
        )
    if len(value) > DNS_NAME_MAX or any(len(label) > DNS_LABEL_MAX for label in labels):
        return f"{value!r} is too long: at most {DNS_LABEL_MAX} characters a label, 253 in all"
    return None


@dataclass(frozen=True)
class Names:
    cluster: str
    namespace: str
    cluster_domain: str = "cluster.local"
    external_domain: str = "kafka.example.com"

    def broker(self, node_id: int) -> str:
        return f"{self.cluster}-broker-{node_id}"

    def controller(self, node_id: int) -> str:
        return f"{self.cluster}-controller-{node_id}"

    def zookeeper(self, index: int) -> str:
        return f"{self.cluster}-zookeeper-{index}"

    @staticmethod
    def pod(workload: str) -> str:
        """Each node is a one-replica StatefulSet, so its pod is ordinal 0."""
        return f"{workload}-0"

    def claim(self, template: str, workload: str) -> str:
        """The claim the StatefulSet controller makes for a volumeClaimTemplate of the pod."""
        return f"{template}-{self.pod(workload)}"

    @property
    def brokers_service(self) -> str:
        return f"{self.cluster}-brokers"

    @property
    def quorum_service(self) -> str:
        return f"{self.cluster}-quorum"

    @property
    def bootstrap_service(self) -> str:
        return f"{self.cluster}-bootstrap"

    @property
    def replication_network(self) -> str:
        return f"{self.cluster}-replication"

    def zone_replication_network(self, zone: str) -> str:
        """The attachment of one zone's subnet when the second network has one per zone."""
        return f"{self.replication_network}-{zone.lower()}"

    @property
    def haproxy(self) -> str:
        return f"{self.cluster}-haproxy"

    def storage_class(self, role: str) -> str:
        return f"{self.cluster}-{role}-fast"

    def config_map(self, workload: str) -> str:
        return f"{workload}-config"

    def tls_secret(self, workload: str) -> str:
        return f"{workload}-tls"

    @property
    def bootstrap_issuer(self) -> str:
        """The self-signed Issuer that signs only the stack's CA certificate."""
        return f"{self.cluster}-selfsigned"

    @property
    def ca(self) -> str:
        """The stack's CA: its Certificate, its Secret and the Issuer signing node certificates."""
        return f"{self.cluster}-ca"

    @property
    def node_principal(self) -> str:
        """The certificate common name every broker and controller shares: one super user."""
        return f"{self.cluster}-node"

    @property
    def acl_job(self) -> str:
        return f"{self.cluster}-acls"

    @property
    def settings_job(self) -> str:
        return f"{self.cluster}-dynamic-settings"

    @property
    def admin_client_secret(self) -> str:
        """The SCRAM admin's client config (its password quoted in), used by the admin Jobs."""
        return f"{self.cluster}-admin-client"

    @property
    def admin_tls_secret(self) -> str:
        """The admin's client certificate (mTLS client auth), used by the ACL Job."""
        return f"{self.cluster}-admin-tls"

    def external_service(self, workload: str) -> str:
        """One Service per broker: an OpenShift Route reaches exactly that broker through it."""
        return f"{workload}-external"

    @property
    def external_bootstrap_service(self) -> str:
        return f"{self.cluster}-external-bootstrap"

    def pod_dns(self, workload: str, service: str) -> str:
        return f"{self.pod(workload)}.{service}.{self.namespace}.svc.{self.cluster_domain}"

    @property
    def bootstrap_dns(self) -> str:
        return f"{self.bootstrap_service}.{self.namespace}.svc.{self.cluster_domain}"

    @property
    def external_bootstrap(self) -> str:
        """The one name external clients start from (HAProxy or the bootstrap Route)."""
        return f"bootstrap.{self.external_domain}"

    def external_broker(self, node_id: int) -> str:
        """The name each broker advertises to external clients; SNI routes on it."""
        return f"broker-{node_id}.{self.external_domain}"
