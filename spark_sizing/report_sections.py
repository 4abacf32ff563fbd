"""The report's sections on the binding constraint, recovery, cost and the profile comparison.

Pure functions of the `SizingReport`, each empty when sizing.json predates the field (schema 1.2).
"""

from __future__ import annotations

from spark_sizing.constraints import MINIMUM_BROKERS
from spark_sizing.contract import SizingReport

SHOWN_TOPICS = 3


def binding_detail(report: SizingReport) -> str | None:
    """When the binding constraint is a topic's replication factor: which topics, which factor.

    `replication_factor: 100` typed for 10 sized 102 brokers, and "binding: minimum" alone hid
    the typo from whoever read the sizing."""
    c = report.cluster
    if c.binding_constraint != "minimum" or c.replication_factor <= MINIMUM_BROKERS:
        return None
    named = [t.topic for t in report.topics if t.replication_factor == c.replication_factor]
    shown = ", ".join(named[:SHOWN_TOPICS])
    if len(named) > SHOWN_TOPICS:
        shown += f" and {len(named) - SHOWN_TOPICS} more"
    return (
        f"replication_factor {c.replication_factor} of {'topic' if len(named) == 1 else 'topics'}"
        f" {shown} needs {c.replication_factor} brokers, one per replica"
    )


def recovery_row(report: SizingReport) -> str:
    """The recovery-time constraint as a row of the constraint table (schema 1.2 and up)."""
    r = report.recovery
    if r is None:
        return ""
    binding = " **← binding**" if report.cluster.binding_constraint == "recovery" else ""
    took = "no room" if r.hours is None else f"{r.hours:g} h"
    return (
        f"| recovery: one broker's data in ≤ {r.target_hours:g} h | "
        f"{r.data_per_broker_gib:,.1f} GiB a broker | {r.rate_mb_s:,.1f} MB/s spare "
        f"({r.limited_by}) → {took} | {r.brokers_needed}{binding} |"
    )


def cost_lines(report: SizingReport) -> list[str]:
    c = report.cost
    if c is None:
        return []
    total = f"{c.total_monthly:,.2f} {c.currency}"
    if not c.complete:
        total += " (parts without a price left out)"
    rows = [
        f"| {p.part} | {'—' if p.monthly is None else f'{p.monthly:,.2f}'} | {p.detail} |"
        for p in c.parts
    ]
    return [
        "",
        f"Monthly cost of the brokers at the horizon: **{total}**; "
        f"{c.cross_zone_gb_month:,.0f} GB a month cross zones. Prices: {c.prices_source}.",
        "",
        f"| part | {c.currency} a month | from |",
        "| --- | ---: | --- |",
        *rows,
    ]


def comparison_lines(report: SizingReport) -> list[str]:
    choice = report.profile_choice
    if choice is None:
        return []
    resources = ["disk writes", "network in", "network out", "cpu", "storage"]
    rows = []
    for cand in sorted(choice.candidates, key=lambda c: (c.monthly_cost is None, c.monthly_cost)):
        used = " | ".join(
            f"{cand.utilisation[r]:.0%}" if r in cand.utilisation else "—" for r in resources
        )
        cost = "—" if cand.monthly_cost is None else f"{cand.monthly_cost:,.2f}"
        name = f"**{cand.profile}**" if cand.profile == choice.chosen else cand.profile
        rows.append(
            f"| {name} | {cand.brokers or '—'} | {cand.binding_constraint or '—'} | {used} | "
            f"{cost} | {cand.note} |"
        )
    return [
        "",
        f"Profile: **{choice.chosen}** (`--profile auto`), {choice.reason}.",
        "",
        "| profile | brokers | binding | disk | net in | net out | cpu | storage | a month "
        "| note |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        *rows,
    ]
