"""Real clusters started from `kafkastack render` output, shared by the tests of this folder.

Shared fixtures here are package-scoped: the cluster stops when this folder's tests end, so the
next tier does not share the two cores with eight idle JVMs.

Missing parts (jars, haproxy, namespaces) fail the tier with the reason; nothing is skipped.
"""

from __future__ import annotations

import datetime
import functools
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra import render
from infra.config import load_stack
from infra.localcluster.real_stack import without_kraft_polling
from infra.stack_config import StackConfig
from infra.verify import certificates, network
from infra.verify.processes import ProcessCluster
from tests.conftest import REPO_ROOT
from tests.infra.conftest import config_of, sizing_cluster
from tests.kafka.checks import FAILOVER_REPORTS, RELOAD_REPORTS, restart_stopped
from tests.ordering import order_within

DOMAIN = "kafka.verify.test"

# Passwords holding JAAS-special characters (`"`, `\`, `$`, quotes, `,`, `=`) for the shared
# KRaft cluster and the ZooKeeper ensemble: every place the stack hands a secret to Kafka or
# ZooKeeper (SCRAM seeding, the ACL Job's login, ZooKeeper's DIGEST and quorum logins, the Java
# tools' login of `kafkastack rebalance` and `drain`) must carry
# it as it is, so the clusters whose tests log in run on them rather than on the placeholder.
# KRaft's SCRAM seeding refuses commas (secret_text.KRAFT_SCRAM_REFUSALS); everything else goes.
KRAFT_PASSWORDS = {
    "password-admin": "ad\"min\\pass $HOME 'q' =x",
    "password-orders": '"or\\"ders\\\\"',
}
ZOOKEEPER_PASSWORDS = {
    "password-zookeeper": 'zoo"keep\\er, $HOME',
    "password-zookeeper-quorum": "qu'o\"rum\\ $PATH,=",
    "password-admin": 'ad"m\\in,=x',
}

# The orders user may write its own topics (prefix `orders.`): the stacks' ACL Job grants it.
ORDERS_GRANTS = [
    {
        "user": "orders",
        "resource": "topic",
        "name": "orders.",
        "pattern": "prefixed",
        "operations": ["Write", "Describe"],
    }
]


@functools.cache
def _local_stack() -> StackConfig:
    return load_stack(REPO_ROOT / "stacks", "local")


def local_server_tuning() -> dict[str, Any]:
    """The committed local stack's `resources.server_jvm_options` and `polling` (read once,
    through the stack loader; a new dict each call): this tier's Kafka servers start and idle
    as a local cluster's do."""
    local = _local_stack()
    return {
        "resources": {"server_jvm_options": local.resources.server_jvm_options},
        "polling": local.polling.model_dump(exclude_none=True),
    }


def stack_values(brokers: int, **overrides: Any) -> dict[str, Any]:
    sizing = {
        "schema_version": "1.0",
        "source": "tests",
        "cluster": sizing_cluster(brokers=brokers),
    }
    tuning = local_server_tuning()
    if overrides.get("quorum", {}).get("kind") == "zookeeper":
        tuning = {**tuning, "polling": without_kraft_polling(tuning["polling"])}
    return {
        "platform": "local",
        "brokers": brokers,
        "sizing": sizing,
        "external": {"mode": "haproxy", "domain": DOMAIN},
        **tuning,
        # The second network (on-prem shape), so replication's separation can be measured.
        "network": {"mode": "dual", "replication": {"cidr": "10.20.0.0/24"}},
        **overrides,
    }


def login(cluster: ProcessCluster, user: str) -> dict[str, Any]:
    """The user's SASL login on the CLIENT listener with the password exactly as the rendered
    Secret holds it."""
    password = cluster.secrets[(f"{cluster.topology['cluster_name']}-user-{user}", "password")]
    return {**cluster.internal_security(), "sasl.username": user, "sasl.password": password}


def render_stack(
    folder: Path, brokers: int, passwords: dict[str, str] | None = None, **overrides: Any
) -> StackConfig:
    """`kafkastack render` of this tier's stack into `folder`: what `start_cluster` starts, and
    what a test compares a changed render with."""
    config = config_of("local", **stack_values(brokers, **overrides))
    render.write(config, folder, render.manifests(config, passwords))
    return config


