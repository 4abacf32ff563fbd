"""Monthly cost of the sized brokers, from a price table (data: `data/prices.yaml`).

Parts: broker instances; data volumes (size, provisioned IOPS and throughput above what the type
includes); bytes crossing zones at the horizon's average rate (not the peak: a bill sums bytes).
With rack-aware placement over z zones, for average produce P, RF r and c consumer groups:

- replication: each follower outside the leader's zone fetches P; the leader's zone holds on
  average max(1, r/z) of the r replicas, so P·(r − max(1, r/z)) crosses (RF 3 over 3 zones: 2P);
- producers: clients are spread over the zones, leaders too: P·(z−1)/z crosses;
- consumers: likewise P·c·(z−1)/z, less the share follower fetching serves in the consumer's
  own zone (`--follower-fetching-share`).

Controllers, routers and client instances are not counted: the estimate is the brokers' bill.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError

from spark_sizing.contract import STRICT_CONFIG, CostEstimate, CostPart, first_error
from spark_sizing.model_inputs import SizingParameters, TopicDemand
from spark_sizing.volume_types import ProvisionedVolume

SECONDS_PER_HOUR = 3600
MB_PER_GB = 1000


class PriceError(ValueError):
    """A price file that cannot be used; the message names the field and the fix."""


class VolumePrice(BaseModel):
    model_config = STRICT_CONFIG

    gib_month: float = Field(ge=0)
    iops_month: float = Field(default=0.0, ge=0)
    free_iops: float = Field(default=0.0, ge=0)
    throughput_month: float = Field(default=0.0, ge=0)
    free_throughput: float = Field(default=0.0, ge=0)


class PriceTable(BaseModel):
    model_config = STRICT_CONFIG

    region: str
    currency: str
    source: str
    as_of: str
    hours_per_month: float = Field(gt=0)
    instance_per_hour: dict[str, float]
    volume: dict[str, VolumePrice]
    cross_zone_per_gb: float = Field(ge=0)

    @property
    def cited(self) -> str:
        return f"{self.source.strip()} ({self.region}, as of {self.as_of})"


def _built_in() -> dict[str, Any]:
    text = resources.files("spark_sizing").joinpath("data/prices.yaml").read_text("utf-8")
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


@cache
def built_in_prices() -> PriceTable:
    return PriceTable.model_validate(_built_in())


def load_prices(path: Path | None) -> PriceTable:
    """The built-in table, with what the YAML file at `path` sets laid over it (instance and
    volume prices per entry, the rest per key)."""
    if path is None:
        return built_in_prices()
    if not path.is_file():
        raise PriceError(
            f"--prices {path}: no such file; give a YAML file shaped as "
            "spark_sizing/data/prices.yaml"
        )
    override = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(override, dict):
        raise PriceError(f"--prices {path}: expected a mapping of price fields at top level")
    merged = _built_in()
    for key, value in override.items():
        if key in ("instance_per_hour", "volume") and isinstance(value, dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    try:
        return PriceTable.model_validate(merged)
    except ValidationError as err:
        field, problem = first_error(err)
        raise PriceError(f"--prices {path}: field {field!r}: {problem}") from None


@dataclass(frozen=True)
class CrossZone:
    """Average MB/s crossing zones, per kind of traffic."""

    replication: float
    producers: float
    consumers: float

    @property
    def total(self) -> float:
        return self.replication + self.producers + self.consumers


def cross_zone_mb_s(
    topics: Sequence[TopicDemand], zones: int, follower_fetching_share: float
) -> CrossZone:
    """The module docstring's three flows at average produce rates."""
    if zones <= 1:
        return CrossZone(0.0, 0.0, 0.0)
    away = (zones - 1) / zones
    return CrossZone(
        replication=sum(
            t.avg_ingress_mb_s * (t.replication_factor - max(1.0, t.replication_factor / zones))
            for t in topics
        ),
        producers=sum(t.avg_ingress_mb_s for t in topics) * away,
        consumers=sum(t.avg_ingress_mb_s * t.consumer_groups for t in topics)
        * away
        * (1 - follower_fetching_share),
    )


