"""Progress lines for the sizing job's long stages (rich, on stderr)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn


class Stages:
    """Rich progress lines for the long stages; silent when disabled (tests, benchmarks)."""

    def __init__(self, enabled: bool) -> None:
        self._progress = (
            Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            if enabled
            else None
        )

    @contextmanager
    def stage(self, description: str) -> Iterator[None]:
        if self._progress is None:
            yield
            return
        task = self._progress.add_task(description, total=1)
        yield
        self._progress.update(task, completed=1)

    def __enter__(self) -> Stages:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._progress is not None:
            self._progress.stop()
