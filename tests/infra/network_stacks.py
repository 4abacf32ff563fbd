"""Stack values the network tests share: an on-prem and a zoned dual-network stack."""

from __future__ import annotations

from typing import Any

from infra.model.cluster import ClusterModel
from tests.infra.conftest import config_of, sizing_cluster

ON_PREM: dict[str, Any] = {
    "platform": "local",
    "network": {"mode": "dual", "replication": {"cidr": "10.20.0.0/24"}},
}
ZONED: dict[str, Any] = {
    "platform": "aws",
    "network": {
        "mode": "dual",
        "replication": {"subnets": {"a": "10.40.1.0/24", "b": "10.40.2.0/24", "c": "10.40.3.0/24"}},
    },
}


def model_of(brokers: int = 3, **overrides: Any) -> ClusterModel:
    sizing = {"schema_version": "1.0", "source": "t", "cluster": sizing_cluster(brokers=brokers)}
    return ClusterModel.from_config(config_of(sizing=sizing, **overrides))
