"""`grad --points`: value and gradients at every row of a CSV file, vectorized, in chunks.

Rows are read CHUNK_ROWS at a time, so memory stays bounded however long the file is; each
chunk runs through the tape on NumPy arrays and comes out as a Batch for a writer in
`render.text`.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import IO, NamedTuple

import numpy as np

from .errors import InputError, NonFiniteResult, UnknownInputs
from .program import Program
from .tape import Tape, batch_gradients

CHUNK_ROWS = 65536


class Batch(NamedTuple):
    """Consecutive rows' results: `inputs` holds every input's values (a column, or one
    float for an input fixed on the command line), `gradients` those asked for."""

    first_row: int
    inputs: dict[str, np.ndarray | float]
    value: np.ndarray
    gradients: dict[str, np.ndarray]


def read_chunks(stream: IO[str], names: list[str]) -> Iterator[tuple[int, np.ndarray, int]]:
    """(first row number, 2-D array, characters read) per chunk of CSV rows; rows are
    numbered from 1."""
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


class PointsRun:
    """The batches of results for the rows of `stream`, a CSV whose header names inputs.

    `fixed` gives the inputs without a column their value on every row; `wrt` chooses the
    gradients (all when empty). While iterating, `rows` and `characters` count what has been
    read; afterwards `non_finite` counts the rows whose value is nan or inf and `first_bad`
    says which came first and why. With `strict`, such a row raises NonFiniteResult.
    """

    def __init__(
        self,
        program: Program,
        stream: IO[str],
        fixed: dict[str, float],
        wrt: list[str],
        strict: bool = False,
    ):
        header = stream.readline()
        self.columns = [n.strip() for n in header.strip().split(",")] if header.strip() else []
        if not self.columns:
            raise InputError("--points: the first line must name the inputs, e.g. x,y")
        unknown = [n for n in self.columns if n not in program.inputs]
        if unknown:
            raise UnknownInputs(unknown, program.inputs)
        both = [n for n in self.columns if n in fixed]
        if both:
            raise InputError(f"--points has a column {both[0]} and --{both[0]} gives it too")
        program.check_inputs({**fixed, **dict.fromkeys(self.columns, 0.0)})
        self.program, self.stream, self.fixed, self.strict = program, stream, fixed, strict
        self.shown = list(wrt or program.inputs)
        self.rows, self.characters = 0, len(header)
        self.non_finite, self.first_bad = 0, None

    def __iter__(self) -> Iterator[Batch]:
        tape = Tape(self.program)
        for first_row, table, read in read_chunks(self.stream, self.columns):
            self.rows, self.characters = first_row + len(table) - 1, self.characters + read
            inputs = {**self.fixed, **{n: table[:, k] for k, n in enumerate(self.columns)}}
            value, gradients = batch_gradients(self.program, inputs, tape)
            self._check_finite(first_row, value, table)
            yield Batch(first_row, inputs, value, {n: gradients[n] for n in self.shown})

    def _check_finite(self, first_row: int, value: np.ndarray, table: np.ndarray) -> None:
        bad = ~np.isfinite(value)
        if not bad.any():
            return
        self.non_finite += int(bad.sum())
        if self.first_bad is None:
            k = int(np.argmax(bad))
            point = {**self.fixed, **dict(zip(self.columns, table[k].tolist(), strict=True))}
            self.first_bad = _where(self.program, first_row + k, point)
            if self.strict:
                raise NonFiniteResult(f"--points {self.first_bad}")


def _where(program: Program, row: int, point: dict) -> str:
    """Which row went non-finite, and the first operation that made it so."""
    data = program.values(point)
    location = program.first_non_finite(data)
    detail = (
        f" ({location.message} at line {location.line}, column {location.column})"
        if location
        else ""
    )
    return f"row {row} gives {data[program.result]}" + detail
