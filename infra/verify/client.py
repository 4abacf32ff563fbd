"""Kafka client operations, run as a process on the client test host (`ip netns exec`).

`python -m infra.verify.client '<json request>'` prints one JSON reply. Running clients as
their own host keeps them on the client network only, resolving the names the brokers advertise
through that host's /etc/hosts, like a pod would.
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import time
from pathlib import Path
from typing import Any

from confluent_kafka import (
    Consumer,
    ElectionType,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
    OffsetSpec,
    ResourceType,
)
from cryptography import x509

from infra.verify import throttles
from infra.verify.clients import FAILED


def _base(req: dict[str, Any]) -> dict[str, Any]:
    conf: dict[str, Any] = {"bootstrap.servers": req["bootstrap"], "socket.timeout.ms": 10000}
    security = req.get("security", {})
    conf.update(security)
    return conf


def create_topic(req: dict[str, Any]) -> dict[str, Any]:
    admin = AdminClient(_base(req))
    config = {k: str(v) for k, v in req.get("config", {}).items()}
    assignment = req.get("assignment")
    # An explicit replica list per partition (its first broker is the preferred leader) comes
    # with the partition count and without a replication factor, as librdkafka requires.
    shape = (
        {"num_partitions": len(assignment), "replica_assignment": assignment}
        if assignment
        else {"num_partitions": req["partitions"], "replication_factor": req["rf"]}
    )
    topic = NewTopic(req["topic"], config=config, **shape)
    futures = admin.create_topics([topic], request_timeout=30)
    try:
        futures[req["topic"]].result(timeout=60)
        return {"ok": True}
    except KafkaException as err:
        if req.get("if_not_exists") and err.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return {"ok": True, "existed": True}
        return {"ok": False, "error": str(err)}


def describe(req: dict[str, Any]) -> dict[str, Any]:
    admin = AdminClient(_base(req))
    metadata = admin.list_topics(timeout=20)
    cluster = admin.describe_cluster(request_timeout=20).result(timeout=30)
    racks = {n.id: n.rack for n in cluster.nodes}
    topic = metadata.topics.get(req["topic"])
    return {
        "brokers": sorted(metadata.brokers),
        "racks": {str(k): v for k, v in racks.items()},
        "partitions": _partition_states(topic) if topic is not None else {},
    }


def _partition_states(topic: Any) -> dict[str, dict[str, Any]]:
    """A topic's metadata → partition → leader (-1: none), replicas, in-sync set."""
    return {
        str(pid): {"leader": p.leader, "replicas": list(p.replicas), "isrs": list(p.isrs)}
        for pid, p in topic.partitions.items()
    }


def describe_topics(req: dict[str, Any]) -> dict[str, Any]:
    """Every topic's partitions (or only those of `topics`), from a broker's metadata as
    TopicCommand --describe reads them: topic → partition → leader (-1: none), replicas, ISR."""
    admin = AdminClient(_base(req))
    wanted = req.get("topics")
    topics = {}
    for name, topic in admin.list_topics(timeout=20).topics.items():
        if topic.error is not None or (wanted is not None and name not in wanted):
            continue
        topics[name] = _partition_states(topic)
    return {"topics": topics}


def end_offsets(req: dict[str, Any]) -> dict[str, Any]:
    """partition → where the log of `topic` ends (its high watermark), as GetOffsetShell's
    `--time -1` reads it."""
    admin = AdminClient(_base(req))
    found = admin.list_topics(topic=req["topic"], timeout=20).topics.get(req["topic"])
    if found is None or found.error is not None or not found.partitions:
        return {"error": f"{req['topic']}: no such topic ({found.error if found else 'unknown'})"}
    spec = OffsetSpec.latest()  # type: ignore[no-untyped-call]
    latest = {TopicPartition(req["topic"], p): spec for p in found.partitions}
    futures = admin.list_offsets(latest, request_timeout=30)
    return {
        "offsets": {str(tp.partition): f.result(timeout=60).offset for tp, f in futures.items()}
    }


