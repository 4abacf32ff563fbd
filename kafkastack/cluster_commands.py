"""Commands of this area (placeholder until the area lands)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
