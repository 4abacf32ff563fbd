"""The whole desired state of a cluster in one pass: every object, grouped by concern, with
what each concern needs to exist first. Pure data (no pulumi import).

`infra/components` only declares what this returns, so the real engine, the mock render and the
preview all see the same objects. A concern's type token and every object's logical name are
part of the Pulumi URN: changing one replaces the object, so they are spelled out here, once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from infra.model import (
    access,
    acls,
    certificate_reload,
    dynamic_config,
    labels,
    membership,
    networks,
    pod_security,
    secret_objects,
    security,
    storage,
    templating,
    workloads,
)
from infra.model.access import SKIP_AWAIT
from infra.model.broker_config import super_users
from infra.model.claims import claim_patches, template_size_paths
from infra.model.cluster import ClusterModel
from infra.model.declared import Concern, Declared
from infra.model.nodes import Node


def _config_map(model: ClusterModel, name: str, data: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": model.config.namespace}, "data": data}


def _node_objects(model: ClusterModel, node: Node, storage_class: str) -> list[Declared]:
    config = _config_map(
        model, model.names.config_map(node.workload), templating.node_files(model, node)
    )
    manifest = (
        workloads.zookeeper_statefulset(model, node, storage_class)
        if node.role == labels.ZOOKEEPER
        else workloads.kafka_statefulset(model, node, storage_class)
    )
    if model.config.skip_await:
        manifest["metadata"].setdefault("annotations", {}).update(SKIP_AWAIT)
    # A changed file takes effect through a restart now, in the ordered roll, not at whichever
    # restart happens next: the pod template carries the hash of what the ConfigMap holds.
    template = manifest["spec"]["template"]["metadata"]
    # Settings Kafka applies while it runs are left out: the settings Job applies them instead.
    restart = templating.restart_files(model, node)
    template.setdefault("annotations", {})[labels.CONFIG_HASH] = labels.content_hash(restart)
    # A renewed certificate the node cannot reload: its restart in the roll serves it.
    restarts = model.certificate_restarts
    kept: tuple[str, ...] = ()
    if certificate_reload.restarts_on_renewal(model, node):
        if restarts is None:  # not known: what is deployed stays, nothing restarts for it
            kept = (f'spec.template.metadata.annotations["{labels.CERTIFICATE_RESTART}"]',)
        elif node.workload in restarts:
            template["annotations"][labels.CERTIFICATE_RESTART] = restarts[node.workload]
    return [
        # The rendered configuration, mounted read-only at the paths the properties name.
        Declared("ConfigMap", f"{node.workload}-config", config),
        # The workload holds a node's identity (id, rack, address): its name stays stable.
        Declared(
            "StatefulSet",
            node.workload,
            manifest,
            protect=model.config.protected,
            ignore_changes=kept,
        ),
    ]


def _with_birth_record(model: ClusterModel, objects: list[Declared]) -> list[Declared]:
    """The voters' objects and, once every voter is ready, the record that the quorum was born
    (infra/model/membership.py): pods started before it format the initial voter set."""
    voters = {v.workload for v in model.voters}
    workloads = tuple(o.logical for o in objects if o.kind == "StatefulSet" and o.logical in voters)
    if model.config.quorum.kind != "kraft" or not workloads:
        return objects
    record = membership.birth_record(model)
    return [*objects, Declared("ConfigMap", record["metadata"]["name"], record, after=workloads)]


def _one_at_a_time(objects: list[Declared], chain: bool) -> list[Declared]:
    """Chain a role's StatefulSets so Pulumi updates them one by one, in the order given, each after
    the previous one is ready again: a change never restarts two brokers (or two voters) at once.
    `chain` is off where the first node cannot become ready alone, which would stall the first
    `pulumi up`, and on the first creation, where nothing runs yet to protect."""
    if not chain:
        return objects
    chained, previous = [], None
    for obj in objects:
        if obj.kind == "StatefulSet":
            if previous is not None:
                obj = replace(obj, after=(previous,))
            previous = obj.logical
        chained.append(obj)
    return chained


def _all_exist(model: ClusterModel, nodes: list[Node]) -> bool:
    """The cluster answered that every one of these nodes' StatefulSets exists."""
    existing = model.existing_workloads
    return existing is not None and {n.workload for n in nodes} <= existing


