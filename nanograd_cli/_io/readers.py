"""Readers of points: each gives the columns' names before any row is read, then the rows as
Arrow tables of at most BATCH_ROWS rows, with `first_row` counting rows from 1 and
`bytes_read` / `rows_read` saying how far it has got."""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from .._output_files import reading
from ..errors import InputError, NanogradError, file_name, option, printable
from .chunks import (
    BOM,
    CHUNK_BYTES,
    RECORD_BYTES,
    Chunks,
    QuoteNeverClosed,
    RecordTooLong,
    first_record,
)
from .numbers import to_numpy

# The csv module, which reads the header and finds a bad row, refuses a field over 128 KB by
# default; a record is at most RECORD_BYTES (longer ones are refused before), so is a field.
csv.field_size_limit(max(csv.field_size_limit(), RECORD_BYTES))

# Rows handed on at a time from the formats that store them in batches of their own.
BATCH_ROWS = 1 << 18

PARQUET_MAGIC = b"PAR1"  # the first bytes of a Parquet file (and its last)


class Reader:
    """What every reader has: `columns`, `total_bytes` or `total_rows` when known (for a
    progress bar), and batches of rows. What cannot be read is an error naming `name`."""

    name = "standard input"
    columns: list[str]
    schema: pa.Schema  # the columns' types
    total_bytes: int | None = None
    total_rows: int | None = None
    rows_read = 0
    close_file: Callable[[], None] | None = None  # closes the file the reader opened

    @property
    def bytes_read(self) -> int:
        return 0

    def tables(self) -> Iterator[pa.Table]:
        raise NotImplementedError

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc) -> None:
        closing = getattr(self, "close_file", None)
        if closing:
            closing()

    def __iter__(self) -> Iterator[tuple[int, pa.Table]]:
        """(number of the first row, its rows) per batch."""
        tables = self.tables()
        while True:
            try:
                table = next(tables, None)
            except (pa.ArrowException, OSError) as error:
                if _damaged(error):
                    raise InputError(f"cannot read {self.name}: {_reason(error)}") from None
                raise NanogradError(f"cannot read {self.name}: {error.strerror}") from None
            if table is None:
                return
            for start in range(0, table.num_rows, BATCH_ROWS):
                # The length given exactly: a table of no columns is not cut at its end.
                part = table.slice(start, min(BATCH_ROWS, table.num_rows - start))
                first = self.rows_read + 1
                self.rows_read += part.num_rows
                yield first, part


