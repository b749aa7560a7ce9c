"""A source compiled for batches: value and gradients at many points at once, on NumPy arrays,
pandas DataFrames or Arrow record batches and tables. What `grad --points` runs on every
batch of rows, and what runs on each partition of a Dask DataFrame or in a Spark
`mapInArrow`: a BatchFunction pickles (as its source) to be sent to other processes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

import numpy as np

from ._program import Program
from ._tape import Tape, batch_jacobian
from .errors import InputError, UnknownInputs
from .results import array_of, element_names, result_names

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ._arrays import ShapeProblem

# A pandas DataFrame, an Arrow RecordBatch or Table: what `f(table)` gives back, with columns
# added.
Table = TypeVar("Table")


def column_floats(name: str, values: object, column: str = "") -> np.ndarray:
    """`values` of the input (or `column`: "column ") `name` as floats, or an InputError that
    names it and the first row (counted from 1) of a value that is no number, as a table's
    reader does: dates, durations and complex numbers are none; a missing value (None,
    pandas' NA) is nan."""
    dtype = getattr(values, "dtype", None)
    if getattr(dtype, "kind", None) in ("m", "M", "c"):  # (NumPy would take their numbers)
        raise InputError(f"{column}{name} holds {dtype}, not numbers")
    try:
        return np.asarray(values, dtype=np.float64)
    except OverflowError:
        raise InputError(f"{column}{name}: a number too large for a float") from None
    except (TypeError, ValueError) as error:
        if not (hasattr(values, "__len__") and np.ndim(cast(Any, values)) == 1):
            raise InputError(f"{column}{name}: {error}") from None
    read = []
    for row, value in enumerate(cast("list[object]", values), 1):
        value = value.item() if isinstance(value, np.generic) else value
        if value is None or type(value).__name__ == "NAType":
            read.append(np.nan)
            continue
        try:
            read.append(float(value))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise InputError(f"row {row}, {column}{name}: {value!r} is not a number") from None
    return np.array(read, dtype=np.float64)


def _fixed(name: str, value: object) -> float:
    """The one number of an input fixed by compile(), or an InputError that names it."""
    number = column_floats(name, value)
    if number.ndim:
        raise InputError(
            f"{name} is fixed by compile(): one number for every row, not an array of shape "
            f"{number.shape} (give an array per row when the function is called)"
        )
    return float(number)


class BatchFunction:
    """`f = nanograd_cli.compile("x*y + tanh(x)")`, then `f(table)`: the table with `value` and
    `d_NAME` per input appended (a DataFrame for a DataFrame, a RecordBatch for a
    RecordBatch, a Table for a Table), or `f(x=array, y=array)`: a dict of arrays `value`,
    `d_x`, `d_y`. Inputs given as `fixed` have that value on every row; `wrt` chooses the
    gradients (all by default). An array input w is read from the columns w[0], w[1], ... of
    a table (of shape `columns[w]`, or found in each table's column names). A source that
    lists several outputs adds the columns of `result_names` instead."""

    def __init__(
        self,
        program: Program,
        wrt: list[str] | None = None,
        fixed: Mapping[str, object] | None = None,
        columns: Mapping[str, tuple[int, ...]] | None = None,
    ):
        fixed = dict(fixed or {})
        self._given = program.source, list(wrt or []), dict(fixed)  # what it is made again of
        self._source = program
        self._by_shapes: dict[tuple, BatchFunction] = {}  # for tables of w[0], w[1], ...
        self._unwritten: ShapeProblem | None = None
        arrays = {n: v for n, v in fixed.items() if getattr(v, "ndim", 0) or isinstance(v, list)}
        if program.arrays or arrays or columns:  # sum([x, y]**2), w @ [x, y]: in scalars
            from ._arrays import ShapeProblem, numbers_array, scalarized

            given = {name: numbers_array(value, name) for name, value in arrays.items()}
            fixed = {n: v for n, v in fixed.items() if n not in arrays}
            try:
                program, by_element, _ = scalarized(program, given, columns or {})
            except ShapeProblem as problem:  # w @ x: x's shape comes with the rows
                if all(n in fixed or n in given or n in (columns or {}) for n in program.inputs):
                    raise  # (every shape known: they do not fit)
                self._unwritten = problem  # (and made again for the rows' shapes)
            else:
                fixed |= by_element
                shapes = {name: value.shape for name, value in given.items()} | dict(columns or {})
                wrt = [e for n in wrt or [] for e in element_names(n, shapes.get(n, ()))]
        self.program = program
        self.fixed: dict[str, float] = {name: _fixed(name, value) for name, value in fixed.items()}
        self.wrt: list[str] = list(wrt or program.inputs)
        inputs = set(program.inputs)
        unknown = [n for n in [*self.wrt, *self.fixed] if n not in inputs]
        if unknown:
            raise UnknownInputs(unknown, program.inputs)
        self.inputs: list[str] = [n for n in program.inputs if n not in self.fixed]
        self.outputs: list[str] = list(program.outputs)
        self.names: list[str] = result_names(self.outputs, self.wrt)
        self._tape: Tape | None = None

    def __repr__(self) -> str:
        source, wrt, fixed = self._given
        given = "".join(f", {name}=..." for name in fixed)
        return f"nanograd_cli.compile({source!r}{''.join(f', {n!r}' for n in wrt)}{given})"

    def __reduce__(self) -> tuple[Callable[..., BatchFunction], tuple[object, ...]]:
        from ._language import parse

        return _rebuild, (parse, *self._given)

    def results(self, columns: Mapping[str, object], rows: int | None = None) -> list[np.ndarray]:
        """The columns of `names`, each a 1-D float64 array of `rows` rows, given every input
        that is not fixed as a 1-D array (or a float, the same on every row)."""
        missing = [n for n in self.inputs if n not in columns]
        if missing:
            raise InputError(f"no column for input{'s' * (len(missing) > 1)} {', '.join(missing)}")
        if self._unwritten is not None:
            raise self._unwritten
        if self._tape is None:
            self._tape = Tape(self.program)
        computed = batch_jacobian(self.program, {**columns, **self.fixed}, self._tape)
        values = [value for value, _ in computed]
        results = [*values, *(gradients[n] for _, gradients in computed for n in self.wrt)]
        if rows is not None and values[0].size != rows:  # no input varies from row to row
            results = [np.broadcast_to(a, (rows,)) for a in results]
        return results

    @overload
    def __call__(self, table: None = None, /, **columns: ArrayLike) -> dict[str, np.ndarray]: ...
    @overload
    def __call__(self, table: Mapping[str, ArrayLike], /) -> dict[str, np.ndarray]: ...
    @overload
    def __call__(self, table: Table, /) -> Table: ...
    def __call__(self, table: Any = None, /, **columns: Any) -> Any:
        if table is None:
            table = self._element_columns(columns)
            if table is columns:
                inputs = self._checked(columns)
                results = self.results(inputs)
                self._warn_non_finite(inputs, results)
                return self._named(results)
        elif columns:
            name = next(iter(columns))
            raise InputError(
                f"{name} is given as a keyword beside a table: give it as a column of the "
                "table, or fixed in compile()"
            )
        kind = type(table).__module__.split(".")[0]
        if kind == "pandas":
            return self._pandas(table)
        if kind == "pyarrow":
            return self._arrow(table)
        if isinstance(table, Mapping):
            function = self._for_columns([str(n) for n in table])
            inputs = function._checked(table)
            results = function.results(inputs)
            function._warn_non_finite(inputs, results)
            return function._named(results)
        raise TypeError(f"expected a DataFrame, an Arrow table or a mapping, got {type(table)}")

    def _element_columns(self, columns: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments as a table's columns where they give an array input per row: x
        of shape (rows, 2) as x[0] and x[1], which the function is then written out for, as
        it is for a table's (`columns` itself where none does)."""
        source = self._source
        arrays = [n for n in source.inputs if n not in self._given[2]]
        if not (source.arrays or self._unwritten):  # (x*y: numbers, w @ x: arrays)
            arrays = [n for n in arrays if n not in self.program.inputs]
        per_row = {
            name: value
            for name, value in columns.items()
            if (name in arrays and np.ndim(value) > 1)
            or (name not in source.inputs and array_of(name) in arrays)
        }
        if self._unwritten is not None:  # w @ x, and x given as numbers
            numbers = next((n for n in arrays if n in columns and n not in per_row), None)
            if numbers is not None:
                raise InputError(
                    f"{numbers} is an array in {self._source.source.strip()!r:.60}: give it a "
                    f"row per row, an array of shape (rows, ...), or its elements by name "
                    f"({numbers}[0], {numbers}[1], ...)"
                )
        if not per_row:
            return columns
        table: dict[str, Any] = {}
        for name, value in columns.items():
            if name not in per_row or name not in arrays:
                table[name] = value
                continue
            rows = np.asarray(value)
            flat = rows.reshape(rows.shape[0], -1)
            for k, element in enumerate(element_names(name, rows.shape[1:])):
                table[element] = flat[:, k]
        return table

    def _checked(self, columns: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Inputs given by name as `results` takes them, or an InputError naming the one at
        fault: a name that is no input or is fixed, an array that is not 1-D, or one whose
        length differs from the first array's."""
        inputs = set(self.program.inputs)
        unknown = [n for n in columns if n not in inputs]
        if unknown:
            raise UnknownInputs(unknown, self.program.inputs)
        fixed = next((n for n in columns if n in self.fixed), None)
        if fixed is not None:
            raise InputError(f"{fixed} is fixed at {self.fixed[fixed]} by compile(): give it once")
        arrays, first = {}, None  # first: the name of the first array, which sets the length
        for name, values in columns.items():
            array = column_floats(name, values, "input ")
            if array.ndim > 1:
                raise InputError(
                    f"{name} is an array of shape {array.shape}: give a 1-D array, one value "
                    "per row"
                )
            if array.ndim == 1:
                if first is None:
                    first = name
                elif array.size != arrays[first].size:
                    raise InputError(
                        f"{name} has {array.size} values, {first} {arrays[first].size}: give "
                        "every input as many"
                    )
            arrays[name] = array
        return arrays

    def _for_columns(self, names: list[str]) -> BatchFunction:
        """The function for a table with the columns `names`: this one, or where they hold
        the elements of an array input, w[0], w[1], ..., one written out for that shape."""
        from ._arrays import column_shapes

        source, fixed = self._source, self._given[2]
        unshaped = [n for n in source.inputs if n not in fixed]
        shapes = column_shapes(unshaped, names, "the table")
        if not shapes:
            return self
        key = tuple(sorted(shapes.items()))
        if key not in self._by_shapes:
            self._by_shapes[key] = BatchFunction(source, self._given[1], fixed, shapes)
        return self._by_shapes[key]

    def _warn_non_finite(
        self, columns: Mapping[str, object], results: list[np.ndarray], depth: int = 3
    ) -> None:
        """A NanogradWarning where an operation made a value (of any output) nan or inf out of
        finite inputs, as NumPy warns of an invalid operation and `grad --points` of such rows:
        how many rows, and why the first (counted from 1) is; a row whose input is nan or inf
        already is not warned of. Shown at the caller's line, `depth` calls up."""
        bad = not_finite(results[: len(self.outputs) or 1])
        if not bad.any():
            return
        given = {n: columns[n] if n in columns else self.fixed[n] for n in self.program.inputs}
        # each input a row's value per row (a keyword's number, y=2.0, is 0-d)
        inputs = {n: np.broadcast_to(np.asarray(v, float), bad.shape) for n, v in given.items()}
        made = made_not_finite(bad, inputs)
        if not made.any():
            return
        import warnings

        from .errors import NanogradWarning

        count = int(made.sum())
        rows = "1 row has" if count == 1 else f"{count} rows have"
        first = non_finite_row(self.program, np.arange(1, made.size + 1), int(np.argmax(made)),
                               inputs)  # fmt: skip
        warnings.warn(f"{rows} a non-finite result from finite inputs; the first: {first}",
                      NanogradWarning, stacklevel=depth)  # fmt: skip

    def _named(self, results: list[np.ndarray]) -> dict[str, np.ndarray]:
        return dict(zip(self.names, results, strict=True))

    def _check_names(self, columns: set[str]) -> None:
        clash = [n for n in self.names if n in columns]
        if clash:
            raise InputError(f"the table has a column {clash[0]}, which the results add")

    def _pandas(self, frame):
        if frame.columns.nlevels > 1:
            raise InputError(
                f"the DataFrame's columns have {frame.columns.nlevels} levels (a MultiIndex): "
                "give each column one name, e.g. frame.columns = "
                "['_'.join(map(str, c)) for c in frame.columns]"
            )
        function = self._for_columns([str(n) for n in frame.columns])
        function._check_names(set(frame.columns))
        names = set(frame.columns)
        columns = {n: _pandas_floats(frame, n) for n in function.inputs if n in names}
        found = function.results(columns, len(frame))
        function._warn_non_finite(columns, found, depth=4)
        results = function._named(found)
        return frame.assign(**{n: _like(frame.index, a) for n, a in results.items()})

    def _arrow(self, table):
        from ._io.numbers import floats, to_arrow

        function = self._for_columns(table.column_names)
        names = set(table.column_names)
        function._check_names(names)
        columns = {n: floats(table.column(n), n, 1) for n in function.inputs if n in names}
        found = function.results(columns, table.num_rows)
        function._warn_non_finite(columns, found, depth=4)
        results = function._named(found)
        for name, values in results.items():
            table = table.append_column(name, to_arrow(values))
        return table


def _pandas_floats(frame, name: str) -> np.ndarray:
    """The DataFrame's column `name` as float64, or an InputError that names the column (and
    the row, counted from 1, of a value that is no number)."""
    at = np.flatnonzero(frame.columns == name)
    if at.size > 1:
        raise InputError(f"the DataFrame has {at.size} columns named {name}: rename all but one")
    column = frame.iloc[:, int(at[0])]
    kind = column.dtype.kind
    if kind in "iufb":  # NumPy's numbers and pandas' own (Int64, Float64, boolean: NA is nan)
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    if kind not in "OSU":  # dates, durations, complex numbers, periods, intervals
        raise InputError(f"column {name} holds {column.dtype}, not numbers")
    # Text, or Python objects: each a number (or its text), a missing one (None, NA) nan.
    values = column.to_numpy(dtype=object, na_value=None)
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        pass
    floats = np.empty(len(values))
    for row, value in enumerate(values):
        try:
            floats[row] = np.nan if value is None else float(value)
        except (TypeError, ValueError):
            raise InputError(f"row {row + 1}, column {name}: {value!r} is not a number") from None
    return floats


def _like(index, values: np.ndarray):
    import pandas as pd

    return pd.Series(values, index=index)


def _rebuild(parse, source: str, wrt: list[str], fixed: dict[str, object]) -> BatchFunction:
    return BatchFunction(parse(source), wrt, fixed)


def not_finite(values: list[np.ndarray]) -> np.ndarray:
    """Per row: whether a value of any of `values` (an output's each) is nan or inf."""
    bad = ~np.isfinite(values[0])
    for value in values[1:]:
        bad |= ~np.isfinite(value)
    return bad


def made_not_finite(bad: np.ndarray, inputs: Mapping[str, object]) -> np.ndarray:
    """Of the rows `bad`, those whose `inputs` (arrays, or a float for every row) are all
    finite: there an operation made the nan or inf, where NaN in is NaN out elsewhere."""
    made = bad.copy()
    for values in inputs.values():
        made &= np.isfinite(cast(Any, values))
    return made


def non_finite_row(program: Program, rows: np.ndarray, k: int, inputs: dict) -> str:
    """Why the row `k` of a batch (whose rows are numbered `rows`) went non-finite: the input
    that was nan or inf, or else the first operation that made nan or inf out of finite
    numbers."""
    point = {n: float(v[k]) if isinstance(v, np.ndarray) else v for n, v in inputs.items()}
    data = program.values(point)
    given = next((n for n, v in point.items() if not np.isfinite(v)), None)
    location = program.first_non_finite(data)
    if given is not None:
        detail = f" (input {given} is {point[given]})"
    elif location is not None:
        detail = f" ({location.message} at line {location.line}, column {location.column})"
    else:
        detail = ""
    outputs = program.outputs or {"": program.result}
    name, slot = next(((n, i) for n, i in outputs.items() if not np.isfinite(data[i])), ("", 0))
    value = f"{name} = {data[slot]}" if name else data[program.result]
    return f"row {rows[k]} gives {value}{detail}"
