"""nanograd: differentiate expressions from the command line or from Python.

>>> from nanograd_cli import grad, diff
>>> grad("x*y + tanh(x)", x=2, y=3).gradients
{'x': 3.0706508248531645, 'y': 2.0}
>>> diff("x**3", "x").text
'3*x**2'
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal, SupportsFloat, cast, overload

from ._door import (
    bound_pairs,
    group_column,
    names,
    numbers,
    point,
    python_door,
    saved_path,
    split,
    table,
)
from ._door import note as _note
from .engine import Value
from .errors import NanogradWarning
from .errors import option as _option

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy as np
    from graphviz import Digraph  # type: ignore[import-untyped]  # graphviz ships no types

    from ._batch import BatchFunction
    from ._door import Data, InputArg
    from ._fitted import Fit, Fits
    from ._program import Program
    from .results import (
        Derivative,
        Explanation,
        FormulaCheck,
        GradientCheck,
        Gradients,
        Hessian,
        Jacobian,
        Minimum,
        Taylor,
    )
    from .sampling import Curve, Surface

    # One name, or several.
    Names = str | Sequence[str]
    # An input's value: a number, or (for plot and check's against) a range, as the command
    # line writes it ("-3:3", "0:1:50") or as a tuple ((-3, 3), (0, 1, 50)).
    Sweep = InputArg | tuple[float, float] | tuple[float, float, int]
    # A fit's start: a number, or a str the command line reads as one.
    Start = SupportsFloat | str

__version__ = "0.1.0"
__all__ = [
    "BatchFunction",
    "Fit",
    "Fits",
    "NanogradWarning",
    "Program",
    "Value",
    "__version__",
    "check",
    "compile",
    "diff",
    "draw",
    "draw_dot",
    "explain",
    "fit",
    "grad",
    "hessian",
    "jacobian",
    "load_fit",
    "load_fits",
    "minimize",
    "parse",
    "plot",
    "taylor",
]

# The types of what `fit`, `load_fit`, `load_fits`, `compile` and `parse` return, to name in
# annotations (`nanograd_cli.Fit`): each imported when first named, as the commands import what
# they use.
_TYPES = {"Fit": "_fitted", "Fits": "_fitted", "BatchFunction": "_batch", "Program": "_program"}

if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        import importlib

        if name in _TYPES:
            return getattr(importlib.import_module(f".{_TYPES[name]}", __name__), name)
        if name in PUBLIC_MODULES:  # nanograd_cli.nn, as completion offers it
            return importlib.import_module(f".{name}", __name__)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        """The public names, with the types imported when first named and the public modules
        (docs/python.md): what completion offers, not `os` or `Any`, which the module uses."""
        return sorted({*__all__, *_TYPES, *PUBLIC_MODULES})


# The public modules (docs/python.md); every other one's name begins with an underscore.
PUBLIC_MODULES = ("errors", "results", "engine", "nn", "fitting", "sampling", "grammar", "render")


# Every command below takes the command line's options as keywords of the same names
# (`--hide-constants` is hide_constants=), the source's input values as keywords too, and an
# input named like an option in the mapping `inputs`. A nan or inf in a result is a
# NanogradWarning, or with strict=True a NonFiniteResult error.


def parse(source: str) -> Program:
    """`source` parsed into a Program, to evaluate at as many points as needed."""
    from ._language import parse

    if not isinstance(source, str):
        from .errors import InputError

        decode = " (decode bytes first: source.decode())" if isinstance(source, bytes) else ""
        raise InputError(f"the source is text, a str, not {type(source).__name__}{decode}")
    return parse(source)


@python_door
def grad(
    source: str,
    /,
    *,
    wrt: Names = (),
    mode: Literal["auto", "reverse", "forward"] = "auto",
    strict: bool = False,
    inputs: Mapping[str, InputArg] | None = None,
    **values: InputArg,
) -> Gradients:
    """The value of `source` and its gradient with respect to every input (or those `wrt`
    names), at the point given by keywords: `grad("x*y", x=2, y=3)`."""
    from . import _api as api

    # One number: a source that lists outputs, or whose result is an array, is jacobian()'s.
    program = parse(source).single("grad()", "jacobian()")
    at = numbers(point(program, "grad", values, inputs), "grad")
    result = api.grad(program, at, names(wrt, "wrt"), mode, strict, _note)
    from .results import Gradients

    if not isinstance(result, Gradients):  # an array's Jacobian
        from .errors import SeveralOutputs

        size = sum(getattr(value, "size", 1) for value in result.values.values())
        raise SeveralOutputs([f"result[{i}]" for i in range(size)], "grad()", "jacobian()")
    return result


@python_door
def jacobian(
    source: str,
    /,
    *,
    wrt: Names = (),
    mode: Literal["auto", "reverse", "forward"] = "auto",
    strict: bool = False,
    inputs: Mapping[str, InputArg] | None = None,
    **values: InputArg,
) -> Jacobian:
    """The value of every output of `source` (a source that ends by listing names, `u, v`;
    else its result) and their gradients, at the point given by keywords."""
    from . import _api as api

    program = parse(source)
    at = numbers(point(program, "jacobian", values, inputs), "jacobian")
    return api.jacobian(program, at, names(wrt, "wrt"), mode, strict, _note)


@python_door
def hessian(
    source: str,
    /,
    *,
    wrt: Names = (),
    strict: bool = False,
    inputs: Mapping[str, InputArg] | None = None,
    **values: InputArg,
) -> Hessian:
    """The value, gradient and Hessian of `source` at the point given by keywords; only
    the second derivatives by the inputs `wrt` (and the gradient by them), when given."""
    from . import _api as api

    program = parse(source)
    at = numbers(point(program, "hessian", values, inputs), "hessian")
    return api.hessian(program, at, names(wrt, "wrt"), strict, _note)


@python_door
def taylor(
    source: str,
    /,
    *,
    wrt: str | None = None,
    order: int = 5,
    strict: bool = False,
    inputs: Mapping[str, InputArg] | None = None,
    **values: InputArg,
) -> Taylor:
    """The Taylor polynomial of `source` in the input `wrt` (by default the only one)
    around its value given by keyword, to `order`, as `nanograd taylor` computes it: its
    `coefficients` (f⁽ᵏ⁾(A)/k!), `polynomial` (also its str) and `latex`; the other inputs
    held at their values."""
    from . import _api as api
    from .errors import InputError

    if wrt is not None and not isinstance(wrt, str):
        raise InputError(f"invalid value for {_option('wrt')}: {wrt!r} is not a name (a str)")
    program = parse(source)
    at = numbers(point(program, "taylor", values, inputs), "taylor")
    return api.taylor(program, at, wrt, order, strict, _note)


@overload
def check(
    source: str,
    /,
    *,
    against: None = None,
    wrt: Names = (),
    rtol: float | None = None,
    atol: float | None = None,
    strict: bool = False,
    inputs: Mapping[str, Sweep] | None = None,
    **values: Sweep,
) -> GradientCheck: ...


@overload
def check(
    source: str,
    /,
    *,
    against: Names,
    wrt: Names = (),
    rtol: float | None = None,
    atol: float | None = None,
    strict: bool = False,
    inputs: Mapping[str, Sweep] | None = None,
    **values: Sweep,
) -> FormulaCheck: ...


@python_door
def check(
    source: str,
    /,
    *,
    against: Names | None = None,
    wrt: Names = (),
    rtol: float | None = None,
    atol: float | None = None,
    strict: bool = False,
    inputs: Mapping[str, Sweep] | None = None,
    **values: Sweep,
) -> GradientCheck | FormulaCheck:
    """`source`'s gradient at the point given by keywords against central finite
    differences (within torch.autograd.gradcheck's tolerances unless `rtol`, `atol` say);
    or, with `against`, against derivatives worked out by hand (a formula, or NAME=FORMULA
    for each input, or diff's output as it is), at the point or over ranges of inputs
    (`x="0.1:3"`, `x=(0.1, 3, 50)`). `wrt` names the inputs (or elements, `x[0]`) to check,
    or the one a formula is the derivative by. The result's `passed` says whether it passed;
    a failure raises nothing."""
    from . import _api as api

    program = parse(source)
    given = point(program, "check", values, inputs)
    if against is None:
        at = numbers(given, "check")
        return api.check(program, at, rtol, atol, strict, _note, names(wrt, "wrt"))
    fixed, ranges = split(given)
    return api.check_against(
        program,
        names(against, "against"),
        fixed,
        ranges,
        names(wrt, "wrt"),
        rtol,
        atol,
        strict,
        _note,
    )


@overload
def diff(
    source: str,
    /,
    *names_: str,
    wrt: Names = (),
    format: Literal["text"] | None = None,
    latex: Literal[False] = False,
    exact: bool = False,
    shapes: Mapping[str, Sequence[int] | int | str] | None = None,
    order: int = 1,
    steps: Literal[False] = False,
    implicit: str | None = None,
    notes: Literal["usual", "all", "domain", "none"] = "usual",
    mixed: bool = False,
) -> Derivative: ...


@overload
def diff(
    source: str,
    /,
    *names_: str,
    wrt: Names = (),
    format: Literal["latex", "markdown"],
    latex: bool = False,
    exact: bool = False,
    shapes: Mapping[str, Sequence[int] | int | str] | None = None,
    order: int = 1,
    steps: bool = False,
    implicit: str | None = None,
    notes: Literal["usual", "all", "domain", "none"] = "usual",
    mixed: bool = False,
) -> str: ...


@overload
def diff(
    source: str,
    /,
    *names_: str,
    wrt: Names = (),
    format: Literal["latex"] | None = None,
    latex: Literal[True],
    exact: bool = False,
    shapes: Mapping[str, Sequence[int] | int | str] | None = None,
    order: int = 1,
    steps: bool = False,
    implicit: str | None = None,
    notes: Literal["usual", "all", "domain", "none"] = "usual",
    mixed: bool = False,
) -> str: ...


@overload
def diff(
    source: str,
    /,
    *names_: str,
    wrt: Names = (),
    format: Literal["text", "latex", "markdown"] | None = None,
    latex: bool = False,
    exact: bool = False,
    shapes: Mapping[str, Sequence[int] | int | str] | None = None,
    order: int = 1,
    steps: Literal[True],
    implicit: str | None = None,
    notes: Literal["usual", "all", "domain", "none"] = "usual",
    mixed: bool = False,
) -> str: ...


@python_door
def diff(
    source: str,
    /,
    *names_: str,
    wrt: Names = (),
    format: Literal["text", "latex", "markdown"] | None = None,
    latex: bool = False,
    exact: bool = False,
    shapes: Mapping[str, Sequence[int] | int | str] | None = None,
    order: int = 1,
    steps: bool = False,
    implicit: str | None = None,
    notes: Literal["usual", "all", "domain", "none"] = "usual",
    mixed: bool = False,
) -> Derivative | str:
    """The derivative of `source` by each input named (positionally or by `wrt`; by default
    all), as `nanograd diff` prints it: as text in the language, a `Derivative` (a str, the
    command line's output, with apart its `text` without `#` lines and its `conditions`,
    where each holds, by the name it is by), or with `format="latex"` as LaTeX (a str that
    a notebook shows as the formula; `latex=True` says the same), or with `steps` a str (`exact`:
    as `diff --exact`; `shapes`: the array inputs' shapes, as `diff --shape`, such as
    `{"A": (3, 2), "x": 2}`; `order`: the N-th derivative, as `diff --order N`; `steps`:
    the derivation, a rule a line, as `diff --steps`, also with `format="markdown"`;
    `implicit="y"`: dy/dx where the source is an equation relating x and y, as
    `diff --implicit y`; `notes`: which `#` notes, as `diff --notes`: "usual", "all" (also
    where it loses digits only for inputs past 1e30 in size), "domain" (where it holds) or
    "none"; `mixed`: with `order`, the mixed partial derivatives too, as
    `diff --mixed`)."""
    from . import _api as api
    from .errors import InputError

    if format is not None and not isinstance(format, str):
        raise TypeError(f"format={format!r:.40}: give 'text' or 'latex'")
    if latex and format not in (None, "latex"):
        raise InputError(f"latex=True and format={format!r} disagree: give one of them")
    program = parse(source)
    fmt = "latex" if latex else format or "text"
    wrt = (*names(names_, "wrt"), *names(wrt, "wrt"))
    text = api.diff(program, wrt, fmt, exact, shapes, order, steps, implicit, notes, mixed)
    found = api.diff_note(program, implicit)
    if found:
        _note(found)
    return text


@overload
def explain(
    source: str,
    /,
    *,
    format: None = None,
    digits: None = None,
    strict: bool = False,
    inputs: Mapping[str, InputArg] | None = None,
    **values: InputArg,
) -> Explanation: ...


@overload
def explain(
    source: str,
    /,
    *,
    format: Literal["table", "markdown", "latex", "json"],
    digits: int | Literal["full"] | None = None,
    strict: bool = False,
    inputs: Mapping[str, InputArg] | None = None,
    **values: InputArg,
) -> str: ...


@python_door
def explain(
    source: str,
    /,
    *,
    format: Literal["table", "markdown", "latex", "json"] | None = None,
    digits: int | Literal["full"] | None = None,
    strict: bool = False,
    inputs: Mapping[str, InputArg] | None = None,
    **values: InputArg,
) -> Explanation | str:
    """The forward and backward passes of `source` at the point given by keywords, node by
    node: an Explanation, or with `format` the text `nanograd explain --format` prints (a
    plain table, Markdown, LaTeX or JSON), every number in full or, with `digits`, to that
    many significant digits in a table, Markdown and LaTeX."""
    from . import _api as api
    from .errors import InputError

    fmt = (
        None if format is None else api.choice("format", format, api.EXPLAIN_FORMATS, any_case=True)
    )
    shown = api.digits(digits)
    if shown is not None and fmt is None:
        raise InputError("digits= shapes the text that format= gives: give format too")
    program = parse(source)
    at = numbers(point(program, "explain", values, inputs), "explain")
    result = api.explain(program, at, strict, _note)
    if fmt is None:
        return result
    from .render._explanation import written
    from .render._table import number_formats

    return written(result, fmt, number_formats(shown)[0])


@python_door
def draw(
    source: str,
    /,
    *,
    output: str | os.PathLike[str] | None = None,
    format: Literal["svg", "png", "pdf", "dot", "html"] | None = None,
    rankdir: Literal["LR", "TB", "RL", "BT"] | None = None,
    hide_constants: bool = False,
    edge_grads: bool = False,
    dpi: int | None = None,
    legend: bool = True,
    statements: bool = True,
    scalars: bool = False,
    grad_of: str | None = None,
    strict: bool = False,
    inputs: Mapping[str, InputArg] | None = None,
    **values: InputArg,
) -> bytes:
    """The computation graph of `source` at the point given by keywords, every node with
    its data and gradient (a source with arrays: an array per node, or with `scalars` its
    graph of scalars), as `format` (by default what `output`'s extension says, else
    svg). A source of several outputs is one graph of them all, with the gradients of the
    output `grad_of` (by default the first). Written to the path `output` whole or not at
    all, when given; returned either way."""
    from . import _api as api

    path = None if output is None else os.fspath(output)
    if format is None:
        from .render.graph import format_of

        format = cast("Any", format_of(path)) if path else "svg"
    program = parse(source)
    at = numbers(point(program, "draw", values, inputs), "draw")
    data = api.draw(
        program,
        at,
        cast("str", format),
        rankdir,
        hide_constants,
        edge_grads,
        dpi,
        legend,
        statements,
        strict,
        _note,
        scalars=scalars,
        grad_of=grad_of,
    )
    if path is not None:
        from ._output_files import write_atomically

        write_atomically(path, data)
    return data


@python_door
def plot(
    source: str,
    /,
    *,
    output: str | os.PathLike[str] | None = None,
    ylim: Literal["auto", "full"] | tuple[float, float] = "auto",
    title: str | None = None,
    logx: bool = False,
    logy: bool = False,
    size: tuple[float, float] | str | None = None,
    tangent: float | None = None,
    second: bool = False,
    inputs: Mapping[str, Sweep] | None = None,
    **values: Sweep,
) -> Curve | Surface:
    """`source` and its derivative sampled over a range of one input (a Curve), or it and
    its gradient on a grid over ranges of two (a Surface): give a range as the command line
    writes it (`x="-3:3"`, `x="0:1:50"`) or as a tuple (`x=(-3, 3)`), the other inputs as
    numbers. With `output`, the picture is written there too (.svg, .png or .pdf), with
    `title`, log axes (`logx`, `logy`), a `size` in inches, and with `tangent` A the tangent
    line of f at A (which the Curve carries); with `second`, the Curve carries d2f/dx2 too
    (`curve.second`), and the picture shows it."""
    from . import _api as api
    from .sampling import CURVE_POINTS

    path = None if output is None else os.fspath(output)
    program = parse(source)
    fixed, ranges = split(point(program, "plot", values, inputs))
    if path is not None:
        from .render.figures import format_of

        fmt = format_of(path)
    # A surface is returned to Python with or without a picture of it.
    result = api.plot(
        program,
        fixed,
        ranges,
        CURVE_POINTS,
        path is not None or len(ranges) == 2,
        _note,
        ylim,
        tangent,
        second,
        title,
        logx,
        logy,
        size,
    )
    if path is not None:
        from ._output_files import write_atomically
        from .render.figures import figure

        write_atomically(path, figure(result, fmt))
    return result


@python_door
def minimize(
    source: str,
    /,
    *,
    steps: int = 10000,
    lr: float = 0.01,
    method: Literal["sgd", "momentum", "adam", "bfgs", "lbfgs", "newton"] = "adam",
    tol: float = 1e-8,
    wrt: Names = (),
    fix: Names = (),
    data: Data | None = None,
    batch: int | None = None,
    seed: int | None = None,
    drop_nan: bool = False,
    bounds: Mapping[str, tuple[float, float] | str] | None = None,
    plot: str | os.PathLike[str] | None = None,
    strict: bool = False,
    inputs: Mapping[str, InputArg] | None = None,
    weight_decay: float = 0.0,
    lr_schedule: Literal["constant", "step", "cosine"] = "constant",
    lr_step_size: int | None = None,
    lr_gamma: float | None = None,
    lr_t_max: int | None = None,
    lr_min: float | None = None,
    **values: InputArg,
) -> Minimum:
    """Gradient descent on `source` from the point given by keywords (with `method`, at
    the learning rate `lr`), until the gradient's norm is at most `tol` or `steps` are
    taken; `method` bfgs, lbfgs or newton: SciPy's BFGS, L-BFGS-B or trust-region Newton
    on the exact gradient (and Hessian), without `lr`, with `bounds` ({NAME: (LO, HI)} or
    "LO:HI") for lbfgs. `wrt` names the inputs to move, or `fix` those to hold. With `data`
    (a mapping of columns, or the path of a table), `source` is a loss per row: the inputs
    named as a column are read per row and the mean is minimized over the others (`batch`
    rows a step, shuffled with `seed`; `drop_nan` leaves out the rows with a missing value).
    A run that does not converge comes back with `converged` false. `plot`: the path of a
    picture (.svg, .png, .pdf) of the descent, its path on the contour plot of `source` for
    two inputs and the loss at every step otherwise, as `minimize --plot` writes it.
    `weight_decay` adds
    that times each parameter to its gradient, and `lr_schedule` `"step"` (every
    `lr_step_size` steps the rate times `lr_gamma`) or `"cosine"` (down to `lr_min` over
    `lr_t_max` steps) changes the rate each step, as torch.optim's do. A descent whose value
    or gradient becomes nan or inf raises Diverged, whose `reached` is the last finite
    point."""
    from . import _api as api

    picture = None if plot is None else os.fspath(plot)
    descent = None
    if picture is not None:
        from .render.figures import format_of
        from .sampling import Descent

        fmt = format_of(picture)  # before any step: a name that says no format fails at once
        descent = Descent()
    program = parse(source)
    columns = None
    if data is not None:
        columns = cast(
            "dict[str, Sequence[float]]",
            table(data, api.data_reads(program), "data", "minimize", drop_nan),
        )
    at = numbers(point(program, "minimize", values, inputs), "minimize")
    api.check_data_options(data, batch, drop_nan, seed, None, formats=False)
    schedule = api.lr_schedule(lr_schedule, steps, lr_step_size, lr_gamma, lr_t_max, lr_min)
    from .errors import Diverged, Interrupted

    stopped: Diverged | Interrupted | None = None
    try:
        result = api.minimize(
            program,
            at,
            steps,
            lr,
            method,
            tol,
            strict,
            _note,
            wrt=names(wrt, "wrt"),
            fix=names(fix, "fix"),
            on_point=descent and descent.record,
            data=columns,
            batch=batch,
            seed=seed,
            drop_nan=drop_nan,
            weight_decay=weight_decay,
            schedule=schedule,
            bounds=bound_pairs(bounds),
        )
    except (Diverged, Interrupted) as stop:  # drawn up to the last point reached, then raised
        result, stopped = cast("Minimum", stop.reached), stop
    if picture is not None:  # every descent that ran, converged or not
        from ._output_files import write_atomically
        from .render.figures import descent_figure

        assert descent is not None  # made for the picture
        write_atomically(picture, descent_figure(program, descent, method, result, fmt))
    if stopped:
        raise stopped
    return result


@overload
def fit(
    source: str,
    /,
    data: Data,
    target: str | None = ...,
    sigma: str | None = ...,
    fix: Names = ...,
    steps: int | None = ...,
    starts: Mapping[str, Start] | None = ...,
    *,
    bounds: Mapping[str, tuple[float, float] | str] | None = ...,
    absolute_sigma: bool = ...,
    derive: Names | Mapping[str, str] = ...,
    drop_nan: bool = ...,
    restarts: int = ...,
    seed: int | None = ...,
    loss: str = ...,
    f_scale: float | None = ...,
    ci: float | None = ...,
    profile: bool = ...,
    plot: str | os.PathLike[str] | None = ...,
    band: float | None = ...,
    logx: bool = ...,
    logy: bool = ...,
    inputs: Mapping[str, Start] | None = ...,
    by: None = ...,
    shared: Names = ...,
    **more: Start,
) -> Fit: ...


@overload
def fit(
    source: str,
    /,
    data: Data,
    target: str | None = ...,
    sigma: str | None = ...,
    fix: Names = ...,
    steps: int | None = ...,
    starts: Mapping[str, Start] | None = ...,
    *,
    bounds: Mapping[str, tuple[float, float] | str] | None = ...,
    absolute_sigma: bool = ...,
    derive: Names | Mapping[str, str] = ...,
    drop_nan: bool = ...,
    restarts: int = ...,
    seed: int | None = ...,
    loss: str = ...,
    f_scale: float | None = ...,
    ci: float | None = ...,
    profile: bool = ...,
    plot: str | os.PathLike[str] | None = ...,
    band: float | None = ...,
    logx: bool = ...,
    logy: bool = ...,
    inputs: Mapping[str, Start] | None = ...,
    by: str,
    shared: tuple[()] = ...,
    **more: Start,
) -> Fits: ...


@overload
def fit(
    source: str,
    /,
    data: Data,
    target: str | None = ...,
    sigma: str | None = ...,
    fix: Names = ...,
    steps: int | None = ...,
    starts: Mapping[str, Start] | None = ...,
    *,
    bounds: Mapping[str, tuple[float, float] | str] | None = ...,
    absolute_sigma: bool = ...,
    derive: Names | Mapping[str, str] = ...,
    drop_nan: bool = ...,
    restarts: int = ...,
    seed: int | None = ...,
    loss: str = ...,
    f_scale: float | None = ...,
    ci: float | None = ...,
    profile: bool = ...,
    plot: str | os.PathLike[str] | None = ...,
    band: float | None = ...,
    logx: bool = ...,
    logy: bool = ...,
    inputs: Mapping[str, Start] | None = ...,
    by: str,
    shared: str,
    **more: Start,
) -> Fit: ...


@overload
def fit(
    source: str,
    /,
    data: Data,
    target: str | None = ...,
    sigma: str | None = ...,
    fix: Names = ...,
    steps: int | None = ...,
    starts: Mapping[str, Start] | None = ...,
    *,
    bounds: Mapping[str, tuple[float, float] | str] | None = ...,
    absolute_sigma: bool = ...,
    derive: Names | Mapping[str, str] = ...,
    drop_nan: bool = ...,
    restarts: int = ...,
    seed: int | None = ...,
    loss: str = ...,
    f_scale: float | None = ...,
    ci: float | None = ...,
    profile: bool = ...,
    plot: str | os.PathLike[str] | None = ...,
    band: float | None = ...,
    logx: bool = ...,
    logy: bool = ...,
    inputs: Mapping[str, Start] | None = ...,
    by: str,
    shared: Sequence[str],
    **more: Start,
) -> Fit | Fits: ...


@python_door
def fit(
    source: str,
    /,
    data: Data,
    target: str | None = None,
    sigma: str | None = None,
    fix: Names = (),
    steps: int | None = None,
    starts: Mapping[str, Start] | None = None,
    *,
    bounds: Mapping[str, tuple[float, float] | str] | None = None,
    absolute_sigma: bool = False,
    derive: Names | Mapping[str, str] = (),
    drop_nan: bool = False,
    restarts: int = 0,
    seed: int | None = None,
    loss: str = "linear",
    f_scale: float | None = None,
    ci: float | None = None,
    profile: bool = False,
    plot: str | os.PathLike[str] | None = None,
    band: float | None = None,
    logx: bool = False,
    logy: bool = False,
    inputs: Mapping[str, Start] | None = None,
    by: str | None = None,
    shared: Names = (),
    **more: Start,
) -> Fit | Fits:
    """A least-squares fit of `source`'s parameters (its inputs that name no column of
    `data`) to the rows of `data`: a mapping of column names to 1-D arrays (a pandas
    DataFrame is one), or the path of a CSV, Parquet, Arrow or JSON Lines file. The starts
    are keywords (`a=1, b=0.1`), or a mapping `inputs` (or `starts`) for a parameter named
    as one of these arguments (`inputs={"sigma": 1}`). `target` is an expression over the
    columns (None: the column y); `sigma` names a column of each row's standard deviation;
    `fix` names parameters held at their start; `steps` caps the solver's evaluations per stage. The
    result's `fitted` and `residuals` are per row, in the order of `data`'s rows; its
    `statistics` (chi2, r2, aic, bic, t, p, correlation) are always there; `bounds` keeps
    parameters between LO and HI (`{"k": (0, math.inf)}` or `{"k": "0:inf"}`), `at_bound`
    names those that end at one; `absolute_sigma` takes sigma as known; `derive`
    ("half_life = log(2)/k", several, or a mapping `{"half_life": "log(2)/k"}`) adds
    quantities of the parameters with their
    standard errors by the delta method (`derived`); `drop_nan` leaves out rows with a
    missing value; `restarts` more fits from scattered starts (with `seed`) keep the best;
    `loss` ("soft_l1", "huber", "cauchy", "arctan"; "linear" by default) with `f_scale`
    makes the fit robust, its standard errors approximate; and `ci` holds
    confidence intervals at the level `ci` (0.95) when given, with `profile` the profile
    likelihood's. `plot`:
    the path of a picture (.svg, .png, .pdf) of the data, the fitted curve and the
    residuals over the one column the model reads (with `by`, every group in one figure),
    written when the fit converged, with the confidence band at the level `band` shaded
    and, with `logx`, `logy`, log axes. The
    result predicts at new rows (`result.predict(rows, band=0.95)`) and saves
    (`result.save("fit.json")`). `by` names a column: a fit per group of rows with the same
    value in it, given back as Fits, a mapping of each group's value to its Fit; with
    `shared` (a parameter's name, or several), one Fit of every group where those parameters
    are one for all and each other one per group (`a[g]`)."""
    from collections import abc

    from . import _api as api
    from . import results

    program = parse(source)
    target_program = None if target is None else parse(target)  # (None: the column y)
    needed = api.fit_reads(program, target_program, sigma)
    picture = None if plot is None else os.fspath(plot)
    if band is not None:
        api.confidence("band", band)  # before the fit
        if picture is None:
            from .errors import InputError

            raise InputError(
                f"{_option('band')} is drawn on {_option('plot')}: give both, or predict with "
                "the result's predict(rows, band=...)"
            )
    api.check_fit_axes(picture, logx, logy)
    api.check_grouping(by, names(shared, "shared"))
    if picture is not None:
        from .render.figures import format_of

        fmt = format_of(picture)  # before the fit: a name that says no format fails at once
    columns = cast("dict[str, Sequence[float]]", table(data, needed, "data", "fit", drop_nan))
    groups = None if by is None else group_column(data, by, needed)
    given = numbers(point(program, "fit", more, {**(starts or {}), **(inputs or {})}), "fit")
    if picture is not None:
        api.fit_predictor(program, columns)
    result = api.fit(
        program,
        columns,
        cast("dict[str, float]", given),
        target_program,
        sigma,
        names(fix, "fix"),
        steps,
        ci=ci,
        bounds=bound_pairs(bounds),
        absolute_sigma=absolute_sigma,
        derive=[f"{k} = {v}" for k, v in derive.items()]
        if isinstance(derive, abc.Mapping)
        else names(derive, "derive"),
        drop_nan=drop_nan,
        restarts=restarts,
        seed=seed,
        loss=loss,
        f_scale=f_scale,
        profile=profile,
        by=groups,
        shared=names(shared, "shared"),
    )
    from ._fitted import Fit, Fits

    if isinstance(result, results.Fits):
        result.by = cast(str, by)
    else:
        result.by = by  # (the column of the groups sharing parameters)
    for warning in api.fit_notes(result):
        _note(f"note: {warning}")
    if picture is not None and not result.converged:
        _note(f"note: {picture} not written: the fit did not converge")
    elif picture is not None:
        from ._output_files import write_atomically

        drawn, notes = api.fit_picture(program, columns, result, groups, by, fmt, band, logx, logy)
        for note in notes:
            _note(f"note: {note}")
        write_atomically(picture, cast(bytes, drawn))
    from ._output_files import files_read

    made = Fits.of(result) if isinstance(result, results.Fits) else Fit.of(result)
    for one in [made, *(made.values() if isinstance(made, Fits) else [])]:
        one.read = files_read()  # (save writes over none of them)
    return made


@python_door
def load_fit(path: str | os.PathLike[str], /) -> Fit:
    """The fit saved at `path` by `Fit.save` or `nanograd fit --save`: predict with it
    (`load_fit("decay.json").predict({"t": [5, 6]}, band=0.95)`) without the data. A file
    of fits by group (`fit --by COLUMN --save`, `Fits.save`) is `load_fits`'s: InputError."""
    from . import _api as api
    from ._fitted import Fit
    from .errors import InputError
    from .results import Fits

    found = api.load_fit(saved_path(path, "load_fit"))
    if isinstance(found, Fits):
        raise InputError(
            f"{os.fspath(path)} holds a fit per {found.by} ({len(found)} groups): load it "
            "with load_fits(path)"
        )
    return Fit.of(found)


@python_door
def load_fits(path: str | os.PathLike[str], /) -> Fits:
    """The fits by group saved at `path` by `Fits.save` or `nanograd fit --by COLUMN
    --save`: a Fit per group, each of which predicts. A file of one fit (a joint fit with
    `shared` parameters is one) is `load_fit`'s: InputError."""
    from . import _api as api
    from ._fitted import Fits
    from .errors import InputError
    from .results import Fits as Groups

    found = api.load_fit(saved_path(path, "load_fits"))
    if not isinstance(found, Groups):
        raise InputError(f"{os.fspath(path)} holds one fit: load it with load_fit(path)")
    return Fits.of(found)


def compile(
    source: str, /, *wrt: str, **fixed: SupportsFloat | np.ndarray | list[Any]
) -> BatchFunction:
    """`source` compiled for batches of points: `f = compile("x*y + tanh(x)")`, then `f(df)`
    for a pandas DataFrame, an Arrow RecordBatch or Table (the same with `value` and `d_NAME`
    columns added; for a source that lists outputs `u, v`, columns `u`, `v`, `du/dx`, ...) or
    `f(x=xs, y=ys)` for NumPy arrays (a dict of arrays). Gradients with respect to `wrt` (all
    inputs by default); `fixed` inputs have one value for every row. It is the route
    `nanograd grad --points` takes, a batch of rows at a time."""
    from ._batch import BatchFunction

    return BatchFunction(parse(source), list(wrt), fixed)


def draw_dot(root: Value, **options: Any) -> Digraph:
    """The computation graph of `root` as a `graphviz.Digraph` (see render.graph.draw_dot)."""
    from collections.abc import Mapping

    from ._api import RANKDIRS, choice
    from .render.graph import draw_dot

    if not isinstance(root, Value):
        raise TypeError(f"draw_dot(root): root is a Value, not {type(root).__name__}")
    names = options.get("names")
    if names is not None:
        if not isinstance(names, Mapping):
            raise TypeError(f"names: give a dict of Values to str, not {type(names).__name__}")
        for value, name in names.items():
            if not isinstance(value, Value) or not isinstance(name, str):
                raise TypeError(
                    f"names: give a dict of Values to str, not one of {type(value).__name__} "
                    f"to {type(name).__name__}"
                )
    if options.get("rankdir") is not None:
        options["rankdir"] = choice("rankdir", options["rankdir"], RANKDIRS, any_case=True)
    for flag in ("hide_constants", "edge_grads", "legend"):
        if not isinstance(options.get(flag, False), bool):
            raise TypeError(f"{flag}={options[flag]!r:.40}: give True or False")

    return draw_dot(root, **options)
