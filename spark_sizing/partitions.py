"""Partitions per topic: what throughput and consumer parallelism need, rounded only when asked.

Confluent's rule: partitions ≥ max(t/p, t/c) for a topic's target throughput t, p what one
producer achieves per partition and c what one consumer achieves (both options, defaults 10 and
20 MB/s: Confluent measures "10s of MB/s" per partition). A consumer group cannot run more
consumers in parallel than there are partitions, so a known group size is a floor too.
"""

from __future__ import annotations

import math
from typing import Literal

PartitionMultiple = int | Literal["brokers"]


def partitions_needed(
    peak_mb_s: float,
    producer_mb_s_per_partition: float,
    consumer_mb_s_per_partition: float,
    consumers_per_group: int | None,
) -> int:
    """The fewest partitions that carry the peak and keep every consumer of a group busy."""
    by_throughput = max(
        peak_mb_s / producer_mb_s_per_partition, peak_mb_s / consumer_mb_s_per_partition
    )
    return max(1, math.ceil(by_throughput), consumers_per_group or 0)


def rounded(count: int, multiple: PartitionMultiple, brokers: int) -> int:
    """`count` rounded up to a multiple of `multiple` (or of the broker count, for "brokers").

    Rounding to the broker count spreads leaders evenly but multiplies small topics: it is
    applied only below 8 partitions per broker, where one partition more or less is uneven."""
    step = brokers if multiple == "brokers" else multiple
    if step <= 1 or (multiple == "brokers" and count >= brokers * 8):
        return count
    return math.ceil(count / step) * step
