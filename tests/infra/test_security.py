"""TLS issuer, listener protocols, authorization and ACLs: what prod and staging run with."""

from __future__ import annotations

from typing import Any

import pytest

from infra.errors import ConfigError
from infra.model import acls, labels, security
from infra.model.broker_config import broker_properties, controller_properties
from infra.model.cluster import ClusterModel
from infra.model.desired import desired_state
from tests.infra.conftest import config_of


def model_of(environment: str = "staging", **overrides: Any) -> ClusterModel:
    return ClusterModel.from_config(config_of(environment, **overrides))


def declared(model: ClusterModel) -> list[dict[str, Any]]:
    return [o.manifest for concern in desired_state(model) for o in concern.objects]


def by_kind(model: ClusterModel, kind: str) -> dict[str, dict[str, Any]]:
    """Each `kind` object by name (a Job by its name label: its name carries its hash)."""
    return {
        m["metadata"]["labels"][labels.NAME] if kind == "Job" else m["metadata"]["name"]: m
        for concern in desired_state(model)
        for o in concern.objects
        if o.kind == kind
        for m in [o.manifest]
    }


def test_every_certificate_names_an_issuer_the_stack_creates() -> None:
    model = model_of()
    issuers = by_kind(model, "Issuer")
    certificates = by_kind(model, "Certificate")
    assert certificates, "the stack declares certificates"
    for name, cert in certificates.items():
        ref = cert["spec"]["issuerRef"]
        assert ref["kind"] == "Issuer" and ref["name"] in issuers, name
    # One CA for all nodes: a self-signed Issuer signs only the CA, the CA Issuer the rest.
    ca = certificates[model.names.ca]["spec"]
    assert ca["isCA"] is True
    assert issuers[ca["issuerRef"]["name"]]["spec"] == {"selfSigned": {}}
    node_refs = {c["spec"]["issuerRef"]["name"] for n, c in certificates.items() if n != "kafka-ca"}
    assert node_refs == {model.names.ca}
    assert issuers[model.names.ca]["spec"] == {"ca": {"secretName": ca["secretName"]}}


def test_the_issuer_concern_comes_before_the_certificates_and_is_an_output() -> None:
    concerns = {c.key: c for c in desired_state(model_of())}
    assert "issuer" in concerns["security"].after
    assert concerns["issuer"].outputs["issuer"] == {
        "kind": "Issuer",
        "name": "kafka-ca",
        "created": True,
        "ca_secret": "kafka-ca",
    }


def test_an_existing_cluster_issuer_is_named_and_nothing_is_created() -> None:
    model = model_of(
        security={"issuer": {"create": False, "kind": "ClusterIssuer", "name": "corp"}}
    )
    assert by_kind(model, "Issuer") == {}
    for cert in by_kind(model, "Certificate").values():
        assert cert["spec"]["issuerRef"] == {
            "name": "corp",
            "kind": "ClusterIssuer",
            "group": "cert-manager.io",
        }


@pytest.mark.parametrize(
    ("issuer", "fragment"),
    [
        ({"create": False}, "name the existing issuer"),
        ({"name": "corp"}, "set create: false"),
    ],
)
def test_issuer_config_that_cannot_work_is_refused(issuer: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError, match=r"security\.issuer") as err:
        config_of(security={"issuer": issuer})
    assert fragment in str(err.value)


@pytest.mark.parametrize("environment", ["staging", "prod"])
def test_prod_and_staging_encrypt_and_authenticate_every_listener(environment: str) -> None:
    model = model_of(environment)
    for broker in model.brokers:
        props = broker_properties(model, broker).flat()
        protocols = dict(
            pair.split(":") for pair in props["listener.security.protocol.map"].split(",")
        )
        assert protocols["CLIENT"] == "SASL_SSL"
        assert set(protocols.values()) <= {"SASL_SSL", "SSL"}
        assert props["listener.name.replication.ssl.client.auth"] == "required"


@pytest.mark.parametrize(
    ("overrides", "authorizer"),
    [
        ({}, "org.apache.kafka.metadata.authorizer.StandardAuthorizer"),
        (
            {"kafka_version": "3.9.1", "quorum": {"kind": "zookeeper", "nodes": 3}},
            "kafka.security.authorizer.AclAuthorizer",
        ),
    ],
)
def test_prod_denies_what_no_acl_allows(overrides: dict[str, Any], authorizer: str) -> None:
    model = model_of("prod", **overrides)
    nodes = [broker_properties(model, b).flat() for b in model.brokers]
    nodes += [controller_properties(model, c).flat() for c in model.quorum if c.role != "zookeeper"]
    for props in nodes:
        assert props["authorizer.class.name"] == authorizer
        assert props["allow.everyone.if.no.acl.found"] == "false"
        assert props["super.users"] == "User:kafka-node;User:admin"
    # The nodes' principal is their certificates' common name.
    for cert in security.certificates(model):
        assert cert["spec"]["commonName"] == "kafka-node"


