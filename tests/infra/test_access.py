"""External access: OpenShift Routes reach the broker they name; HAProxy behind an AWS NLB."""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import sizing_summary
from infra.errors import ConfigError
from infra.model import access, labels
from infra.model.cluster import ClusterModel
from tests.infra.conftest import OPENSHIFT, config_of


def model_of(environment: str = "staging", **overrides: Any) -> ClusterModel:
    return ClusterModel.from_config(config_of(environment, **overrides))


def route_model() -> ClusterModel:
    return model_of(
        **OPENSHIFT,
        external={"mode": "route", "domain": "k.example.com"},
    )


def test_each_broker_route_reaches_that_broker_alone() -> None:
    model = route_model()
    services = {s["metadata"]["name"]: s for s in access.external_services(model)}
    routes = {r["spec"]["host"]: r for r in access.routes(model)}
    for broker in model.brokers:
        route = routes[broker.external_host or ""]
        service = services[route["spec"]["to"]["name"]]
        # Only that broker's pod: the StatefulSet controller's per-pod label.
        assert service["spec"]["selector"] == {
            access.POD_NAME_LABEL: model.names.pod(broker.workload)
        }
        port_names = {p["name"] for p in service["spec"]["ports"]}
        assert route["spec"]["port"]["targetPort"] in port_names
        assert service["spec"]["ports"][0]["targetPort"] == model.ports.external


def test_the_bootstrap_route_targets_a_port_its_service_has() -> None:
    model = route_model()
    services = {s["metadata"]["name"]: s for s in access.external_services(model)}
    services.update({s["metadata"]["name"]: s for s in access.services(model)})
    bootstrap = next(
        r for r in access.routes(model) if r["spec"]["host"] == model.names.external_bootstrap
    )
    service = services[bootstrap["spec"]["to"]["name"]]
    assert bootstrap["spec"]["port"]["targetPort"] in {p["name"] for p in service["spec"]["ports"]}
    assert service["spec"]["selector"] == labels.selector("kafka", labels.BROKER)


def test_haproxy_on_aws_is_an_nlb_to_pod_ips_across_zones() -> None:
    annotations = access.haproxy_service(model_of("prod"))["metadata"]["annotations"]
    prefix = "service.beta.kubernetes.io/aws-load-balancer"
    assert annotations[f"{prefix}-type"] == "external"
    assert annotations[f"{prefix}-nlb-target-type"] == "ip"
    assert "cross_zone.enabled=true" in annotations[f"{prefix}-attributes"]


def test_the_nlb_is_internal_unless_the_stack_says_internet_facing() -> None:
    scheme = "service.beta.kubernetes.io/aws-load-balancer-scheme"
    default = access.haproxy_service(model_of("prod"))["metadata"]["annotations"]
    assert default[scheme] == "internal"
    public = model_of("prod", external={"load_balancer_scheme": "internet-facing"})
    assert access.haproxy_service(public)["metadata"]["annotations"][scheme] == "internet-facing"


def test_the_summary_says_who_reaches_the_nlb() -> None:
    assert sizing_summary(config_of("prod"))["load_balancer"] == "internal NLB"
    public = config_of("prod", external={"load_balancer_scheme": "internet-facing"})
    assert sizing_summary(public)["load_balancer"] == "internet-facing NLB"
    assert "load_balancer" not in sizing_summary(config_of("prod", platform="gcp"))


@pytest.mark.parametrize(
    "overrides",
    [
        {"platform": "gcp"},
        {"platform": "openshift", "external": {"mode": "route"}},
        {"external": {"mode": "none"}},
    ],
)
def test_a_scheme_where_no_nlb_is_made_is_refused(overrides: dict[str, Any]) -> None:
    external = {**overrides.pop("external", {}), "load_balancer_scheme": "internet-facing"}
    with pytest.raises(ConfigError, match=r"^kafkastack:external\.load_balancer_scheme:"):
        config_of("prod", external=external, **overrides)


def test_a_misspelt_scheme_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^kafkastack:external\.load_balancer_scheme:"):
        config_of("prod", external={"load_balancer_scheme": "public"})


def test_haproxy_is_a_node_port_on_a_local_cluster_which_has_no_load_balancer() -> None:
    # A LoadBalancer there never gets an address: `pulumi up` awaiting it timed out with every
    # pod Ready (nodes tier, real nodes).
    assert access.haproxy_service(model_of("local", platform="local"))["spec"]["type"] == "NodePort"
    assert access.haproxy_service(model_of("prod"))["spec"]["type"] == "LoadBalancer"


def test_no_aws_annotations_elsewhere() -> None:
    service = access.haproxy_service(model_of("staging", **OPENSHIFT))
    assert "annotations" not in service["metadata"]


def test_haproxy_has_a_budget_a_pinned_image_and_spreads_over_zones() -> None:
    model = model_of("prod")
    budgets = {b["metadata"]["name"]: b for b in access.disruption_budgets(model)}
    assert budgets["kafka-haproxy"]["spec"] == {
        "maxUnavailable": 1,
        "selector": {"matchLabels": labels.selector("kafka", labels.HAPROXY)},
    }
    pod = access.haproxy_deployment(model, "hash")["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "haproxy:2.6.12"
    spread = {c["topologyKey"]: c for c in pod["topologySpreadConstraints"]}
    assert spread[labels.ZONE]["maxSkew"] == 1


@pytest.mark.parametrize("image", ["haproxy:2.6", "haproxy:latest", "haproxy"])
def test_a_moving_haproxy_tag_is_refused(image: str) -> None:
    with pytest.raises(ConfigError, match=r"images\.haproxy\.image"):
        config_of("prod", images={"haproxy": {"image": image}})


def test_a_digest_is_accepted() -> None:
    image = "haproxy@sha256:" + "a" * 64
    assert config_of("prod", images={"haproxy": {"image": image}}).images.haproxy.image == image
