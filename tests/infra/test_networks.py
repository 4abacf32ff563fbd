"""Networks per platform (docs/networks.md): what is refused, the Multus attachment's shape and
readiness probes that dial what listens (the policies: test_network_policies.py)."""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.config import load_stack, parse_stack_config
from infra.errors import ConfigError
from infra.model import in_sync, networks, probes, workloads
from infra.model.cluster import ClusterModel
from infra.network_config import replication_ranges
from infra.network_rules import on_cloud
from tests.infra.conftest import base_values, sizing_cluster
from tests.infra.network_stacks import ON_PREM, ZONED, model_of

STACKS = ["local", "dev", "staging", "prod"]


def refused(**overrides: Any) -> str:
    with pytest.raises(ConfigError) as err:
        parse_stack_config(base_values(**overrides), "staging")
    return str(err.value)


def dual(replication: dict[str, Any], platform: str = "aws", **more: Any) -> dict[str, Any]:
    return {"platform": platform, "network": {"mode": "dual", "replication": replication}, **more}


# ----- refusals -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("overrides", "key", "hint"),
    [
        # A macvlan /24 stretched over three AWS zones cannot work.
        (dual({"cidr": "10.20.0.0/24"}), "network.replication.cidr", "replication.subnets"),
        (dual({"cidr": "10.20.0.0/24"}, "gcp"), "network.replication.cidr", "network.mode: single"),
        # OpenShift on AWS (its storage driver says so) is a cloud too.
        (
            dual({"cidr": "10.20.0.0/24"}, "openshift", storage={"provisioner": "ebs.csi.aws.com"}),
            "network.replication.cidr",
            "one subnet per zone",
        ),
        (
            dual({"subnets": ZONED["network"]["replication"]["subnets"], "plugin": "macvlan"}),
            "network.replication.plugin",
            "use ipvlan",
        ),
        # A host bridge hands out MACs of its own too.
        (
            dual({"subnets": ZONED["network"]["replication"]["subnets"], "plugin": "bridge"}),
            "network.replication.plugin",
            "bridge gives each pod a MAC",
        ),
        (
            dual({"cidr": "10.20.0.0/24", "master_interface": "a-bridge-name-too-long"}, "local"),
            "network.replication.master_interface",
            "1 to 15 characters",
        ),
        # Dual mode names its own range: no shared default for every environment.
        ({"platform": "local", "network": {"mode": "dual"}}, "network.replication", "cidr"),
        (dual({}, "azure"), "network.replication", "subnets (zone: cidr"),
        (
            dual({"cidr": "10.20.0.0/24", "subnets": {"a": "10.21.0.0/24"}}, "local"),
            "network.replication",
            "not both",
        ),
        (
            dual({"subnets": {"a": "10.40.1.0/24", "b": "10.40.2.0/24"}}),
            "network.replication.subnets",
            "zones ['c'] have no subnet",
        ),
        (
            dual({"subnets": {"a": "10.40.0.0/16", "b": "10.40.2.0/24", "c": "10.40.3.0/24"}}),
            "network.replication.subnets.b",
            "overlaps a's 10.40.0.0/16",
        ),
        (
            {"network": {"mode": "single", "replication": {"cidr": "10.20.0.0/24"}}},
            "network.replication",
            "only used with network.mode dual",
        ),
    ],
)
def test_networks_that_cannot_work_are_refused(
    overrides: dict[str, Any], key: str, hint: str
) -> None:
    message = refused(**overrides)
    assert message.startswith(f"kafkastack:{key}:"), message
    assert hint in message


def test_a_range_without_room_for_every_broker_is_refused() -> None:
    """Brokers start after the quorum block: 8 brokers in a /28 would put the last on the
    broadcast address (.15)."""
    sizing = {"schema_version": "1.0", "source": "t", "cluster": sizing_cluster(brokers=8)}
    message = refused(**dual({"cidr": "10.20.0.0/28"}, "local"), sizing=sizing)
    assert message.startswith("kafkastack:network.replication.cidr:")
    assert "needs offset 15" in message and "use /27 or larger" in message
    # One broker fewer fits.
    seven = {"schema_version": "1.0", "source": "t", "cluster": sizing_cluster(brokers=7)}
    parse_stack_config(base_values(**dual({"cidr": "10.20.0.0/28"}, "local"), sizing=seven), "x")


