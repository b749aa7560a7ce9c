"""Writers of results, a batch of rows at a time: every column that was read (inputs and
any others, passed through), then `value` and `d_NAME` per gradient shown (for several outputs,
each one's value and `du/dx`: `results.result_names`). JSON Lines rows have the single-point
shape, `{"value", "inputs", "gradients"}` (or `{"values", "inputs", "jacobian"}`), after the
passed-through columns, or flat (`--flat`) those columns as keys; JSON writes the same objects
as an array.

Text is made a column at a time with Arrow's compute functions, never a row at a time in
Python: numbers by `numbers.float_text`, rows by joining the columns' text."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
import pyarrow as pa

from ..errors import InputError, option
from ..results import result_names
from .numbers import float_text, join, literal, text_array, to_arrow, to_numpy

if TYPE_CHECKING:
    import pyarrow.parquet as pq


class Writer:
    """Rows to `sink` (a binary file). `columns` are those read, `inputs` which of them are
    inputs, `shown` the inputs whose gradients are written, `outputs` the names of a source's
    several outputs (none for one result). `named`, instead, names the columns that the
    results add, each one number per row (fit's `fitted` and `residual`)."""

    def __init__(self, sink: BinaryIO, columns, inputs, shown, outputs=(), named=None):
        self.sink = sink
        self.columns = list(columns)
        self.inputs = set(inputs)
        self.shown = list(shown)
        self.outputs = list(outputs)
        self.named = named

    def added(self) -> list[str]:
        """The names of the columns (or keys) this format adds to those read."""
        return self.named or result_names(self.outputs, self.shown)

    def kept(self) -> list[str]:
        """The columns read that are written as they were."""
        return self.columns

    def write(self, batch) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        """After a failure: write nothing more."""

    def close(self, schema: pa.Schema) -> None:
        """After the last batch; `schema`: the columns read (what an output of no rows has)."""


class CsvWriter(Writer):
    """CSV (or TSV, with tabs): the header once, then the rows; a text column is written as it
    was read."""

    header_written = False
    delimiter = ","

    def write(self, batch) -> None:
        table = batch.table
        texts = [
            _csv_text(table.column(i), name, self.delimiter, batch.inputs.get(name))
            for i, name in enumerate(table.column_names)
        ]
        texts += [csv_numbers(values) for values in batch.results]
        self._header()
        _write_lines(self.sink, texts, self.delimiter)

    def close(self, schema: pa.Schema) -> None:
        self._header()

    def _header(self) -> None:
        if not self.header_written:
            line = io.StringIO()
            header = csv.writer(line, delimiter=self.delimiter, lineterminator="\n")
            header.writerow([*self.columns, *self.added()])
            self.sink.write(line.getvalue().encode())
            self.header_written = True


class TsvWriter(CsvWriter):
    """TSV: CSV with tabs between the fields, as pandas' `read_csv(sep="\\t")` reads it."""

    delimiter = "\t"


class JsonLinesWriter(Writer):
    """JSON Lines: per row, the passed-through columns, then `value`, `inputs` (every input,
    those given on the command line too) and `gradients`, as `grad --format json` writes one
    point. With `flat` (`--flat`), or `named` columns (fit's rows), the keys are the CSV's
    columns instead (those read, then those the results add), so that a reader of JSON Lines
    gets the same flat table; inputs are written as the numbers read from them. Non-finite
    numbers are the strings "nan", "inf" and "-inf", or with `null` (`--nan null`) null (what
    pandas, polars, Arrow and DuckDB read as a missing number)."""

    def __init__(
        self, sink, columns, inputs, shown, outputs=(), named=None, null=False, flat=False
    ):
        super().__init__(sink, columns, inputs, shown, outputs, named)
        self.null = null
        self.flat = flat or bool(named)

    def added(self) -> list[str]:
        if self.flat:
            return super().added()
        return (
            ["values", "inputs", "jacobian"] if self.outputs else ["value", "inputs", "gradients"]
        )

    def kept(self) -> list[str]:
        return self.columns if self.flat else [c for c in self.columns if c not in self.inputs]

    def write(self, batch) -> None:
        pieces: list = []
        for name in self.kept():
            if name in self.inputs:  # written as the numbers read from it
                text = _json_numbers(batch.inputs[name], self.null)
            else:
                values = batch.table.column(name).to_pylist()
                text = text_array([_json_value(v, self.null) for v in values])
            pieces += [", " * bool(pieces) + f"{json.dumps(name)}: ", text]
        if self.flat:  # one number per row and column, beside the columns read
            for name, values in zip(self.added(), batch.results, strict=True):
                pieces += [", " * bool(pieces) + f"{json.dumps(name)}: "]
                pieces.append(_json_numbers(values, self.null))
        else:
            pieces += self._nested(batch, ", " * bool(pieces))
        self._rows(["{", *pieces, "}"])

    def _nested(self, batch, before: str) -> list:
        """The single-point keys of a row, as pieces for `_write_lines`."""
        m, null = len(self.outputs), self.null
        values, gradients = batch.results[: m or 1], iter(batch.results[m or 1 :])
        pieces: list = []
        if m:
            pieces += [before + '"values": ', *_json_object(self.outputs, values, null)]
        else:
            pieces += [before + '"value": ', _json_numbers(values[0], null)]
        pieces += [', "inputs": ', *_json_object(batch.inputs, batch.inputs.values(), null)]
        if m:
            pieces.append(', "jacobian": {')
            for k, output in enumerate(self.outputs):
                row = [next(gradients) for _ in self.shown]
                pieces += [", " * (k > 0) + f"{json.dumps(output)}: "]
                pieces += _json_object(self.shown, row, null)
            pieces.append("}")
        else:
            pieces += [', "gradients": ', *_json_object(self.shown, gradients, null)]
        return pieces

    def _rows(self, texts: list) -> None:
        """Write the rows whose text is the columns `texts` joined, a line each."""
        _write_lines(self.sink, texts, "")


class JsonArrayWriter(JsonLinesWriter):
    """A JSON array of the objects that JSON Lines writes, one a line, as pandas'
    `to_json(orient="records")` writes a table and `read_json` reads one."""

    started = False

    def _rows(self, texts: list) -> None:
        lines = io.BytesIO()
        _write_lines(lines, texts, "")
        # JSON text has no line end inside it: each ends a row.
        rows = lines.getvalue().removesuffix(b"\n").replace(b"\n", b",\n")
        if rows:
            self.sink.write((b",\n" if self.started else b"[\n") + rows)
            self.started = True

    def close(self, schema: pa.Schema) -> None:
        self.sink.write(b"\n]\n" if self.started else b"[]\n")


class ArrowFormatWriter(Writer):
    """Parquet or Arrow IPC: the columns read keep their type, except input columns read as
    text (from CSV), which are written as the numbers read from them."""

    def __init__(self, sink, columns, inputs, shown, outputs, named, fmt: str, stream: bool):
        super().__init__(sink, columns, inputs, shown, outputs, named)
        self.fmt = fmt
        self.stream = stream  # the IPC stream format, for a pipe
        self.writer: pq.ParquetWriter | pa.RecordBatchWriter | None = None
        self.schema: pa.Schema | None = None

    def write(self, batch) -> None:
        table = self._table(batch)
        writer = self.writer
        if writer is None:
            writer = self._open(table.schema)
        elif table.schema != self.schema:
            try:
                table = table.cast(self.schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
                raise InputError(
                    f"{option('points')} rows from {batch.first_row} on have other column types "
                    f"than the rows before: {self.schema} against {table.schema}"
                ) from None
        writer.write_table(table)

    def close(self, schema: pa.Schema) -> None:
        writer = self.writer
        if writer is None:
            writer = self._open(self._schema(schema))
        writer.close()

    def abort(self) -> None:
        # A Parquet writer that is still open writes its footer when collected, to a sink
        # that may be closed by then, and would make a partial output look whole.
        if self.writer is not None and hasattr(self.writer, "is_open"):
            self.writer.is_open = False

    def _table(self, batch) -> pa.Table:
        arrays = [
            to_arrow(batch.inputs[name]) if self._as_numbers(field) else column
            for name, field, column in zip(
                batch.table.column_names, batch.table.schema, batch.table.columns, strict=True
            )
        ]
        arrays += [to_arrow(values) for values in batch.results]
        return pa.Table.from_arrays(arrays, schema=self._schema(batch.table.schema))

    def _schema(self, read: pa.Schema) -> pa.Schema:
        """The output's columns: those read, inputs read as text now numbers, then the results.
        Numbers computed are never null: saying so spares Parquet writing that they are not."""
        number = {"type": pa.float64(), "nullable": False}
        fields = [pa.field(f.name, **number) if self._as_numbers(f) else f for f in read]
        return pa.schema(fields + [pa.field(n, **number) for n in self.added()])

    def _as_numbers(self, field: pa.Field) -> bool:
        """Whether a column read is an input read as text (from CSV), written as numbers."""
        return field.name in self.inputs and _is_text(field.type)

    def _open(self, schema: pa.Schema) -> pq.ParquetWriter | pa.RecordBatchWriter:
        """The writer, opened for `schema` (and kept as `writer`)."""
        self.schema = schema
        if self.fmt == "parquet":
            import pyarrow.parquet as pq

            # Dictionary encoding suits repeated values, not computed floats: trying it costs
            # a fifth of the time of a write for nothing.
            dictionary = [f.name for f in schema if not pa.types.is_floating(f.type)]
            self.writer = pq.ParquetWriter(self.sink, schema, use_dictionary=dictionary)
        else:
            import pyarrow.ipc as ipc

            new = ipc.new_stream if self.stream else ipc.new_file
            self.writer = new(self.sink, schema)
        return self.writer


def open_writer(
    sink: BinaryIO,
    fmt: str,
    columns,
    inputs,
    shown,
    outputs,
    stream: bool,
    named=None,
    null: bool = False,
    flat: bool = False,
) -> Writer:
    """The writer of `fmt` to `sink`; `stream`: the sink is a pipe (Arrow's stream format);
    `named`: the names of the columns the results add, where they are not a gradient's (see
    Writer); `null`: JSON writes non-finite numbers as null, else as strings; `flat`: JSON rows
    have the CSV's columns as keys, not the single-point shape. A column read
    that has the name of one the output adds is an error."""
    writer: Writer
    if fmt in ("csv", "tsv"):
        kind = CsvWriter if fmt == "csv" else TsvWriter
        writer = kind(sink, columns, inputs, shown, outputs, named)
    elif fmt in ("jsonl", "json"):
        json_kind = JsonLinesWriter if fmt == "jsonl" else JsonArrayWriter
        writer = json_kind(sink, columns, inputs, shown, outputs, named, null, flat)
    else:
        writer = ArrowFormatWriter(sink, columns, inputs, shown, outputs, named, fmt, stream)
    added = set(writer.added())
    clash = next((c for c in writer.kept() if c in added), None)
    if clash is not None:
        option = "--data" if named else "--points"
        raise InputError(f"{option} has a column {clash}, which the results add: rename it")
    return writer


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _special_bytes(text, delimiter: str) -> bool:
    """Whether any value of a string column holds the delimiter, a quote or a line end: a look
    at the bytes of all values at once (memchr), a hundred times faster than a match per
    value."""
    special = (delimiter.encode(), b'"', b"\r", b"\n")
    for chunk in text.chunks if isinstance(text, pa.ChunkedArray) else [text]:
        if not len(chunk):
            continue
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)
        start, end = offsets[chunk.offset], offsets[chunk.offset + len(chunk)]
        data = memoryview(chunk.buffers()[2])[start:end].tobytes()
        if any(byte in data for byte in special):
            return True
    return False


def csv_numbers(values: np.ndarray) -> pa.Array:
    """Floats as CSV fields: `float_text`, but nan as `NaN`, the one spelling that pandas,
    polars and DuckDB all read as a float (polars reads `nan` as text); `inf` and `-inf` they
    all read as they are."""
    import pyarrow.compute as pc

    text = float_text(values)
    nan = np.isnan(values)
    return pc.if_else(to_arrow(nan), literal("NaN"), text) if nan.any() else text


def _csv_text(
    column, name: str, delimiter: str, numbers: np.ndarray | None = None
) -> pa.ChunkedArray | pa.Array:
    """A column as CSV fields: floats in their shortest exact form, other types as Arrow
    writes them, text as it is; quoted where a field holds the delimiter, a quote or a line
    end; no value empty. `numbers`: those read from the column, where it is an input: its
    non-finite ones are written as `csv_numbers` writes them."""
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_floating(kind) and column.null_count == 0:
        return csv_numbers(to_numpy(column.cast(pa.float64())))
    if numbers is not None and _is_text(kind) and not np.isfinite(numbers).all():
        column = pc.if_else(to_arrow(np.isfinite(numbers)), column, csv_numbers(numbers))
    try:
        # Every other type as text (large and view strings, binary as UTF-8 too), so that
        # the rows are joined from columns of one type.
        text = column if kind == pa.string() else pc.cast(column, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InputError(
            f"{option('points')} column {name} holds {kind}, which CSV cannot: write Parquet or "
            "Arrow (-o results.parquet)"
        ) from None
    if _special_bytes(text, delimiter):
        needs = pc.match_substring_regex(text, f'[{delimiter}"\r\n]')
        quoted = join('"', pc.replace_substring(text, '"', '""'), '"')
        text = pc.if_else(needs, quoted, text)
    return pc.fill_null(text, literal("")) if text.null_count else text


def _json_numbers(values, null: bool) -> pa.Array | str:
    """Numbers as JSON text: non-finite ones as the strings "nan", "inf", "-inf", or with
    `null` null. A float (an input given on the command line) gives one text for every
    row."""
    import pyarrow.compute as pc

    if not isinstance(values, np.ndarray):
        return _json_value(float(values), null)
    text = float_text(values)
    bad = ~np.isfinite(values)
    if bad.any():
        written = literal("null") if null else join('"', text, '"')
        text = pc.if_else(to_arrow(bad), written, text)
    return text


def _json_object(names, columns, null: bool) -> list:
    """`{"name": number, ...}` per row, as pieces for `_write_lines`."""
    pieces: list = ["{"]
    for k, (name, values) in enumerate(zip(names, columns, strict=True)):
        pieces += [", " * (k > 0) + f"{json.dumps(name)}: ", _json_numbers(values, null)]
    pieces.append("}")
    return pieces


def _json_value(value, null: bool) -> str:
    """One passed-through value as JSON, non-finite floats as strings (or null), as in
    `to_json`."""
    if isinstance(value, float):
        if math.isfinite(value):
            return json.dumps(value)
        return "null" if null else json.dumps(repr(value))
    if isinstance(value, dict):
        items = ", ".join(f"{json.dumps(k)}: {_json_value(v, null)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_json_value(v, null) for v in value) + "]"
    return json.dumps(value, default=str)


def _write_lines(sink: BinaryIO, texts: list, separator: str) -> None:
    """Write row by row the texts of the columns, joined by `separator`, a line each."""
    lines = join(*texts[:-1], join(texts[-1], "\n"), separator=separator)
    for chunk in lines.chunks if isinstance(lines, pa.ChunkedArray) else [lines]:
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)
        start, end = offsets[chunk.offset], offsets[chunk.offset + len(chunk)]
        sink.write(memoryview(chunk.buffers()[2])[start:end])
