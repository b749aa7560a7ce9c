"""A byte stream cut into large pieces that each end where a record ends, so that each piece
parses on its own and errors can be placed by counting the rows of the pieces before."""

from __future__ import annotations

import re
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


class QuoteNeverClosed(Exception):
    """The stream ended inside a quoted field; `before` is the text of the piece before the
    record where that quote opened."""

    def __init__(self, before: bytes):
        super().__init__("a quote is never closed")
        self.before = before


# What a quote that opens a quoted field (or doubles one inside it) follows.
OPENERS = (b"", b",", b"\n", b"\r", b'"')

# A CSV line end: LF, CRLF, or CR alone (as classic Mac OS wrote them; Arrow reads all three).
LINE_END = re.compile(rb"\r\n?|\n")


class Chunks:
    """Pieces of `stream` that end at a record's end: a newline or, when `quoted` (CSV), a
    newline or carriage return outside quotes (a quote inside a quoted field is doubled, so a
    line end ends a record where the quotes before it are even in number). `bytes_read`
    counts what has been read."""

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
                last = data.rfind(b'"')
                # The last quote opened a field that the end of the file leaves open; unless
                # it follows text (ab"c), which a lenient reader takes for a quote in the text.
                if self.quoted and data.count(b'"') % 2 and data[last - 1 : last] in OPENERS:
                    raise QuoteNeverClosed(data[: self._last_end(data[:last])])
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
        if not self.quoted:
            return data.rfind(b"\n") + 1
        if b'"' not in data:
            newline = data.rfind(b"\n")
            return max(newline, data.rfind(b"\r", newline + 1)) + 1
        raw = np.frombuffer(data, dtype=np.uint8)
        newlines = np.flatnonzero((raw == 10) | (raw == 13))
        quotes_before = np.searchsorted(np.flatnonzero(raw == 34), newlines)
        ends = newlines[quotes_before % 2 == 0]
        return int(ends[-1]) + 1 if ends.size else 0


def first_record(chunks: Chunks) -> bytes:
    """The first record that is not blank (the header), without its line end; b"" if none.
    What follows it stays in `chunks`."""
    while piece := chunks.read():
        start = position = quotes = 0
        # Line by line, counting quotes: a line end inside quotes ends no record.
        for end in LINE_END.finditer(piece):
            quotes += piece.count(b'"', position, end.start())
            position = end.end()
            if quotes % 2:
                continue
            record = piece[start : end.start()]
            if record.strip():
                chunks.unread(piece[end.end() :])
                return record
            start = end.end()
        if piece[start:].strip():  # the last record, with no line end
            return piece[start:]
    return b""
