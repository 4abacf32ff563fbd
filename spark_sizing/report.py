"""The sizing report people read: Markdown for pull requests, self-contained HTML with charts.

Pure functions from the `SizingReport` (and the monthly series) to text; no Spark here. Charts
are in spark_sizing/charts.py.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from spark_sizing.allocatable import SIDECAR_CPU, SIDECAR_MEMORY_GIB, SIDECARS_PER_KAFKA_POD
from spark_sizing.charts import TOP_TOPICS, MonthTotal, charts
from spark_sizing.contract import ResourceUtilisation, SizingReport
from spark_sizing.report_sections import (
    binding_detail,
    comparison_lines,
    cost_lines,
    recovery_row,
)

CONSTRAINT_LABELS = {
    "ingress": "ingress (disk writes, network in)",
    "egress": "egress (replication + consumers)",
    "cpu": "cpu (broker traffic per vCPU)",
    "storage": "storage",
    "recovery": "recovery (re-replicating one broker)",
    "partitions": "partition replicas",
    "minimum": "minimum (3 and RF)",
}
# The constraint each resource counts towards.
RESOURCE_CONSTRAINT = {
    "disk writes": "ingress",
    "network in": "ingress",
    "network out": "egress",
    "cpu": "cpu",
    "storage": "storage",
    "partition replicas": "partitions",
}


def _amount(value: float, unit: str) -> str:
    if unit == "replicas":
        return f"{value:,.0f}"
    return f"{value:,.1f} {unit}"


def _limit(u: ResourceUtilisation, zones: int) -> str:
    if u.zone_down_limit == u.target or zones == 1:
        return f"{_amount(u.capacity_per_broker, u.unit)} × {u.target:.0%}"
    return (
        f"{_amount(u.capacity_per_broker, u.unit)} × {u.target:.0%} "
        f"({u.zone_down_limit:.0%} with a zone down)"
    )


def _constraint_rows(report: SizingReport) -> list[str]:
    """Each constraint with its real figure: total load, what one broker may take, brokers."""
    c = report.cluster
    if not report.utilisation:  # a sizing.json from before schema 1.1
        return [
            f"| {CONSTRAINT_LABELS.get(name, name)} | | | {count}"
            f"{' **← binding**' if name == c.binding_constraint else ''} |"
            for name, count in sorted(c.constraints.items(), key=lambda kv: -kv[1])
        ]
    rows: list[tuple[int, str]] = []
    marked = False
    for u in sorted(report.utilisation, key=lambda u: -u.brokers_needed):
        constraint = RESOURCE_CONSTRAINT.get(u.resource, u.resource)
        binding = constraint == c.binding_constraint and not marked
        binding = binding and u.brokers_needed == c.constraints.get(constraint)
        marked = marked or binding
        label = u.resource if constraint == u.resource else f"{constraint}: {u.resource}"
        rows.append(
            (
                u.brokers_needed,
                f"| {label} | {_amount(u.per_broker * c.brokers, u.unit)} | "
                f"{_limit(u, c.zones)} | {u.brokers_needed}"
                f"{' **← binding**' if binding else ''} |",
            )
        )
    if report.recovery is not None:
        rows.append((report.recovery.brokers_needed, recovery_row(report)))
    # Most brokers first; a stable sort keeps the resources' order among equals.
    lines = [text for _, text in sorted(rows, key=lambda row: -row[0])]
    minimum = c.constraints.get("minimum", 3)
    mark = " **← binding**" if c.binding_constraint == "minimum" else ""
    lines.append(f"| minimum (3 and the highest RF) | | | {minimum}{mark} |")
    return lines


def _percent(value: float | None, load: float | None, unit: str) -> str:
    if value is None or load is None:
        return "—"
    return f"{_amount(load, unit)} ({value:.0%})"


def _utilisation_rows(report: SizingReport) -> list[str]:
    return [
        f"| {u.resource} | {_amount(u.capacity_per_broker, u.unit)} | "
        f"{_percent(u.utilisation, u.per_broker, u.unit)} | "
        f"{_percent(u.zone_down_utilisation, u.zone_down_per_broker, u.unit)} |"
        for u in report.utilisation
    ]


def _assumption_rows(report: SizingReport) -> list[str]:
    p = report.parameters
    zones = int(p.get("zones") or report.cluster.zones)
    share = f"{zones - 1}/{zones} of the brokers left with one down" if zones > 1 else "one"
    multiple = p.get("partition_multiple")
    rounding = (
        "as needed, no rounding"
        if multiple in (1, None)
        else "a multiple of the broker count"
        if multiple == "brokers"
        else f"a multiple of {multiple}"
    )
    rows = {
        "profile": str(p.get("profile", report.cluster.profile)),
        "horizon": f"{p.get('horizon_months')} months of growth past the last period",
        "zones": f"{zones} ({share})",
        "target utilisation": f"{_pct(p.get('target_utilisation'))} normally, "
        f"{_pct(p.get('zone_down_utilisation'))} with one zone down",
        "retention headroom": f"disks {_pct(p.get('disk_fill_target'))} full at the horizon, "
        f"+{_pct(p.get('storage_overhead'))} for segments and indexes",
        "peak": f"{p.get('peak_factor')} × average where no peak is given",
        "partitions": f"peak ÷ {p.get('producer_mb_s_per_partition')} MB/s (producers), "
        f"÷ {p.get('consumer_mb_s_per_partition')} MB/s (consumers), ≥ consumers per group; "
        f"{rounding}",
        "cpu": f"{_pct(p.get('cpu_target'))} of a broker's vCPUs normally; " + _cpu_figure(report),
        "recovery": f"one lost broker's data re-replicated within {p.get('recovery_hours')} h, "
        + (
            f"throttled to {_number(p.get('recovery_mb_s'))} MB/s"
            if p.get("recovery_mb_s")
            else f"at the disk and network room under {_pct(p.get('zone_down_utilisation'))}"
        ),
        "cross-zone": f"follower fetching serves {_pct(p.get('follower_fetching_share'))} of "
        "consumer bytes in-zone",
        "routers": f"{_number(p.get('router_capacity_mb_s'))} MB/s per replica at "
        f"{_pct(p.get('router_target_utilisation'))}; "
        f"{_pct(p.get('router_external_share'))} of client traffic external",
    }
    return [f"| {name} | {value} |" for name, value in rows.items()]


def _fill_row(report: SizingReport) -> list[str]:
    """How full the provisioned disks are at the horizon (the storage chart shows the way there)."""
    storage = next((u for u in report.utilisation if u.resource == "storage"), None)
    provisioned = report.cluster.storage_per_broker_gib
    if storage is None or provisioned <= 0:
        return []
    return [
        f"| disk fill at the horizon | {storage.per_broker:,.1f} of {provisioned:,.1f} GiB "
        f"a broker ({storage.per_broker / provisioned:.0%}) |"
    ]


def _broker_row(report: SizingReport) -> str:
    """A broker's request and where it comes from: what its node leaves after the daemon sets
    and the pod's sidecars (a sizing.json before schema 1.1 has no node figures)."""
    b, n = report.cluster.broker, report.cluster.node
    row = f"| broker | {b.cpu:g} vCPU, {b.memory_gib:g} GiB (heap {b.heap_gib:g} GiB)"
    if n is None:
        return f"{row} |"
    return (
        f"{row}: the node's {n.allocatable_cpu:g} vCPU, {n.allocatable_memory_gib:g} GiB "
        f"allocatable less daemon sets ({n.daemonset_cpu:g} vCPU, {n.daemonset_memory_gib:g} GiB) "
        f"and the pod's {SIDECARS_PER_KAFKA_POD} sidecars "
        f"({SIDECARS_PER_KAFKA_POD * SIDECAR_CPU:g} vCPU, "
        f"{SIDECARS_PER_KAFKA_POD * SIDECAR_MEMORY_GIB:g} GiB), rounded down |"
    )


