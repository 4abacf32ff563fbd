"""CPU time the started processes really used, from /proc (Linux): what a broker burns for the
traffic it carries, whatever the machine's other tenants do with the remaining cores."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

PROC = Path("/proc")


def _stat_fields(stat: str) -> list[str]:
    # The command name (field 2) is in parentheses and may hold spaces: split after its ")".
    return stat[stat.rindex(")") + 2 :].split()


def _ticks(fields: list[str]) -> int:
    # After the name: state(3) ppid(4) pgrp(5) … utime(14) stime(15), 1-based in proc(5).
    return int(fields[11]) + int(fields[12])


def group_cpu_seconds(process_groups: Iterable[int], proc: Path = PROC) -> float:
    """User + system CPU seconds of every live process in these process groups (each started
    process leads a group of its own: `sh`, the mount script, then `java`)."""
    groups = set(process_groups)
    ticks = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat_fields((entry / "stat").read_text())
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue  # exited while we looked
        if int(fields[2]) in groups:
            ticks += _ticks(fields)
    return ticks / os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int, proc: Path = PROC) -> float | None:
    """User + system CPU seconds of one process so far; None once it has exited."""
    try:
        fields = _stat_fields((proc / str(pid) / "stat").read_text())
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return None
    return _ticks(fields) / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds(proc: Path = PROC) -> float:
    """CPU seconds every core spent on anything but idling since boot (/proc/stat's first line:
    user nice system idle iowait irq softirq steal)."""
    fields = [int(f) for f in (proc / "stat").read_text().splitlines()[0].split()[1:9]]
    return (sum(fields) - fields[3]) / os.sysconf("SC_CLK_TCK")
