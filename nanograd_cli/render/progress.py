"""Progress displays on standard error (standard output carries the results), erased when
they stop. Rich is imported only when a display is made."""

from __future__ import annotations

import os
import stat
import time
from typing import IO


def _display(*columns):
    from rich.console import Console
    from rich.progress import Progress

    return Progress(*columns, console=Console(stderr=True), transient=True)


class StepsProgress:
    """`minimize`: a bar of steps with the current loss."""

    def __init__(self, total: int):
        from rich.progress import BarColumn, TextColumn

        self.bar = _display(
            TextColumn("step {task.completed}/{task.total}"),
            BarColumn(),
            TextColumn("loss {task.fields[loss]}"),
        )
        self.task = self.bar.add_task("minimize", total=total, loss="…")
        self.bar.start()

    def update(self, step: int, loss: float) -> None:
        if step % 50 == 0:
            self.bar.update(self.task, completed=step, loss=f"{loss:.6g}")

    def stop(self) -> None:
        self.bar.stop()


def regular_file_size(stream: IO) -> int | None:
    """The size in bytes of the file behind `stream`, or None for a pipe or a terminal."""
    status = os.fstat(stream.fileno())
    return status.st_size if stat.S_ISREG(status.st_mode) else None


class RowsProgress:
    """`grad --points`: shown only once a run has taken a second. A bar with the rows done
    and the time left when the input's size is known (a file), else a spinner counting rows."""

    DELAY = 1.0

    def __init__(self, total_characters: int | None):
        self.total = total_characters
        self.started = time.monotonic()
        self.bar = None

    def update(self, rows: int, characters: int) -> None:
        if self.bar is None:
            if time.monotonic() - self.started < self.DELAY:
                return
            self._start()
        self.bar.update(self.task, completed=characters if self.total else rows, rows=rows)

    def _start(self) -> None:
        from rich.progress import (
            BarColumn,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        rows = TextColumn("{task.fields[rows]:,} rows")
        if self.total:
            columns = (BarColumn(), TaskProgressColumn(), rows, TimeRemainingColumn())
        else:
            columns = (SpinnerColumn(), rows)
        self.bar = _display(*columns)
        self.task = self.bar.add_task("points", total=self.total or None, rows=0)
        self.bar.start()

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