def test_a_zone_subnet_without_room_is_refused() -> None:
    """Zoned plans keep the cloud's reserved first four and last two addresses free."""
    subnets = {"a": "10.40.1.0/28", "b": "10.40.2.0/24", "c": "10.40.3.0/24"}
    # Zone a: a controller at .4, brokers from .11; 4 brokers reach .14, past .13.
    sizing = {"schema_version": "1.0", "source": "t", "cluster": sizing_cluster(brokers=12)}
    message = refused(**dual({"subnets": subnets}), sizing=sizing)
    assert message.startswith("kafkastack:network.replication.subnets.a:")
    assert "use /27 or larger" in message


def write_stack(folder: Path, name: str, network: dict[str, Any]) -> None:
    values = {f"kafkastack:{k}": v for k, v in base_values(platform="local").items()}
    values["kafkastack:network"] = network
    (folder / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": values}))


def test_a_range_shared_between_environments_is_refused(tmp_path: Path) -> None:
    write_stack(tmp_path, "blue", {"mode": "dual", "replication": {"cidr": "10.20.0.0/24"}})
    write_stack(tmp_path, "green", {"mode": "dual", "replication": {"cidr": "10.20.0.0/23"}})
    with pytest.raises(ConfigError) as err:
        load_stack(tmp_path, "blue")
    assert str(err.value).startswith("kafkastack:network.replication: 10.20.0.0/24 overlaps")
    assert "stack 'green'" in str(err.value)
    write_stack(tmp_path, "green", {"mode": "dual", "replication": {"cidr": "10.22.0.0/24"}})
    assert load_stack(tmp_path, "blue").network.mode == "dual"


@pytest.mark.parametrize("stack", STACKS)
def test_committed_stacks_use_the_mode_their_platform_supports(repo_root: Path, stack: str) -> None:
    config = load_stack(repo_root / "stacks", stack)
    replication = config.network.replication
    if on_cloud(config):
        assert config.network.mode == "single" or (replication and replication.subnets)
    else:
        assert config.network.mode == "dual" and replication and replication.cidr


def test_committed_stacks_never_share_a_range(repo_root: Path) -> None:
    ranges = [
        (stack, r)
        for stack in STACKS
        for r in replication_ranges(load_stack(repo_root / "stacks", stack).network)
    ]
    assert len(ranges) >= 2  # local and dev exercise the second network
    for i, (stack, mine) in enumerate(ranges):
        for other, theirs in ranges[i + 1 :]:
            assert stack == other or not mine.overlaps(theirs), (stack, other)


# ----- the Multus attachment ------------------------------------------------------------------
def selection(model: ClusterModel, node: Any) -> dict[str, Any]:
    (element,) = json.loads(
        networks.pod_network_annotation(model, node)[networks.NETWORKS_ANNOTATION]
    )
    return dict(element)


def test_attachment_hands_each_pod_its_static_address() -> None:
    """Multus passes the selection's `ips` to a plugin only if it declares the `ips`
    capability; static IPAM then assigns exactly that address (multus-cni how-to-use)."""
    model = model_of(**ON_PREM)
    ((logical, nad),) = networks.network_attachments(model).items()
    assert logical == "replication"  # part of the URN since the first release
    assert nad["apiVersion"] == "k8s.cni.cncf.io/v1"
    config = json.loads(nad["spec"]["config"])
    assert config["name"] == nad["metadata"]["name"] == "kafka-replication"
    (plugin,) = config["plugins"]
    assert plugin["type"] == "macvlan" and plugin["mode"] == "bridge"
    assert plugin["capabilities"] == {"ips": True}
    assert plugin["ipam"] == {"type": "static"}
    network = ipaddress.ip_network("10.20.0.0/24")
    seen = set()
    for node in [*model.quorum, *model.brokers]:
        element = selection(model, node)
        assert (element["name"], element["namespace"]) == (nad["metadata"]["name"], "kafka")
        (ip,) = element["ips"]
        interface = ipaddress.ip_interface(ip)
        assert interface.network == network and str(interface.ip) == node.replication_ip
        assert interface.ip not in (network.network_address, network.broadcast_address)
        seen.add(interface.ip)
    assert len(seen) == len(model.quorum) + len(model.brokers)


def test_zoned_attachments_route_between_the_zones_subnets() -> None:
    model = model_of(brokers=6, **ZONED)
    nads = networks.network_attachments(model)
    assert sorted(nads) == ["replication-a", "replication-b", "replication-c"]
    config = json.loads(nads["replication-a"]["spec"]["config"])
    (plugin,) = config["plugins"]
    # ipvlan reuses the node's MAC, which the cloud network knows.
    assert plugin["type"] == "ipvlan" and plugin["capabilities"] == {"ips": True}
    assert plugin["ipam"]["routes"] == [
        {"dst": "10.40.2.0/24", "gw": "10.40.1.1"},
        {"dst": "10.40.3.0/24", "gw": "10.40.1.1"},
    ]
    subnets = ZONED["network"]["replication"]["subnets"]
    for node in [*model.quorum, *model.brokers]:
        element = selection(model, node)
        assert element["name"] == f"kafka-replication-{node.zone}"
        interface = ipaddress.ip_interface(element["ips"][0])
        assert interface.network == ipaddress.ip_network(subnets[node.zone])
        assert int(interface.ip) - int(interface.network.network_address) >= 4  # cloud-reserved
    # Growing the cluster never moves an address.
    grown = model_of(brokers=9, **ZONED)
    assert [b.replication_ip for b in model.brokers] == [
        b.replication_ip for b in grown.brokers[:6]
    ]


def test_bridge_attachments_plug_pods_into_a_host_bridge_never_its_gateway() -> None:
    """Nodes that share one network stack (the local cluster's real nodes) have no NIC per
    node for macvlan: the `bridge` plugin plugs the pods into a host bridge. Never as the
    gateway: the plugin holds one address per bridge and failed every pod of the second zone;
    the routers of the zoned plan's routes are the network's."""
    subnets = ZONED["network"]["replication"]["subnets"]
    replication = {"subnets": subnets, "plugin": "bridge", "master_interface": "repl-1a2b"}
    model = model_of(**dual(replication, "local"))
    for zone, nad in zip("abc", networks.network_attachments(model).values(), strict=True):
        (plugin,) = json.loads(nad["spec"]["config"])["plugins"]
        assert {k: plugin[k] for k in ("type", "bridge", "isGateway", "ipMasq")} == {
            "type": "bridge",
            "bridge": "repl-1a2b",
            "isGateway": False,
            "ipMasq": False,
        }
        assert "master" not in plugin and plugin["capabilities"] == {"ips": True}
        gateway = str(ipaddress.ip_network(subnets[zone]).network_address + 1)
        assert {r["gw"] for r in plugin["ipam"]["routes"]} == {gateway}
    # One stretched segment needs no router.
    stretched = model_of(**dual({"cidr": "10.20.0.0/24", "plugin": "bridge"}, "local"))
    ((_, nad),) = networks.network_attachments(stretched).items()
    (plugin,) = json.loads(nad["spec"]["config"])["plugins"]
    assert plugin["isGateway"] is False and "routes" not in plugin["ipam"]


# ----- readiness ------------------------------------------------------------------------------
def readiness(model: ClusterModel, node: Any) -> dict[str, Any]:
    sts = workloads.kafka_statefulset(model, node, "fast")
    probe: dict[str, Any] = sts["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    return probe


def test_dual_mode_controllers_probe_their_second_network_listener() -> None:
    """The kubelet's tcpSocket probe dials the pod IP, where a dual-mode controller does not
    listen; the probe looks for its listener inside the pod instead."""
    model = model_of(**ON_PREM)
    controller = model.quorum[0]
    probe = readiness(model, controller)
    assert "tcpSocket" not in probe
    assert probe["exec"]["command"] == probes.listening_command("10.20.0.1", 9093)
    broker = model.brokers[0]
    assert readiness(model, broker)["exec"]["command"] == in_sync.readiness_command(model, broker)
    single = model_of()
    assert readiness(single, single.quorum[0])["tcpSocket"] == {"port": 9093}


def test_listener_pattern_reads_the_kernels_socket_tables() -> None:
    pattern = probes.proc_net_pattern("10.20.0.1", 9093)
    tcp = "   3: 0100140A:2385 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000"
    tcp6 = (
        "   1: 0000000000000000FFFF00000100140A:2385 00000000000000000000000000000000:0000 0A "
        "00000000:00000000 00:00000000 00000000  1000"
    )
    established = tcp.replace(" 0A ", " 01 ")
    other_port = tcp.replace(":2385 ", ":2384 ")
    # An IPv6 address that merely ends in the same 32 bits is another address.
    other_ipv6 = tcp6.replace("0000000000000000FFFF0000", "20010DB8000000000000AAAA")
    assert re.search(pattern, tcp) and re.search(pattern, tcp6)
    for other in (established, other_port, other_ipv6):
        assert not re.search(pattern, other), other


def test_listening_command_sees_a_real_listener() -> None:
    """The probe's command, run by a real shell against this host's own socket tables."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        port = server.getsockname()[1]
        command = probes.listening_command("127.0.0.1", port)
        assert subprocess.run(command, check=False).returncode != 0  # bound, not listening
        server.listen()
        assert subprocess.run(command, check=False).returncode == 0
    assert subprocess.run(command, check=False).returncode != 0
