"""Points in and out: CSV, TSV, Parquet, Arrow IPC (Feather), JSON Lines and JSON (an array of
objects), read and written a batch of rows at a time so that memory stays bounded however
many rows there are.

PyArrow (the `points` extra) is imported only by the modules below, when points are read or
written; choosing a format by a file's extension needs nothing.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import errors
from ..errors import InputError, NanogradError, printable

if TYPE_CHECKING:
    import numpy as np

# Each format's name and the file extensions that choose it.
EXTENSIONS = {
    "csv": (".csv",),
    "tsv": (".tsv", ".tab"),
    "parquet": (".parquet", ".pq"),
    "arrow": (".arrow", ".feather", ".ipc"),
    "jsonl": (".jsonl", ".ndjson"),
    # Read as an array of objects, or as JSON Lines where the text does not start with "[";
    # written as an array of objects, what pandas' read_json reads.
    "json": (".json",),
}
FORMATS = list(EXTENSIONS)
TEXT_FORMATS = ("csv", "tsv", "jsonl", "json")
# --format's choices with --points, and the formats they agree with (the first by default).
ASKED = {"csv": ("csv",), "json": ("jsonl", "json")}


def complete_rows(columns: Iterable[Sequence[float] | np.ndarray], rows: int) -> np.ndarray:
    """A mask of the `rows` rows where none of `columns` (of floats) is nan: the rows
    `--drop-nan` keeps."""
    import numpy as np

    keep = np.ones(rows, dtype=bool)
    for values in columns:
        keep &= ~np.isnan(np.asarray(values, dtype=float))
    return keep


def left_out(dropped: int) -> str:
    """What `--drop-nan` says of the rows it left out."""
    return f"{dropped} row{'s' * (dropped != 1)} with a missing value (nan, empty or NA) left out"


def format_of(path: str) -> str | None:
    """The format that a file's extension names, or None (for `-` or an unknown extension)."""
    from .._output_files import extension

    found = extension(path, (e for known in EXTENSIONS.values() for e in known))
    return next((f for f, known in EXTENSIONS.items() if found in known), None)


def pyarrow_required(option: str = "points", extra: str = "points") -> None:
    """Import what a `grad --points` run needs, PyArrow and NumPy, tuned for a process that
    runs that one command; or raise a clear error when PyArrow, which reads and writes points,
    is not installed."""
    # NumPy's OpenBLAS starts a thread per core that spins for a while, waiting for matrix work
    # that points never give it: a tenth of the CPU time of a Parquet run of a million rows.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # The modules imported now live as long as the process: the collector need not look at
    # them while they are imported, nor each time it looks for the run's garbage afterwards.
    gc.disable()
    try:
        import pyarrow  # noqa: F401

        from . import readers, writers  # noqa: F401
    except ImportError:
        raise MissingPyArrow(option, extra) from None
    finally:
        gc.freeze()
        gc.enable()


class MissingPyArrow(NanogradError):
    """--points or --data without PyArrow: a missing library, exit 1 like a missing renderer;
    the command to install it brings the whole `extra` of the command that needs it."""

    def __init__(self, option: str, extra: str):
        from .._extras import install_command

        super().__init__(
            f"{_named(option)} needs PyArrow, which is not installed: install it with: "
            + install_command(extra)
        )


# The first bytes of a file in a binary format that a reader takes: its format, and its kind.
BINARY_FORMATS = ((b"PAR1", "parquet", "a Parquet"), (b"ARROW1", "arrow", "an Arrow"))


def input_format(
    path: str,
    given: str | None,
    name: str = "points",
    format_option: str | None = "points_format",
) -> str:
    """The format of --points FILE (or the file of the option `name`, whose format
    `format_option` gives, if any): its extension's, else the format given, else CSV; a
    file with no extension that begins as a Parquet or Arrow file does is named as one (a
    regular file only: a pipe, `<(...)` or /dev/stdin, is read once, by the reader)."""
    chosen = format_of(path) or given
    if chosen is None and not os.path.splitext(path)[1] and os.path.isfile(path):
        try:
            with open(path, "rb") as file:
                start = file.read(6)
        except OSError:
            start = b""  # (the reader says why it cannot be read)
        for magic, fmt, kind in BINARY_FORMATS:
            if start.startswith(magic):
                given_as = (
                    f" (or give {errors.option(format_option, fmt)})" if format_option else ""
                )
                raise InputError(
                    f"{errors.option(name, printable(path))} is {kind} file, not CSV: name it "
                    f"with .{fmt}{given_as}"
                )
    return chosen or "csv"


