"""Units: the model works in MB/s (10^6 bytes per second) and GiB; conversions happen here only.

Providers publish in their own units: EC2 network baselines in Gbps (10^9 bits/s), EBS-optimised
bandwidth in Mbps (10^6 bits/s), EBS volume throughput in MiB/s (2^20 bytes/s). Each figure is
converted once, at the edge where it enters (a profile) or leaves (a StorageClass parameter).
"""

from __future__ import annotations

import math

BYTES_PER_MB = 1_000_000
BYTES_PER_MIB = 1024**2
BYTES_PER_GIB = 1024**3
MB_PER_MIB = BYTES_PER_MIB / BYTES_PER_MB  # 1.048576
# Float noise (131.072 MB/s / 1.048576 = 125.00000000000001 MiB/s) must not round up a unit.
_NOISE = 1e-9


def gbps_to_mb_s(gbps: float) -> float:
    """Gigabits per second → MB/s: 10^9 bits / 8 / 10^6 = ×125 (2.5 Gbps = 312.5 MB/s)."""
    return gbps * 125


def mbps_to_mb_s(mbps: float) -> float:
    """Megabits per second → MB/s: ÷8 (2,300 Mbps = 287.5 MB/s)."""
    return mbps / 8


def mib_s_to_mb_s(mib_s: float) -> float:
    """MiB/s → MB/s: ×1.048576 (125 MiB/s = 131.072 MB/s)."""
    return mib_s * MB_PER_MIB


def mb_s_to_mib_s(mb_s: float) -> float:
    """MB/s → MiB/s: ÷1.048576 (125 MB/s = 119.21 MiB/s)."""
    return mb_s / MB_PER_MIB


def ceil_whole(value: float) -> int:
    """The next whole unit at or above `value`: provisioning never truncates below a need."""
    return math.ceil(value - _NOISE)
