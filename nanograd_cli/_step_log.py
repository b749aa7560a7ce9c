"""`minimize --log FILE`: the step, loss and gradient norm at each point of a descent, as CSV,
kept as the descent goes in an unnamed temporary file (which nothing can leave behind: not
Ctrl-C, not a kill) and written to FILE, whole, when the descent has run."""

from __future__ import annotations

import shutil
import tempfile

from ._output_files import OutputFile
from .errors import NanogradError, printable

HEADER = "step,loss,gradient_norm\n"


class StepLog:
    """The log of a descent for `path`: `record` a row a point, then `commit` (or
    `discard`)."""

    def __init__(self, path: str):
        self.path = path
        try:
            self.rows = tempfile.TemporaryFile()
        except OSError as error:
            raise NanogradError(f"cannot write {printable(path)}: {error.strerror}") from None
        self._write(HEADER)

    def record(self, step: int, loss: float, norm: float) -> None:
        """One row: the steps taken, the loss and the gradient's norm, in full precision."""
        self._write(f"{step},{loss!r},{norm!r}\n")

    def commit(self) -> None:
        """Write the rows to the log's file, whole or not at all."""
        try:
            with OutputFile(self.path) as output:
                self.rows.seek(0)
                try:
                    shutil.copyfileobj(self.rows, output.file)
                except BrokenPipeError:  # a stream's reader went away: as for standard output
                    raise
                except OSError as error:
                    raise NanogradError(
                        f"cannot write {printable(self.path)}: {error.strerror}"
                    ) from None
        finally:
            self.discard()

    def discard(self) -> None:
        self.rows.close()

    def _write(self, text: str) -> None:
        try:
            self.rows.write(text.encode())
        except OSError as error:
            self.discard()
            raise NanogradError(f"cannot write {printable(self.path)}: {error.strerror}") from None
