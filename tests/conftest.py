"""Shared pytest setup. Each test area keeps its own fixtures in its folder's conftest.py."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.failure_reports import describe_failure

REPO_ROOT = Path(__file__).resolve().parent.parent

# A test's tier follows from what it needs. `make unit` runs the tests with none of these:
# no JVM, no Go-built binary, no server.
TIERS = ("spark", "s3", "kafka", "engine", "cluster", "toolchain", "nodes")
FIXTURE_TIERS = {
    "spark": "spark",
    "moto_endpoint": "s3",
    "s3_env": "s3",
    "kube": "cluster",
    "deployed": "cluster",
    "project": "engine",
    "real_nodes": "nodes",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            if fixture in FIXTURE_TIERS:
                item.add_marker(FIXTURE_TIERS[fixture])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed proof's report says how its servers were then (tests/failure_reports.py)."""
    report = yield
    describe_failure(report, getattr(item, "funcargs", {}).values())
    return report


@pytest.fixture(autouse=True)
def _spark_only_in_the_spark_tier(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test that starts Spark without the `spark` marker would make `make unit` need a JVM."""
    if request.node.get_closest_marker("spark") is not None:
        return
    from pyspark.sql import SparkSession

    def refuse(self: object) -> None:
        raise AssertionError(f"{request.node.nodeid} starts Spark: mark it @pytest.mark.spark")

    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", refuse)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """moto's S3/EC2 server on a free loopback port, for the whole session."""
    port = free_port()
    server = Path(sys.executable).parent / "moto_server"
    proc = subprocess.Popen(
        [str(server), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        else:
            raise RuntimeError("moto_server did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