class CsvReader(Reader):
    """CSV with a header: quoted fields (with commas, quotes and newlines inside), a UTF-8
    BOM, CRLF line ends and blank lines are all read as RFC 4180 and Arrow read them. Every
    column is read as text: an input column is made numbers by `numbers.floats`, any other
    passes through as it was written."""

    delimiter = ","

    def __init__(self, stream: BinaryIO, total_bytes: int | None):
        self.chunks = Chunks(stream, quoted=True)
        self.total_bytes = total_bytes
        try:
            header = first_record(self.chunks)
        except RecordTooLong as error:
            raise _too_long(error, None, quoted=True) from None
        except QuoteNeverClosed as error:
            # The header is the first record read: a quote it did not open is a row's.
            raise _never_closed(_records(error.before) - 1) from None
        if not header:
            raise InputError(f"{option('points')}: the first line must name the columns, e.g. x,y")
        self.legacy = False  # read as Windows-1252 (`legacy_text`), not UTF-8
        try:
            text = header.decode("utf-8")
        except UnicodeDecodeError:
            from . import BINARY_FORMATS

            known = [(f, k) for magic, f, k in BINARY_FORMATS if header.startswith(magic)]
            hint = "".join(f": it is {kind} file: give its format, {fmt}" for fmt, kind in known)
            if header.startswith(UTF16_BOMS):
                hint = ": it is UTF-16 or UTF-32 text (its first bytes say so): save it as UTF-8"
            if hint:
                raise InputError(
                    f"{option('points')}: the header is not valid UTF-8{hint}"
                ) from None
            text, self.legacy = legacy_text(header), True
        if "\0" in text:  # UTF-16 without its byte order mark, or UTF-32
            raise InputError(
                f"{option('points')}: the header has NUL bytes: it is UTF-16 or UTF-32 text, or "
                "no text: save it as UTF-8"
            )
        # "x, y": the space after a comma is no part of a name
        fields = csv.reader([text], delimiter=self.delimiter)
        self.columns = [n.strip() for n in next(fields)]
        self.schema = pa.schema([(n, pa.string()) for n in self.columns])

    @property
    def bytes_read(self) -> int:
        return self.chunks.bytes_read

    def tables(self) -> Iterator[pa.Table]:
        import pyarrow.csv as pcsv

        read = pcsv.ReadOptions(column_names=self.columns)
        convert = pcsv.ConvertOptions(
            column_types=dict.fromkeys(self.columns, pa.string()),
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        )
        for piece in _pieces(self, quoted=True):
            piece = _blank_lines_emptied(piece)
            if self.legacy:
                piece = utf8_lines(piece)
            # Newlines may be inside quotes only if there are quotes: the faster parse if not.
            parse = pcsv.ParseOptions(delimiter=self.delimiter, newlines_in_values=b'"' in piece)
            try:
                try:
                    table = pcsv.read_csv(pa.py_buffer(piece), read, parse, convert)
                except pa.ArrowInvalid as error:
                    if "straddl" in str(error):
                        # A row longer than Arrow's block (1 MB): the piece as one block.
                        whole = pcsv.ReadOptions(
                            column_names=self.columns, block_size=len(piece) + 1
                        )
                        table = pcsv.read_csv(pa.py_buffer(piece), whole, parse, convert)
                    elif "UTF8" in str(error) and not self.legacy and not _utf8(piece):
                        # a row of Windows-1252 text: so may others be
                        self.legacy = True
                        piece = utf8_lines(piece)
                        table = pcsv.read_csv(pa.py_buffer(piece), read, parse, convert)
                    else:
                        raise
            except pa.ArrowInvalid as error:
                raise self._bad_row(piece, error) from None
            yield table

    def _bad_row(self, piece: bytes, error: Exception) -> InputError:
        """Which row of `piece` Arrow could not read, found with the csv module."""
        width = len(self.columns)
        text = io.StringIO(piece.decode("utf-8", "surrogateescape"), newline="")
        rows = csv.reader(text, delimiter=self.delimiter)
        row = self.rows_read
        for fields in rows:
            if not fields:  # a blank line
                continue
            row += 1
            where = f"{option('points')} row {row}"
            if len(fields) != width:
                plural = "" if len(fields) == 1 else "s"
                return InputError(f"{where} has {len(fields)} field{plural}, the header {width}")
            if any(_undecodable(field) for field in fields):
                return InputError(f"{where} is not valid UTF-8")
        return InputError(f"{option('points')} rows after {self.rows_read}: {error}")


# The byte order marks of UTF-16 text, little- and big-endian (Excel's "Unicode Text"),
# which UTF-32's begin with too.
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def legacy_text(data: bytes) -> str:
    """Text that is not UTF-8 read as Windows-1252, what Excel on Windows saves as CSV and a
    superset of Latin-1's printable characters (`°C`, `µs`, `Müller`); its five unassigned
    bytes as Latin-1 reads them."""
    return data.decode("cp1252", errors="latin1_fallback")