def produce(req: dict[str, Any]) -> dict[str, Any]:
    """Keyed, idempotent, acks=all; returns what was acknowledged and every error seen."""
    conf = {
        **_base(req),
        "acks": "all",
        "enable.idempotence": True,
        "linger.ms": 5,
        "message.timeout.ms": req.get("message_timeout_ms", 30000),
    }
    if req.get("no_retries"):
        # Surface the broker's own error (e.g. NOT_ENOUGH_REPLICAS) instead of retrying it.
        conf.update({"enable.idempotence": False, "retries": 0})
    producer = Producer(conf)
    acked: list[list[Any]] = []
    errors: list[str] = []

    # Touched at the first acknowledgement, so a caller can wait until records flow.
    started_file = Path(req["started_file"]) if req.get("started_file") else None

    def on_delivery(err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            errors.append(err.name())
        else:
            acked.append([msg.key().decode(), msg.value().decode(), msg.partition(), msg.offset()])
            if started_file is not None and len(acked) == 1:
                started_file.touch()

    keys = req.get("keys", 8)
    padding = "x" * req.get("value_bytes", 0)
    run = time.time_ns()  # values stay unique across producer runs on one topic
    interval = req.get("interval_s", 0.0)
    # A producer that runs across several failovers stops when the test creates this file.
    stop_file = Path(req["stop_file"]) if req.get("stop_file") else None
    for i in range(req["count"]):
        if stop_file is not None and stop_file.exists():
            break
        key = f"k{i % keys}"
        while True:
            try:
                producer.produce(
                    req["topic"],
                    key=key,
                    value=f"{key}:{i}:{run}:{padding}",
                    on_delivery=on_delivery,
                )
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
        if interval:
            time.sleep(interval)
    producer.flush(req.get("flush_timeout_s", 60))
    return {"acked": acked, "errors": errors}


def _text(raw: bytes | str | None) -> str:
    return raw.decode() if isinstance(raw, bytes) else (raw or "")


def consume(req: dict[str, Any]) -> dict[str, Any]:
    conf = {
        **_base(req),
        "group.id": req.get("group", f"verify-{time.time_ns()}"),
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
    }
    consumer = Consumer(conf)
    consumer.subscribe([req["topic"]])
    records: list[list[Any]] = []
    deadline = time.monotonic() + req.get("timeout_s", 60)
    idle_until = None
    while time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is None:
            if (
                len(records) >= req.get("expect", 0)
                and idle_until
                and time.monotonic() > idle_until
            ):
                break
            continue
        if msg.error():
            continue
        records.append([_text(msg.key()), _text(msg.value()), msg.partition(), msg.offset()])
        idle_until = time.monotonic() + 3
    consumer.close()
    return {"records": records}


def leader_of(req: dict[str, Any]) -> dict[str, Any]:
    """The leader of partition 0, polled until one serves or the timeout passes."""
    admin = AdminClient(_base(req))
    deadline = time.monotonic() + req.get("timeout_s", 60)
    while time.monotonic() < deadline:
        topic = admin.list_topics(topic=req["topic"], timeout=5).topics.get(req["topic"])
        if topic and 0 in topic.partitions:
            leader = topic.partitions[0].leader
            if leader >= 0 and leader != req.get("not", -2):
                return {"leader": leader, "isrs": list(topic.partitions[0].isrs)}
        time.sleep(0.1)
    return {"leader": -1}


def elect_preferred(req: dict[str, Any]) -> dict[str, Any]:
    """Move leadership of every partition of a topic back to its preferred (first) replica."""
    admin = AdminClient(_base(req))
    partitions = [TopicPartition(req["topic"], p) for p in range(req["partitions"])]
    try:
        results = admin.elect_leaders(ElectionType.PREFERRED, partitions, request_timeout=30)
        outcome = results.result(timeout=60)
    except KafkaException as err:
        return {"ok": False, "error": str(err)}
    # "Election not needed" comes back as an error for partitions already led by their
    # preferred replica; the caller checks the leaders it wants, not these strings.
    return {"ok": True, "errors": {str(tp.partition): str(e) for tp, e in outcome.items() if e}}


def alter_configs(req: dict[str, Any]) -> dict[str, Any]:
    """Set (`set`: name → value) and remove (`delete`: names) dynamic configs of one `topic` or
    `broker` (by id; "" for the cluster-wide default), incrementally."""
    entries = [
        ConfigEntry(name, str(value), incremental_operation=AlterConfigOpType.SET)
        for name, value in req.get("set", {}).items()
    ]
    entries += [
        ConfigEntry(name, None, incremental_operation=AlterConfigOpType.DELETE)
        for name in req.get("delete", [])
    ]
    kind = {"topic": ResourceType.TOPIC, "broker": ResourceType.BROKER}[req["resource"]]
    resource = ConfigResource(kind, str(req["name"]), incremental_configs=entries)
    admin = AdminClient(_base(req))
    try:
        futures = admin.incremental_alter_configs([resource], request_timeout=30)
        for future in futures.values():
            future.result(timeout=60)
    except KafkaException as err:
        return {"ok": False, "error": str(err)}
    return {"ok": True}


def describe_configs(req: dict[str, Any]) -> dict[str, Any]:
    """A broker's (`broker`: id) effective configs: name → [value, source]."""
    admin = AdminClient(_base(req))
    resource = ConfigResource(ResourceType.BROKER, str(req["broker"]))
    entries = admin.describe_configs([resource], request_timeout=30)[resource].result(timeout=60)
    return {"configs": {n: [e.value, ConfigSource(e.source).name] for n, e in entries.items()}}


def plaintext_probe(req: dict[str, Any]) -> dict[str, Any]:
    """Speak plaintext Kafka to a TLS port: the connection must be refused or closed."""
    # ApiVersions v0 request: size, api key 18, version 0, correlation id 1, client id "probe".
    body = (
        (18).to_bytes(2, "big")
        + (0).to_bytes(2, "big")
        + (1).to_bytes(4, "big")
        + (5).to_bytes(2, "big")
        + b"probe"
    )
    try:
        with socket.create_connection((req["host"], req["port"]), timeout=10) as sock:
            sock.sendall(len(body).to_bytes(4, "big") + body)
            sock.settimeout(10)
            reply = sock.recv(4096)
            return {"answered": bool(reply), "bytes": len(reply)}
    except (ConnectionError, OSError) as err:
        return {"answered": False, "error": type(err).__name__}


def served_certificate(req: dict[str, Any]) -> dict[str, Any]:
    """The certificate a TLS port serves, checked against the CA (`ca`) and for `host` as the
    peer dials it; `certificate`/`key` are presented where the listener asks for a client one."""
    context = ssl.create_default_context(cafile=req["ca"])
    if req.get("certificate"):
        context.load_cert_chain(req["certificate"], req["key"])
    with (
        socket.create_connection((req["host"], req["port"]), timeout=10) as sock,
        context.wrap_socket(sock, server_hostname=req["host"]) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None  # a verified handshake always has the peer's certificate
    served = x509.load_der_x509_certificate(der)
    expiry = served.not_valid_after_utc.isoformat()
    return {"serial": str(served.serial_number), "not_after": expiry}


OPERATIONS = {
    f.__name__: f
    for f in (
        create_topic,
        describe,
        describe_topics,
        end_offsets,
        produce,
        consume,
        leader_of,
        elect_preferred,
        alter_configs,
        describe_configs,
        plaintext_probe,
        served_certificate,
        throttles.throttles,
    )
}


def serve() -> None:
    """One JSON request per line of stdin, one JSON reply per line of stdout, until stdin ends:
    a caller that asks every second pays the interpreter's start and the imports once."""
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply = OPERATIONS[request["op"]](request)
        # The caller's answer, whatever failed: a request it got wrong or a cluster that did
        # not answer, and the next request still finds this process serving. `failed`, not
        # `error`: some operations answer with an `error` of their own (plaintext_probe's).
        except Exception as err:
            reply = {FAILED: f"{type(err).__name__}: {err}"}
        print(json.dumps(reply), flush=True)


def main() -> None:
    if sys.argv[1:] == ["--serve"]:
        serve()
        return
    request = json.loads(sys.argv[1])
    print(json.dumps(OPERATIONS[request["op"]](request)))


if __name__ == "__main__":
    main()
