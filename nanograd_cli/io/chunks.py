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
            # Only the record the data starts with can be long: each read before this one
            # ended inside it (a record that ends in the last read is shorter than a read).
            if len(data) > RECORD_BYTES and self._first_end(data, at_end=not more) > RECORD_BYTES:
                raise RecordTooLong(RECORD_BYTES)
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
        ends = self._quoted_ends(data)
        return int(ends[-1]) + 1 if ends.size else 0

    def _first_end(self, data: bytes, at_end: bool) -> int:
        """The length of the first record in `data`, without its line end: all of `data` if
        no record ends in it (`at_end`: the stream has ended, else at least that)."""
        if not self.quoted or b'"' not in data:
            ends = [
                e for e in (data.find(b"\n"), data.find(b"\r") if self.quoted else -1) if e >= 0
            ]
        else:
            ends = self._quoted_ends(data)[:1].tolist()
        return min(ends) if ends else len(data) + (0 if at_end else 1)

    @staticmethod
    def _quoted_ends(data: bytes) -> np.ndarray:
        """The offsets of the line ends in CSV `data` that are outside quotes."""
        raw = np.frombuffer(data, dtype=np.uint8)
        newlines = np.flatnonzero((raw == 10) | (raw == 13))
        quotes_before = np.searchsorted(np.flatnonzero(raw == 34), newlines)
        return newlines[quotes_before % 2 == 0]


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
