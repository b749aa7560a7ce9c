"""A source compiled for batches: value and gradients at many points at once, on NumPy arrays,
pandas DataFrames or Arrow record batches and tables. What `grad --points` runs on every
batch of rows, and what runs on each partition of a Dask DataFrame or in a Spark
`mapInArrow`: a BatchFunction pickles (as its source) to be sent to other processes."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .errors import InputError, UnknownInputs
from .program import Program
from .tape import Tape, batch_gradients


class BatchFunction:
    """`f = nanograd_cli.compile("x*y + tanh(x)")`, then `f(table)`: the table with `value` and
    `d_NAME` per input appended (a DataFrame for a DataFrame, a RecordBatch for a
    RecordBatch, a Table for a Table), or `f(x=array, y=array)`: a dict of arrays `value`,
    `d_x`, `d_y`. Inputs given as `fixed` have that value on every row; `wrt` chooses the
    gradients (all by default)."""

    def __init__(
        self, program: Program, wrt: list[str] | None = None, fixed: Mapping[str, float] = ()
    ):
        self.program = program
        self.fixed = dict(fixed)
        self.wrt = list(wrt or program.inputs)
        inputs = set(program.inputs)
        unknown = [n for n in [*self.wrt, *self.fixed] if n not in inputs]
        if unknown:
            raise UnknownInputs(unknown, program.inputs)
        self.inputs = [n for n in program.inputs if n not in self.fixed]
        self.names = ["value", *(f"d_{n}" for n in self.wrt)]
        self._tape = None

    def __reduce__(self):
        from .language import parse

        return _rebuild, (parse, self.program.source, self.wrt, self.fixed)

    def gradients(
        self, columns: Mapping[str, object], rows: int | None = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Value and the gradients chosen, each a 1-D float64 array of `rows` rows, given every
        input that is not fixed as a 1-D array (or a float, the same on every row)."""
        missing = [n for n in self.inputs if n not in columns]
        if missing:
            raise InputError(f"no column for input{'s' * (len(missing) > 1)} {', '.join(missing)}")
        if self._tape is None:
            self._tape = Tape(self.program)
        value, gradients = batch_gradients(self.program, {**columns, **self.fixed}, self._tape)
        if rows is not None and value.size != rows:  # no input varies from row to row
            value = np.broadcast_to(value, (rows,))
            gradients = {n: np.broadcast_to(g, (rows,)) for n, g in gradients.items()}
        return value, {n: gradients[n] for n in self.wrt}

    def __call__(self, table=None, /, **columns):
        if table is None:
            return self._results(self.gradients(columns))
        kind = type(table).__module__.split(".")[0]
        if kind == "pandas":
            return self._pandas(table)
        if kind == "pyarrow":
            return self._arrow(table)
        if isinstance(table, Mapping):
            return self._results(self.gradients(table))
        raise TypeError(f"expected a DataFrame, an Arrow table or a mapping, got {type(table)}")

    def _results(self, computed) -> dict[str, np.ndarray]:
        value, gradients = computed
        return dict(zip(self.names, [value, *gradients.values()], strict=True))

    def _check_names(self, columns: set[str]) -> None:
        clash = [n for n in self.names if n in columns]
        if clash:
            raise InputError(f"the table has a column {clash[0]}, which the results add")

    def _pandas(self, frame):
        self._check_names(set(frame.columns))
        columns = {n: np.asarray(frame[n], dtype=np.float64) for n in self.inputs if n in frame}
        results = self._results(self.gradients(columns, len(frame)))
        return frame.assign(**{n: _like(frame.index, a) for n, a in results.items()})

    def _arrow(self, table):
        from .io.numbers import floats, to_arrow

        names = set(table.column_names)
        self._check_names(names)
        columns = {n: floats(table.column(n), n, 1) for n in self.inputs if n in names}
        results = self._results(self.gradients(columns, table.num_rows))
        for name, values in results.items():
            table = table.append_column(name, to_arrow(values))
        return table


def _like(index, values: np.ndarray):
    import pandas as pd

    return pd.Series(values, index=index)


def _rebuild(parse, source: str, wrt: list[str], fixed: dict[str, float]) -> BatchFunction:
    return BatchFunction(parse(source), wrt, fixed)
