"""A plain table printed while its rows still come (`grad --each-line` in a pipe)."""

from __future__ import annotations

from collections.abc import Callable

from ._text import aligned, column_widths

# Rows held to set the columns' widths before the first is printed: enough to align a
# typical run, few enough that `| head` sees output at once on an endless input.
BLOCK = 100


class StreamingTable:
    """Rows of cells printed as `plain_table` aligns them, without holding them all: the
    header and the first `block` rows are aligned together and printed; each later row is
    printed as it comes, in those columns (a longer cell widens its column from then on)."""

    def __init__(self, write: Callable[[str], None], block: int = BLOCK):
        self.write, self.block = write, block
        self.held: list[list[str]] = []
        self.widths: list[int] | None = None

    def add(self, header: list[str], cells: list[str]) -> None:
        """Add a row; `header` is the table's, used when it is the first."""
        if self.widths is not None:
            self.widths = [max(w, len(c)) for w, c in zip(self.widths, cells, strict=True)]
            self.write(aligned(cells, self.widths))
            return
        self.held = self.held or [header]
        self.held.append(cells)
        if len(self.held) > self.block:
            self.flush()

    def flush(self) -> None:
        """Print the rows held (at the end of the input, or once `block` are)."""
        if self.widths is None and self.held:
            self.widths = column_widths(self.held)
            self.write("\n".join(aligned(row, self.widths) for row in self.held))
            self.held = []
