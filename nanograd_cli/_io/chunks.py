"""A byte stream cut into large pieces that each end where a record ends, so that each piece
parses on its own and errors can be placed by counting the rows of the pieces before."""

from __future__ import annotations

import os
import re
import select
import stat
import time
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

# The seconds a piece waits for more of a slow stream (a pipe that a program writes as it
# goes) before it is cut at the last record read: rows are read, written and counted in the
# progress display as they come, not once CHUNK_BYTES of them have.
PATIENCE = 0.5


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


def _waiting_fd(stream: BinaryIO) -> int | None:
    """The file descriptor of a pipe, socket or terminal behind `stream`, which a read may
    wait on; None for a file or a stream in memory."""
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None
    return fd if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) else None


class Chunks:
    """Pieces of `stream` that end at a record's end: a newline or, when `quoted` (CSV), a
    newline or carriage return outside quotes (a quote inside a quoted field is doubled, so a
    line end ends a record where the quotes before it are even in number). `bytes_read`
    counts what has been read."""

    def __init__(self, stream: BinaryIO, quoted: bool):
        self.stream = stream
        # What a read returns at once: all a file has, up to the size asked, or what a pipe
        # holds, without waiting for more (a stream without read1 waits).
        self._read1 = getattr(stream, "read1", stream.read)
        self._fd = _waiting_fd(stream)
        self.quoted = quoted
        self.bytes_read = 0
        self._rest = b""
        self._first = True

    def read(self) -> bytes:
        """The next piece: b"" at the end. Raises RecordTooLong when the record that the
        piece would start with is longer than RECORD_BYTES. A piece is CHUNK_BYTES or more,
        but for the last, and for one of a slow stream (a pipe), which ends at the last
        record read when PATIENCE seconds have passed or the stream pauses that long."""
        data, parts, fresh = self._rest, [], 0  # fresh: the bytes in parts, read since a look
        deadline = time.monotonic() + PATIENCE
        while True:
            more = None  # None: the stream paused
            if self._ready(deadline - time.monotonic()):
                more = self._read1(CHUNK_BYTES)
                self.bytes_read += len(more)
                if self._first:
                    more = more.removeprefix(BOM)
                    self._first = False
                parts.append(more)
                fresh += len(more)
                if more and fresh < CHUNK_BYTES and time.monotonic() < deadline:
                    continue
            data, parts, fresh = b"".join([data, *parts]), [], 0
            deadline = time.monotonic() + PATIENCE
            # Only the record the data starts with can be long: each look before this one
            # found no end of it.
            at_end = more == b""
            if len(data) > RECORD_BYTES and self._first_end(data, at_end) > RECORD_BYTES:
                raise RecordTooLong(RECORD_BYTES)
            if at_end:  # what is left, a last record with no line end
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

    def _ready(self, seconds: float) -> bool:
        """Whether the stream has more to read (or its end) within `seconds`; a file has."""
        if self._fd is None:
            return True
        return bool(select.select([self._fd], [], [], max(seconds, 0.0))[0])

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
