"""The address plan of the replication (second) network: which static address each node gets.

Addresses are rendered into the listeners, the quorum's bootstrap list and the certificates, so
they must never move: quorum nodes take a block sized for the largest quorum (7) and brokers start
after it, so growing either never shifts an existing address. Two shapes:

- one range stretched over every zone (an on-prem L2 segment): one global sequence, quorum from
  the first host address, brokers after the quorum block;
- one subnet per zone (routed between zones): a sequence per zone. Clouds reserve the first four
  addresses of a subnet (network, router, DNS, spare) and GCP also the one before broadcast, so
  zoned plans start at the fifth and keep the last two free; the router (first host) is the gateway
  to the other zones' subnets.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

QUORUM_BLOCK = 7  # the largest quorum (ZooKeeper 7, KRaft 5)
STRETCHED_FIRST = 1
ZONED_FIRST = 4
STRETCHED_TAIL = 1  # broadcast
ZONED_TAIL = 2  # broadcast, and GCP's reserved second-to-last

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class AddressPlan:
    ranges: Mapping[str, Network]  # zone → its range (the same range for every zone if stretched)
    zoned: bool

    @classmethod
    def stretched(cls, cidr: str, zones: Sequence[str]) -> AddressPlan:
        network = ipaddress.ip_network(cidr, strict=True)
        return cls({z: network for z in zones}, zoned=False)

    @classmethod
    def per_zone(cls, subnets: Mapping[str, str]) -> AddressPlan:
        return cls({z: ipaddress.ip_network(c, strict=True) for z, c in subnets.items()}, True)

    @property
    def first(self) -> int:
        return ZONED_FIRST if self.zoned else STRETCHED_FIRST

    @property
    def tail(self) -> int:
        return ZONED_TAIL if self.zoned else STRETCHED_TAIL

    def gateway(self, zone: str) -> Address:
        """The router of a zone's subnet (first host address): the way to the other zones."""
        return self.ranges[zone].network_address + 1

    def offsets(self, node_zones: Sequence[str], quorum: bool) -> list[int]:
        """Offset inside its zone's range of each node, given the nodes' zones in id order."""
        start = self.first + (0 if quorum else QUORUM_BLOCK)
        seen: Counter[str] = Counter()
        offsets = []
        for index, zone in enumerate(node_zones):
            offsets.append(start + (seen[zone] if self.zoned else index))
            seen[zone] += 1
        return offsets

    def addresses(self, node_zones: Sequence[str], quorum: bool) -> list[str]:
        return [
            str(self.ranges[zone].network_address + offset)
            for zone, offset in zip(node_zones, self.offsets(node_zones, quorum), strict=True)
        ]

    def usable(self, zone: str) -> int:
        """The highest offset a node may take in a zone's range."""
        return self.ranges[zone].num_addresses - 1 - self.tail
