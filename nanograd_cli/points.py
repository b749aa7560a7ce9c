"""`grad --points`: value and gradients at every row of a CSV file, vectorized, in chunks.

Rows are read CHUNK_ROWS at a time, so memory stays bounded however long the file is; each
chunk runs through the tape on NumPy arrays. NumPy is imported only here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from itertools import islice
from typing import IO

from .errors import InputError, NonFiniteResult, UnknownInputs
from .program import Program
from .tape import Tape, batch_gradients

CHUNK_ROWS = 65536


def read_chunks(stream: IO[str], names: list[str]) -> Iterator[tuple[int, object, int]]:
    """(first row number, 2-D array, characters read) per chunk of CSV rows; rows are
    numbered from 1."""
    import numpy as np

    row = 1
    while True:
        read = list(islice(stream, CHUNK_ROWS))
        lines = [line for line in read if line.strip()]
        if not lines:
            return
        try:
            flat = np.array(",".join(line.strip() for line in lines).split(","), dtype=np.float64)
            table = flat.reshape(len(lines), len(names))
        except ValueError:
            raise _bad_row(lines, row, len(names)) from None
        yield row, table, sum(map(len, read))
        row += len(lines)


def _bad_row(lines: list[str], first: int, width: int) -> InputError:
    for k, line in enumerate(lines):
        fields = line.strip().split(",")
        where = f"--points row {first + k}"
        if len(fields) != width:
            return InputError(f"{where} has {len(fields)} fields, the header {width}")
        for field in fields:
            try:
                float(field)
            except ValueError:
                return InputError(f"{where}: {field.strip()!r} is not a number")
    return InputError(f"--points rows {first}-{first + len(lines) - 1} cannot be read")


def run_points(
    program: Program,
    stream: IO[str],
    fixed: dict[str, float],
    fmt: str,
    wrt: list[str],
    strict: bool,
    write: Callable[[str], None],
    warn: Callable[[str], None],
    progress: Callable[[], Callable[[int | None, int], None]] | None = None,
) -> None:
    """Write value and gradients for each row of `stream`, a CSV whose header names inputs.

    `fixed` gives the inputs without a column their value on every row. `progress`, if given,
    makes a display once the work has taken a second; it is then told the rows done and the
    characters read so far, and None at the end.
    """
    import numpy as np

    from .render import text

    header = stream.readline()
    characters = len(header)
    names = [n.strip() for n in header.strip().split(",")] if header.strip() else []
    if not names:
        raise InputError("--points: the first line must name the inputs, e.g. x,y")
    unknown = [n for n in names if n not in program.inputs]
    if unknown:
        raise UnknownInputs(unknown, program.inputs)
    program.check_inputs({**fixed, **dict.fromkeys(names, 0.0)})
    tape = Tape(program)
    shown = wrt or program.inputs
    header_due = fmt == "csv"  # written with the first rows, once they have been read
    started = time.monotonic()
    update = None
    non_finite, first_bad = 0, None
    for first_row, table, read in read_chunks(stream, names):
        rows = len(table)
        characters += read
        columns = {**fixed, **{n: table[:, k] for k, n in enumerate(names)}}
        value, gradients = batch_gradients(program, columns, tape)
        out = np.column_stack([value, *(gradients[n] for n in shown)])
        bad = ~np.isfinite(value)
        if bad.any():
            non_finite += int(bad.sum())
            if first_bad is None:
                k = int(np.argmax(bad))
                first_bad = _where(
                    program,
                    first_row + k,
                    {**fixed, **dict(zip(names, table[k].tolist(), strict=True))},
                )
                if strict:
                    raise NonFiniteResult(f"--points {first_bad}")
        if header_due:
            write(text.csv_header(shown))
            header_due = False
        if fmt == "json":
            for r, point in zip(out.tolist(), table.tolist(), strict=True):
                result = text.Result(
                    r[0],
                    {**fixed, **dict(zip(names, point, strict=True))},
                    dict(zip(shown, r[1:], strict=True)),
                )
                write(text.to_json(result))
        else:
            write("\n".join(",".join(map(repr, r)) for r in out.tolist()))
        if progress and update is None and time.monotonic() - started > 1.0:
            update = progress()
        if update:
            update(first_row + rows - 1, characters)
    if update:
        update(None, characters)
    if header_due:  # no rows at all
        write(text.csv_header(shown))
    if non_finite:
        warn(f"warning: {non_finite} rows have a non-finite result; the first: {first_bad}")


def _where(program: Program, row: int, point: dict) -> str:
    """Which row went non-finite, and the first operation that made it so."""
    data = program.values(point)
    location = program.first_non_finite(data)
    detail = f" ({location.message} at line {location.line}, column {location.column})"
    return f"row {row} gives {data[program.result]}" + (detail if location else "")