def test_local_and_dev_keep_the_harness_readable_defaults() -> None:
    model = model_of("local", platform="local")
    props = broker_properties(model, model.brokers[0]).flat()
    assert "CLIENT:SASL_PLAINTEXT" in props["listener.security.protocol.map"]
    assert "authorizer.class.name" not in props


@pytest.mark.parametrize(
    "security_values",
    [{"client_tls": False}, {"replication_tls": False}, {"authorization": False}],
)
def test_prod_refuses_an_open_listener_unless_the_flag_says_so(
    security_values: dict[str, Any],
) -> None:
    key = next(iter(security_values))
    with pytest.raises(ConfigError, match=f"security.{key}.*allow_insecure_listeners"):
        config_of("prod", security=security_values)
    accepted = config_of(
        "prod",
        security={**security_values, "allow_insecure_listeners": True, "authorization": False},
    )
    assert accepted.security.allow_insecure_listeners


GRANTS = [
    {"user": "orders", "resource": "topic", "name": "orders.", "pattern": "prefixed",
     "operations": ["Read", "Write", "Describe"]},
    {"user": "orders", "resource": "group", "name": "orders-app", "operations": ["Read"]},
]  # fmt: skip


def test_the_acl_job_adds_each_grant_as_the_admin_over_tls() -> None:
    model = model_of("prod", security={"users": ["admin", "orders"], "acls": GRANTS})
    job = by_kind(model, "Job")["kafka-acls"]
    container = job["spec"]["template"]["spec"]["containers"][0]
    script = container["command"][2]
    # The admin's client config is a Secret the program fills (the password quoted in).
    client = by_kind(model, "Secret")["kafka-admin-client"]["stringData"]["admin.properties"]
    assert "security.protocol=SASL_SSL" in client.template
    assert 'username="admin" password={password};' in client.template
    assert "--command-config /etc/kafka/admin-client/admin.properties" in script
    assert (
        "--add --force --allow-principal User:orders --operation Read --operation Write "
        "--operation Describe --topic orders. --resource-pattern-type prefixed" in script
    )
    assert "--group orders-app --resource-pattern-type literal" in script
    assert "kafka-bootstrap.kafka.svc.cluster.local:9092" in script
    volumes = job["spec"]["template"]["spec"]["volumes"]
    assert {"name": "admin-client", "secret": {"secretName": "kafka-admin-client"}} in volumes
    assert acls.acl_job(model_of("prod")) is None  # nothing to grant, no Job


def test_the_acl_job_runs_the_brokers_image_as_its_user() -> None:
    """A stack naming its own Kafka image (no registry, or a mirror) runs the Job from it: the
    public image may not be reachable, and the local one has only kafka-run-class.sh."""
    model = model_of(
        "prod",
        security={"users": ["admin", "orders"], "acls": GRANTS},
        images={"kafka": {"repository": "registry.example/kafka", "user": 1001, "group": 1001}},
    )
    pod = by_kind(model, "Job")["kafka-acls"]["spec"]["template"]["spec"]
    broker = next(iter(by_kind(model, "StatefulSet").values()))["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == broker["containers"][0]["image"]
    assert pod["containers"][0]["image"].startswith("registry.example/kafka:")
    assert pod["securityContext"]["runAsUser"] == 1001
    script = pod["containers"][0]["command"][2]
    assert f"/opt/kafka/bin/kafka-run-class.sh {acls.ACL_COMMAND} --bootstrap-server" in script


def test_grants_for_unknown_users_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"security\.acls.*orders"):
        config_of("prod", security={"acls": GRANTS})


def test_mtls_clients_get_an_admin_certificate_for_the_acl_job() -> None:
    model = model_of(
        "prod", security={"client_auth": "mtls", "users": ["admin", "orders"], "acls": GRANTS}
    )
    admin = by_kind(model, "Certificate")["kafka-admin-tls"]
    assert admin["spec"]["commonName"] == "admin"
    script = by_kind(model, "Job")["kafka-acls"]["spec"]["template"]["spec"]["containers"][0][
        "command"
    ][2]
    assert "security.protocol=SSL" in script and "ADMIN_PASSWORD" not in script
