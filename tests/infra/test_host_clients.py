"""A command run on this host against the real-node cluster resolves names through the cluster's
DNS, in a mount namespace of its own: the host's resolver stays as it was. The proofs' admin
process answers question after question, a failed one included."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.config import load_stack
from infra.localcluster import host_clients
from infra.localcluster.control_plane import LocalClusterError, LocalKubernetes
from infra.localcluster.node_config import DNS_SERVICE_IP
from infra.model.cluster import ClusterModel
from infra.verify.clients import FAILED, SERVE, ServedClient


def test_the_cluster_dns_is_the_commands_resolver_and_the_hosts_stays(tmp_path: Path) -> None:
    host_before = Path(host_clients.RESOLVER).read_text()
    argv = host_clients.with_cluster_dns(tmp_path, "orders", ["cat", host_clients.RESOLVER])
    seen = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30).stdout
    assert seen.splitlines() == [
        f"nameserver {DNS_SERVICE_IP}",
        "search orders.svc.cluster.local svc.cluster.local cluster.local",
    ]
    assert Path(host_clients.RESOLVER).read_text() == host_before


def test_the_login_file_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    path = host_clients.write_login({"sasl.password": "s3cret"}, tmp_path / "admin.conf")
    assert path.read_text() == "sasl.password=s3cret\n"
    assert path.stat().st_mode & 0o077 == 0


class PlaintextAdmin(host_clients.HostAdmin):
    """The admin process without the stack's login (no cluster here to hold its Secrets)."""

    def login(self) -> dict[str, str]:
        return {}


@pytest.fixture
def answering_port() -> Iterator[int]:
    """A TCP port on this host that answers every connection with a few bytes."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.recv(1024)
                connection.sendall(b"hello")

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


@pytest.fixture
def admin(repo_root: Path, tmp_path: Path) -> Iterator[PlaintextAdmin]:
    """The local stack's admin process in `tmp_path/admin`, closed after the test."""
    model = ClusterModel.from_config(load_stack(repo_root / "stacks", "local"))
    made = PlaintextAdmin(LocalKubernetes("host-admin-test"), model, tmp_path / "admin")
    yield made
    made.close()


def test_one_admin_process_answers_every_question_and_a_failed_one_names_itself(
    admin: PlaintextAdmin, answering_port: int
) -> None:
    try:
        with pytest.raises(LocalClusterError, match="no_such_operation from this host: KeyError"):
            admin.ask("no_such_operation")
        process = admin._served._process
        reply = admin.ask("plaintext_probe", host="127.0.0.1", port=answering_port)
        assert reply == {"answered": True, "bytes": 5}
        assert admin._served._process is process  # the same process, after a failed question
    finally:
        admin.close()
    assert process is not None and process.returncode == 0


def test_a_served_client_returns_an_operations_own_error_and_marks_what_raised(
    answering_port: int, tmp_path: Path
) -> None:
    # The kafka tier's clients: only what raised in the serving process is a failure; an
    # `error` an operation answers with (a port that takes no plaintext) is its result.
    served = ServedClient(lambda: SERVE, tmp_path / "client.err")
    try:
        assert set(served.ask({"op": "no_such_operation"}, 60) or {}) == {FAILED}
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        closed.close()  # nothing listens there any more
        refused = served.ask({"op": "plaintext_probe", "host": "127.0.0.1", "port": port}, 60)
        assert refused == {"answered": False, "error": "ConnectionRefusedError"}
        answered = served.ask(
            {"op": "plaintext_probe", "host": "127.0.0.1", "port": answering_port}, 60
        )
        assert answered == {"answered": True, "bytes": 5}
    finally:
        served.close()


def test_a_served_client_that_gives_no_answer_in_time_is_ended(tmp_path: Path) -> None:
    served = ServedClient(lambda: ["sh", "-c", "cat > /dev/null"], tmp_path / "silent.err")
    assert served.ask({"op": "describe"}, 0.5) is None
    assert served._process is None  # ended; the next request starts another


def test_an_admin_process_started_again_makes_its_resolver_again(
    admin: PlaintextAdmin, answering_port: int
) -> None:
    admin.ask("plaintext_probe", host="127.0.0.1", port=answering_port)
    admin.close()
    shutil.rmtree(admin.folder)  # a redeploy clears the folder it ran in
    reply = admin.ask("plaintext_probe", host="127.0.0.1", port=answering_port)
    assert reply == {"answered": True, "bytes": 5}
