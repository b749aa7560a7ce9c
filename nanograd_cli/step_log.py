"""`minimize --log FILE`: the step, loss and gradient norm at each point of a descent, as CSV,
written as the descent goes and put in place when it has run (a run that fails before its
first step leaves no file)."""

from __future__ import annotations

from .errors import NanogradError, printable
from .output_files import OutputFile

HEADER = "step,loss,gradient_norm\n"


class StepLog:
    """The log file being written to `path`: `record` a row a point, then `commit` (or
    `discard`)."""

    def __init__(self, path: str):
        self.path = path
        self.output = OutputFile(path)
        self._write(HEADER)

    def record(self, step: int, loss: float, norm: float) -> None:
        """One row: the steps taken, the loss and the gradient's norm, in full precision."""
        self._write(f"{step},{loss!r},{norm!r}\n")

    def commit(self) -> None:
        self.output.commit()

    def discard(self) -> None:
        self.output.discard()

    def _write(self, text: str) -> None:
        try:
            self.output.file.write(text.encode())
        except BrokenPipeError:  # a stream's reader went away: as for standard output
            raise
        except OSError as error:
            self.discard()
            raise NanogradError(f"cannot write {printable(self.path)}: {error.strerror}") from None