def output_format(output: str | None, fmt: str | None, given: str | None) -> str:
    """The format of the results: -o FILE's extension, else --format (csv, or json for JSON
    Lines), else --points-format, else CSV where FILE has no extension; an extension that
    names no format is an error."""
    by_extension = format_of(output) if output and output != "-" else None
    asked = ASKED.get(fmt or "", ())
    if output and by_extension and asked and by_extension not in asked:
        raise InputError(
            f"{errors.option('format', fmt)} and -o {printable(output)} disagree: give one of them"
        )
    chosen = by_extension or next(iter(asked), None) or given
    if chosen is None and output and output != "-" and os.path.splitext(output)[1]:
        raise InputError(  # out.xlsx is not written as CSV
            f"cannot tell the format of {printable(output)} from its extension: use .csv, "
            ".tsv, .parquet, .arrow, .feather, .jsonl or .json"
        )
    return chosen or "csv"


class Columns(dict):
    """The columns read of a table, each a float64 array by its name, and `names`, every
    column the table has (read or not), for messages that list them."""

    names: list[str]


def names_of(columns: Iterable[Any]) -> list[str]:
    """Every column of a table's `columns` (Columns), also those of its file that were not
    read; of another mapping (a DataFrame), its keys."""
    return list(getattr(columns, "names", None) or columns)


class Table(NamedTuple):
    """A table read whole: `columns` holds those asked for as float64 arrays, `batches` the
    rows as read (first row number, Arrow table), `names` every column's name, `schema` their
    types."""

    columns: dict
    batches: list
    names: list[str]
    schema: object


def read_table(
    path: str,
    fmt: str,
    needed: Iterable[str] | None = None,
    option: str = "data",
    extra: str = "points",
    missing: bool = False,
    progress: Callable | None = None,
) -> Table:
    """The table at `path` (`-`: standard input) in format `fmt`, read whole through the
    readers of `--points` (same formats, same errors, which name `option`), with the columns
    named in `needed` (every column when None), and those of their elements (x[0], x[1], ...
    of an array x), as numbers; the others may hold anything. A
    value that is not a number is an error naming its row and column, as for `--points`.
    Without PyArrow, the error names `option` and the command that installs `extra`. With
    `missing`, an absent value (null, empty, NA) is nan instead of an error.
    `progress(total_bytes, total_rows)` makes a display of the reading, as for `--points`.
    Ctrl-C while it reads is `errors.Interrupted`, with nothing reached."""
    try:
        pyarrow_required(option, extra)
        return _read_table(path, fmt, needed, missing, progress)
    except InputError as error:
        points = errors.option("points")
        if not error.message.startswith(points):
            raise
        raise InputError(_named(option) + error.message.removeprefix(points)) from None
    except KeyboardInterrupt:  # Ctrl-C before any result: said as a run stopped later is
        what = "standard input" if path == "-" else printable(path)
        raise errors.Interrupted(
            f"interrupted while reading {_named(option)} {what}", None
        ) from None


def _named(option: str) -> str:
    """An option given by name (`data`), or already named as data (`errors.option("data")`),
    as a message names it."""
    return option if errors.spell(option, "python") != option else errors.option(option)


def _read_table(
    path: str, fmt: str, needed: Iterable[str] | None, missing: bool, progress: Callable | None
) -> Table:
    import numpy as np

    from .numbers import columns_floats
    from .readers import first_repeated, named_twice, one_column_header, open_points

    with open_points(path, fmt) as reader:
        names = reader.columns
        one_column = one_column_header(names, needed or (), "data")
        if one_column:
            raise InputError(one_column)
        twice = first_repeated(names)
        if twice is not None:
            raise InputError(named_twice(errors.option("data"), twice))
        wanted = set(names if needed is None else needed)
        from ..results import array_of

        kept = [name for name in names if name in wanted or array_of(name) in wanted]
        parts: dict[str, list] = {name: [] for name in kept}
        batches = []
        display = progress(reader.total_bytes, reader.total_rows) if progress else None
        try:
            for first_row, table in reader:
                batches.append((first_row, table))
                for name, values in columns_floats(table, kept, first_row, missing).items():
                    parts[name].append(np.array(values))  # a copy: the batch's buffers go
                if display:
                    display.update(reader.rows_read, reader.bytes_read)
        finally:
            if display:
                display.stop()
        columns = Columns(
            (name, np.concatenate(chunks) if chunks else np.empty(0))
            for name, chunks in parts.items()
        )
        columns.names = list(names)
        return Table(columns, batches, names, reader.schema)


