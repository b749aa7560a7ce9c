"""A byte stream cut into large pieces that each end where a record ends, so that each piece
parses on its own and errors can be placed by counting the rows of the pieces before."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

# Bytes read at a time: about 400,000 rows of two numbers. Larger pieces gain nothing
# measurable and cost memory (the text, its columns and the results are held at once).
CHUNK_BYTES = 16 << 20

# The longest record (a row, or the header) read: what has no line end by then is refused, so
# that a file with no line ends (/dev/zero) or a quote never closed cannot take all memory.
RECORD_BYTES = 64 << 20

BOM = b"\xef\xbb\xbf"


class RecordTooLong(Exception):
    """RECORD_BYTES read with no end of a record among them; its text says how many."""

    def __init__(self, limit: int):
        super().__init__(f"{limit >> 20} MB" if limit >= 1 << 20 else f"{limit} bytes")


class Chunks:
    """Pieces of `stream` that end at a record's end: a newline, outside quotes when `quoted`
    (CSV: a quote inside a quoted field is doubled, so a newline ends a record where the
    quotes before it are even in number). `bytes_read` counts what has been read."""

    def __init__(self, stream: BinaryIO, quoted: bool):
        self.stream = stream
        self.quoted = quoted
        self.bytes_read = 0
        self._rest = b""
        self._first = True

    def read(self) -> bytes:
        """The next piece: b"" at the end. Raises RecordTooLong when the record that the
        piece would start with is longer than RECORD_BYTES."""
        data = self._rest
        while True:
            more = self.stream.read(CHUNK_BYTES)
            self.bytes_read += len(more)
            if self._first:
                more = more.removeprefix(BOM)
                self._first = False
            data += more
            if not more:  # the end: what is left, a last record with no line end
                self._rest = b""
                return data
            cut = self._last_end(data)
            if cut:
                self._rest = data[cut:]
                return data[:cut]
            if len(data) > RECORD_BYTES:
                raise RecordTooLong(RECORD_BYTES)

    def __iter__(self) -> Iterator[bytes]:
        while piece := self.read():
            yield piece

    def unread(self, data: bytes) -> None:
        """Put `data` back before the rest (the rows after a header)."""
        self._rest = data + self._rest

    def _last_end(self, data: bytes) -> int:
        """Where the last complete record in `data` ends (0: none does)."""
        if not self.quoted or b'"' not in data:
            return data.rfind(b"\n") + 1
        raw = np.frombuffer(data, dtype=np.uint8)
        newlines = np.flatnonzero(raw == 10)
        quotes_before = np.searchsorted(np.flatnonzero(raw == 34), newlines)
        ends = newlines[quotes_before % 2 == 0]
        return int(ends[-1]) + 1 if ends.size else 0


def first_record(chunks: Chunks) -> bytes:
    """The first record that is not blank (the header), without its line end; b"" if none.
    What follows it stays in `chunks`."""
    while piece := chunks.read():
        start = position = quotes = 0
        # Line by line, counting quotes: a newline inside quotes ends no record.
        while (end := piece.find(b"\n", position)) >= 0:
            quotes += piece.count(b'"', position, end)
            position = end + 1
            if quotes % 2:
                continue
            record = piece[start:end].rstrip(b"\r")
            if record.strip():
                chunks.unread(piece[end + 1 :])
                return record
            start = end + 1
        if piece[start:].strip():  # the last record, with no line end
            return piece[start:].rstrip(b"\r")
    return b""
