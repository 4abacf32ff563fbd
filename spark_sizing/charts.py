"""The report's charts, as inline PNGs: traffic against capacity, brokers per constraint, storage,
top topics. Capacity lines use the configured targets, and every axis reaches the sized values.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import matplotlib
import numpy as np

matplotlib.use("Agg")  # no display: charts are rendered to PNG bytes
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from spark_sizing.contract import SizingReport

TOP_TOPICS = 10
HEADROOM = 1.1  # axes end a tenth above the largest value drawn


@dataclass(frozen=True)
class MonthTotal:
    month: datetime
    avg_ingress_mb_s: float
    peak_ingress_mb_s: float
    peak_egress_mb_s: float


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _reach(ax: Axes, *values: float) -> None:
    ax.set_ylim(0, max([*values, 1e-9]) * HEADROOM)


def client_ingress_capacity(report: SizingReport) -> float | None:
    """Client ingress the sized cluster carries with every throughput resource within its
    target normally and its limit with a zone down, for the same mix of RF and fan-out.

    Every throughput load grows in proportion to ingress, so the capacity is today's peak times
    the smallest headroom factor over resources and both states. None without utilisation."""
    factors = []
    for u in report.utilisation:
        if u.unit not in ("MB/s", "vCPU"):  # the loads that grow with ingress
            continue
        if u.utilisation > 0:
            factors.append(u.target / u.utilisation)
        if u.zone_down_utilisation:
            factors.append(u.zone_down_limit / u.zone_down_utilisation)
    if not factors:
        return None
    return report.cluster.peak_ingress_mb_s * min(factors)


def _limits_label(report: SizingReport) -> str:
    target = report.parameters.get("target_utilisation")
    down = report.parameters.get("zone_down_utilisation")
    if isinstance(target, float) and isinstance(down, float):
        return f"client-ingress capacity ({target:.0%} per broker, {down:.0%} with a zone down)"
    return "client-ingress capacity at the configured targets"


def horizon(report: SizingReport, last_month: np.datetime64) -> np.datetime64:
    """The month the projection is for: the last observed month plus the horizon."""
    months = int(report.parameters.get("horizon_months") or 0)
    return np.datetime64(last_month.astype("datetime64[M]") + np.timedelta64(months, "M"), "s")


def traffic_chart(report: SizingReport, months: Sequence[MonthTotal]) -> str:
    fig, ax = plt.subplots(figsize=(8, 3.5))
    x = np.array([m.month for m in months], dtype="datetime64[s]")
    series = {
        "ingress (avg)": [m.avg_ingress_mb_s for m in months],
        "ingress (peak)": [m.peak_ingress_mb_s for m in months],
        "consumer egress (peak)": [m.peak_egress_mb_s for m in months],
    }
    for label, values in series.items():
        ax.plot(x, values, label=label)
    projected = report.cluster.peak_ingress_mb_s
    if len(x):
        ax.scatter(
            [horizon(report, x[-1])],
            [projected],
            marker="*",
            s=120,
            label="projected peak ingress at horizon",
            zorder=3,
        )
    capacity = client_ingress_capacity(report)
    if capacity is not None:
        ax.axhline(capacity, color="red", linestyle="--", label=_limits_label(report))
    drawn = [v for values in series.values() for v in values]
    _reach(ax, *drawn, projected, capacity or 0.0)
    ax.set_ylabel("MB/s")
    ax.set_title("Projected traffic against cluster capacity")
    ax.legend(fontsize=7)
    fig.autofmt_xdate()
    return _png(fig)


def constraint_chart(report: SizingReport) -> str:
    c = report.cluster
    fig, ax = plt.subplots(figsize=(6, 3))
    names = list(c.constraints)
    colours = ["tab:red" if n == c.binding_constraint else "tab:blue" for n in names]
    ax.barh(names, [c.constraints[n] for n in names], color=colours)
    ax.axvline(c.brokers, color="black", linestyle=":", label=f"sized: {c.brokers} brokers")
    ax.set_xlim(0, max(c.brokers, *c.constraints.values()) * HEADROOM)
    ax.set_xlabel("brokers needed")
    ax.set_title("Broker count per constraint (red: binding)")
    ax.legend(fontsize=7)
    return _png(fig)


def storage_chart(report: SizingReport, months: Sequence[MonthTotal]) -> str:
    """Storage the cluster holds at each month's ingress (retention-weighted), against what is
    provisioned."""
    total_at_horizon = sum(t.storage_gib for t in report.topics)
    peak_at_horizon = max(report.cluster.peak_ingress_mb_s, 1e-9)
    fig, ax = plt.subplots(figsize=(8, 3))
    x = np.array([m.month for m in months], dtype="datetime64[s]")
    # Storage scales with ingress; the star is the projected total at the horizon.
    stored = [total_at_horizon * m.peak_ingress_mb_s / peak_at_horizon for m in months]
    ax.plot(x, stored, label="stored (GiB)")
    if len(x):
        ax.scatter(
            [horizon(report, x[-1])], [total_at_horizon], marker="*", s=120, label="at horizon"
        )
    provisioned = report.cluster.storage_per_broker_gib * report.cluster.brokers
    ax.axhline(provisioned, color="red", linestyle="--", label="provisioned (GiB)")
    _reach(ax, *stored, total_at_horizon, provisioned)
    ax.set_ylabel("GiB")
    ax.set_title("Storage growth")
    ax.legend(fontsize=7)
    fig.autofmt_xdate()
    return _png(fig)


def topics_chart(report: SizingReport) -> str:
    top = sorted(report.topics, key=lambda t: -t.peak_ingress_mb_s)[:TOP_TOPICS]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.barh([t.topic for t in reversed(top)], [t.peak_ingress_mb_s for t in reversed(top)])
    ax.set_xlabel("peak ingress MB/s")
    ax.set_title(f"Top {len(top)} topics")
    return _png(fig)


def charts(report: SizingReport, months: Sequence[MonthTotal]) -> list[str]:
    return [
        traffic_chart(report, months),
        constraint_chart(report),
        storage_chart(report, months),
        topics_chart(report),
    ]