def refuse_missing_group(values: Sequence[Any], name: str, option: str, first: int = 1) -> None:
    """Bad input where one of `values`, the groups of rows numbered from `first` in the column
    `name` of `option`, is missing (None, nan, pandas' NA, or text that a table writes for a
    missing value): such a row belongs to no group."""
    import math

    from .numbers import MISSING

    for k, value in enumerate(values):
        text = value.strip() if isinstance(value, str) else value
        if (
            text is None
            or (isinstance(text, str) and (text in MISSING or text.lower() == "nan"))
            or (isinstance(text, float) and math.isnan(text))
            or type(text).__name__ == "NAType"  # (pandas.NA, which no comparison decides)
        ):
            raise InputError(
                f"{errors.option(option)} row {first + k}, column {name}: a missing value "
                "(empty, NA or nan), where each row names its group: give every row one"
            )


def group_values(table: Table, name: str, option: str = "data") -> list:
    """The value of the column `name` of `table` (the rows of `option`) on each row, as it
    names a group of rows: numbers where every row holds one (1 and 1.0 are the same group),
    else as read (text, or a file's own integers). So is a column with a number from 2**53,
    where floats no longer hold every whole number: 9007199254740993, an ID, is not
    9007199254740992. A row with none (empty, NA, nan) is bad input: it belongs to no group."""
    from .numbers import floats

    batches = table.batches
    text = False
    try:
        parts = [
            (first, floats(rows.column(name), name, first).tolist()) for first, rows in batches
        ]
        if any(abs(value) >= 2**53 for _, values in parts for value in values):
            raise InputError("numbers that floats would round")
    except InputError:  # not every value is a number (or one is null): named as read
        parts = [(first, rows.column(name).to_pylist()) for first, rows in batches]
        text = True
    for first, values in parts:
        refuse_missing_group(values, name, option, first)
    groups = [value for _, values in parts for value in values]
    return groups if text else [int(v) if v.is_integer() else v for v in groups]


def read_rows(
    path: str,
    fmt: str,
    needed: Iterable[str],
    option: str = "data",
    extra: str = "points",
    drop_nan: bool = False,
    progress: Callable | None = None,
    predicting: bool = False,
) -> Table:
    """The table at `path` (as `read_table` reads it) for a command that leaves out the rows
    with a missing value only with --drop-nan, or that needs every row (`predicting`): an
    absent value is nan, and without `drop_nan` the first is bad input that names its row
    and the remedy (`refuse_missing`)."""
    needed = list(needed)
    table = read_table(path, fmt, needed, option, extra, missing=True, progress=progress)
    if not drop_nan:
        refuse_missing(table.columns, table.names, needed, option, predicting)
    return table


def refuse_missing(
    columns: Mapping[str, Any],
    names: Iterable[str],
    read: Iterable[str],
    option: str = "data",
    predicting: bool = False,
) -> None:
    """Bad input at the first row (numbered from 1, then the first column of `names`) where
    a column of `read` has a missing value (empty, NA or nan) in `columns`, the rows of
    `option` (by name or already named, as `read_table` takes it): for a command that leaves
    such rows out only with --drop-nan, or that needs every row (`predicting`)."""
    import numpy as np

    first, read = None, set(read)
    for name in names:
        if name in read and name in columns:
            try:
                values = np.asarray(columns[name], dtype=float)
            except (TypeError, ValueError):  # not numbers: the command says so in its words
                continue
            gaps = np.flatnonzero(np.isnan(values))
            if gaps.size and (first is None or gaps[0] < first[0]):
                first = (int(gaps[0]), name)
    if first is not None:
        remedy = (
            f"give {first[1]} on every row to predict at"
            if predicting
            else f"{errors.option('drop-nan')} leaves out the rows with one"
        )
        raise InputError(
            f"{_named(option)} row {first[0] + 1}, column {first[1]}: a missing value "
            f"(empty, NA or nan); {remedy}"
        )
