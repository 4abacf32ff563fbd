"""`jmx_agent: download`: the rendered init container's checksum check, on a repository that
serves a different jar. (The good path: tests/kafka/test_metrics.py, every node of the KRaft
cluster serving metrics from the jar its init container fetched from Maven Central.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from infra.model.metrics import agent_url
from infra.verify.errors import VerifyError
from tests.kafka.conftest import start_cluster

pytestmark = pytest.mark.kafka


@pytest.fixture
def tampered_repository(tmp_path: Path) -> Iterator[str]:
    """A Maven repository on this host whose agent jar is not the pinned one."""
    root = tmp_path / "repository"
    base = "http://127.0.0.1:{port}/maven2"
    relative = agent_url("http://x/maven2").removeprefix("http://x/")
    jar = root / relative
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"PK\x03\x04 not the pinned agent")
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield base.format(port=server.server_address[1])
    server.shutdown()
    thread.join()


def test_an_agent_with_another_checksum_never_reaches_a_jvm(
    tampered_repository: str, tmp_path: Path
) -> None:
    images = {"kafka": {"jmx_agent": "download", "maven_repository": tampered_repository}}
    with pytest.raises(VerifyError, match="FAILED") as refused:
        start_cluster(tmp_path / "cluster", brokers=3, images=images)
    assert "jmx_prometheus_javaagent" in str(refused.value)
    fetched = list((tmp_path / "cluster" / "run").glob("*/jmx-agent/*"))
    assert fetched and all(p.name.endswith(".part") for p in fetched)  # downloaded, not moved
