"""Pods of locally built images on real kubelets: scheduled, really run, reachable across nodes."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

from infra.localcluster import host, images
from infra.localcluster.nodes import RealNodes
from infra.localcluster.zones import ZONES, is_fake_node
from infra.toolchain import pinned_versions as versions_env
from tests.nodes.pods import create as _create
from tests.nodes.pods import name as _name
from tests.nodes.pods import phase as _phase
from tests.nodes.pods import pod as _pod
from tests.nodes.pods import wait_phase as _wait_phase


def test_nodes_are_real_kubelets_ready_in_three_zones(real_nodes: RealNodes) -> None:
    labels = real_nodes.labels()
    assert set(labels) == {n.name for n in real_nodes.specs}
    assert all(real_nodes.ready().values())
    assert {lab["topology.kubernetes.io/zone"] for lab in labels.values()} == set(ZONES)
    # What the kubelets themselves report (kwok would report its own fake versions).
    versions = versions_env()
    for node in real_nodes.specs:
        item = json.loads(real_nodes.kube.kubectl("get", "node", node.name, "-o", "json").stdout)
        info = item["status"]["nodeInfo"]
        assert info["kubeletVersion"] == versions["KUBERNETES_VERSION"]
        assert info["containerRuntimeVersion"] == "containerd://" + versions[
            "CONTAINERD_VERSION"
        ].lstrip("v")
        assert {"type": "InternalIP", "address": node.address} in item["status"]["addresses"]
        assert "kwok.x-k8s.io/node" not in item["metadata"].get("annotations", {})
    # While real nodes run the fake ones are gone: no pod lands where nothing would run it.
    listed = json.loads(real_nodes.kube.kubectl("get", "nodes", "-o", "json").stdout)["items"]
    fake = [n["metadata"]["name"] for n in listed if is_fake_node(n)]
    assert fake == []


def test_no_kubelet_ever_deletes_an_image_imported_into_its_node(real_nodes: RealNodes) -> None:
    """An imported image cannot be pulled again. A kubelet with any disk eviction threshold
    deletes the images no pod uses once its disk crosses it (a CI run's last proof found the
    HAProxy image gone, ErrImagePull): the kubelets' own effective configuration has no disk
    signal, none of the defaults merged in, and every image is in every node's containerd
    (imported with its layers' blobs discarded)."""
    for node in real_nodes.specs:
        raw = real_nodes.kube.kubectl("get", "--raw", f"/api/v1/nodes/{node.name}/proxy/configz")
        conf = json.loads(raw.stdout)["kubeletconfig"]
        assert set(conf.get("evictionHard", {})) == {"memory.available"}, conf["evictionHard"]
        assert not conf.get("evictionSoft") and conf["mergeDefaultEvictionSettings"] is False
        assert conf["imageGCHighThresholdPercent"] == 100
        listed = real_nodes.ctr(node, "-n", "k8s.io", "images", "ls", "-q").stdout.split()
        assert {i.ref for i in images.ALL} <= set(listed), (node.name, listed)


def test_container_output_reaches_pod_log(real_nodes: RealNodes) -> None:
    node = real_nodes.specs[0].name
    name = _name("echo")
    marker = uuid.uuid4().hex
    _create(real_nodes, _pod(name, node, images.BUSYBOX, ["sh", "-c", f"echo ran-{marker}; id -u"]))
    pod = _wait_phase(real_nodes, name, {"Succeeded", "Failed"})
    assert pod["status"]["phase"] == "Succeeded"
    assert pod["spec"]["nodeName"] == node
    assert pod["status"]["podIP"].startswith(real_nodes.specs[0].subnet.rsplit(".", 1)[0] + ".")
    log = real_nodes.kube.kubectl("logs", name).stdout.split()
    assert log == [f"ran-{marker}", "0"]


def test_pod_reaches_pod_on_another_node(real_nodes: RealNodes) -> None:
    server_node, client_node = real_nodes.specs[0], real_nodes.specs[1]
    server, client = _name("web"), _name("client")
    page = uuid.uuid4().hex
    _create(
        real_nodes,
        _pod(server, server_node.name, images.BUSYBOX,
             ["sh", "-c", f"mkdir /tmp/www && echo {page} > /tmp/www/index.html && "
              "exec httpd -f -p 8080 -h /tmp/www"]),
    )  # fmt: skip
    running = _wait_phase(real_nodes, server, {"Running"})
    ip = running["status"]["podIP"]
    assert ip.startswith(server_node.subnet.rsplit(".", 1)[0] + ".")
    # The server listens once Running; the client retries briefly for httpd's bind.
    _create(
        real_nodes,
        _pod(client, client_node.name, images.BUSYBOX,
             ["sh", "-c", f"for i in 1 2 3 4 5; do wget -qO- http://{ip}:8080/ && exit 0; "
              "sleep 1; done; exit 1"]),
    )  # fmt: skip
    done = _wait_phase(real_nodes, client, {"Succeeded", "Failed"})
    assert done["status"]["phase"] == "Succeeded"
    assert done["status"]["podIP"].startswith(client_node.subnet.rsplit(".", 1)[0] + ".")
    assert real_nodes.kube.kubectl("logs", client).stdout.strip() == page
    real_nodes.kube.kubectl("delete", "pod", server, "--wait=false")


def test_kafka_image_runs_the_storage_tool_as_uid_1000(real_nodes: RealNodes) -> None:
    node = real_nodes.specs[2].name
    name = _name("kafka-storage")
    _create(
        real_nodes,
        _pod(name, node, images.KAFKA,
             ["sh", "-c", "id -u && /opt/kafka/bin/kafka-storage.sh random-uuid"]),
    )  # fmt: skip
    pod = _wait_phase(real_nodes, name, {"Succeeded", "Failed"}, timeout=180)
    log = real_nodes.kube.kubectl("logs", name).stdout.split()
    assert pod["status"]["phase"] == "Succeeded", log
    assert log[0] == "1000"
    assert len(log[1]) == 22  # a base64url-encoded 16-byte UUID, as Kafka prints cluster ids


# A single-node KRaft broker: broker and controller in one process, the dynamic quorum of one.
BROKER = """process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:9093
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://POD_IP:9092
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=/var/lib/kafka/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
"""


def test_kafka_broker_in_a_pod_serves_a_client_on_another_node(real_nodes: RealNodes) -> None:
    broker_node, client_node = real_nodes.specs[2], real_nodes.specs[0]
    broker, client = _name("kafka"), _name("kafka-client")
    start = (
        f"printf '{BROKER}' | sed \"s/POD_IP/$POD_IP/\" > /tmp/server.properties && "
        "kafka-storage.sh format --standalone -t $(kafka-storage.sh random-uuid) "
        "-c /tmp/server.properties && exec kafka-server-start.sh /tmp/server.properties"
    )
    pod = _pod(broker, broker_node.name, images.KAFKA, ["sh", "-c", start])
    pod["spec"]["restartPolicy"] = "Never"
    pod["spec"]["containers"][0]["env"] = [
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "KAFKA_HEAP_OPTS", "value": "-Xmx384m -Xms384m"},
    ]
    _create(real_nodes, pod)
    ip = _wait_phase(real_nodes, broker, {"Running"})["status"]["podIP"]
    deadline = time.monotonic() + 120
    log = ""
    while "Kafka Server started" not in log and time.monotonic() < deadline:
        time.sleep(1)
        log = real_nodes.kube.kubectl("logs", broker, check=False).stdout
        if _phase(real_nodes, broker) != "Running":
            break
    assert "Kafka Server started" in log, log[-2000:]
    # The image honours KAFKA_HEAP_OPTS, as apache/kafka does (seen through kubectl exec).
    cmdline = real_nodes.kube.kubectl("exec", broker, "--", "cat", "/proc/1/cmdline").stdout
    assert "-Xmx384m" in cmdline.split("\0")

    topics = "org.apache.kafka.tools.TopicCommand --bootstrap-server " + f"{ip}:9092"
    _create(
        real_nodes,
        _pod(client, client_node.name, images.KAFKA,
             ["sh", "-c", f"kafka-run-class.sh {topics} --create --topic nodes-smoke "
              f"--partitions 3 && kafka-run-class.sh {topics} --describe --topic nodes-smoke"]),
    )  # fmt: skip
    done = _wait_phase(real_nodes, client, {"Succeeded", "Failed"}, timeout=180)
    out = real_nodes.kube.kubectl("logs", client).stdout
    assert done["status"]["phase"] == "Succeeded", out
    assert "Created topic nodes-smoke." in out
    assert out.count("Leader: 1") == 3
    real_nodes.kube.kubectl("delete", "pod", broker, "--wait=false")