def _roll_order(model: ClusterModel, nodes: list[Node]) -> list[Node]:
    """Node order, with the active controller last: restarting it hands the quorum's leadership
    to another voter, and done last that happens once, not again when that voter restarts."""
    return sorted(nodes, key=lambda n: n.node_id == model.active_controller)  # stable


def _growing_claims(model: ClusterModel, objects: list[Declared]) -> tuple[Declared, ...]:
    """The objects with each StatefulSet's claims declared as patches at the current size, so
    a larger volume expands them in place; the StatefulSets' claim templates keep the size they
    were created with (infra/model/claims.py says why)."""
    grown: list[Declared] = []
    for obj in objects:
        if obj.kind != "StatefulSet":
            grown.append(obj)
            continue
        sizes = template_size_paths(obj.manifest)
        grown.append(replace(obj, ignore_changes=(*obj.ignore_changes, *sizes)))
        grown += [
            # Once its StatefulSet exists; `pulumi destroy` leaves the claim (and its log) alone.
            Declared(
                "PersistentVolumeClaimPatch",
                claim["metadata"]["name"],
                claim,
                retain_on_delete=True,
                after=(obj.logical,),
            )
            for claim in claim_patches(model.names, obj.manifest)
        ]
    return tuple(grown)


def _external(model: ClusterModel) -> list[Declared]:
    mode = model.config.external.mode
    if mode == "haproxy":
        config = templating.haproxy_config(model)
        digest = labels.content_hash({"haproxy.cfg": config})  # its Deployment rolls on it
        return [
            # SNI routing table rendered from templates/haproxy.
            Declared(
                "ConfigMap",
                "haproxy-config",
                _config_map(model, f"{model.names.haproxy}-config", {"haproxy.cfg": config}),
            ),
            Declared("Deployment", "haproxy", access.haproxy_deployment(model, digest)),
            Declared("Service", "haproxy-service", access.haproxy_service(model)),
        ]
    if mode == "route":
        # Passthrough: TLS ends at the broker, so SNI picks the Route, its Service the broker.
        services = [
            Declared("Service", svc["metadata"]["name"], svc)
            for svc in access.external_services(model)
        ]
        return services + [
            Declared("Route", r["metadata"]["name"], r) for r in access.routes(model)
        ]
    return []


