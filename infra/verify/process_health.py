"""What the kafka tier's servers looked like when a proof failed: the report a failing test of
that tier carries (tests/failure_reports.py). CI keeps only a failed run's output, and the
servers' logs live in pytest's temporary folders, gone with the machine: a proof that failed
once (the ZooKeeper module, 2026-11-28) could not be explained afterwards."""

from __future__ import annotations

import re
from collections.abc import Iterable

from infra.verify.processes import Node

# Log lines worth the report: what went wrong, and the ZooKeeper states an election passes.
TELLING = re.compile(r"\b(ERROR|WARN|FATAL)\b|Exception|LOOKING|FOLLOWING|LEADING")
LINES_PER_NODE = 8
LINE_CHARS = 300


def state(node: Node) -> str:
    if node.process is None:
        return "stopped"
    code = node.process.poll()
    return "running" if code is None else f"exited with code {code}"


def diagnosis(nodes: Iterable[Node]) -> str:
    """A line per node (its state), then its last telling log lines since it last started."""
    lines: list[str] = []
    for node in nodes:
        lines.append(f"{node.name}: {state(node)}, log {node.log}")
        telling = [
            line[:LINE_CHARS]
            for line in node.log_since_start().splitlines()
            if TELLING.search(line)
        ]
        lines += [f"  {line}" for line in telling[-LINES_PER_NODE:]]
    return "\n".join(lines)
