"""The sizing report people read: Markdown for pull requests, self-contained HTML with charts.

Pure functions from the `SizingReport` (and the monthly series) to text; no Spark here.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import matplotlib
import numpy as np

matplotlib.use("Agg")  # no display: charts are rendered to PNG bytes
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from spark_sizing.contract import SizingReport

TOP_TOPICS = 10
CONSTRAINT_LABELS = {
    "ingress": "ingress (disk writes, network in)",
    "egress": "egress (replication + consumers)",
    "storage": "storage",
    "partitions": "partition replicas",
    "minimum": "minimum (3 and RF)",
}


@dataclass(frozen=True)
class MonthTotal:
    month: datetime
    avg_ingress_mb_s: float
    peak_ingress_mb_s: float
    peak_egress_mb_s: float


def _constraint_rows(report: SizingReport) -> list[str]:
    c = report.cluster
    rows = []
    for name, count in sorted(c.constraints.items(), key=lambda kv: -kv[1]):
        mark = " **← binding**" if name == c.binding_constraint else ""
        rows.append(f"| {CONSTRAINT_LABELS.get(name, name)} | {count}{mark} |")
    return rows


def _top_topics(report: SizingReport) -> list[str]:
    top = sorted(report.topics, key=lambda t: -t.peak_ingress_mb_s)[:TOP_TOPICS]
    return [
        f"| {t.topic} | {t.peak_ingress_mb_s:,.2f} | {t.peak_egress_mb_s:,.2f} | "
        f"{t.partitions}{' (pinned)' if t.partitions_pinned else ''} | {t.storage_gib:,.1f} |"
        for t in top
    ]


def markdown(report: SizingReport) -> str:
    """Short enough for a pull-request comment: the decision, why, and what was rejected."""
    c = report.cluster
    lines = [
        f"## Kafka sizing: {c.brokers} brokers × {c.profile} over {c.zones} zones",
        "",
        f"Binding constraint: **{c.binding_constraint}** "
        f"(brokers per zone: {', '.join(str(n) for n in c.brokers_per_zone)}; peak must still fit "
        "with one zone down).",
        "",
        "| constraint | brokers needed |",
        "| --- | ---: |",
        *_constraint_rows(report),
        "",
        "| figure | value |",
        "| --- | ---: |",
        f"| peak ingress (clients) | {c.peak_ingress_mb_s:,.2f} MB/s |",
        f"| peak consumer egress | {c.peak_egress_mb_s:,.2f} MB/s |",
        f"| replication traffic | {c.replication_mb_s:,.2f} MB/s |",
        f"| storage per broker | {c.storage_per_broker_gib:,.1f} GiB × "
        f"{c.data_volumes_per_broker} volume(s) |",
        f"| partition replicas | {c.partitions_total:,} |",
        f"| broker | {c.broker.cpu:g} vCPU, {c.broker.memory_gib:g} GiB (heap "
        f"{c.broker.heap_gib:g} GiB) |",
        f"| storage class | {c.storage_class.type}, {c.storage_class.iops:,} IOPS, "
        f"{c.storage_class.throughput_mb_s:,.0f} MB/s |",
        f"| metadata quorum | {c.quorum.kind} × {c.quorum.nodes} |",
        f"| routers | {c.router.replicas} for {c.router.client_mb_s:,.1f} MB/s of clients |",
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


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _capacity_mb_s(report: SizingReport, per_broker_network_mb_s: float) -> float:
    """Client ingress the cluster carries at target utilisation with one zone down."""
    c = report.cluster
    surviving = c.brokers * (c.zones - 1) / c.zones if c.zones > 1 else c.brokers
    # Each client MB/s costs (RF−1) replication + consumer fan-out on the network out side.
    fan_out = (c.replication_mb_s + c.peak_egress_mb_s) / max(c.peak_ingress_mb_s, 1e-9)
    return surviving * per_broker_network_mb_s * 0.5 / max(fan_out, 1.0)


def _horizon(report: SizingReport, last_month: np.datetime64) -> np.datetime64:
    """The month the projection is for: the last observed month plus the horizon."""
    months = int(report.parameters.get("horizon_months") or 0)
    return np.datetime64(last_month.astype("datetime64[M]") + np.timedelta64(months, "M"), "s")


def traffic_chart(report: SizingReport, months: Sequence[MonthTotal], network_mb_s: float) -> str:
    fig, ax = plt.subplots(figsize=(8, 3.5))
    x = np.array([m.month for m in months], dtype="datetime64[s]")
    ax.plot(x, [m.avg_ingress_mb_s for m in months], label="ingress (avg)")
    ax.plot(x, [m.peak_ingress_mb_s for m in months], label="ingress (peak)")
    ax.plot(x, [m.peak_egress_mb_s for m in months], label="consumer egress (peak)")
    if len(x):
        ax.scatter(
            [_horizon(report, x[-1])],
            [report.cluster.peak_ingress_mb_s],
            marker="*",
            s=120,
            label="projected peak ingress at horizon",
            zorder=3,
        )
    ax.axhline(
        _capacity_mb_s(report, network_mb_s),
        color="red",
        linestyle="--",
        label="cluster client-ingress capacity (one zone down)",
    )
    ax.set_ylabel("MB/s")
    ax.set_title("Projected traffic against cluster capacity")
    ax.legend(fontsize=7)
    fig.autofmt_xdate()
    return _png(fig)


def constraint_chart(report: SizingReport) -> str:
    fig, ax = plt.subplots(figsize=(6, 3))
    names = list(report.cluster.constraints)
    colours = ["tab:red" if n == report.cluster.binding_constraint else "tab:blue" for n in names]
    ax.barh(names, [report.cluster.constraints[n] for n in names], color=colours)
    ax.set_xlabel("brokers needed")
    ax.set_title("Broker count per constraint (red: binding)")
    return _png(fig)


def storage_chart(report: SizingReport, months: Sequence[MonthTotal]) -> str:
    """Storage the cluster holds at each month's average ingress (retention-weighted)."""
    total_now = sum(t.storage_gib for t in report.topics)
    peak_now = max(report.cluster.peak_ingress_mb_s, 1e-9)
    fig, ax = plt.subplots(figsize=(8, 3))
    x = np.array([m.month for m in months], dtype="datetime64[s]")
    # Storage scales with ingress; the last point is the projected total at the horizon.
    ax.plot(x, [total_now * m.peak_ingress_mb_s / peak_now for m in months], label="stored (GiB)")
    capacity = report.cluster.storage_per_broker_gib * report.cluster.brokers
    ax.axhline(capacity, color="red", linestyle="--", label="provisioned (GiB)")
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


def html_report(report: SizingReport, months: Sequence[MonthTotal], network_mb_s: float) -> str:
    """One file, no external assets: charts are inline PNGs, the tables come from the Markdown."""
    charts = [
        traffic_chart(report, months, network_mb_s),
        constraint_chart(report),
        storage_chart(report, months),
        topics_chart(report),
    ]
    images = "\n".join(f'<img alt="chart" src="data:image/png;base64,{c}">' for c in charts)
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
