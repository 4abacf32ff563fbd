"""The replication throttle rates set on each broker, read on the client test host:
`python -m infra.verify.throttles '<json request>'` prints one JSON reply (as infra/verify/client
does), so the growth proofs can see Kafka's reassignment tool set the throttle and lift it."""

from __future__ import annotations

import json
import sys
from typing import Any

from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    ConfigSource,
    ResourceType,
)

THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
# Only what someone set: a rate left at its default is no throttle.
SET_BY_SOMEONE = (ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)


def throttles(req: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Broker id → {rate name: value} of the rates set on it (empty when none is)."""
    admin = AdminClient({"bootstrap.servers": req["bootstrap"], **req.get("security", {})})
    found: dict[str, dict[str, str]] = {}
    for broker in req["brokers"]:
        # One broker per request: brokers answer only for themselves.
        resource = ConfigResource(ResourceType.BROKER, str(broker))
        entries = admin.describe_configs([resource], request_timeout=30)[resource].result(60)
        found[resource.name] = {
            name: str(entries[name].value)
            for name in THROTTLE_RATES
            if name in entries and ConfigSource(entries[name].source) in SET_BY_SOMEONE
        }
    return found


if __name__ == "__main__":
    print(json.dumps(throttles(json.loads(sys.argv[1]))))