def _alive(pid: int) -> bool:
    """Running, or anything but a zombie: a process that has exited leaves its cgroup at once but
    keeps its pid until its parent (init, for orphaned containers) reaps it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_stopping_gives_back_what_the_nodes_own_and_nothing_else(nodes_to_stop: RealNodes) -> None:
    """Stops the nodes and checks, leaving them stopped (`nodes_to_stop`): the tier runs this
    last, and a test after it starts them again."""
    real_nodes = nodes_to_stop
    decoy_bridge = f"nodes-t{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "link", "add", decoy_bridge, "type", "bridge"], check=True)
    decoy = subprocess.Popen(["sleep", "300"])
    try:
        specs = real_nodes.specs
        pids = set().union(*(host.cgroup_pids(n.cgroup) for n in specs))
        assert len(pids) >= 2 * len(specs)  # a containerd and a kubelet each, at least

        assert real_nodes.down() == [n.name for n in specs]

        assert not any(_alive(pid) for pid in pids)
        for node in specs:
            assert host.cgroup_pids(node.cgroup) == set()
            assert not any((h / node.cgroup.strip("/")).exists() for h in host.cgroup_hierarchies())
            assert host.mounts_under(node.dir) == host.mounts_under(node.runtime_dir) == []
            assert not node.dir.exists() and not node.runtime_dir.exists()
            link = subprocess.run(["ip", "link", "show", node.bridge], capture_output=True)
            assert link.returncode != 0
        # kube-proxy's Service chains and the kubelets' own went with the nodes.
        rules = subprocess.run(["iptables-save"], capture_output=True, text=True).stdout
        assert [line for line in rules.splitlines() if "KUBE-" in line] == []
        names = real_nodes.kube.kubectl("get", "nodes", "-o", "name").stdout.split()
        assert not {f"node/{n.name}" for n in specs} & set(names)
        assert any(name.startswith("node/") for name in names)  # the fake nodes are back
        assert decoy.poll() is None
        assert subprocess.run(["ip", "link", "show", decoy_bridge]).returncode == 0
    finally:
        decoy.kill()
        decoy.wait()
        subprocess.run(["ip", "link", "del", decoy_bridge], check=False)
