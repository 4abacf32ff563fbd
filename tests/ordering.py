"""Reordering one folder's tests within the slots they already hold in the session, so a
package-scoped fixture's life (a cluster, a deployment) spans only the tests that use it. Only
the order changes; no test may depend on it (each restores or re-creates what it needs)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def order_within(items: list[pytest.Item], folder: Path, group: Callable[[set[str]], int]) -> None:
    """Stable-sort the items under `folder` by `group(their fixture names)`, in place."""
    slots = [i for i, item in enumerate(items) if item.path.is_relative_to(folder)]
    ordered = sorted(
        (items[i] for i in slots), key=lambda item: group(set(getattr(item, "fixturenames", ())))
    )
    for slot, item in zip(slots, ordered, strict=True):
        items[slot] = item
