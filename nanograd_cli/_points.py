"""`grad --points`: value and gradients at every row of a table of points, a batch of rows at
a time, so that memory stays bounded however many rows there are.

A reader (`io.readers`) gives the rows in batches as Arrow tables; each batch's input columns
become float64 arrays (`io.numbers.floats`, with errors naming the row), run through the
compiled source (`batch.BatchFunction`), and come out as a Batch for a writer
(`io.writers`), which keeps the columns read beside the results. `run_points` does it all,
from a file (or standard input) to a file (or standard output).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ._batch import BatchFunction, made_not_finite, non_finite_row, not_finite
from ._io import complete_rows
from ._io.numbers import columns_floats, to_arrow
from ._io.readers import Reader, first_repeated, named_twice, one_column_header, open_points
from ._io.writers import open_writer
from ._output_files import OutputFile
from ._program import Input, Program
from .errors import (
    InputError,
    MissingInputs,
    NanogradError,
    NonFiniteResult,
    option,
    printable,
)

if TYPE_CHECKING:
    from .results import InputValue


class Batch(NamedTuple):
    """Consecutive rows' results: `table` holds the rows as read, `inputs` every input's
    values in the source's order (a column, or one float for an input fixed on the command
    line), `results` the columns of `results.result_names`: values, then gradients."""

    first_row: int
    table: object  # a pyarrow.Table
    inputs: dict[str, np.ndarray | float]
    results: list[np.ndarray]


class PointsRun:
    """The batches of results for the rows that `reader` reads.

    `fixed` gives the inputs without a column their value on every row; `wrt` chooses the
    gradients (all when empty). Columns that are no input are kept as they are. While
    iterating, `reader.rows_read` counts the rows read; afterwards `non_finite` counts the rows
    whose value is nan or inf and `first_bad` says which came first and why. With `strict`, a
    row where an operation made nan or inf out of finite inputs raises NonFiniteResult. With
    `na`, a missing value (empty, NA, null) is nan, its row's results too, not an error;
    with `drop_nan`, a row where an input read is nan or missing is left out (`dropped`
    counts them).
    """

    def __init__(
        self,
        program: Program,
        reader: Reader,
        fixed: dict[str, InputValue],
        wrt: list[str],
        strict: bool = False,
        na: bool = False,
        drop_nan: bool = False,
    ):
        # Names are looked up in sets: a table may have 100,000 columns, a source as many inputs.
        columns = reader.columns
        seen: set[str] = set()
        twice = first_repeated(columns, seen)
        if twice is not None:
            raise InputError(named_twice(option("points"), twice))
        both = next((n for n in columns if n in fixed), None)
        if both is not None:
            raise InputError(f"{option('points')} has a column {both} and --{both} gives it too")
        for column in columns:  # the elements of an array, x[0], x[1], ...
            array, bracket, _ = column.partition("[")
            if bracket and array in fixed:
                raise InputError(
                    f"{option('points')} has a column {column} and --{array} gives {array} too"
                )
            if bracket and array in seen:
                raise InputError(
                    f"{option('points')} has a column {array} and a column {column}: give "
                    f"{array} one way"
                )
        program, numbers, wrt = _in_scalars(program, fixed, wrt, columns)
        self.function = BatchFunction(program, wrt, numbers)  # raises for a fixed name no input
        missing = [n for n in program.inputs if n not in seen and n not in numbers]
        if missing and columns:  # no columns: JSON with no rows, an empty table
            raise _missing(missing, columns)
        self.missing = missing
        if strict:
            _check_given(program, numbers)
        self.program, self.reader, self.fixed, self.strict = program, reader, numbers, strict
        self.na, self.drop_nan = na, drop_nan
        self.dropped = 0
        self.shown = self.function.wrt
        inputs = set(program.inputs)
        self.input_columns = [n for n in columns if n in inputs]
        self.non_finite = 0
        self.first_bad: str | None = None

    def __iter__(self) -> Iterator[Batch]:
        for first_row, table in self.reader:
            if self.missing and table.num_rows:  # [{}]: rows, and no column of an input
                raise _missing(self.missing, [])
            missing = self.na or self.drop_nan
            columns = columns_floats(table, self.input_columns, first_row, missing)
            rows = np.arange(first_row, first_row + table.num_rows)  # each row's number
            if self.drop_nan:
                keep = complete_rows(columns.values(), table.num_rows)
                if not keep.all():
                    self.dropped += int((~keep).sum())
                    table, rows = table.filter(to_arrow(keep)), rows[keep]
                    columns = {n: values[keep] for n, values in columns.items()}
            results = self.function.results(columns, table.num_rows)
            inputs = {n: columns[n] if n in columns else self.fixed[n] for n in self.program.inputs}
            self._check_finite(rows, results[: len(self.function.outputs) or 1], inputs)
            yield Batch(first_row, table, inputs, results)

    def _check_finite(self, rows: np.ndarray, values: list[np.ndarray], inputs: dict) -> None:
        """Count the rows (numbered `rows`) where a value (of any output) is nan or inf;
        remember the first."""
        bad = not_finite(values)
        if not bad.any():
            return
        self.non_finite += int(bad.sum())
        if self.first_bad is None:
            self.first_bad = non_finite_row(self.program, rows, int(np.argmax(bad)), inputs)
        if self.strict:
            # --strict fails on an operation that made nan or inf out of finite numbers, not on
            # a row whose input was nan or inf already.
            made = made_not_finite(bad, inputs)
            if made.any():
                where = non_finite_row(self.program, rows, int(np.argmax(made)), inputs)
                raise NonFiniteResult(f"{option('points')} {where}")


def run_points(
    program: Program,
    points: tuple[str, str],
    output: tuple[str | None, str],
    fixed: dict[str, InputValue],
    wrt: list[str],
    strict: bool = False,
    progress: Callable | None = None,
    null: bool = False,
    na: bool = False,
    flat: bool = False,
    drop_nan: bool = False,
) -> PointsRun:
    """Read the points (a path, `-` for standard input, and a format), write the results
    (to a path, or standard output for None or `-`, in a format), and return the finished
    run. `progress(total_bytes, total_rows)` makes a display with `update(rows, bytes)` and
    `stop()`. A file written is put in place only when all went well. `null`: JSON writes
    non-finite numbers as null (else as strings); `na`: a missing value read is nan; `flat`:
    JSON rows have the CSV's columns as keys; `drop_nan`: a row with an input nan or missing
    is left out."""
    path, out_format = output
    to_stdout = path in (None, "-")
    with open_points(*points) as reader:
        run = PointsRun(program, reader, fixed, wrt, strict, na, drop_nan)
        file = None if to_stdout or path is None else OutputFile(path)
        display = progress(reader.total_bytes, reader.total_rows) if progress else None
        writer = None
        try:
            writer = open_writer(
                sys.stdout.buffer if file is None else file.file,
                out_format,
                reader.columns,
                run.input_columns,
                run.shown,
                run.function.outputs,
                stream=to_stdout,
                null=null,
                flat=flat,
            )
            for batch in run:
                writer.write(batch)
                if display:
                    display.update(reader.rows_read, reader.bytes_read)
            writer.close(reader.schema)
            if file is not None:
                file.commit()
        except BaseException as error:
            if writer is not None:
                writer.abort()
            if file is not None:
                file.discard()
                if isinstance(error, OSError):
                    raise NanogradError(
                        f"cannot write {printable(file.path)}: {error.strerror}"
                    ) from None
            raise
        finally:
            if display:
                display.stop()
    return run


def _in_scalars(
    program: Program, fixed: dict[str, InputValue], wrt: list[str], columns: list[str]
) -> tuple[Program, dict[str, float], list[str]]:
    """The program, the fixed values and `wrt` in scalars, where there are arrays: given on
    the command line (`--W "[[1, 2]]"`), or read from the columns x[0], x[1], ... of the
    table (for an input x that no column names)."""
    shapes = {name: np.shape(v) for name, v in fixed.items() if np.ndim(v)}
    from ._arrays import column_shapes, written_out

    unshaped = [n for n in program.inputs if n not in shapes]
    shapes |= column_shapes(unshaped, columns, option("points"))
    if not program.arrays and not shapes:
        return program, fixed, wrt  # type: ignore[return-value]  # numbers
    from .results import by_element

    written, layout = written_out(program, shapes)
    return written, by_element(fixed), layout.elements(wrt)


def _check_given(program: Program, fixed: dict[str, float]) -> None:
    """With --strict: fail, before any row is read, on an input given nan or inf on the
    command line, as every command does; only the table's own nan and inf are values."""
    # Only the fixed inputs are non-finite here, so the first non-finite instruction is the
    # first read of one of them, located and worded as for a single point.
    data = [fixed.get(ins.name, 0.0) if isinstance(ins, Input) else 0.0 for ins in program.code]
    where = program.first_non_finite(data)
    if where is not None:
        raise NonFiniteResult(str(where))


def _missing(names: list[str], columns: list[str]) -> InputError:
    """No column and no value for `names`: say so, and whether the first line is a header."""
    if columns and all(_is_number(c) for c in columns):
        return InputError(
            f"{option('points')}: the first line must name the columns, e.g. {','.join(names)}; "
            f"it reads {','.join(columns)}"
        )
    one_column = one_column_header(columns, names, "points")
    if one_column:
        return InputError(one_column)
    return MissingInputs(names).or_columns_of(option("points"))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
