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
        # After the name: state(3) ppid(4) pgrp(5) … utime(14) stime(15), 1-based in proc(5).
        if int(fields[2]) in groups:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")