def _cpu_figure(report: SizingReport) -> str:
    """What one vCPU carries, as the utilisation table implies it (capacity is in vCPUs)."""
    cpu = next((u for u in report.utilisation if u.resource == "cpu"), None)
    network = [u for u in report.utilisation if u.resource in ("network in", "network out")]
    if cpu is None or not cpu.per_broker or len(network) != 2:
        return "CPU not modelled (sizing.json before schema 1.2)"
    mb_s_per_vcpu = sum(u.per_broker for u in network) / cpu.per_broker
    return f"one vCPU carries {mb_s_per_vcpu:,.1f} MB/s of broker traffic (the profile's figure)"


def _profile_lines(report: SizingReport) -> list[str]:
    """The hardware figures the counts rest on: measured ones say when and where."""
    if not report.profile_figures:  # a sizing.json from before schema 1.2
        return []
    measured = [f for f in report.profile_figures if f.measured]
    summary = (
        f"Profile figures: {len(measured)} measured ({', '.join(f.field for f in measured)}), "
        "the rest documented."
        if measured
        else "Profile figures: all documented, none measured (`kafkastack calibrate`)."
    )
    rows = [
        f"| {f.field} | {_number(f.value)} {f.unit} | "
        f"{'**measured**' if f.measured else 'documented'} | {f.source} |"
        for f in report.profile_figures
    ]
    return [
        "",
        summary,
        "",
        "| figure | value | kind | source |",
        "| --- | ---: | --- | --- |",
        *rows,
    ]


def _number(value: object) -> str:
    return f"{value:,g}" if isinstance(value, int | float) else "—"


def _pct(value: object) -> str:
    return f"{value:.0%}" if isinstance(value, int | float) else "—"


def _top_topics(report: SizingReport) -> list[str]:
    top = sorted(report.topics, key=lambda t: -t.peak_ingress_mb_s)[:TOP_TOPICS]
    return [
        f"| {t.topic} | {t.peak_ingress_mb_s:,.2f} | {t.peak_egress_mb_s:,.2f} | "
        f"{t.partitions}{' (pinned)' if t.partitions_pinned else ''} | {t.storage_gib:,.1f} |"
        for t in top
    ]


