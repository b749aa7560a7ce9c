"""Progress displays on standard error (standard output carries the results), erased when
they stop. Rich is imported only when a display is made."""

from __future__ import annotations

import os
import stat
import threading
import time
from typing import IO, TYPE_CHECKING, final

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn


def _display(*columns: ProgressColumn, color: bool) -> Progress:
    """A display on standard error, in colour with `color` (where NO_COLOR is not set)."""
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True, no_color=None if color else True)
    return Progress(*columns, console=console, transient=True)


# How often a display takes a new figure: Rich redraws ten times a second, and a step of a
# descent may take a microsecond, far less than handing Rich its figures does.
EVERY = 0.05  # seconds


@final  # (so `progress and progress.update` is the method or None, for mypy)
class StepsProgress:
    """`minimize`: a bar of steps with the current loss, the time taken and the time left."""

    def __init__(self, total: int, color: bool = True):
        from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.bar = _display(
            TextColumn("step {task.completed}/{task.total}"),
            BarColumn(),
            TextColumn("loss {task.fields[loss]}"),
            TimeElapsedColumn(),
            TextColumn("elapsed,"),
            TimeRemainingColumn(),
            TextColumn("left"),
            color=color,
        )
        self.task = self.bar.add_task("minimize", total=total, loss="…")
        self.shown = 0.0
        self.bar.start()

    def update(self, step: int, loss: float) -> None:
        now = time.monotonic()
        if now - self.shown >= EVERY:  # by time, not by steps: smooth, however long a step
            self.shown = now
            self.bar.update(self.task, completed=step, loss=f"{loss:.6g}")

    def stop(self) -> None:
        self.bar.stop()


@final
class FitProgress:
    """`fit`: the evaluations made so far, the residual sum of squares at the last, and the
    time taken (a fit has no known end)."""

    def __init__(self, color: bool = True) -> None:
        from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

        self.bar = _display(
            SpinnerColumn(),
            TextColumn("evaluation {task.completed}  RSS {task.fields[rss]}"),
            TimeElapsedColumn(),
            color=color,
        )
        self.task = self.bar.add_task("fit", total=None, rss="…")
        self.bar.start()

    def update(self, evaluations: int, rss: float) -> None:
        self.bar.update(self.task, completed=evaluations, rss=f"{rss:.6g}")

    def stop(self) -> None:
        self.bar.stop()


def regular_file_size(stream: IO) -> int | None:
    """The size in bytes of the file behind `stream`, or None for a pipe or a terminal."""
    status = os.fstat(stream.fileno())
    return status.st_size if stat.S_ISREG(status.st_mode) else None


class RowsProgress:
    """`grad --points`, and the reading of `--data`: shown only once a run has taken a second
    and read a row. The rows done, the rate, the time taken and, when the input's size is
    known (bytes of a text file, rows of Parquet or Arrow), a bar and the time left; else a
    spinner. Shown at that second even while the next rows are slow to come (a pipe), with
    the count of the last batch. `label` says what is read, before the rest."""

    DELAY = 1.0

    def __init__(
        self,
        total_bytes: int | None = None,
        total_rows: int | None = None,
        label: str = "",
        color: bool = True,
    ):
        self.total_bytes, self.total_rows, self.label = total_bytes, total_rows, label
        self.color = color
        self.started = time.monotonic()
        self.bar: Progress | None = None
        self.done = (0, 0, self.started)  # rows, bytes, and when
        self.stopped = False
        self.lock = threading.Lock()
        self.timer = threading.Timer(self.DELAY, self._show)
        self.timer.daemon = True
        self.timer.start()

    def update(self, rows: int, bytes_read: int) -> None:
        now = time.monotonic()
        with self.lock:
            self.done = (rows, bytes_read, now)
            if self.bar is None and now - self.started >= self.DELAY:
                self._start()
            if self.bar is not None:
                self._refresh(self.bar)

    def _show(self) -> None:
        """At DELAY: the display, if rows have been read and the run goes on."""
        with self.lock:
            if self.bar is None and self.done[0] and not self.stopped:
                self._refresh(self._start())

    def _refresh(self, bar: Progress) -> None:
        rows, bytes_read, at = self.done
        elapsed = at - self.started
        done = rows if self.total_rows else bytes_read if self.total_bytes else rows
        total = self.total_rows or self.total_bytes
        rate = f"{rows / elapsed:,.0f}" if elapsed > 0 else "…"
        # From the whole run's average: Rich's own estimate needs more updates than a run of
        # a few large batches makes.
        left = elapsed * (total - done) / done if total and done else None
        shown = f"{_clock(elapsed)} elapsed" + ("" if left is None else f", {_clock(left)} left")
        bar.update(self.task, completed=done, rows=rows, rate=rate, left=shown)

    def _start(self) -> Progress:
        from rich.progress import BarColumn, SpinnerColumn, TaskProgressColumn, TextColumn

        total = self.total_rows or self.total_bytes
        rows = TextColumn("{task.fields[rows]:,} rows, {task.fields[rate]} rows/s")
        times = TextColumn("{task.fields[left]}")
        columns: tuple[ProgressColumn, ...]
        if total:
            columns = (BarColumn(), TaskProgressColumn(), rows, times)
        else:
            columns = (SpinnerColumn(), rows, times)
        if self.label:
            columns = (TextColumn("{task.fields[label]}", markup=False), *columns)
        self.bar = bar = _display(*columns, color=self.color)
        self.task = bar.add_task(
            "points", total=total or None, rows=0, rate="…", left="", label=self.label
        )
        bar.start()
        return bar

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            self.timer.cancel()
            if self.bar is not None:
                self.bar.stop()


def _clock(seconds: float) -> str:
    """A time as H:MM:SS."""
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02}:{whole % 60:02}"
