"""nanograd: differentiate expressions from the command line or from Python.

>>> from nanograd_cli import grad, diff
>>> grad("x*y + tanh(x)", x=2, y=3).gradients
{'x': 3.0706508248531645, 'y': 2.0}
>>> diff("x**3", "x")
'3*x**2'
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

from .engine import Value

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from graphviz import Digraph  # type: ignore[import-untyped]  # graphviz ships no types

    from .batch import BatchFunction
    from .program import Program
    from .results import Fit, GradientCheck, Gradients, Hessian, Jacobian

__version__ = "0.1.0"
__all__ = [
    "Value",
    "__version__",
    "check",
    "compile",
    "diff",
    "draw_dot",
    "fit",
    "grad",
    "hessian",
    "jacobian",
    "parse",
]


def parse(source: str) -> Program:
    """`source` parsed into a Program, to evaluate at as many points as needed."""
    from .language import parse

    return parse(source)


def grad(source: str, /, **inputs: float) -> Gradients:
    """The value of `source` and its gradient with respect to every input, at the point
    given by keywords: `grad("x*y", x=2, y=3)`."""
    from . import api

    # One result, as single() makes sure: Gradients, not a Jacobian.
    return cast("Gradients", api.grad(parse(source).single("grad()", "jacobian()"), inputs))


def jacobian(source: str, /, **inputs: float) -> Jacobian:
    """The value of every output of `source` (a source that ends by listing names, `u, v`;
    else its result) and their gradients, at the point given by keywords."""
    from . import api

    return api.jacobian(parse(source), inputs)


def hessian(source: str, /, **inputs: float) -> Hessian:
    """The value, gradient and Hessian of `source` at the point given by keywords."""
    from . import api

    return api.hessian(parse(source), inputs)


def check(source: str, /, **inputs: float) -> GradientCheck:
    """`source`'s gradient at the point given by keywords against central finite
    differences, with torch.autograd.gradcheck's tolerances."""
    from . import api

    return api.check(parse(source), inputs)


def fit(
    source: str,
    /,
    data: Mapping[str, Sequence[float]] | str | os.PathLike[str],
    target: str = "y",
    sigma: str | None = None,
    fix: Sequence[str] = (),
    steps: int | None = None,
    starts: Mapping[str, float] | None = None,
    **more: float,
) -> Fit:
    """A least-squares fit of `source`'s parameters (its inputs that name no column of
    `data`) to the rows of `data`: a mapping of column names to 1-D arrays (a pandas
    DataFrame is one), or the path of a CSV, Parquet, Arrow or JSON Lines file. The starts
    are keywords (`a=1, b=0.1`), or a mapping `starts` for a parameter named as one of these
    arguments (`starts={"sigma": 1}`). `target` is an expression over the columns; `sigma`
    names a column of each row's standard deviation; `fix` names parameters held at their
    start; `steps` caps the solver's evaluations per stage."""
    from . import api

    program, target_program = parse(source), parse(target)
    needed = {*program.inputs, *target_program.inputs, *([sigma] if sigma else [])}
    if isinstance(data, str | os.PathLike):
        from . import io

        path = os.fspath(data)
        data = io.read_table(path, io.input_format(path, None), needed, "data", "fit").columns
    columns = {name: data[name] for name in data if name in needed}  # others may be text
    points = {**(starts or {}), **more}
    return api.fit(program, columns, points, target_program, sigma, fix, steps)


def compile(source: str, /, *wrt: str, **fixed: float) -> BatchFunction:
    """`source` compiled for batches of points: `f = compile("x*y + tanh(x)")`, then `f(df)`
    for a pandas DataFrame, an Arrow RecordBatch or Table (the same with `value` and `d_NAME`
    columns added; for a source that lists outputs `u, v`, columns `u`, `v`, `du/dx`, ...) or
    `f(x=xs, y=ys)` for NumPy arrays (a dict of arrays). Gradients with respect to `wrt` (all
    inputs by default); `fixed` inputs have one value for every row."""
    from .batch import BatchFunction

    return BatchFunction(parse(source), list(wrt), fixed)


def diff(source: str, /, *wrt: str, latex: bool = False, exact: bool = False) -> str:
    """The derivative of `source` by each input in `wrt` (by default all), as text in the
    language (or LaTeX: a str that a notebook shows as the formula), as `nanograd diff`
    prints it (`exact`: as `diff --exact`)."""
    from . import api

    return api.diff(parse(source), wrt, latex, exact)


def draw_dot(root: Value, **options: Any) -> Digraph:
    """The computation graph of `root` as a `graphviz.Digraph` (see render.graph.draw_dot)."""
    from .render.graph import draw_dot

    return draw_dot(root, **options)