def desired_state(model: ClusterModel) -> list[Concern]:
    """Every object of the cluster, concern by concern, in an order that respects `after`."""
    c = model.config
    classes = storage.storage_class_names(model)
    # The Multus second network (dual mode): static address per pod, one per zone when zoned.
    network = [
        Declared("NetworkAttachmentDefinition", logical, nad)
        for logical, nad in networks.network_attachments(model).items()
    ]
    # Each port open only to the peers that need it, on the network where it listens.
    network += [
        Declared("NetworkPolicy", p["metadata"]["name"], p)
        for p in networks.network_policies(model)
    ]
    network += [
        Declared("MultiNetworkPolicy", p["metadata"]["name"], p)
        for p in networks.multi_network_policies(model)
    ]
    # ZooKeeper servers answer `srvr` (their readiness) only inside a quorum; combined brokers
    # open CLIENT only once a majority of them runs: neither can be created one by one. Once the
    # servers all exist, or the combined voters that exist run a quorum, a change restarts (and
    # adds) them one at a time.
    quorum = _one_at_a_time(
        [
            o
            for n in _roll_order(model, model.quorum)
            for o in _node_objects(model, n, classes["quorum"])
        ],
        chain=(c.quorum.kind == "kraft" or _all_exist(model, model.quorum))
        and not model.first_creation,
    )
    # Combined brokers are the voters: the active controller among them goes last too.
    brokers = _one_at_a_time(
        [
            o
            for n in _roll_order(model, model.brokers)
            for o in _node_objects(model, n, classes["broker"])
        ],
        chain=(not c.quorum.combined or model.quorum_running) and not model.first_creation,
    )
    external_bootstrap = (
        f"{model.names.external_bootstrap}:{model.ports.route}" if c.external.mode != "none" else ""
    )
    workload_deps = ("namespace", "storage", "security")
    certificates = [
        Declared("Certificate", cert["metadata"]["name"], cert)
        for cert in security.certificates(model)
    ]
    admin_certificate = security.admin_certificate(model)
    if admin_certificate is not None:
        certificates.append(Declared("Certificate", "admin", admin_certificate))
    acl_job = acls.acl_job(model)
    if acl_job is not None and c.skip_await:
        acl_job["metadata"]["annotations"] = dict(SKIP_AWAIT)
    settings_job = dynamic_config.settings_job(model)
    if c.skip_await:
        settings_job["metadata"]["annotations"] = dict(SKIP_AWAIT)
    return [
        Concern(
            "namespace",
            "",  # declared by the cluster component itself
            # Deleting a namespace deletes the data claims in it: destroy forgets it instead.
            (
                Declared(
                    "Namespace",
                    "namespace",
                    # Pods that would not pass Pod Security "restricted" are refused here.
                    {"metadata": {"name": c.namespace, "labels": pod_security.namespace_labels()}},
                    protect=c.protected,
                    retain_on_delete=True,
                ),
            ),
        ),
        Concern(
            "storage",
            "kafkastack:storage:StorageClasses",
            # Stable names: renaming a StorageClass is a replacement, and claims refer to it.
            tuple(
                Declared(
                    "StorageClass", role, storage.storage_class(model, role), protect=c.protected
                )
                for role in storage.ROLES
            ),
            outputs={"names": classes},
        ),
        Concern(
            "network",
            "kafkastack:network:Networks",
            tuple(network),
            after=("namespace",),
            outputs={
                "replication_network": ",".join(
                    sorted({networks.attachment_name(model, z) for z in model.zones})
                )
                if model.dual_network
                else ""
            },
        ),
        Concern(
            "issuer",
            "kafkastack:security:CertificateIssuer",
            # The stack's own CA chain, unless config names an existing issuer.
            tuple(
                Declared(o["kind"], f"{o['kind'].lower()}-{o['metadata']['name']}", o)
                for o in security.issuer_objects(model)
            ),
            after=("namespace",),
            outputs={"issuer": security.issuer_summary(model)},
        ),
        Concern(
            "security",
            "kafkastack:security:Security",
            # One certificate per node: pod DNS name, replication address, external host.
            tuple(certificates) + tuple(secret_objects.secrets(model)),
            after=("namespace", "issuer"),
            outputs={
                "users": sorted(c.security.users)
                if c.security.client_auth == "scram-sha-512"
                else []
            },
        ),
        Concern(
            "quorum",
            "kafkastack:quorum:MetadataQuorum",
            _growing_claims(model, _with_birth_record(model, quorum)),
            after=workload_deps,
            outputs={"kind": c.quorum.kind, "nodes": {n.workload: n.zone for n in model.quorum}},
        ),
        Concern(
            "brokers",
            "kafkastack:brokers:BrokerPool",
            _growing_claims(model, _with_birth_record(model, brokers)),
            # The quorum rolls first (Kafka's upgrade order), the brokers after it.
            after=(*workload_deps, "quorum"),
            outputs={"zones": {b.workload: b.zone for b in model.brokers}},
        ),
        Concern(
            "services",
            "kafkastack:access:Services",
            # Headless services give every pod the DNS name its CLIENT listener advertises.
            tuple(Declared("Service", s["metadata"]["name"], s) for s in access.services(model)),
            after=("namespace",),
            outputs={"bootstrap": f"{model.names.bootstrap_dns}:{model.ports.client}"},
        ),
        Concern(
            "external",
            "kafkastack:access:ExternalAccess",
            tuple(_external(model)),
            after=("namespace",),
            outputs={"bootstrap": external_bootstrap},
        ),
        Concern(
            "budgets",
            "kafkastack:access:DisruptionBudgets",
            # Voluntary evictions (node drains) take one broker and a quorum minority at a time.
            tuple(
                Declared("PodDisruptionBudget", b["metadata"]["name"], b)
                for b in access.disruption_budgets(model)
            ),
            after=("namespace",),
        ),
        Concern(
            "acls",
            "kafkastack:security:AccessControl",
            # Grants for the declared users, added by the admin once the brokers answer.
            (Declared("Job", "acls", acl_job),) if acl_job is not None else (),
            after=("security", "brokers", "services"),
            outputs={
                "authorizer": model.metadata.authorizer if c.authorization else "",
                "super_users": super_users(model) if c.authorization else [],
            },
        ),
        Concern(
            "settings",
            "kafkastack:brokers:DynamicSettings",
            # Cluster-wide settings the running brokers take without a restart.
            (Declared("Job", "dynamic-settings", settings_job),),
            after=("security", "brokers", "services"),
            outputs={"settings": dynamic_config.dynamic_settings(model)},
        ),
    ]
