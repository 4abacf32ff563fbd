"""Zone (rack) assignment: round-robin so brokers per zone differ by at most one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def assign_zones(count: int, zones: Sequence[str]) -> list[str]:
    """Zone of node i. Round-robin keeps skew ≤ 1 and never moves an existing node when the
    count grows: node i's zone depends on i alone, so scaling out only adds."""
    return [zones[i % len(zones)] for i in range(count)]


def max_skew(assigned: Sequence[str], zones: Sequence[str]) -> int:
    counts = Counter(assigned)
    per_zone = [counts.get(z, 0) for z in zones]
    return max(per_zone) - min(per_zone)
