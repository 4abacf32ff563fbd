"""A command run on this host against the real-node cluster resolves names through the cluster's
DNS, in a mount namespace of its own: the host's resolver stays as it was."""

from __future__ import annotations

import subprocess
from pathlib import Path

from infra.localcluster import host_clients
from infra.localcluster.node_config import DNS_SERVICE_IP


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