@dataclass(frozen=True)
class BrokerFleet:
    """What the bill is for: brokers of one instance type, each with its data volumes."""

    brokers: int
    instance_type: str
    volumes_per_broker: int
    volume: ProvisionedVolume


def _volume_parts(fleet: BrokerFleet, prices: PriceTable) -> list[CostPart]:
    vt = fleet.volume.type
    count = fleet.brokers * fleet.volumes_per_broker
    price = prices.volume.get(vt.name)
    if price is None:
        return [
            CostPart(
                part="volumes",
                monthly=None,
                detail=f"no price for volume type {vt.name}; add it under `volume` in --prices",
            )
        ]
    size = fleet.volume.size_gib
    parts = [
        CostPart(
            part="volume storage",
            monthly=count * size * price.gib_month,
            detail=f"{count} volumes × {size:,} GiB × {price.gib_month:g}/GiB-month",
        )
    ]
    if fleet.volume.iops is not None and price.iops_month:
        extra = max(0.0, fleet.volume.iops - price.free_iops)
        parts.append(
            CostPart(
                part="provisioned IOPS",
                monthly=count * extra * price.iops_month,
                detail=f"{count} × ({fleet.volume.iops:,} − {price.free_iops:,.0f} included) × "
                f"{price.iops_month:g}/IOPS-month",
            )
        )
    if fleet.volume.throughput is not None and price.throughput_month:
        extra = max(0.0, fleet.volume.throughput - price.free_throughput)
        unit = vt.throughput_unit or "MB/s"
        parts.append(
            CostPart(
                part="provisioned throughput",
                monthly=count * extra * price.throughput_month,
                detail=f"{count} × ({fleet.volume.throughput:,} − {price.free_throughput:,.0f} "
                f"included) {unit} × {price.throughput_month:g}/({unit})-month",
            )
        )
    return parts


def monthly_cost(
    topics: Sequence[TopicDemand],
    fleet: BrokerFleet,
    prices: PriceTable,
    params: SizingParameters,
) -> CostEstimate:
    """The brokers' monthly bill at the horizon, part by part (see the module docstring)."""
    hourly = prices.instance_per_hour.get(fleet.instance_type)
    instances = CostPart(
        part="broker instances",
        monthly=None if hourly is None else fleet.brokers * hourly * prices.hours_per_month,
        detail=f"no price for {fleet.instance_type}; add it under `instance_per_hour` in --prices"
        if hourly is None
        else f"{fleet.brokers} × {fleet.instance_type} × {hourly:g}/h × "
        f"{prices.hours_per_month:g} h",
    )
    seconds = prices.hours_per_month * SECONDS_PER_HOUR
    flows = cross_zone_mb_s(topics, params.zones, params.follower_fetching_share)

    def crossing(name: str, mb_s: float, why: str) -> CostPart:
        gb = mb_s * seconds / MB_PER_GB
        return CostPart(
            part=f"cross-zone {name}",
            monthly=gb * prices.cross_zone_per_gb,
            detail=f"{mb_s:,.3f} MB/s average ({why}) = {gb:,.0f} GB × "
            f"{prices.cross_zone_per_gb:g}/GB",
        )

    parts = [
        instances,
        *_volume_parts(fleet, prices),
        crossing("replication", flows.replication, "followers outside the leader's zone"),
        crossing(
            "producers",
            flows.producers,
            f"{params.zones - 1}/{params.zones} to a leader in another zone"
            if params.zones > 1
            else "one zone",
        ),
        crossing(
            "consumers",
            flows.consumers,
            f"follower fetching serves {params.follower_fetching_share:.0%} in-zone",
        ),
    ]
    priced = [p.monthly for p in parts if p.monthly is not None]
    return CostEstimate(
        currency=prices.currency,
        region=prices.region,
        prices_source=prices.cited,
        total_monthly=round(sum(priced), 2),
        complete=len(priced) == len(parts),
        cross_zone_gb_month=round(flows.total * seconds / MB_PER_GB, 1),
        parts=[
            p if p.monthly is None else p.model_copy(update={"monthly": round(p.monthly, 2)})
            for p in parts
        ],
    )
