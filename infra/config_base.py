"""The base of every stack config section: frozen, and strict about unknown keys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    # extra="forbid": a typo in a key is refused rather than silently ignored.
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