def _detail(text: str | None) -> str:
    return f": {text}" if text else ""


def _zone_loss_line(report: SizingReport) -> str:
    z = report.zone_loss
    if z is None:
        return ""
    verdict = "survived" if z.writes_survive else "**not survived**"
    return f"Zone loss: {verdict}: {z.detail}."


def markdown(report: SizingReport) -> str:
    """Short enough for a pull-request comment: the decision, why, and what was rejected."""
    c = report.cluster
    survivors = c.brokers - max(c.brokers_per_zone) if c.zones > 1 else c.brokers
    lines = [
        f"## Kafka sizing: {c.brokers} brokers × {c.profile} over {c.zones} zones",
        "",
        f"Binding constraint: **{c.binding_constraint}**{_detail(binding_detail(report))} "
        f"(brokers per zone: {', '.join(str(n) for n in c.brokers_per_zone)}). "
        f"{_zone_loss_line(report)}",
        "",
        "| constraint | load | per broker | brokers needed |",
        "| --- | ---: | ---: | ---: |",
        *_constraint_rows(report),
    ]
    if report.utilisation:
        lines += [
            "",
            f"Per broker at {c.brokers} brokers ({survivors} left with one zone down):",
            "",
            "| resource | capacity | normally | one zone down |",
            "| --- | ---: | ---: | ---: |",
            *_utilisation_rows(report),
        ]
    lines += [
        "",
        "| assumption | value |",
        "| --- | --- |",
        *_assumption_rows(report),
        *_profile_lines(report),
        "",
        "| figure | value |",
        "| --- | ---: |",
        f"| peak ingress (clients) | {c.peak_ingress_mb_s:,.2f} MB/s |",
        f"| peak consumer egress | {c.peak_egress_mb_s:,.2f} MB/s |",
        f"| replication traffic | {c.replication_mb_s:,.2f} MB/s |",
        f"| storage per broker | {c.storage_per_broker_gib:,.1f} GiB × "
        f"{c.data_volumes_per_broker} volume(s) |",
        f"| partition replicas | {c.partitions_total:,} |",
        *_fill_row(report),
        _broker_row(report),
        f"| storage class | {c.storage_class.type}, {c.storage_class.iops:,} IOPS, "
        f"{c.storage_class.throughput_mb_s:,.0f} MB/s |",
        f"| metadata quorum | {c.quorum.kind} × {c.quorum.nodes} |",
        f"| routers | {c.router.replicas} for {c.router.client_mb_s:,.1f} MB/s of external "
        "clients |",
        *cost_lines(report),
        *comparison_lines(report),
        "",
        f"Top {min(TOP_TOPICS, len(report.topics))} of {len(report.topics)} topics by peak in:",
        "",
        "| topic | peak in MB/s | peak out MB/s | partitions | storage GiB |",
        "| --- | ---: | ---: | ---: | ---: |",
        *_top_topics(report),
        "",
        f"Input rows: {report.inputs.rows_read:,} read, {report.inputs.rows_accepted:,} accepted, "
        f"{report.inputs.rows_rejected:,} rejected "
        f"({report.inputs.duplicates_dropped:,} duplicates) — see `rejected.csv`.",
    ]
    if report.warnings:
        lines += ["", "**Warnings**", "", *[f"- {w}" for w in report.warnings]]
    return "\n".join(lines) + "\n"


def html_report(report: SizingReport, months: Sequence[MonthTotal]) -> str:
    """One file, no external assets: charts are inline PNGs, the tables come from the Markdown."""
    images = "\n".join(
        f'<img alt="chart" src="data:image/png;base64,{c}">' for c in charts(report, months)
    )
    body = _markdown_tables_to_html(markdown(report))
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>kafkastack sizing</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.2em .6em}"
        "img{max-width:100%;display:block;margin:1em 0}</style></head><body>"
        f"{body}\n<h2>Charts</h2>\n{images}\n"
        f"<p><small>schema {report.schema_version}, generated {report.generated_at}</small></p>"
        "</body></html>\n"
    )


def _markdown_tables_to_html(text: str) -> str:
    """Just enough Markdown for our own report: headings, tables, bullets, paragraphs."""
    out: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        if table:
            head, *rows = table
            out.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in head) + "</tr>")
            out.extend("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
            out.append("</table>")
            table.clear()

    for line in text.splitlines():
        cells = [html.escape(c.strip().replace("**", "")) for c in line.strip("|").split("|")]
        if line.startswith("|"):
            if not set(line) <= set("|-: "):
                table.append(cells)
            continue
        flush()
        escaped = html.escape(line).replace("**", "")
        if line.startswith("## "):
            out.append(f"<h1>{escaped[3:]}</h1>")
        elif line.startswith("- "):
            out.append(f"<li>{escaped[2:]}</li>")
        elif line:
            out.append(f"<p>{escaped}</p>")
    flush()
    return "\n".join(out)