def _latin1_fallback(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    return error.object[error.start : error.end].decode("latin-1"), error.end


codecs.register_error("latin1_fallback", _latin1_fallback)


def utf8_lines(data: bytes) -> bytes:
    """`data` with each line that is not UTF-8 read as Windows-1252 (`legacy_text`) and
    written in UTF-8, the others as they are: a file of UTF-8 rows with one from Excel keeps
    its Müller."""
    lines = data.split(b"\n")
    return b"\n".join(line if _utf8(line) else legacy_text(line).encode() for line in lines)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class TsvReader(CsvReader):
    """Tab-separated values with a header, as pandas' `to_csv(sep="\\t")` writes them: CSV
    with tabs between the fields (quoted fields too)."""

    delimiter = "\t"


def _pieces(reader: CsvReader | JsonLinesReader, quoted: bool) -> Iterator[bytes]:
    """The pieces of `reader.chunks`, a record too long an error naming its row."""
    while True:
        try:
            piece = reader.chunks.read()
        except RecordTooLong as error:
            raise _too_long(error, reader.rows_read + 1, quoted) from None
        except QuoteNeverClosed as error:
            raise _never_closed(reader.rows_read + _records(error.before)) from None
        if not piece:
            return
        yield piece


def _too_long(error: RecordTooLong, row: int | None, quoted: bool) -> InputError:
    what = ": the header" if row is None else f" row {row}"
    cause = "no line end, or a quote never closed" if quoted else "no line end"
    return InputError(f"{option('points')}{what} is longer than {error} ({cause}?)")


def _never_closed(rows_before: int) -> InputError:
    """The file ends inside quotes that the row after `rows_before` rows opened (-1: the
    header)."""
    what = ": the header" if rows_before < 0 else f" row {rows_before + 1}"
    return InputError(f"{option('points')}{what} opens a quote that is never closed")


# A line of spaces and tabs only, outside quotes a blank line, as an empty one is. Lines end
# with LF or CRLF, or CR alone in a file that has no LF.
SPACES_LINE = re.compile(rb"(?m)^[ \t]+(?=\r?$)")
SPACES_LINE_CR = re.compile(rb"(?:(?<=\r)|\A)[ \t]+(?=\r|\Z)")


def _blank_lines_emptied(piece: bytes) -> bytes:
    """CSV `piece` with each line of only spaces and tabs (outside quotes) made empty, so that
    it is a blank line, which Arrow and the csv module skip, and not a row of one field."""
    ends = (b"\n", b"\r") if b"\n" not in piece else (b"\n",)
    if not piece.startswith((b" ", b"\t")) and not any(
        end + space in piece for end in ends for space in (b" ", b"\t")
    ):
        return piece  # the common case, found at the speed of a search for two bytes
    pattern = SPACES_LINE if b"\n" in piece else SPACES_LINE_CR
    spans = [m.span() for m in pattern.finditer(piece)]
    if spans and b'"' in piece:  # only those outside quotes
        quotes = np.flatnonzero(np.frombuffer(piece, dtype=np.uint8) == ord('"'))
        before = np.searchsorted(quotes, [start for start, _ in spans])
        spans = [span for span, n in zip(spans, before, strict=True) if n % 2 == 0]
    if not spans:
        return piece
    kept, position = [], 0
    for start, end in spans:
        kept.append(piece[position:start])
        position = end
    kept.append(piece[position:])
    return b"".join(kept)


def _records(text: bytes) -> int:
    """The records in CSV `text` that are not blank lines."""
    text = _blank_lines_emptied(text)
    lines = io.StringIO(text.decode("utf-8", "surrogateescape"), newline="")
    return sum(1 for fields in csv.reader(lines) if fields)


def _undecodable(text: str) -> bool:
    return any("\udc80" <= c <= "\udcff" for c in text)


class JsonLinesReader(Reader):
    """JSON Lines: one object per line, its keys the columns (in the order first seen). A
    number that overflows a float (1e400) is bad input; "nan", "inf" and "-inf" (strings, as
    JSON has no such numbers, and as nanograd writes them) are read as those values.

    PyArrow's JSON reader reads the rows, ten times faster than Python's `json` a line at a
    time; a piece of rows it cannot read, or reads otherwise than as one object per line, is
    read again with `json`, which names the row at fault or (numbers and text mixed in a
    column) makes that column text."""

    def __init__(self, stream: BinaryIO, total_bytes: int | None):
        self.chunks = Chunks(stream, quoted=False)
        self.total_bytes = total_bytes
        self._named: list[str] | None = None  # the columns of the first rows, once read
        self._pieces = _pieces(self, quoted=False)
        tables = (self._table(piece) for piece in self._pieces)
        self._first = next((t for t in tables if t is not None), None)
        self.columns = self._named = self._named or []
        self.schema = self._first.schema if self._first is not None else pa.schema([])

    @property
    def bytes_read(self) -> int:
        return self.chunks.bytes_read

    def tables(self) -> Iterator[pa.Table]:
        if self._first is None:
            return
        yield self._first
        for piece in self._pieces:
            table = self._table(piece)
            if table is not None:
                yield table

    def _table(self, piece: bytes) -> pa.Table | None:
        """The rows of `piece` in the columns of the first rows; None if there are none."""
        import pyarrow.json as pj

        deep = too_deep(piece)
        if deep is not None:
            before = sum(1 for line in piece[:deep].split(b"\n") if line.strip())
            row = self.rows_read + before + 1
            raise InputError(f"{option('points')} row {row} is nested more than {MAX_NESTING} deep")
        text = piece.strip()
        if not text:
            return None
        if text.startswith(b"null"):  # PyArrow's reader crashes on a first row null
            return self._table_of(self._rows(piece))
        # Rows as lines: those neither blank nor null, which PyArrow would take for a row.
        rows = text.count(b"\n") + 1 - len(SKIPPED.findall(text))
        try:
            # One block: a row is never cut in two, however long.
            options = pj.ReadOptions(block_size=len(text) + 1)
            table = pj.read_json(pa.BufferReader(text), read_options=options)
            table.validate(full=True)  # text that is not UTF-8, lists PyArrow got wrong
        except (pa.ArrowException, UnicodeDecodeError):
            return self._table_of(self._rows(piece))
        named = self._named
        known = set(table.column_names if named is None else named)
        if (
            table.num_rows != rows  # a null row, or two objects on a line
            or any(n not in known for n in table.column_names)  # a key not seen at first
            or any(_infinite(c) for c in table.columns)  # 1e400: PyArrow reads inf
        ):
            return self._table_of(self._rows(piece))
        if named is None:
            self._named = table.column_names
            return table
        present = set(table.column_names)
        if len(present) == len(named):
            return table.select(named)  # in the first rows' order
        columns = [table[n] if n in present else pa.nulls(table.num_rows) for n in named]
        return pa.Table.from_arrays(columns, names=named)

    def _rows(self, piece: bytes) -> list[dict]:
        rows: list[dict] = []
        for line in piece.split(b"\n"):
            if not line.strip():
                continue
            where = f"{option('points')} row {self.rows_read + len(rows) + 1}"
            try:
                row = json.loads(
                    line, object_pairs_hook=_object, parse_float=_float, parse_int=_int
                )
            except (ValueError, _Duplicate, _Overflow) as error:
                raise InputError(f"{where}: {_json_problem(error)}") from None
            if not isinstance(row, dict):
                raise InputError(f"{where} is not a JSON object")
            if b"\\u" in line and not _encodable(row):
                raise InputError(f"{where}: not valid Unicode (a \\u escape of half a character)")
            rows.append(row)
        return rows

    def _table_of(self, rows: list[dict]) -> pa.Table | None:
        if not rows:
            return None
        if self._named is None:
            self._named = list(dict.fromkeys(k for row in rows for k in row))
        named = self._named
        known = set(named)
        new = next((k for row in rows for k in row if k not in known), None)
        if new is not None:
            row = next(n for n, r in enumerate(rows, self.rows_read + 1) if new in r)
            raise InputError(f"{option('points')} row {row} has a key {new} that no row before had")
        if not named:  # rows of no keys: {}
            return pa.table({"": pa.nulls(len(rows))}).select([])
        columns = [_column([row.get(name) for row in rows]) for name in named]
        return pa.Table.from_arrays(columns, names=named)


# The deepest nesting of lists and objects in a row of JSON Lines. Parsers recurse on it:
# Python's `json` runs out of stack at about 1,000, PyArrow's reader crashes at 100,000.
MAX_NESTING = 100


def too_deep(piece: bytes) -> int | None:
    """Where in `piece`, lines of JSON, a line is first nested more than MAX_NESTING deep (the
    offset of its start), or None. Brackets in strings do not count."""
    raw = np.frombuffer(piece, dtype=np.uint8)
    openers = np.flatnonzero((raw == ord("[")) | (raw == ord("{")))
    if openers.size <= MAX_NESTING:
        return None
    # No line nests deeper than it has openers: only a line with more is looked at closely.
    ends = np.append(np.flatnonzero(raw == ord("\n")), len(piece))
    counts = np.diff(np.searchsorted(openers, ends), prepend=0)
    for k in np.flatnonzero(counts > MAX_NESTING):
        start = int(ends[k - 1]) + 1 if k else 0
        if _depth(piece[start : int(ends[k])]) > MAX_NESTING:
            return start
    return None


# A JSON string, its escapes included (a string never closed is left as it is).
STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
BLOCK = 1 << 20


def _depth(line: bytes) -> int:
    """The deepest nesting of brackets in one line of JSON, outside strings."""
    code = np.frombuffer(STRING.sub(b'""', line), dtype=np.uint8)
    opening = (code == ord("[")) | (code == ord("{"))
    closing = (code == ord("]")) | (code == ord("}"))
    steps = opening.astype(np.int8) - closing.astype(np.int8)
    steps = steps[opening | closing]
    deepest = depth = 0
    for start in range(0, len(steps), BLOCK):  # in blocks: a 64 MB line of [ is 64 M steps
        running = np.cumsum(steps[start : start + BLOCK], dtype=np.int64) + depth
        deepest = max(deepest, int(running.max()))
        depth = int(running[-1])
    return deepest


class JsonArrayReader(JsonLinesReader):
    """A JSON array of objects, as pandas' `to_json(orient="records")` and most JSON tools
    write a table: its objects are the rows, read and checked as JSON Lines rows are (keys in
    the order first seen, "nan" and "inf" as numbers, 1e400 bad input). The array is read an
    object at a time, so memory stays bounded however long it is."""

    def __init__(self, stream: BinaryIO, total_bytes: int | None):
        self.stream = stream
        self.total_bytes = total_bytes
        self._bytes = 0
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()  # a BOM is dropped
        self._named = None
        self._batches = (self._table_of(rows) for rows in self._parsed())
        self._first = next((t for t in self._batches if t is not None), None)
        self.columns = self._named = self._named or []
        self.schema = self._first.schema if self._first is not None else pa.schema([])

    @property
    def bytes_read(self) -> int:
        return self._bytes

    def tables(self) -> Iterator[pa.Table]:
        if self._first is None:
            return
        yield self._first
        yield from (table for table in self._batches if table is not None)

    def _parsed(self) -> Iterator[list[dict]]:
        """The array's objects, ARRAY_ROWS at a time."""
        decoder = json.JSONDecoder(object_pairs_hook=_object, parse_float=_float, parse_int=_int)
        text, at = self._next("", 0)
        text, at = self._next(text, at + 1)  # past the "[" that chose this reader
        rows: list[dict] = []
        number = 0  # the rows parsed
        while True:
            if at == len(text):
                raise InputError(f"{option('points')}: the JSON array is never closed with ]")
            if text[at] == "]":
                break
            if number:
                if text[at] != ",":
                    raise InputError(
                        f"{option('points')}: after row {number}, ',' or ']' is expected"
                    )
                text, at = self._next(text, at + 1)
            where = f"{option('points')} row {number + 1}"
            while True:
                try:
                    row, end = decoder.raw_decode(text, at)
                    break
                except json.JSONDecodeError as error:
                    # The object may go on in what is not read yet.
                    text, at, more = self._more(text, at)
                    if not more:
                        raise InputError(f"{where}: {_json_problem(error)}") from None
                    if len(text) > RECORD_BYTES:
                        limit = RecordTooLong(RECORD_BYTES)
                        raise InputError(f"{where} is longer than {limit}") from None
                except (_Duplicate, _Overflow) as error:
                    raise InputError(f"{where}: {error}") from None
            if not isinstance(row, dict):
                raise InputError(f"{where} is not a JSON object")
            if "\\u" in text[at:end] and not _encodable(row):
                raise InputError(f"{where}: not valid Unicode (a \\u escape of half a character)")
            rows.append(row)
            number += 1
            if len(rows) == ARRAY_ROWS:
                yield rows
                rows = []
            text, at = self._next(text, end)
        text, at = self._next(text, at + 1)
        if at < len(text):
            raise InputError(f"{option('points')}: there is text after the JSON array's closing ]")
        if rows:
            yield rows

    def _next(self, text: str, at: int) -> tuple[str, int]:
        """`text` and where its next character that is no JSON whitespace is, reading more of
        the stream as needed; at the end of the stream, `at` is len(text)."""
        while True:
            while at < len(text) and text[at] in " \t\n\r":
                at += 1
            if at < len(text):
                return text, at
            text, at, more = self._more(text, at)
            if not more:
                return text, at

    def _more(self, text: str, at: int) -> tuple[str, int, bool]:
        """What is left of `text` from `at` on, with the next piece of the stream after it, and
        whether there was more to read."""
        data = self.stream.read(ARRAY_BYTES)
        self._bytes += len(data)
        try:
            text = text[at:] + self._decoder.decode(data, final=not data)
        except UnicodeDecodeError:
            raise InputError(f"{option('points')}: the JSON is not valid UTF-8") from None
        return text, 0, bool(data)


# Rows of a JSON array handed on at a time, and the bytes read from it at a time.
ARRAY_ROWS = 1 << 16
ARRAY_BYTES = 1 << 20


# A line end before a blank line or one that starts with null.
SKIPPED = re.compile(rb"\n(?=[ \t\r]*(?:\n|null))")


def _infinite(column) -> bool:
    """Whether a column holds inf, in lists and objects too: JSON has no such number, so PyArrow
    read one that overflows (1e400) so."""
    kind = column.type
    if isinstance(column, pa.ChunkedArray):
        return any(_infinite(chunk) for chunk in column.chunks)
    if pa.types.is_floating(kind):
        if column.null_count:
            import pyarrow.compute as pc

            return bool(pc.any(pc.is_inf(column)).as_py())
        return bool(np.isinf(to_numpy(column)).any())
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _infinite(column.flatten())
    if pa.types.is_struct(kind):
        return any(_infinite(field) for field in column.flatten())
    return False


def _column(values: list) -> pa.Array:
    """Values that `json` read as a column, typed as PyArrow's JSON reader types them (no
    pa.array: it imports pandas, half a second). Numbers and text mixed ("inf" among numbers),
    or values PyArrow reads wrongly, make a column of text: numbers.floats reads numbers in it,
    and other values are JSON."""
    import pyarrow.json as pj

    try:
        column = pj.read_json(_one_key(values)).column(0)
        column.validate(full=True)
        return column
    except pa.ArrowException:
        text = pj.ParseOptions(explicit_schema=pa.schema([("v", pa.string())]))
        return pj.read_json(_one_key(map(_as_text, values)), parse_options=text).column(0)


def _one_key(values) -> pa.BufferReader:
    return pa.BufferReader("".join(f'{{"v": {json.dumps(v)}}}\n' for v in values).encode())


class _Duplicate(ValueError):
    pass


class _Overflow(ValueError):
    pass


def named_twice(option: str, twice: str) -> str:
    """The message for a header that names the column `twice` twice; where that is half of
    a matrix element's name split at its comma (W[0,0] unquoted in CSV), how to write it."""
    message = f"{option}: the header names the column {twice} twice"
    array, bracket, rest = twice.partition("[")
    if bracket and "]" not in rest:
        message += f'; a name with a comma is quoted in CSV: "{array}[0,0]"'
    return message


def first_repeated(names: Iterable[str], seen: set[str] | None = None) -> str | None:
    """The first name that comes a second time, if any (looked up in a set: a table may have
    100,000 columns). `seen` gets the names before it (all of them, if none repeats)."""
    seen = set() if seen is None else seen
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def one_column_header(columns: list[str], needed: Iterable[str], name: str) -> str | None:
    """Where the header is one column of names between tabs, semicolons or bars, among them
    one that is `needed`: the message that says so, for the table of option `name`."""
    parts = re.split(r"[\t;|]", columns[0]) if len(columns) == 1 else []
    if len(parts) < 2 or set(needed).isdisjoint(parts):
        return None
    header, tsv = printable(columns[0]), option(f"{name}_format", "tsv")
    if "\t" in columns[0]:
        return (
            f"{option(name)}: its header '{header}' is one column, the names between tabs: "
            f"for TSV, give {tsv}"
        )
    separator = ";" if ";" in columns[0] else "|"
    return (
        f"{option(name)}: its header '{header}' is one column, the names between "
        f"{separator!r}: CSV has commas between them (or tabs, with {tsv})"
    )


def _object(pairs: list[tuple[str, object]]) -> dict:
    row = dict(pairs)
    if len(row) != len(pairs):
        twice = first_repeated(k for k, _ in pairs)
        raise _Duplicate(f"the key {twice} appears twice")
    return row


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Overflow(f"{text} is too large for a float")
    return value


def _int(text: str) -> int:
    value = int(text)
    if abs(value) > sys.float_info.max:
        raise _Overflow(f"{text} is too large for a float")
    return value


def _encodable(row: dict) -> bool:
    """Whether a row's text is all characters: "\\ud800" is half of one, a lone surrogate."""
    try:
        json.dumps(row, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_problem(error: Exception) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"not JSON ({error.msg}, column {error.colno})"
    if isinstance(error, UnicodeDecodeError):
        return "not valid UTF-8"
    return str(error)


def _as_text(value) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(float(value))
    return json.dumps(value)


class ParquetReader(Reader):
    """Parquet, a row group at a time."""

    def __init__(self, source):
        import pyarrow.parquet as pq

        self.file = pq.ParquetFile(source)
        self.schema = self.file.schema_arrow
        self.columns = self.schema.names
        self.total_rows = self.file.metadata.num_rows

    def tables(self) -> Iterator[pa.Table]:
        for batch in self.file.iter_batches(batch_size=BATCH_ROWS):
            yield pa.Table.from_batches([batch])


class ArrowReader(Reader):
    """Arrow IPC: the file format (Feather 2) or the stream format, batch by batch."""

    def __init__(self, source, file_format: bool):
        import pyarrow.ipc as ipc

        if file_format:
            self.file = ipc.open_file(source)
            self.schema = self.file.schema
            # From the batches' headers only; PyArrow before 26 cannot count them without
            # reading every batch: then the progress display shows no total.
            count = getattr(self.file, "count_rows", None)
            self.total_rows = count() if count else None
        else:
            self.file = None
            self.stream = ipc.open_stream(source)
            self.schema = self.stream.schema
        self.columns = self.schema.names

    def tables(self) -> Iterator[pa.Table]:
        if self.file is not None:
            batches = (self.file.get_batch(i) for i in range(self.file.num_record_batches))
        else:
            batches = iter(self.stream)
        for batch in batches:
            yield pa.Table.from_batches([batch])


def open_points(path: str, fmt: str) -> Reader:
    """A reader of the points in `path` (`-`: standard input) in the format `fmt`; use it in
    a `with` block, which closes the file."""
    stdin = path == "-"
    name = "standard input" if stdin else printable(path)
    try:
        stream = sys.stdin.buffer if stdin else open(file_name(path), "rb")
        reading(stream)
    except OSError as error:
        raise NanogradError(f"cannot read {name}: {error.strerror}") from None
    try:
        reader = _reader(stream, fmt, stdin, path)
    except BaseException:
        if not stdin:
            stream.close()
        raise
    reader.name = name
    if not stdin:
        reader.close_file = stream.close
    return reader


def _reader(stream, fmt: str, stdin: bool, path: str) -> Reader:
    from ..render._progress import regular_file_size

    name = "standard input" if stdin else printable(path)
    try:
        if fmt in TEXT_READERS:
            try:
                size = regular_file_size(stream)
            except (OSError, ValueError):  # a stream with no file behind it
                size = None
            if fmt in ("jsonl", "json") and _starts_with_array(stream):
                return JsonArrayReader(stream, size)
            return TEXT_READERS[fmt](stream, size)
        # a pipe (standard input, `<(...)`, a named pipe) is read once, from the stream open
        piped = stdin or not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
        try:
            if fmt == "parquet":
                # Parquet is read from its end: all of a pipe is needed first, if it starts as
                # Parquet does (not so /dev/zero). A file is read by Arrow itself, five times
                # faster than through a Python file (and, unlike a memory map, what has been
                # read does not stay resident).
                if not piped:
                    return ParquetReader(pa.OSFile(path))
                if not _starts_with(stream, PARQUET_MAGIC):
                    raise InputError(f"{option('points')} {name} is not a Parquet file")
                return ParquetReader(pa.BufferReader(read_whole(stream, "Parquet")))
            file_format = _starts_with(stream, b"ARROW1")
            if file_format and piped:
                whole = read_whole(stream, "the Arrow file format")
                return ArrowReader(pa.BufferReader(whole), file_format)
            return ArrowReader(stream if piped else pa.OSFile(path), file_format)
        except (pa.ArrowException, OSError) as error:
            if not _damaged(error):
                raise
            what = "a Parquet file" if fmt == "parquet" else "Arrow IPC (Feather)"
            raise InputError(f"{option('points')} {name} is not {what}: {_reason(error)}") from None
    except OSError as error:
        raise NanogradError(f"cannot read {name}: {error.strerror or error}") from None


# A format read from its end, from a pipe, is held whole: at most this share of the memory
# left, for the bytes read are joined into one buffer and row groups are decoded out of it.
WHOLE_SHARE = 2


def read_whole(stream: BinaryIO, what: str) -> bytes:
    """All of `stream`, read CHUNK_BYTES at a time; refused, with the size read so far, as soon
    as holding it (and as much again) would pass the memory left, so that an endless stream
    (`PAR1` and then /dev/zero) ends in a clear error, not out of memory."""
    from .._memory import available, gigabytes

    chunks, size = [], 0
    while chunk := stream.read(CHUNK_BYTES):
        chunks.append(chunk)
        size += len(chunk)
        left = available()
        if left is not None and WHOLE_SHARE * size > left:
            raise NanogradError(
                f"standard input is at least {size / 1e6:,.0f} MB of {what}, which is read from "
                f"its end, so whole: that needs at least {gigabytes(WHOLE_SHARE * size)} of "
                f"memory, and {gigabytes(left)} is free; give the file's name to "
                f"{option('points')} instead, which is read a batch at a time"
            )
    return b"".join(chunks)


TEXT_READERS: dict[str, type[CsvReader | JsonLinesReader]] = {
    "csv": CsvReader,
    "tsv": TsvReader,
    "jsonl": JsonLinesReader,
    "json": JsonLinesReader,  # an array of objects (read by JsonArrayReader), or JSON Lines
}


def _starts_with_array(stream) -> bool:
    """Whether JSON text in `stream` is an array (a "[" first), leaving the stream where it
    was; else it is read as JSON Lines."""
    if not hasattr(stream, "peek"):
        return False
    start = stream.peek(256)[:256].removeprefix(BOM).lstrip(b" \t\r\n")
    return start.startswith(b"[")


def _damaged(error: Exception) -> bool:
    """Whether Arrow found the bytes read wrong (bad input), rather than the system failing to
    read them: Arrow raises OSError without an errno for a file cut short or garbled."""
    return not isinstance(error, OSError) or error.errno is None


def _reason(error: Exception) -> str:
    return " ".join(str(error).split())  # on one line: Arrow's text may run over several


def _starts_with(stream, magic: bytes) -> bool:
    """Whether `stream` starts with `magic`, leaving it where it was."""
    if hasattr(stream, "peek"):
        return stream.peek(len(magic))[: len(magic)] == magic
    start = stream.tell()
    found = stream.read(len(magic)) == magic
    stream.seek(start)
    return found
