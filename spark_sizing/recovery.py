"""Recovery time: re-replicating one lost broker's data, and the broker count that bounds it.

When a broker's disk is lost, its replacement fetches every replica it hosted from the leaders.
The leaders are spread over the other brokers, so the receiving broker is the bottleneck: its disk
writes and its network in, each already carrying the broker's share of live traffic. It may run
up to the zone-down limit (an incident, like a zone loss), so the rate it can spare is, for each
of the two, capacity × limit − live load per broker; a replication throttle (`--recovery-mb-s`)
caps it further. With S MB stored in the cluster, L MB/s of live load, capacity C × limit per
broker and a target of T seconds, B brokers recover in time when

    (S / B) / (C·limit − L / B) ≤ T   ⇔   B ≥ (S / T + L) / (C·limit)

and, with a throttle t, also B ≥ S / (T · t). More brokers help twice: less data each, more room.
docs/sizing.md works an example through by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from spark_sizing.contract import Recovery
from spark_sizing.units import BYTES_PER_GIB, BYTES_PER_MB
from spark_sizing.zone_loss import Resource

SECONDS_PER_HOUR = 3600


def _stored_mb(stored_gib: float) -> float:
    return stored_gib * BYTES_PER_GIB / BYTES_PER_MB


def recovery_brokers(
    stored_gib: float,
    receivers: Sequence[Resource],
    hours: float,
    limit: float,
    throttle_mb_s: float | None,
) -> int:
    """Fewest brokers whose lost one is re-replicated within `hours` (see the module docstring).

    `receivers` are the resources the replacement broker fills (disk writes, network in), with
    their live cluster-wide load; `stored_gib` is all data in the cluster, replicas included."""
    rate_needed = _stored_mb(stored_gib) / (hours * SECONDS_PER_HOUR)
    needed = [(rate_needed + r.normal) / (r.capacity_per_broker * limit) for r in receivers]
    if throttle_mb_s is not None:
        needed.append(rate_needed / throttle_mb_s)
    return max(1, math.ceil(max(needed) - 1e-9))


def recovery_at(
    brokers: int,
    stored_gib: float,
    receivers: Sequence[Resource],
    hours: float,
    limit: float,
    throttle_mb_s: float | None,
) -> Recovery:
    """The recovery of one broker at the chosen count: its data, the rate it gets, the hours."""
    spare = {r.name: r.capacity_per_broker * limit - r.normal / brokers for r in receivers}
    if throttle_mb_s is not None:
        spare["throttle (--recovery-mb-s)"] = throttle_mb_s
    limited_by = min(spare, key=lambda name: spare[name])
    rate = spare[limited_by]
    per_broker_gib = stored_gib / brokers
    took = _stored_mb(per_broker_gib) / rate / SECONDS_PER_HOUR if rate > 0 else None
    return Recovery(
        data_per_broker_gib=round(per_broker_gib, 1),
        rate_mb_s=round(max(rate, 0.0), 3),
        limited_by=limited_by,
        hours=None if took is None else round(took, 2),
        target_hours=hours,
        brokers_needed=recovery_brokers(stored_gib, receivers, hours, limit, throttle_mb_s),
    )