def start_cluster(
    tmp: Path,
    brokers: int,
    passwords: dict[str, str] | None = None,
    certificate_validity: datetime.timedelta = certificates.VALIDITY,
    **overrides: Any,
) -> ProcessCluster:
    """`passwords`: secret config by key (`password-<user>`); by default the placeholder.
    `certificate_validity`: of the certificates the nodes start with."""
    problem = network.available()
    if problem:
        pytest.fail(problem)
    if shutil.which("haproxy") is None:
        pytest.fail("haproxy is missing: run scripts/install-system-deps.sh")
    render_stack(tmp / "render", brokers, passwords, **overrides)
    cluster = ProcessCluster(tmp / "render", tmp / "run", certificate_validity=certificate_validity)
    try:
        cluster.start()
    except BaseException:
        cluster.close()
        raise
    return cluster


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests of the shared `kraft` cluster run last in this folder: started by its first
    user, it stops only when the folder ends, and its eight JVMs would otherwise idle beside
    every cluster of its own that the tests in between start, on the same two cores. The users
    of `one_network_mtls` run one after another, so they share one start-up."""

    def group(fixtures: set[str]) -> int:
        if "kraft" in fixtures:
            return 2
        return 1 if ONE_NETWORK_MTLS.fixture in fixtures else 0

    order_within(items, Path(__file__).parent, group)


class ClusterOnDemand:
    """A cluster started by the first test that asks for its `fixture` and stopped once the next
    test does not ask for it (`pytest_runtest_teardown`): tests of several modules share one
    start-up (a minute of the two cores), and no idle cluster outlives its users. A later user
    (another order, one test run alone) starts it again."""

    def __init__(self, fixture: str, brokers: int, **overrides: Any) -> None:
        self.fixture = fixture
        self.brokers = brokers
        self.overrides = overrides
        self.cluster: ProcessCluster | None = None

    def get(self, factory: pytest.TempPathFactory) -> ProcessCluster:
        if self.cluster is None:
            tmp = factory.mktemp(self.fixture)
            self.cluster = start_cluster(tmp, brokers=self.brokers, **self.overrides)
        return self.cluster

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None


# The admin may read topic `granted` (the mTLS proofs' ACL Job grants it).
MTLS_GRANTS = [{"user": "admin", "resource": "topic", "name": "granted", "operations": ["Read"]}]
ONE_NETWORK_MTLS = ClusterOnDemand(
    "one_network_mtls",
    brokers=3,
    network={"mode": "single"},
    security={
        "client_auth": "mtls",
        "users": ["admin"],
        "client_tls": True,
        "authorization": True,
        "acls": MTLS_GRANTS,
    },
)


@pytest.fixture
def one_network_mtls(tmp_path_factory: pytest.TempPathFactory) -> ProcessCluster:
    """The cloud shape with certificate logins: one network (`network.mode: single`) and mTLS
    clients (every listener SSL, client certificates required, authorization on), 3 KRaft
    controllers and 3 brokers over zones a, b, c. The mTLS proofs and the one-network proofs
    each check their part of it, on one start-up."""
    return ONE_NETWORK_MTLS.get(tmp_path_factory)


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if nextitem is None or ONE_NETWORK_MTLS.fixture not in getattr(nextitem, "fixturenames", ()):
        ONE_NETWORK_MTLS.close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A session ended early (an interrupt, an error between tests) stops it too."""
    ONE_NETWORK_MTLS.close()


KRAFT_BROKERS = 5
KRAFT_SECURITY = {
    "users": ["admin", "orders"],
    "client_tls": True,
    "authorization": True,
    "acls": ORDERS_GRANTS,
}


@pytest.fixture(scope="package")
def kraft(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    """Kafka 4 (KRaft): 3 controllers and 5 brokers over zones a, b, c, with what prod and
    staging get by default (CLIENT over SASL_SSL, the authorizer on, users `admin` and
    `orders`), switched on in a local stack the harness can run, its logins on passwords with
    JAAS-special characters.

    One for this folder (a start takes about a minute): each test makes topics of its own, and
    `restore` starts again whatever a test stopped. The authorization proofs run on it too (a
    cluster of their own cost a start more).
    """
    cluster = start_cluster(
        tmp_path_factory.mktemp("kraft"),
        brokers=KRAFT_BROKERS,
        passwords=KRAFT_PASSWORDS,
        security=KRAFT_SECURITY,
    )
    yield cluster
    cluster.close()


@pytest.fixture
def restore(kraft: ProcessCluster) -> Iterator[ProcessCluster]:
    """The KRaft cluster, whole again after the test (checks.restart_stopped)."""
    yield kraft
    restart_stopped(kraft)


@pytest.fixture(scope="module")
def zookeeper_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    """Kafka 3.9 in ZooKeeper mode: a 3-server ensemble and 3 brokers over zones a, b, c, its
    logins on passwords with JAAS-special characters."""
    cluster = start_cluster(
        tmp_path_factory.mktemp("zookeeper"),
        brokers=3,
        passwords=ZOOKEEPER_PASSWORDS,
        kafka_version="3.9.1",
        quorum={"kind": "zookeeper", "nodes": 3},
    )
    yield cluster
    cluster.close()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Failover and reload times belong in the CI log, not only in a captured print."""
    for line in [*FAILOVER_REPORTS, *RELOAD_REPORTS]:
        terminalreporter.write_line(line)
