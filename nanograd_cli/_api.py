"""One function per command, over a parsed program and a point.

The command line (`_cli/`), the repl and the top-level Python names call these and nothing
else below them, so every check a command makes lives here once and raises the library's
typed errors (`errors.py`), worded for any caller; each caller words names of its own (an
option, a command) at its edge. The IEEE policy is here too: the first nan or inf that an
input or an operation made is passed to `warn` (a `SourceError`, or a note as text), or with
`strict` raised as `NonFiniteResult`.

A command's implementation is imported when the command runs, so that calling one does not
load the others (plotting and drawing bring NumPy, Matplotlib and Graphviz).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ._output_files import reading
from ._program import Program
from .errors import (
    Diverged,
    InputError,
    Interrupted,
    MissingInputs,
    NanogradError,
    NonFiniteResult,
    NotAnInput,
    SourceError,
    UnknownInputs,
    command,
    file_name,
    option,
    printable,
)
from .results import (
    Derivative,
    DerivedQuantity,
    Explanation,
    Fit,
    Fits,
    FormulaCheck,
    GradientCheck,
    Gradients,
    Hessian,
    Jacobian,
    LaTeX,
    Layout,
    Minimum,
    Taylor,
    array_of,
    by_element,
    element_name,
    element_names,
    flattened,
    group_name,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

    from ._descent import Loss, PointLoss
    from ._io import Table
    from ._points import PointsRun
    from ._training import Schedule
    from .render.figures import FitCurve
    from .results import InputValue
    from .sampling import Curve, Range, Surface

Warn = Callable[[SourceError | str], None]
# The layout of a program with no arrays: results are given back as they are.
NO_ARRAYS = Layout({}, {})

# Past this many nodes in a picture, `draw` suggests how to make it readable.
BIG_GRAPH = 1000

# The choices of the options that take one, which every door offers and `choice` checks.
MODES = ("auto", "reverse", "forward")
DRAW_FORMATS = ("svg", "png", "pdf", "dot", "html")
RANKDIRS = ("LR", "TB", "RL", "BT")  # (any case)
# The descent's update rules (_descent.py), then SciPy's methods (_second_order.py).
METHODS = ("sgd", "momentum", "adam", "bfgs", "lbfgs", "newton")
SECOND_ORDER = METHODS[3:]  # SciPy's, with no rate
LR = 0.01  # minimize's learning rate unless told
DIFF_FORMATS = ("text", "latex", "markdown")
EXPLAIN_FORMATS = ("table", "markdown", "latex", "json")
TAYLOR_FORMATS = ("table", "json", "latex")
# The notes `diff` writes under a derivative: where it holds and where it loses digits for
# inputs of usual size; all; where it holds; none.
DIFF_NOTES = ("usual", "all", "domain", "none")
# The dots per inch `draw` makes a png at.
DPI = (1, 2400)
# The extension of what --save writes, a fit or a point: JSON.
SAVED = (".json",)


# The checks of an option's value, worded as the command line words them (`invalid value for
# --rtol: -1 is not at least 0`) for every door: the command line's own parsing makes them
# before the api is reached, the repl and Python reach them here.


def choice(name: str, value: object, choices: Sequence[str], any_case: bool = False) -> str:
    """The value of the option `name`, which must be one of `choices` (in any case with
    `any_case`: tb is TB, SVG is svg)."""
    if any_case and isinstance(value, str):
        same = next((c for c in choices if c.lower() == value.lower()), None)
        if same is not None:
            return same
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise InputError(f"invalid value for {option(name)}: {value!r} is not one of {listed}")
    return value


def digits(value: object) -> str | None:
    """The value of the option digits, as text: a number of significant digits from 1 to 17
    (an int, or its digits as text), or 'full' (in any case, as a format is); None for none."""
    if value is None:
        return None
    if isinstance(value, str) and value.lower() == "full":
        return "full"
    if type(value) is not int and not isinstance(value, str):
        raise TypeError(  # (only Python gives other than text)
            f"digits={value!r}: give a number of digits or 'full', not {type(value).__name__}"
        )
    whole = isinstance(value, int) or value.isdigit()
    if not whole or not 1 <= int(value) <= 17:  # type: ignore[call-overload]
        raise InputError(
            f"invalid value for {option('digits')}: {value!r} is neither a number of digits "
            "from 1 to 17 nor 'full'"
        )
    return str(int(value))  # type: ignore[call-overload]


def number(name: str, value: object, least: float | None = 0.0, above: bool = False) -> float:
    """The value of the option `name`: a number (a str is read as the command line reads
    it) at least `least`, or with `above` more than it, and never nan; with `least` None,
    any number (the command's own call checks it). A NumPy number is one too."""
    from numbers import Real

    try:
        if isinstance(value, bool) or not isinstance(value, str | Real):
            raise ValueError
        given = float(value)
    except (ValueError, OverflowError):
        raise InputError(
            f"invalid value for {option(name)}: {value!r} is not a valid float"
        ) from None
    if math.isinf(given) and isinstance(value, str) and "inf" not in value.lower():
        raise InputError(f"invalid value for {option(name)}: {value} is too large for a float")
    if least is not None and not (given > least if above else given >= least):  # nan: neither
        relation = "more than" if above else "at least"
        raise InputError(f"invalid value for {option(name)}: {given:g} is not {relation} {least:g}")
    return given


def whole(name: str, value: object, least: int | None, most: int | None = None) -> int:
    """The value of the option `name`: a whole number (a str is read as the command line
    reads it) from `least`, to `most` if given; with `least` None, any. A NumPy integer is
    one too."""
    from numbers import Integral

    try:
        if isinstance(value, bool) or not isinstance(value, str | Integral):
            raise ValueError
        given = int(value)
    except ValueError:
        raise InputError(
            f"invalid value for {option(name)}: {value!r} is not a valid integer"
        ) from None
    if least is not None and most is not None and not least <= given <= most:
        raise InputError(f"{option(name)} must be from {least} to {most}, not {given}")
    if least is not None and given < least:
        raise InputError(f"invalid value for {option(name)}: {given} is not at least {least}")
    return given


def grad(
    program: Program,
    point: Mapping[str, InputValue],
    wrt: Sequence[str] = (),
    mode: str = "auto",
    strict: bool = False,
    warn: Warn | None = None,
) -> Gradients | Jacobian:
    """The value and gradient at `point`, or for a source that lists outputs their values
    and Jacobian; only the derivatives by `wrt`, when given. `mode` is reverse, forward, or
    auto: the Jacobian picks the mode by its shape, and one result is reverse mode."""
    mode = choice("mode", mode, MODES)
    check_wrt(wrt, program.inputs, elements=True)
    program, point, layout = scalarized(program, point, missing=MissingInputs)
    result = program.jacobian(point, mode) if program.outputs else program.grad(point, mode)
    non_finite(result.non_finite, strict, warn)
    return layout.shaped(result.only(layout.elements(wrt)))


def jacobian(
    program: Program,
    point: Mapping[str, InputValue],
    wrt: Sequence[str] = (),
    mode: str = "auto",
    strict: bool = False,
    warn: Warn | None = None,
) -> Jacobian:
    """The value of every output (a source that ends by listing names, `u, v`; else its
    result) and their gradients at `point`."""
    mode = choice("mode", mode, MODES)
    check_wrt(wrt, program.inputs, elements=True)
    program, point, layout = scalarized(program, point, missing=MissingInputs)
    result = program.jacobian(point, mode)
    non_finite(result.non_finite, strict, warn)
    return layout.shaped(result.only(layout.elements(wrt)))


def grad_line(
    line: str,
    values: Mapping[str, float],
    number: int,
    wrt: Sequence[str] = (),
    mode: str = "auto",
    strict: bool = False,
    warn: Warn | None = None,
) -> Gradients:
    """`grad --each-line`: the line numbered `number` of a longer input as a source of its
    own, at the values of `values` it reads; the gradients by `wrt`, or else by every name
    of `values`. A nan or inf is warned of (or raised) at its place in that line."""
    from ._language import parse

    mode = choice("mode", mode, MODES)
    program = parse(line).single(f"grad {option('each_line')}", None)
    point = {n: values[n] for n in program.inputs if n in values}
    program, point, layout = scalarized(program, point, missing=MissingInputs)
    if layout.results.get("result"):
        raise InputError(
            f"a line's result is one number, not an array of shape {layout.results['result']} "
            f"(its Jacobian: {command('grad')} without {option('each_line')})"
        )
    result = layout.shaped(program.grad(point, mode))
    where = result.non_finite
    non_finite(where.at_line(number) if where else None, strict, warn)
    gradients: dict[str, InputValue] = {}
    for name in wrt or values:  # an input this line does not read has 0s
        whole = result.gradients.get(array_of(name), _zero(values.get(array_of(name), 0.0)))
        if name in values:
            gradients[name] = whole
        else:  # an element, x[0]
            element = element_name(name, getattr(values[array_of(name)], "shape", ()))
            gradients[element] = by_element({array_of(name): whole})[element]
    return Gradients(result.value, result.inputs, gradients, result.non_finite)  # type: ignore[arg-type]  # arrays


def _zero(value: InputValue) -> InputValue:
    """The derivative by an input that is not read: 0, or zeros of an array's shape."""
    if not getattr(value, "ndim", 0):
        return 0.0
    import numpy as np

    return np.zeros(np.shape(value))


def grad_points(
    program: Program,
    points: tuple[str, str],
    output: tuple[str | None, str],
    fixed: Mapping[str, InputValue],
    wrt: Sequence[str] = (),
    mode: str = "auto",
    strict: bool = False,
    warn: Warn | None = None,
    progress: Callable[..., object] | None = None,
    null: bool = False,
    na: bool = False,
    flat: bool = False,
    drop_nan: bool = False,
) -> PointsRun:
    """`grad --points`: the value and gradients at every row of the table `points` (a path,
    `-` for standard input, and its format), written with the rows to `output` (a path, or
    standard output for None or `-`, and a format), a batch of rows at a time through the
    same compiled route as `compile()`. Rows whose value is nan or inf are counted and the
    first is warned of; with `strict`, a nan or inf that an operation made is an error. JSON
    rows have the single-point shape, or with `flat` the CSV's columns as keys, and write
    nan, inf and -inf as strings, or with `null` as null. With `na`, a missing value (empty,
    NA, null) is read as nan, not refused; with `drop_nan`, a row where an input is nan or
    missing is left out, and a note to `warn` says how many."""
    from . import _io as io

    mode = choice("mode", mode, MODES)
    check_wrt(wrt, program.inputs, elements=True)
    if mode == "forward":
        raise InputError(
            f"{option('points')} runs the vectorized reverse mode: drop {option('mode', 'forward')}"
        )
    io.pyarrow_required()
    from ._points import run_points

    run = run_points(
        program, points, output, dict(fixed), list(wrt), strict, progress, null, na, flat, drop_nan
    )
    if run.dropped and warn:
        warn(f"note: {io.left_out(run.dropped)}")
    if run.non_finite and warn:
        rows = "1 row has" if run.non_finite == 1 else f"{run.non_finite} rows have"
        warn(f"warning: {rows} a non-finite result; the first: {run.first_bad}")
    return run


def hessian(
    program: Program,
    point: Mapping[str, InputValue],
    wrt: Sequence[str] = (),
    strict: bool = False,
    warn: Warn | None = None,
) -> Hessian:
    """The value, gradient and matrix of second derivatives at `point` (by the elements of
    array inputs, W[1,2]); only those by the inputs `wrt` (or their elements), when given."""
    from ._symbolic import hessian as second_derivatives

    check_wrt(wrt, program.inputs, elements=True)
    program, point, layout = scalarized(program, point, missing=MissingInputs)
    one_output(program, "hessian").check_inputs(point)
    chosen = set(layout.elements(wrt))
    result = second_derivatives(program, dict(point), [n for n in program.inputs if n in chosen])
    non_finite(result.non_finite, strict, warn)
    return result


# The highest derivative `diff --order` writes (each order can double its length).
MAX_ORDER = 20


def diff(
    program: Program,
    wrt: Sequence[str] = (),
    fmt: str = "text",
    exact: bool = False,
    shapes: Mapping[str, Sequence[int] | int | str] | None = None,
    order: int | str = 1,
    steps: bool = False,
    implicit: str | None = None,
    notes: str = "usual",
    mixed: bool = False,
) -> Derivative | str:
    """The derivative by each input in `wrt` (by default all) as text in the language (a
    `Derivative`: the text, and apart from it where each holds), or with `fmt` latex as
    LaTeX: with one name, a program whose result is the derivative;
    `order` N (a whole number from 1): the N-th derivative by each name. As a
    textbook writes it, with a note where that differs from the engine's at some points;
    `exact`: a form equal to the engine's derivative at every point (with the helpers powlog
    and step). `shapes` gives array inputs their shapes (a tuple, or the text `3,2`): the
    derivative is then in vector form where one exists (`2*A.T@(A@x - b)`), else an array
    literal, element by element (the others are numbers).
    `steps`: the derivation, a rule a line, ending with the derivative (`fmt` text, markdown
    or latex). `implicit` y: dy/dx for the one name x of `wrt`, where the source is an
    equation (`lhs == rhs`, or an expression that is 0) relating x and y. `notes`: which of
    the `#` notes are shown: usual (all but where it loses digits the engine keeps only for
    inputs past USUAL in size), all, domain (where it holds, not where it loses digits) or
    none. `mixed`, with `order` 2 or more: every mixed partial derivative
    of that order by the names too (`d2_x_y`: by x, then by y)."""
    fmt = choice("format", fmt, DIFF_FORMATS, any_case=True)
    notes = choice("notes", notes, DIFF_NOTES, any_case=True)
    latex = fmt == "latex"
    order = whole("order", order, 1, MAX_ORDER)
    if mixed and order == 1:
        raise InputError(
            f"{option('mixed')} is for {option('order', 2)} or more: a first derivative "
            "is by one name"
        )
    if mixed and implicit is not None:
        raise InputError(f"{option('mixed')} and {option('implicit')}: give one of them")
    if steps or implicit is not None:
        text = _diff_special(program, list(wrt), fmt, exact, shapes, order, steps, implicit, notes)
        return Derivative.of(text, list(wrt)) if fmt == "text" and not steps else text
    if fmt == "markdown":
        raise InputError(
            f"{option('format', 'markdown')} is for {option('steps')}: a derivative alone is "
            f"text or latex"
        )
    if shapes is not None and not isinstance(shapes, Mapping):
        raise InputError("shapes: give a mapping of each array input to its shape, {'x': 3}")
    sizes = {name: shape(name, given) for name, given in (shapes or {}).items()}
    if sizes:
        unknown = [name for name in sizes if name not in program.input_slots]
        if unknown:
            raise UnknownInputs(unknown, program.inputs)
    one_output(program, "diff")
    if any(sizes.values()):
        from ._array_diff import derivatives_text as array_derivatives
        from ._arrays import ShapeProblem

        check_wrt(wrt, program.inputs, elements=True)
        try:
            if order == 1:
                text = array_derivatives(program, sizes, list(wrt), latex, exact, notes)
            else:
                text = _higher_of_elements(program, sizes, wrt, latex, exact, order, notes, mixed)
        except ShapeProblem as problem:  # A@x, with a shape for A alone: x is a number
            unshaped = [n for n in program.inputs if n not in sizes]
            if not unshaped or "for a number" not in problem.message:
                raise
            hint = f" ({', '.join(unshaped)} {'has' if len(unshaped) == 1 else 'have'} no shape: "
            hint += f"{option('shape', f'{unshaped[0]}=DIMS')})"
            raise ShapeProblem(problem.message + hint, problem.source, problem.offset) from None
    else:
        from ._arrays import ShapeProblem
        from ._symbolic import derivatives_text

        try:
            program, _, _ = scalarized(program, {})  # sum([x, x**2]): numbers, written out
        except ShapeProblem as problem:  # x@x: the inputs are numbers without shapes
            hint = f" (the shape of an array input: {option('shape', 'NAME=DIMS')})"
            raise ShapeProblem(problem.message + hint, problem.source, problem.offset) from None
        check_wrt(wrt, program.inputs, elements=True)
        for name in wrt:
            if name not in program.inputs:  # x[0], and x has no shape
                shaped = option("shape", f"{array_of(name)}=N")
                raise InputError(f"{option('wrt', name)}: give {array_of(name)} a shape, {shaped}")
        with_inputs(program, "its derivative is 0 by every name")
        text = derivatives_text(program, list(wrt), latex, exact, order, notes=notes, mixed=mixed)
    return LaTeX(text) if latex else Derivative.of(text, list(wrt) or program.inputs)


# The highest order `taylor` takes: a term costs the order squared per operation (cubed for
# whole powers and the gamma functions), and past it the coefficients of most functions are
# below the smallest float or past the largest.
MAX_TAYLOR_ORDER = 100


def taylor(
    program: Program,
    point: Mapping[str, InputValue],
    wrt: str | None = None,
    order: int | str = 5,
    strict: bool = False,
    warn: Warn | None = None,
) -> Taylor:
    """The Taylor polynomial of the result in the input `wrt` (by default the only input)
    around its value in `point`, to `order` (a whole number from 0): each coefficient
    f⁽ᵏ⁾(A)/k! from truncated power series carried through every operation (`_jets.py`), the
    other inputs held at their values."""
    from ._jets import pi_fraction, polynomial, series
    from ._symbolic import whole_numbers

    order = whole("order", order, 0, MAX_TAYLOR_ORDER)
    try:
        program, point, layout = scalarized(program, point, missing=MissingInputs)
        one_output(program, "taylor").check_inputs(point)
    except MissingInputs as error:  # the value of the input expanded in is the point A
        centre = wrt if wrt is not None else program.inputs[0] if len(program.inputs) == 1 else ""
        if error.names == [centre]:
            error.message += ", the point to expand around"
        raise
    shape = layout.inputs.get(wrt, ()) if wrt is not None else ()
    if wrt is not None and shape:  # an array: the polynomial is in one of its elements
        first = option("wrt", element_names(wrt, shape)[0])
        raise InputError(
            f"{option('wrt', wrt)}: {wrt} is an array of shape {shape}; a Taylor polynomial is "
            f"in one number: give one of its elements, such as {first}"
        )
    if wrt is None:
        if len(program.inputs) != 1:
            with_inputs(program, "there is nothing to expand in")
            raise InputError(
                f"give the input to expand in, {option('wrt', 'NAME')}: one of "
                + ", ".join(program.inputs)
            )
        wrt = program.inputs[0]
    check_wrt([wrt], program.inputs)
    coefficients, where = series(program, wrt, point, order)
    non_finite(where, strict, warn)
    inputs = {name: float(point[name]) for name in program.inputs}
    at = inputs[wrt]
    # a whole centre, or one that is a fraction of pi (pi/6), as a course takes it
    exact = whole_numbers(program) and (at.is_integer() or pi_fraction(abs(at)) is not None)
    text, latex = (polynomial(coefficients, wrt, at, latex, exact) for latex in (False, True))
    return Taylor(program.source, wrt, at, inputs, coefficients, text, LaTeX(latex), where)


def _higher_of_elements(
    program: Program,
    sizes: Mapping[str, tuple[int, ...]],
    wrt: Sequence[str],
    latex: bool,
    exact: bool,
    order: int,
    notes: str,
    mixed: bool,
) -> str:
    """The `order`-th derivative by each of `wrt` (`mixed`: by each combination of them too),
    numbers or elements of arrays (`x[0]`), of `program` written out in scalars for the
    arrays of `sizes` (`notes`: which are shown)."""
    from ._arrays import written_out
    from ._symbolic import derivatives_text

    arrays = [name for name in wrt or program.inputs if sizes.get(name)]
    if arrays:
        element = option("wrt", f"{arrays[0]}[0]")
        raise InputError(
            f"{option('order')} of an array input is by one of its elements, such as {element} "
            f"({arrays[0]} is an array: its second derivative would be a matrix)"
        )
    if not wrt:  # every input, and none is an array
        wrt = program.inputs
    from ._language import parse

    def read(text: str) -> Program:  # x[0] in a derivative's text: the input of that name
        parsed = parse(text)
        return written_out(parsed, {n: sizes[n] for n in parsed.inputs if n in sizes})[0]

    scalar, _ = written_out(program, sizes)
    names = [n if n in program.inputs else element_name(n, sizes.get(array_of(n), ())) for n in wrt]
    return derivatives_text(scalar, names, latex, exact, order, read, notes, mixed)


def _diff_special(
    program: Program,
    wrt: list[str],
    fmt: str,
    exact: bool,
    shapes: Mapping[str, Sequence[int] | int | str] | None,
    order: int,
    steps: bool,
    implicit: str | None,
    notes: str,
) -> str:
    """`diff` with `steps` or `implicit` (see `diff`)."""
    asked = option("steps") if steps else option("implicit", implicit)
    if steps and implicit is not None:
        raise InputError(f"{option('steps')} and {option('implicit')}: give one of them")
    if exact:
        raise InputError(f"{asked} writes the textbook form: leave out {option('exact')}")
    if shapes:
        raise InputError(f"{asked} is for numbers: leave out {option('shape')}")
    one_output(program, "diff")
    if steps:
        from ._derivation import derivations, written
        from ._formula import shown

        if order != 1:
            raise InputError(
                f"{option('steps')} writes the first derivative: leave out {option('order')}"
            )
        with_inputs(program, "its derivative is 0 by every name")
        check_wrt(wrt, program.inputs)
        derived = derivations(program, wrt or program.inputs)
        for derivation in derived:
            derivation.notes = shown(derivation.notes, notes)
        text = written(derived, fmt, len(program.inputs) > 1)
    else:
        from ._implicit import implicit_text

        if fmt == "markdown":
            raise InputError(f"{option('format', 'markdown')} is for {option('steps')}")
        if not isinstance(implicit, str):
            raise InputError(f"{option('implicit')}: give the name of an input, such as 'y'")
        if program.arrays:
            raise InputError(f"{asked} is for numbers: the source has arrays")
        if not wrt:
            raise InputError(
                f"{asked} needs {option('wrt', 'NAME')}, the variable {implicit} depends on"
            )
        if len(wrt) > 1:
            raise InputError(f"{asked} takes one {option('wrt')}: {implicit} depends on one")
        text = implicit_text(program, implicit, wrt[0], fmt == "latex", order, notes)
    return LaTeX(text) if fmt == "latex" else text


def shape(name: str, given: Sequence[int] | int | str) -> tuple[int, ...]:
    """The shape of the array input `name`: whole numbers from 1, as a tuple, one number, or
    the text `3,2` (also `3x2`, `(3, 2)`; `()` for a number)."""
    from numbers import Integral

    from ._arrays import MAX_AXES

    bad = InputError(
        f"{option('shape', f'{name}={given}')}: give whole numbers from 1, such as 3 or 3,2"
    )
    if isinstance(given, str):
        text = given.strip()
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1].strip().removesuffix(",")
            if not text:
                return ()
        parts = re.split("\\s*[,xX\u00d7]\\s*", text)
        if not all(re.fullmatch(r"[0-9]+", p) for p in parts):
            raise bad
        dims = [int(p) for p in parts]
    else:
        items = list(given) if isinstance(given, tuple | list) else [given]
        if not all(isinstance(d, Integral) and not isinstance(d, bool) for d in items):
            raise bad
        dims = [int(d) for d in items]  # type: ignore[arg-type]  # Integral, checked
    if any(d < 1 for d in dims):
        raise bad
    if len(dims) > MAX_AXES:
        raise InputError(f"{option('shape', name)}: an array has at most {MAX_AXES} axes")
    return tuple(dims)


def diff_note(program: Program, implicit: str | None = None) -> str | None:
    """A note for a source that reads two inputs named as a ratio, `dy` and `dx`: they are
    inputs, not the derivative of y by x, and how to ask for that; for an equation
    differentiated without `implicit`: it compares, and how to ask for dy/dx."""
    from ._instructions import Apply

    last = program.code[program.result]
    if implicit is None and isinstance(last, Apply) and last.op.name == "==":
        compares = (
            "note: == compares its sides (1 where they are equal, else 0): its derivative is 0"
        )
        if len(program.inputs) < 2:
            return compares
        x, y = program.inputs[0], program.inputs[-1]
        return (
            f"{compares}; for d{y}/d{x} along the curve the equation makes, use "
            f"{option('implicit', y)} {option('wrt', x)}"
        )
    named = set(program.inputs) | set(program.labels.values())
    glued = _glued_call(program.inputs, named)
    if glued is not None:
        name, function, argument = glued
        return (
            f"note: {name} is an input here, a name of its own; for {function} of "
            f"{argument}, write {function}({argument})"
        )
    ratios = [n for n in program.inputs if n[:1] == "d" and len(n) > 1]
    if len(ratios) != 2:
        return None
    top, bottom = ratios
    if top[1:] in named and bottom[1:] in named:  # y = x**2; dy/dx
        return (
            f"note: {top} and {bottom} are inputs here; the derivative of {top[1:]} by "
            f"{bottom[1:]} is what {command('diff')} prints with {option('wrt', bottom[1:])}"
        )
    if ratios == program.inputs:  # dy/dx alone
        return (
            f"note: {top} and {bottom} are inputs here; for the derivative of {top[1:]} "
            f"by {bottom[1:]}, give {top[1:]} itself and {option('wrt', bottom[1:])}"
        )
    return None


# The functions of a course that a student may glue to their argument: sinx, ln2x.
_GLUED = re.compile(r"(a?(?:sin|cos|tan|sec|csc|cot)h?|log|ln|exp|sqrt|cbrt|abs)([0-9]*)([A-Za-z])")


def _glued_call(inputs: list[str], named: set[str]) -> tuple[str, str, str] | None:
    """An input that reads as a function of a course glued to its argument, `sinx`, `ln2x`
    (where the argument's name is of the source too, as in `x*sinx`, or every input is so
    glued, as in `sinx*cosx`): the input, the function and the argument; None if none."""
    glued = {name: _GLUED.fullmatch(name) for name in inputs}
    every = all(glued.values())
    for name, found in glued.items():
        if found is not None and (found[3] in named or every):
            function, times, letter = found.groups()
            argument = f"{times}*{letter}" if times else letter
            return name, "log" if function == "ln" else function, argument
    return None


def explain(
    program: Program,
    point: Mapping[str, InputValue],
    strict: bool = False,
    warn: Warn | None = None,
) -> Explanation:
    """The forward and backward passes at `point`, node by node."""
    from ._written_out import explain as written_out

    program, point, _ = scalarized(program, point, missing=MissingInputs)
    result = written_out(one_output(program, "explain"), point)
    non_finite(result.non_finite, strict, warn)
    return result


# The tolerances against finite differences: torch.autograd.gradcheck's.
CHECK_RTOL, CHECK_ATOL = 1e-3, 1e-5


def check(
    program: Program,
    point: Mapping[str, InputValue],
    rtol: float | None = None,
    atol: float | None = None,
    strict: bool = False,
    warn: Warn | None = None,
    wrt: Sequence[str] = (),
) -> GradientCheck:
    """The gradient at `point` against central finite differences, within `rtol` and `atol`
    (by default CHECK_RTOL and CHECK_ATOL), by the inputs `wrt` names (numbers, arrays or
    elements of arrays, `x[0]`), else by every input; the result says whether every one
    passed, and `failure` says what failed."""
    from ._gradcheck import gradient_check

    check_wrt(wrt, program.inputs, elements=True)
    program, point, layout = scalarized(program, point, missing=MissingInputs)
    program = with_inputs(one_output(program, "check"), "there is nothing to check")
    rtol = CHECK_RTOL if rtol is None else number("rtol", rtol)
    atol = CHECK_ATOL if atol is None else number("atol", atol)
    result = gradient_check(program, point, rtol, atol, layout.elements(wrt))
    non_finite(result.non_finite, strict, warn)
    return result


# Where a range gives no number of points: along one range, and along each of several.
CHECK_POINTS = (101, 11)
# At most this many points in all.
MAX_CHECK_POINTS = 100_000
# The tolerances against a formula: both are exact derivatives, so only rounding differs.
AGAINST_RTOL, AGAINST_ATOL = 1e-9, 1e-12


def check_against(
    program: Program,
    against: Sequence[str],
    fixed: Mapping[str, InputValue],
    ranges: Mapping[str, Range] | None = None,
    wrt: Sequence[str] = (),
    rtol: float | None = None,
    atol: float | None = None,
    strict: bool = False,
    warn: Warn | None = None,
) -> FormulaCheck:
    """The engine's derivatives against hand-derived formulas, at the point `fixed` or at
    every point of the grid `ranges` make (the other inputs at `fixed`). Each formula is
    `NAME=FORMULA`, the derivative by the input NAME, or for the one input (or the one in
    `wrt`) just FORMULA. The result says whether they agree within the tolerances (by
    default AGAINST_RTOL and AGAINST_ATOL) at every point where the engine's derivative is a
    number; `failure` says where they do not."""
    from ._gradcheck import formula_check
    from ._language import parse

    rtol = AGAINST_RTOL if rtol is None else number("rtol", rtol)
    atol = AGAINST_ATOL if atol is None else number("atol", atol)

    program = with_inputs(one_output(program, "check"), "there is nothing to check")
    written, point, layout = scalarized(program, fixed)
    if layout.results.get("result"):
        raise InputError(
            f"{command('check')} {option('against')} takes a source whose result is one "
            f"number, not an array of shape {layout.results['result']}"
        )
    ranges = dict(ranges or {})
    check_wrt(wrt, program.inputs, elements=True)
    wrt = [w.replace(" ", "") for w in wrt]

    def is_input(name: str) -> bool:
        return array_of(name) in program.inputs

    formulas: dict[str, Formula] = {}
    given = [pair for text in against for pair in _diff_lines(text, program.inputs)]
    for named, text in given:
        lines = [line for line in text.splitlines() if line.strip() and line.strip()[0] != "#"]
        name, equals, rest = text.partition("=")
        name = name.strip().replace(" ", "")
        if name.startswith("d_") and is_input(name[2:]) and not is_input(name):
            name = name[2:]  # d_x = y, as diff writes it: the derivative by x
        single = len(lines) == 1  # several lines bind names (p = x*y) before the formula
        if named:
            name = named
        elif single and equals and is_input(name) and not rest.startswith("="):
            text = rest.strip()
        elif single and equals and not rest.startswith("=") and re.fullmatch(r"[A-Za-z_]\w*", name):
            raise InputError(
                f"{text!r}: {name} names no input of the source ({', '.join(program.inputs)})"
            )
        elif len(given) > 1 and (len(wrt) == 1 or len(program.inputs) == 1):
            only = wrt[0] if wrt else program.inputs[0]
            raise InputError(
                f"{option('against')} is given {len(given)} times for d/d{only}, the one "
                f"input{' --wrt names' if wrt else ''}: give one formula"
            )
        elif len(given) > 1:
            raise InputError(
                f"give each formula as NAME=FORMULA when there are several: {_shown(text)} has "
                f"no NAME= (the inputs are {', '.join(program.inputs)})"
            )
        elif len(wrt) == 1 or len(program.inputs) == 1:
            name = wrt[0] if wrt else program.inputs[0]
        else:
            raise InputError(
                f"say which derivative {_shown(text)} is: {option('wrt', 'NAME')}, or "
                f"NAME=FORMULA (the inputs are {', '.join(program.inputs)})"
            )
        if wrt and name not in wrt:
            raise InputError(
                f"the formula for d/d{name} is for an input {option('wrt')} does not name"
            )
        if name in formulas:
            raise InputError(f"two formulas for d/d{name}: give one")
        shown = "; ".join(
            line.strip() for line in text.splitlines() if line.strip() and line[:1] != "#"
        )
        if not shown:
            raise InputError(f"{option('against', text, quoted=True)}: the formula is empty")
        try:
            formula = parse(text)
        except SourceError as error:
            raise InputError(f"{option('against', text, quoted=True)}: {error}") from None
        formula.single("a formula", None)
        unknown = [n for n in formula.inputs if n not in program.inputs]
        if unknown:
            raise InputError(
                f"the formula for d/d{name} reads {unknown[0]}, which is no input of the source"
            )
        # as a line, without diff's comment; and the condition where it holds, if it says
        formulas[name] = Formula(shown, formula, *_condition(text, program.inputs))
    if not formulas:
        raise InputError("give a formula to check against")
    for name in ranges:
        if name not in program.inputs:
            raise NotAnInput(name, list(program.inputs))
    written.check_inputs({**point, **{name: r.low for name, r in ranges.items()}})
    default = CHECK_POINTS[0] if len(ranges) == 1 else CHECK_POINTS[1]
    spans = {name: (r.low, r.high, r.points or default) for name, r in ranges.items()}
    total = 1
    for _, _, count in spans.values():
        total *= count
    if total > MAX_CHECK_POINTS:
        raise InputError(f"{total:,} points to check: at most {MAX_CHECK_POINTS:,}")
    if layout.has_arrays or any(array_of(name) != name for name in formulas):
        formulas = _formulas_by_element(formulas, layout)
    result = layout.shaped(formula_check(written, formulas, point, spans, rtol, atol))
    if not ranges or strict:  # over ranges, a nan is a point left out, unless --strict
        non_finite(result.non_finite, strict, warn)
    for name, agreement in result.checks.items():
        if agreement.outside and warn:
            where = formulas[name].condition if name in formulas else ""
            warn(
                f"note: {agreement.outside} of {agreement.points} points "
                f"{'is' if agreement.outside == 1 else 'are'} outside where the formula for "
                f"d/d{name} holds{f' ({where})' if where else ''}: not checked"
            )
    return result


def _condition(text: str, inputs: Sequence[str]) -> tuple[str, tuple[Program, ...]]:
    """The condition a formula states where it holds, on a `#` line as diff writes it
    (`# x > 0`, `# x > 0 and y != 0`): its text and a program per part, each 1 where it
    holds. A comment line that is no such condition says nothing."""
    from ._language import parse
    from ._ops import COMPARISONS
    from ._program import Apply

    def compares(p: Program) -> bool:
        last = p.code[p.result]
        return isinstance(last, Apply) and last.op in COMPARISONS

    for line in text.splitlines():
        if line.strip()[:1] != "#":
            continue
        said = line.strip()[1:].strip()
        try:
            parts = tuple(parse(part) for part in said.split(" and "))
        except SourceError:
            continue
        if all(set(p.inputs) <= set(inputs) and not p.outputs and compares(p) for p in parts):
            return said, parts
    return "", ()


def _diff_lines(text: str, inputs: Sequence[str]) -> list[tuple[str | None, str]]:
    """`text`, or where it is diff's output with `d_x = ...` lines (each maybe with a comment
    under it, after the lines that bind the names they use), one formula per input or element
    (`d_x[1] = ...`): its name, and the binding lines, then that line's expression, then its
    comment. Else `text`, with no name."""
    lines = text.splitlines()
    derivatives = [
        (i, found[1].replace(" ", ""))
        for i, line in enumerate(lines)
        if (found := re.match(r"\s*d_([A-Za-z_]\w*(?:\[[-0-9, ]*\])?)\s*=(?!=)", line))
        and array_of(found[1]) in inputs
    ]
    if not derivatives:
        return [(None, text)]
    named = {i for i, _ in derivatives}
    bindings = [line for i, line in enumerate(lines) if i not in named and line[:1] != "#"]
    ends = [i for i, _ in derivatives[1:]] + [len(lines)]
    formulas: list[tuple[str | None, str]] = []
    for (i, name), end in zip(derivatives, ends, strict=True):
        comments = [line for line in lines[i + 1 : end] if line[:1] == "#"]
        expression = lines[i].partition("=")[2].strip()
        formulas.append((name, "\n".join([*bindings, expression, *comments])))
    return formulas


class Formula(NamedTuple):
    """A formula to check a derivative against: as shown, its program, and the condition
    where it holds (`x > 0`), with a program per part of it (none where it states none)."""

    shown: str
    program: Program
    condition: str = ""
    conditions: tuple[Program, ...] = ()


def _formulas_by_element(formulas: Mapping[str, Formula], layout: Layout) -> dict[str, Formula]:
    """The formulas for the derivatives by the inputs of `layout`, written out in scalars:
    one by each element of an array input (x[0], x[1], ...), each the element of the
    formula's array of the input's shape; a formula by one element (`x[1]`) is a number."""
    from ._arrays import result_elements, written_out

    shapes = {name: shape for name, shape in layout.inputs.items() if shape}

    def scalar(program: Program) -> tuple[Program, Layout]:
        return written_out(program, {n: shapes[n] for n in program.inputs if n in shapes})

    found: dict[str, Formula] = {}
    for name, formula in formulas.items():
        whole, made = scalar(formula.program)
        conditions = tuple(result_elements(*scalar(c))[0] for c in formula.conditions)
        base = array_of(name)
        shape = () if base != name else layout.inputs.get(name, ())
        result = made.results["result"]
        if result != shape:
            raise InputError(
                f"the formula for d/d{name} has shape {result}, and {name} has shape {shape}"
            )
        names = (
            [element_name(name, layout.inputs.get(base, ()))]
            if base != name
            else element_names(name, shape)
        )
        for element, program in zip(names, result_elements(whole, made), strict=True):
            found[element] = Formula(formula.shown, program, formula.condition, conditions)
    return found


def failure(
    result: GradientCheck | FormulaCheck | Minimum | Fit | Fits,
    tol: float | None = None,
    method: str = "adam",
) -> str | None:
    """Why a run that gave a result failed, as its error says it; None where it did not: a
    check that did not pass, a descent (by `method`) whose gradient is still above `tol`, a
    fit that did not converge."""
    if isinstance(result, Minimum):
        if result.converged:
            return None
        steps = "1 step" if result.steps == 1 else f"{result.steps} steps"
        above = (
            f"did not converge: after {steps} the gradient's norm is "
            f"{result.gradient_norm:.3g}, more than {option('tol', f'{tol:g}')}"
        )
        if result.stopped:
            return f"{above}: {result.stopped}"
        if result.start is not None:
            value, norm = result.start
            if result.value < value and result.gradient_norm >= norm:
                return (
                    f"{above}: the value fell from {value:.3g} to {result.value:.3g} and the "
                    f"gradient's norm did not shrink (from {norm:.3g}): the loss may have no "
                    "minimum, falling without bound"
                )
        rate = f", or another {option('lr')}," if method not in SECOND_ORDER else ""
        return f"{above} (more {option('steps')}{rate} may reach it)"
    if isinstance(result, Fit):
        return None if result.converged else f"the fit did not converge: {result.message}"
    if isinstance(result, Fits):
        failed = len(result.unconverged)
        return (
            None
            if not failed
            else f"{failed} of {len(result)} groups did not converge (see their rows)"
        )
    if isinstance(result, GradientCheck):
        from ._gradcheck import failures

        return None if result.passed else f"gradient check failed for {failures(result)}"
    differ = [(name, c) for name, c in result.checks.items() if c.differ]
    if len(differ) > 1:  # each by name, or how many and the worst
        worst = max(differ, key=lambda pair: _by_size(pair[1].max_abs_error))[0]
        named = ", ".join(f"d/d{name}" for name, _ in differ)
        if len(differ) > 5:
            named = f"{len(differ)} derivatives (the worst: d/d{worst})"
        return f"the formulas for {named} differ from the engine's derivatives"
    for name, c in result.checks.items():
        if c.differ:
            # (x**x*(log(x) + 1) is -inf at 0, where the engine's derivative is 0)
            unbounded = c.differ == len(c.first) and all(
                not math.isfinite(m.formula) and math.isfinite(m.engine) for m in c.first
            )
            where = (
                ": the formula is not finite where they differ; where it holds only on part of "
                "the range, say so on a line under it, as diff does (# x > 0)"
                if unbounded and c.outside == 0
                else ""
            )
            return (
                f"the formula for d/d{name} differs from the engine's derivative at "
                f"{c.differ:,} of {c.points - c.skipped - c.kinks:,} points{where}"
            )
        if c.points == c.skipped:
            return (
                f"the source or its derivative by {name} is nan at every point: the range is "
                "outside its domain"
            )
        if c.kinks and c.points == c.skipped + c.outside + c.kinks:
            return (
                f"the source has a kink in {name} at every point checked: it has no "
                "derivative there to compare the formula with"
            )
    return None


def _by_size(error: float) -> float:
    """An error to compare: nan (a formula that is nan where the engine's is not) largest."""
    return math.inf if math.isnan(error) else error


# Names other trainers give the settings of a descent: the option and what it sets.
_SETTINGS = {
    **dict.fromkeys(
        ("epochs", "iterations", "iters", "n_steps", "n_iter", "max_iter", "num_steps"),
        ("steps", "number of steps"),
    ),
    **dict.fromkeys(("learning_rate", "eta", "step_size"), ("lr", "learning rate")),
    **dict.fromkeys(("tolerance", "gtol"), ("tol", "tolerance")),
    **dict.fromkeys(("batch_size",), ("batch", "batch size")),
}


def minimize(
    program: Program,
    start: Mapping[str, InputValue],
    steps: int = 10000,
    lr: float = LR,
    method: str = "adam",
    tol: float = 1e-8,
    strict: bool = False,
    warn: Warn | None = None,
    on_step: Callable[[int, float], None] | None = None,
    on_point: Callable[[dict[str, float], float], None] | None = None,
    wrt: Sequence[str] = (),
    fix: Sequence[str] = (),
    data: Mapping[str, Sequence[float]] | None = None,
    batch: int | None = None,
    seed: int | None = None,
    drop_nan: bool = False,
    weight_decay: float = 0.0,
    schedule: Schedule | None = None,
    on_log: Callable[[int, float, float], None] | None = None,
    bounds: Mapping[str, tuple[float, float] | str] | None = None,
) -> Minimum:
    """Gradient descent from `start` until the gradient's norm is at most `tol` or `steps`
    are taken (with `method` bfgs, lbfgs or newton, SciPy's iterations: _second_order.py),
    moving only the inputs in `wrt`, or all but those in `fix`. With `data`
    (columns by name), the program is a loss per row: the inputs that name a column are
    read per row and the mean over the rows (or over `batch` rows a step, shuffled each pass
    with `seed`) is minimized over the others. A value or gradient that is nan or inf on the
    way is an error; at the start, the start is to blame (bad input). The result is converged
    where the gradient's norm at the point reached (over every row, with `batch`) is at
    most `tol`. `drop_nan` leaves out the rows where a column it reads is nan. `weight_decay`
    and `schedule` (see `lr_schedule`) change each step as torch.optim's do; `on_log(step,
    loss, gradient norm)` is called at each point. A value or gradient that becomes nan or
    inf after the start raises Diverged with the last point where both were finite. `bounds`
    (lbfgs only) keep inputs by name between LO and HI, a pair or the text `LO:HI`."""
    from ._descent import at_point, over_rows
    from ._descent import minimize as descend

    with_inputs(one_output(program, "minimize"), "there is nothing to move")
    steps = whole("steps", steps, 1)
    lr = number("lr", lr, above=True)
    method = choice("method", method, METHODS)
    tol = number("tol", tol)
    weight_decay = number("weight_decay", weight_decay)
    batch = None if batch is None else whole("batch", batch, 1)
    seed = None if seed is None else whole("seed", seed, 0)
    _second_order_settings(method, bounds, batch)
    if data is not None:
        from .fitting import not_shadowed

        not_shadowed(program, data, "the source")
    missing = missing_of(data)  # (before the columns are read as floats, which drops names)
    program, start, layout = scalarized(program, start, data or (), missing)
    wrt, fix = layout.elements(wrt), layout.elements(fix)
    parameters = [n for n in program.inputs if data is None or n not in data]
    if data is not None:
        from ._batch import column_floats

        read = {name: column_floats(name, values, "column ") for name, values in data.items()}
        data = cast("dict[str, Sequence[float]]", read)
    if data is not None and drop_nan:
        data = _without_missing(data, [n for n in program.inputs if n in data], warn)
    if data is not None:
        given = [n for n in start if n in data]
        if given:
            raise InputError(f"{given[0]} is a column of the data: give no start value for it")
        if data and not len(next(iter(data.values()))):
            left = " left once the rows with a missing value are left out" if drop_nan else ""
            raise InputError(f"the data has no rows{left}")
    inputs, moved = set(program.inputs), set(parameters)  # (an array's elements: 100,000 names)
    unknown = [n for n in start if n not in inputs]
    if unknown:  # `--epochs 5`: a setting of the descent, given as an input's value
        meant = next((_SETTINGS[n] for n in unknown if n in _SETTINGS), None)
        hint = f"; for the descent's {meant[1]}, give {option(meant[0])}" if meant else ""
        raise UnknownInputs(unknown, parameters, hint)
    try:
        program.check_inputs({**start, **{n: 0.0 for n in program.inputs if n not in moved}})
    except MissingInputs as error:
        raise missing(error.names) from None
    if wrt and fix:
        raise InputError(
            f"give the inputs to move ({option('wrt')}) or those to hold ({option('fix')}), "
            "not both"
        )
    for name, asked in [*((n, "wrt") for n in wrt), *((n, "fix") for n in fix)]:
        if data is not None and name in data and name in inputs:  # a column's
            raise InputError(
                f"{option(asked, name)}: {name} is a column of the data, read per row: "
                f"{option(asked)} names the parameters ({', '.join(parameters) or 'none'})"
            )
    check_wrt(wrt, parameters)
    for name in fix:
        if name not in moved:
            raise NotAnInput(name, parameters, "fix", "input" if data is None else "parameter")
    held = set(fix)
    moving = list(wrt) or [n for n in parameters if n not in held]
    if not parameters:
        raise InputError(
            "every input of the source is a column of the data: there is no parameter to "
            "move (an input that names no column is one, and needs a start)"
        )
    if not moving:
        raise InputError(f"every input is held by {option('fix')}: there is nothing to move")
    point = {n: start[n] for n in parameters}
    loss: Loss | PointLoss
    if data is None:
        non_finite(program.first_non_finite(program.values(point)), strict, warn)
        loss = at_point(program, steps + 1)
    else:
        rows = {n: data[n] for n in program.inputs if n in data}
        _finite_rows_at_start(program, rows, point)
        loss = over_rows(program, rows, batch, seed)
    every_row = over_rows(program, rows) if data is not None and batch else None

    def over_every_row(
        every_row: Loss, at: Mapping[str, float]
    ) -> tuple[float, dict[str, float], float]:
        value, gradients = every_row(dict(at))
        return value, gradients, math.hypot(*(gradients[n] for n in moving))

    if method in SECOND_ORDER:
        from ._second_order import minimize as quasi_newton
        from .fitting import checked_bounds

        if weight_decay or schedule is not None or lr != LR:
            raise InputError(
                f"{option('lr')}, {option('weight_decay')} and {option('lr_schedule')} are for "
                f"sgd, momentum and adam: {option('method', method)} has no rate"
            )
        kept = checked_bounds(  # a bound of an array is each element's, as fit's
            {e: bound(n, b) for n, b in (bounds or {}).items() for e in layout.elements([n])},
            point,
            moving,
        )
        hessian = None
        if method == "newton":
            from ._symbolic import hessian_at, hessian_over_rows

            if data is None:
                at = hessian_at(program)
                hessian = lambda p: at(p).hessian  # noqa: E731
            else:
                hessian = hessian_over_rows(program, rows)
        try:
            found = quasi_newton(
                loss, point, moving, steps, method, tol, kept, on_step, on_point, hessian, on_log
            )
        except Interrupted as stop:  # the point reached, in the inputs' shapes
            stop.reached = layout.shaped(cast(Minimum, stop.reached))
            raise
        return layout.shaped(_with_start(found, every_row or loss, point, moving))
    settled = (lambda at: over_every_row(every_row, at)[2] <= tol) if every_row else None
    try:
        result = descend(
            loss, point, moving, steps, lr, method, tol, on_step, on_point, settled,
            weight_decay, schedule, on_log,
        )  # fmt: skip
    except (Diverged, Interrupted) as stop:  # the point reached, in the inputs' shapes
        stop.reached = layout.shaped(cast(Minimum, stop.reached))
        raise
    if every_row:  # the loss over every row, not the last batch's
        value, gradients, norm = over_every_row(every_row, result.inputs)
        result = Minimum(value, result.inputs, gradients, norm, result.steps, norm <= tol)
    return layout.shaped(_with_start(result, every_row or loss, point, moving))


def _with_start(
    result: Minimum, loss: Callable, point: Mapping[str, float], moving: Sequence[str]
) -> Minimum:
    """`result`, where the descent ran out of steps, with the value and gradient's norm
    at its start (`failure` says from them whether the loss may have no minimum)."""
    if result.converged or result.stopped:
        return result
    value, gradients = loss(dict(point))
    start = (float(value), math.hypot(*(gradients[n] for n in moving)))
    return dataclasses.replace(result, start=start)


def _second_order_settings(
    method: str, bounds: Mapping[str, object] | None, batch: int | None
) -> None:
    """Refuse what a method cannot do: bounds but with lbfgs, batches with SciPy's methods
    (whose line searches compare values of the same function)."""
    if bounds and method != "lbfgs":
        raise InputError(
            f"{option('bound')} needs {option('method', 'lbfgs')} (L-BFGS-B), the method "
            f"that keeps to bounds: {method} does not"
        )
    if method in SECOND_ORDER and batch is not None:
        raise InputError(
            f"{option('method', method)} takes every row each step (its line search "
            f"compares the loss at points): drop {option('batch')}, or take sgd, momentum or adam"
        )


def lr_schedule(
    kind: str = "constant",
    steps: int = 10000,
    step_size: int | None = None,
    gamma: float | None = None,
    t_max: int | None = None,
    lr_min: float | None = None,
) -> Schedule | None:
    """The learning-rate schedule `kind` of a descent of `steps` steps (None: constant):
    `step` multiplies the rate by `gamma` (0.1) every `step_size` steps, as PyTorch's StepLR;
    `cosine` takes it down to `lr_min` (0) along half a cosine over `t_max` steps (`steps`),
    as CosineAnnealingLR. A setting of another schedule than `kind` is bad input."""
    from ._training import SCHEDULES, Schedule

    kind = choice("lr_schedule", kind, SCHEDULES)
    settings = {"step": ("lr_step_size", "lr_gamma"), "cosine": ("lr_t_max", "lr_min")}
    given = {"lr_step_size": step_size, "lr_gamma": gamma, "lr_t_max": t_max, "lr_min": lr_min}
    stray = [n for n, v in given.items() if v is not None and n not in settings.get(kind, ())]
    if stray:
        owner = "step" if stray[0] in settings["step"] else "cosine"
        raise InputError(f"{option(stray[0])} is a setting of {option('lr_schedule', owner)}")
    if kind == "step":
        if step_size is None:
            raise InputError(
                f"{option('lr_schedule', 'step')} needs {option('lr_step_size', 'N')}: the "
                "number of steps between two decays of the rate"
            )
        size = whole("lr_step_size", step_size, 1)
        return Schedule(
            "step", step_size=size, gamma=number("lr_gamma", 0.1 if gamma is None else gamma)
        )
    if kind == "cosine":
        most = whole("lr_t_max", steps if t_max is None else t_max, 1)
        low = number("lr_min", 0.0 if lr_min is None else lr_min)
        return Schedule("cosine", t_max=most, lr_min=low)
    return None


def _without_missing(
    data: Mapping[str, Sequence[float]], read: Sequence[str], warn: Warn | None
) -> dict[str, Sequence[float]]:
    """The rows of `data` where no column in `read` is nan (a note says how many were left
    out)."""
    import numpy as np

    from ._io import complete_rows, left_out

    keep = complete_rows((data[name] for name in read), len(next(iter(data.values()), ())))
    dropped = int((~keep).sum())
    if dropped and warn:
        warn(f"note: {left_out(dropped)}")
    return {name: np.asarray(values, dtype=float)[keep] for name, values in data.items()}


def fit(
    program: Program,
    columns: Mapping[str, Sequence[float]],
    starts: Mapping[str, InputValue],
    target: Program | None = None,
    sigma: str | None = None,
    fix: Sequence[str] = (),
    steps: int | None = None,
    progress: Callable[[int, float], None] | None = None,
    ci: float | None = None,
    bounds: Mapping[str, tuple[float, float] | str] | None = None,
    absolute_sigma: bool = False,
    derive: Sequence[str] = (),
    drop_nan: bool = False,
    restarts: int = 0,
    seed: int | None = None,
    loss: str = "linear",
    f_scale: float | None = None,
    profile: bool = False,
    by: Sequence[Hashable] | None = None,
    shared: Sequence[str] = (),
) -> Fit | Fits:
    """A least-squares fit of the program's parameters (its inputs that name no column of
    `columns`) from `starts` to the rows of `columns`: the residual of a row is `target` (a
    program over the columns; by default the column y) less the model, divided by the column
    `sigma` when given; `bounds` holds parameters between LO and HI (a pair, or the text
    `LO:HI`); `absolute_sigma` takes sigma as known (standard errors from (JᵀJ)⁻¹ alone);
    each of `derive`, `NAME = EXPR`, is a quantity of the parameters with its standard error
    by the delta method, from EXPR's exact gradient; `drop_nan` leaves out the rows where
    a column the fit reads, the target or sigma is nan (a note says how many); `restarts`
    more fits from starts drawn log-uniform between 0.1x and 10x each start (inside its
    bounds, with `seed`) keep the lowest sum of squares and say how many starts reached it;
    `loss` (linear, soft_l1, huber, cauchy, arctan) with `f_scale` makes the fit robust, its
    standard errors approximate; with `ci`, confidence intervals at that level, asymptotic,
    or with `profile` the profile likelihood's (the derived quantities' stay asymptotic). A
    fit that does not converge comes back with `converged` false and why in `message`;
    Ctrl-C raises Interrupted with the best point reached. With `by`, a group per row: each
    group of rows with the same value is fitted alone, and the result is Fits, a Fit per
    group; with `shared` too, one Fit of every group where the parameters `shared` are one
    for all and each other one per group, named a[g] for the group g (see `fitting.fit`)."""
    from ._io import names_of
    from .fitting import fit as least_squares  # makes its checks as it sets the problem up
    from .fitting import no_start

    steps = None if steps is None else whole("steps", steps, 1)
    level = fit_level(ci, profile, loss, f_scale)
    fitted_source = program.source
    program, numbers, layout = scalarized(
        program, starts, columns, lambda names: no_start(names, names_of(columns))
    )
    if by is not None:
        _per_group_names(fix, bounds or {}, layout)
    limits = {
        element: interval
        for name, given in (bounds or {}).items()
        for interval in [bound(name, given)]
        for element in layout.elements([name])
    }
    seed = None if seed is None else whole("seed", seed, 0)
    restarts = check_seed(seed, restarts)
    held = set(layout.elements(fix))
    # what every fit of this problem is given: the first, the restarts, the profiles' refits
    setup: dict[str, Any] = {
        "target": target,
        "sigma": sigma,
        "fix": layout.elements(fix),
        "steps": steps,
        "bounds": limits,
        "absolute_sigma": absolute_sigma,
        "drop_nan": drop_nan,
    }
    if by is not None or shared:
        return _grouped(program, columns, numbers, layout, setup, by, shared, progress,
                        restarts=restarts, seed=seed, held=held, loss=loss, f_scale=f_scale,
                        profile=profile, derive=derive, level=level,
                        source=fitted_source)  # fmt: skip

    def fitted(start: Mapping[str, float]) -> Fit:
        return least_squares(  # type: ignore[return-value]  # (no groups: a Fit)
            program, columns, start, progress=progress, loss=loss, f_scale=f_scale, **setup
        )

    try:
        result = fitted(numbers)
        if restarts:
            result = _restarted(result, fitted, numbers, held, limits, restarts, seed)
        derivations = _derivations(derive)
        result.derived = {name: _derived(name, text, result, layout) for name, text in derivations}
        if level is not None:
            _intervals(result, level, absolute_sigma)
            if profile:
                _profiled(result, program, columns, level, setup)
    except Interrupted as stop:  # the best point reached, in the parameters' shapes
        stop.reached = layout.shaped(stop.reached)
        raise
    result.source, result.sigma, result.absolute_sigma = fitted_source, sigma, absolute_sigma
    result.target = None if target is None else target.source
    return layout.shaped(result)


def _grouped(
    program: Program,
    columns: Mapping,
    numbers: Mapping[str, float],
    layout: Layout,
    setup: dict[str, Any],
    by: Sequence[Hashable] | None,
    shared: Sequence[str],
    progress: Callable[[int, float], None] | None,
    **options: Any,
) -> Fit | Fits:
    """`fit` by the groups of `by` (with `shared` parameters one for all): each group with
    its robust loss, its restarts and its profile intervals as its own fit has them (the
    same seed, the same starts for each group); with `shared`, the restarts are of the one
    joint fit, and a profile, which is for one model's parameters, is refused."""
    import numpy as np

    from .fitting import fit as least_squares
    from .fitting import group_rows

    check_grouping(by, shared)
    if options["profile"] and shared:
        raise InputError(
            f"{option('profile')} refits one fit's parameters, not those of groups sharing "
            f"{option('shared')} ones: leave out {option('profile')} for asymptotic intervals"
        )
    if layout.has_arrays:
        raise InputError(f"{option('by')} fits a model of numbers, not of arrays")
    robust = {"loss": options["loss"], "f_scale": options["f_scale"]}
    grouped = least_squares(
        program, columns, numbers, progress=progress, groups=by, shared=shared, **robust,
        **setup
    )  # fmt: skip
    # how restarts scatter the starts: each held, each inside its bounds, how many, the seed
    scatter = (options["held"], setup["bounds"], options["restarts"], options["seed"])
    rows: dict[Hashable, Any] = {}
    if by is not None and isinstance(grouped, Fits):
        rows = dict(zip(*group_rows(by, len(by)), strict=True))
    if options["restarts"] and isinstance(grouped, Fits):
        _restarted_groups(grouped, rows, numbers, scatter, program, columns, robust, setup)
    elif options["restarts"]:  # one joint fit, restarted as one fit is

        def joint(start: Mapping[str, float]) -> Fit:
            return least_squares(  # type: ignore[return-value]  # (shared: one Fit)
                program, columns, start, groups=by, shared=shared, **robust, **setup
            )

        assert isinstance(grouped, Fit)
        grouped = _restarted(grouped, joint, numbers, *scatter)
    if not options["profile"]:
        rows = {}
    each = list(grouped.items()) if isinstance(grouped, Fits) else [(None, grouped)]
    for _, result in each:
        _described(result, options["derive"], options["level"], setup["absolute_sigma"])
        result.source, result.sigma = options["source"], setup["sigma"]
        result.absolute_sigma = setup["absolute_sigma"]
        target = setup["target"]
        result.target = None if target is None else target.source
    profiled = [(group, result) for group, result in each if group in rows]
    for k, (group, result) in enumerate(profiled):  # the profile of the group's rows alone
        alone = {name: np.asarray(values)[rows[group]] for name, values in columns.items()}
        try:
            _profiled(result, program, alone, options["level"], setup)
        except Interrupted:  # every group, those not profiled with asymptotic intervals
            raise Interrupted(
                f"interrupted while profiling group {k + 1} of {len(profiled)}: the output is "
                "every group's fit, the intervals of the groups not profiled asymptotic",
                grouped,
            ) from None
    return grouped


def _described(
    result: Fit, derive: Sequence[str], level: float | None, absolute_sigma: bool
) -> Fit:
    """`result` with the quantities of `derive` and, at `level`, confidence intervals."""
    result.derived = {name: _derived(name, text, result) for name, text in _derivations(derive)}
    if level is not None:
        _intervals(result, level, absolute_sigma)
    return result


def confidence(name: str, value: object) -> float:
    """The level of --ci or --band: a number between 0 and 1, 0.95 say."""
    if isinstance(value, bool):  # (Python's band=True: which level?)
        raise InputError(f"{option(name, value)}: a level between 0 and 1, such as 0.95")
    level = number(name, value, None)
    if not 0 < level < 1:
        hint = f" ({level:g} is a percentage: {level / 100:g})" if 50 <= level < 100 else ""
        given = option(name, int(level) if level.is_integer() else level)  # 95, not 95.0
        raise InputError(f"{given}: a level between 0 and 1, such as 0.95{hint}")
    return level


# The most restarts of a fit: each is a fit of its own, and 10,000 of a fit that takes a few
# milliseconds take half a minute; more (a typo's extra zeros) would run for days.
MOST_RESTARTS = 10_000


def check_seed(seed: object, restarts: object) -> int:
    """The number of restarts, from 0 to MOST_RESTARTS; a seed without restarts does
    nothing: bad input, at every door, before the data is read."""
    count = whole("restarts", restarts, 0, MOST_RESTARTS)
    if seed is not None and not count:
        raise InputError(
            f"{option('seed')} draws the starts of {option('restarts')}: without them it does "
            "nothing"
        )
    return count


def check_data_options(
    data: object,
    batch: object,
    drop_nan: bool,
    seed: object,
    random: bool | None,
    data_format: object = None,
    formats: bool = True,
) -> None:
    """`minimize`'s options for the rows of data given without data, and a seed with nothing
    to draw: neither random starts (`random`; None at a door that has none) nor batches.
    Bad input, at every door; `formats`: the door has an option for the data's format."""
    if data is None and (batch is not None or data_format is not None or drop_nan):
        named = [option("batch"), *[option("data_format")] * formats, option("drop_nan")]
        raise InputError(
            f"{', '.join(named[:-1])} and {named[-1]} are for the rows of {option('data', 'FILE')}"
        )
    if seed is not None and batch is None and not random:
        batches = f"orders the batches of {option('batch', 'N')}"
        draws = f"draws random starts ({option('W', 'normal(16, 2)', quoted=True)})"
        raise InputError(
            f"{option('seed')} {batches}: without batches it does nothing"
            if random is None
            else f"{option('seed')} {draws} and {batches}: with neither it does nothing"
        )


def fit_level(
    ci: float | None, profile: bool = False, loss: str = "linear", f_scale: object = None
) -> float | None:
    """The level of `fit`'s intervals (None for none), checked with the options that go with
    it and the loss, before any data is read: a level between 0 and 1, `profile` only with a
    level and the sum of squares, `f_scale` only with a robust loss."""
    from ._robust import checked

    level = None if ci is None else confidence("ci", ci)
    checked(loss, f_scale)
    if profile and level is None:
        raise InputError(
            f"{option('profile')} finds the intervals of {option('ci', 'LEVEL')}: without "
            "a level it does nothing"
        )
    if profile and loss != "linear":
        raise InputError(
            f"{option('profile')} profiles the sum of squares, which a robust "
            f"{option('loss', loss)} does not minimize: leave out {option('profile')} for "
            "approximate asymptotic intervals"
        )
    return level


def _intervals(result: Fit, level: float, absolute_sigma: bool) -> None:
    """`result`'s asymptotic intervals at `level`, of its free parameters and its derived
    quantities: value ± t·se (the normal's quantile with sigma known)."""
    from ._fit_statistics import asymptotic_intervals

    free = list(result.statistics.get("t", {}))
    dof = None if absolute_sigma else result.dof
    result.ci = asymptotic_intervals(free, result.parameters, result.stderr, dof, level)
    values = {name: d["value"] for name, d in result.derived.items()}
    errors = {name: d["stderr"] for name, d in result.derived.items()}
    for name, interval in asymptotic_intervals(list(values), values, errors, dof, level).items():
        result.derived[name]["ci"] = interval
    result.ci_level = level


def _profiled(
    result: Fit, program: Program, columns: Mapping, level: float, setup: dict[str, Any]
) -> None:
    """`result`'s intervals made the profile likelihood's, with notes on the sides the data
    do not bound; a fit that did not converge has none (nan). Ctrl-C raises Interrupted with
    the fit, whose intervals are left asymptotic."""
    from .fitting import profile_intervals

    if not result.converged:
        result.ci = {name: (math.nan, math.nan) for name in result.ci}
        result.warnings.append("no profile intervals: the fit did not converge")
    else:
        try:
            intervals, notes = profile_intervals(program, columns, result, level, **setup)
        except KeyboardInterrupt:
            raise Interrupted(
                "interrupted while profiling: the output is the fit, its intervals asymptotic",
                result,
            ) from None
        result.ci = intervals
        result.warnings.extend(notes)
    result.ci_method = "profile"
    for quantity in result.derived.values():
        quantity["ci_method"] = "asymptotic"  # the delta method's: no profile of a quantity


def _restarted(
    first: Fit,
    fitted: Callable[[Mapping[str, float]], Fit],
    starts: Mapping[str, float],
    held: set[str],
    limits: Mapping[str, tuple[float, float]],
    restarts: int,
    seed: int | None,
) -> Fit:
    """The best of `first` and `restarts` more fits, each from the starts scattered
    log-uniform between 0.1x and 10x (the held ones kept, each inside its bounds), with how
    many of them reached its sum of squares (to 1e-9 of it)."""
    import numpy as np

    generator = np.random.default_rng(seed)
    # the best fit and every fit's sum of squares: a Fit holds its rows' residuals, so that
    # keeping each would take memory in proportion to the restarts times the rows
    best, objectives = first, [first.objective]
    for restart in range(1, restarts + 1):
        start = {}
        for name, value in starts.items():
            if name not in held:
                value *= 10.0 ** generator.uniform(-1.0, 1.0)
                low, high = limits.get(name, (-math.inf, math.inf))
                value = min(max(value, low), high)
            start[name] = value
        try:
            result = fitted(start)
        except InputError:  # a start where the model is not finite: no fit, not the best
            continue
        except Interrupted as stop:  # Ctrl-C: the best of the fits so far
            result = cast(Fit, stop.reached)
            raise Interrupted(
                f"interrupted in restart {restart} of {restarts}: the output is the best point "
                f"of the {len(objectives) + 1} fits so far",
                _better(result, best),
            ) from None
        best = _better(result, best)
        objectives.append(result.objective)
    least = best.objective
    finite = [r for r in objectives if math.isfinite(r)]
    reached = sum(1 for r in finite if r <= least * (1 + 1e-9) + 1e-300)
    best.restarts = {"starts": restarts + 1, "reached": reached}
    return best


def _better(fit: Fit, best: Fit) -> Fit:
    """Of two fits, the one of the lesser sum of squares (`best` where `fit`'s is no number,
    or they are equal: the first reached stays)."""
    if not math.isfinite(fit.objective):
        return best
    return fit if fit.objective < best.objective or not math.isfinite(best.objective) else best


def _restarted_groups(
    grouped: Fits,
    rows: Mapping[Hashable, np.ndarray],
    starts: Mapping[str, float],
    scatter: tuple[set[str], Mapping[str, tuple[float, float]], int, int | None],
    program: Program,
    columns: Mapping,
    robust: Mapping[str, Any],
    setup: dict[str, Any],
) -> None:
    """Each group of `grouped` (its rows, `rows`) restarted as the fit of its rows alone is,
    from the same `starts` and seed (`scatter`, as `_restarted` takes it): the group's fit
    and its rows' fitted values and residuals become the best. Ctrl-C raises Interrupted
    with the groups, the one restarting at its best so far."""
    import numpy as np

    from .fitting import fit as least_squares

    fitted, residuals = grouped.fitted, grouped.residuals
    assert fitted is not None and residuals is not None  # (from fitting.fit)
    groups = list(grouped.items())
    for k, (group, first) in enumerate(groups):
        alone = {name: np.asarray(values)[rows[group]] for name, values in columns.items()}

        def one(start: Mapping[str, float], alone: Mapping = alone) -> Fit:
            return least_squares(program, alone, start, **robust, **setup)  # type: ignore[return-value]

        best = first
        try:
            best = _restarted(first, one, starts, *scatter)
        except Interrupted as stop:  # the group at its best so far, the others as they are
            best = cast(Fit, stop.reached)
            raise Interrupted(
                f"interrupted while restarting group {k + 1} of {len(groups)}: the output is "
                "each group's best fit so far, the groups after it not restarted",
                grouped,
            ) from None
        finally:
            grouped.fits[group] = best
            if best is not first:
                fitted[rows[group]], residuals[rows[group]] = best.fitted, best.residuals


# The rows of a fit's table besides its parameters and quantities, which a quantity of
# --derive cannot be named as.
FIT_ROWS = frozenset({"rss", "dof", "rows", "iterations", "converged", "starts", "loss", "r2"})


def _derivations(given: Sequence[str]) -> list[tuple[str, str]]:
    """Each `NAME = EXPR` of `derive`, split, its name checked."""
    found: list[tuple[str, str]] = []
    for text in given:
        name, equals, expression = text.partition("=")
        name = name.strip()
        several = re.search(r";|(?<![=<>!])=(?!=)", expression)  # h = a; g = b: two
        if (
            not equals
            or expression.startswith("=")
            or several
            or not re.fullmatch(r"[A-Za-z_]\w*", name)
        ):
            one = f" (one quantity each: {option('derive')} again for another)" if several else ""
            raise InputError(
                f"{option('derive', text, quoted=True)}: give NAME = EXPR, such as "
                f"'half_life = log(2)/k'{one}"
            )
        if name in (n for n, _ in found):
            raise InputError(f"{option('derive', name)} is given twice")
        found.append((name, expression))
    return found


def _derived(name: str, text: str, result: Fit, layout: Layout = NO_ARRAYS) -> DerivedQuantity:
    """A quantity of the fitted parameters, `text`, and its standard error by the delta
    method: sqrt(gᵀ C g), with g its exact gradient at the parameters and C their
    covariance (as a prediction's, `standard_errors`: finite at any scale, a parameter at its
    bound held there). `result` has a number per element of an array parameter (`c[0]`), and
    `layout` their arrays, which `text` reads whole (`c`) or by element (`c[1]`)."""
    from ._language import parse

    try:
        program = parse(text).single("a derived quantity", None)
    except SourceError as error:
        raise InputError(f"{option('derive', name)}: {error}") from None
    parameters = layout.shaped(result).parameters
    if name in parameters or name in FIT_ROWS:
        what = "a parameter of the model" if name in parameters else "a row of the fit's table"
        raise InputError(
            f"{option('derive', name)}: {name} is {what}: give the quantity its own name"
        )
    unknown = [n for n in program.inputs if n not in parameters]
    if unknown:
        groups = [p for p in parameters if p.startswith(f"{unknown[0]}[")]
        if groups:  # a[A] of a fit with --shared: a name the language reads as indexing
            shared = [p for p in parameters if "[" not in p]
            raise InputError(
                f"{option('derive', name)} reads {unknown[0]}, which is fitted per group "
                f"({', '.join(groups)}): a derived quantity of a fit with {option('shared')} "
                f"reads its shared parameters ({', '.join(shared)})"
            )
        raise InputError(
            f"{option('derive', name)} reads {unknown[0]}, which is no parameter of the fit "
            f"({', '.join(parameters)})"
        )
    try:
        written, point, shapes = scalarized(program, {n: parameters[n] for n in program.inputs})
    except SourceError as error:  # c[5] of a c of 3
        raise InputError(f"{option('derive', name)}: {error}") from None
    shape = next(iter(shapes.results.values()), ())
    if shape:
        raise InputError(
            f"{option('derive', name)} is an array of shape {shape}: a derived quantity is "
            "one number (derive each element on its own, or a sum)"
        )
    import numpy as np

    from ._fit_predictions import standard_errors

    gradient = written.grad(point)
    g = {a: np.array([slope]) for a, slope in gradient.gradients.items()}
    stderr = float(standard_errors(result, g, 1)[0])
    if not math.isfinite(gradient.value):  # (no standard error of a value that is none)
        result.warnings.append(f"{name} = {text.strip()} is {gradient.value} at the fit's values")
        stderr = math.nan
    return {"value": gradient.value, "stderr": stderr}


def named_bounds(given: Iterable[str]) -> dict[str, str]:
    """Bounds as the command line and the repl take them, `NAME=LO:HI` each, by name."""
    return named_values("bound", "NAME=LO:HI", given)


def named_shapes(given: Iterable[str]) -> dict[str, str]:
    """Shapes as the command line and the repl take them, `NAME=DIMS` each, by name."""
    return named_values("shape", "NAME=DIMS", given)


def named_values(name: str, form: str, given: Iterable[str]) -> dict[str, str]:
    """The values of the option `name`, each `NAME=...` as `form` says, by name."""
    values: dict[str, str] = {}
    for item in given:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise InputError(f"{option(name)} expects {form}, got {item!r}")
        if key.strip() in values:
            raise InputError(f"{option(name, key.strip())} is given twice")
        values[key.strip()] = value
    return values


def bound(name: str, given: tuple[float, float] | str) -> tuple[float, float]:
    """A parameter's bound, a (low, high) pair or the text `LO:HI` (`-inf`, `inf` for an
    open side), as numbers."""
    if isinstance(given, str):
        low_text, colon, high_text = given.partition(":")
        if not colon or ":" in high_text:
            raise InputError(
                f"{option('bound', f'{name}={given}')}: give LO:HI, such as 0:inf or -1:1"
            )
        return number("bound", low_text, None), number("bound", high_text, None)
    low, high = given
    return number("bound", low, None), number("bound", high, None)


def data_reads(program: Program) -> set[str]:
    """The columns of the data `minimize` reads: the source's inputs, and the constants it
    writes by name (`e`, `pi`), so that a column so named is seen, and refused."""
    return {*program.inputs, *program.constants_by_name()}


def fit_reads(program: Program, target: Program | None, sigma: str | None) -> set[str]:
    """The columns of the data a fit reads: the model's inputs, the target's (or y) and
    sigma's; and the constants any of them writes by name (`e`, `pi`), so that a column so
    named is seen, and refused (`fitting.not_shadowed`), not left unread."""
    read = {*program.inputs, *(target.inputs if target is not None else ["y"])}
    written = [program, *([target] if target is not None else [])]
    spread = _sigma_program(sigma)
    if spread is not None:
        read |= set(spread.inputs)
        written.append(spread)
    elif sigma is not None:  # a column's name
        read.add(sigma.strip())
    return read | {name for each in written for name in each.constants_by_name()}


def sigma_columns(sigma: str | None) -> set[str]:
    """The columns `fit`'s sigma reads: a column's name, or an expression's inputs."""
    spread = _sigma_program(sigma)
    if spread is not None:
        return set(spread.inputs)
    return set() if sigma is None else {sigma.strip()}


def _sigma_program(sigma: str | None) -> Program | None:
    """`fit`'s sigma parsed where it is an expression (None where there is none, or it is a
    column's name)."""
    if sigma is None or re.fullmatch(r"\s*[A-Za-z_]\w*\s*", sigma):
        return None
    from ._language import parse

    try:
        return parse(sigma)
    except SourceError as error:
        raise InputError(f"{option('sigma')}: {error}") from None


def _per_group_names(fix: Iterable[str], bounds: Iterable[str], layout: Layout) -> None:
    """Refuse a[A], one group's own parameter, to --fix or --bound: each holds or bounds a
    parameter of the model in every group."""
    for what, verb, value, names in (
        ("fix", "holds", "", fix),
        ("bound", "bounds", "=LO:HI", bounds),
    ):
        for name in names:
            base = array_of(name)
            if base != name and not layout.inputs.get(base):  # (x[0] of an array is one)
                raise InputError(
                    f"{option(what, name)}: {option(what)} {verb} a parameter of the model in "
                    f"every group ({option(what, base + value)}), not one group's alone"
                )


def check_grouping(by: object, shared: Sequence[str]) -> None:
    """Refuse `shared` without a column of groups, or naming a parameter twice."""
    if shared and by is None:
        raise InputError(
            f"{option('shared')} shares a parameter between the groups of {option('by')}: "
            "give the column of the groups"
        )
    twice = next((name for k, name in enumerate(shared) if name in shared[:k]), None)
    if twice is not None:
        raise InputError(f"{option('shared', twice)} is given twice")


def check_group_column(
    by: str, names: Sequence[str], read: Iterable[str], predicting: bool = False
) -> None:
    """Refuse a column of groups (`by`) that the data (or, `predicting`, the rows to predict
    at) has not (naming a near one), or that the fit reads."""
    if by not in names:
        import difflib

        near = difflib.get_close_matches(by, names, n=1, cutoff=0.6)
        near += [name for name in names if name.lower() == by.lower()]
        hint = f"; did you mean {near[-1]}?" if near else ""
        if predicting:  # (the fit's groups: --by given, or loaded)
            raise InputError(
                f"{option('predict')} has no column {by}, which names the group whose fit "
                f"predicts each row (its columns: {', '.join(names)}){hint}"
            )
        raise InputError(
            f"{option('by', by)}: the data has no column {by} (its columns: "
            f"{', '.join(names)}){hint}"
        )
    if by in read:
        raise InputError(
            f"{option('by', by)}: the fit reads the column {by}; the column of the groups is "
            "not data of the model, the target or sigma"
        )


def group_column(by: str, table: Table, read: Iterable[str], predicting: bool = False) -> list:
    """The group of each row of `table` (the data, or `predicting` the rows to predict at):
    its value in the column `by`, which the fit (reading the columns `read`) must not read."""
    from . import _io as io

    check_group_column(by, table.names, read, predicting)
    return io.group_values(table, by, "predict" if predicting else "data")


def fit_notes(result: Fit | Fits) -> list[str]:
    """The notes on the point a fit reached, each naming its group where there are groups."""
    if isinstance(result, Fit):
        return result.warnings
    return [
        f"{result.by} = {group_name(group)}: {note}"
        for group, fit in result.items()
        for note in fit.warnings
    ]


def unconverged(result: Fit | Fits) -> str:
    """Why the files of a fit that failed are not written."""
    if isinstance(result, Fits):
        return "not every group's fit converged"
    return "the fit did not converge"


def check_fit_axes(picture: str | None, logx: bool, logy: bool) -> None:
    """Refuse `fit`'s log axes without a picture to draw them on."""
    if (logx or logy) and not picture:
        raise InputError(
            f"{option('logx' if logx else 'logy')} is an axis of {option('plot', 'FILE')}: give one"
        )


def fit_picture(
    program: Program,
    columns: Mapping[str, Sequence[float]],
    result: Fit | Fits,
    groups: Sequence[Hashable] | None,
    by: str | None,
    fmt: str | None,
    band: float | None = None,
    logx: bool = False,
    logy: bool = False,
    width: int = 80,
    color: bool = False,
) -> tuple[bytes | str, list[str]]:
    """`fit --plot`: the picture of the fit (`fit_curve`), or with `groups` (a group per row,
    of the column `by`) of every group's (`fit_group_curves`) in one figure, as a file of
    `fmt` (svg, png, pdf), or with `fmt` None as a plot in text `width` columns wide (in
    colour with `color`); and the notes: on rows a log axis cannot show, and on a prediction
    band that sigma, known at the rows only, leaves out."""
    from .render import figures

    if groups is None:
        one = fit_curve(program, columns, cast(Fit, result), band, logx, logy)
        curves, heading = {"": one}, one.title
    else:
        curves, heading = fit_group_curves(
            program, columns, result, groups, by or "group", band, logx, logy
        )
    hidden = sum(curve.hidden for curve in curves.values())
    first = next(iter(curves.values()))
    notes = [first._replace(hidden=hidden).hidden_note] if hidden else []
    sigma = (result if isinstance(result, Fit) else next(iter(result.values()))).sigma
    if band is not None and sigma is not None and "pred_lower" not in first.bands:
        notes.append(
            f"no prediction band on {option('plot')}: sigma reads {sigma}, which is known at "
            "the rows only, not along the curve"
        )
    if fmt is not None:
        return figures.fit_groups_figure(curves, heading, fmt), notes
    if groups is None:  # (one fit's text shows its band)
        return figures.fit_text(curves[""], width, color), notes
    return figures.fit_groups_text(curves, heading, width, color), notes


def fit_predictor(program: Program, columns: Iterable[str]) -> str:
    """The one column the model reads, which a picture of the fit is drawn over."""
    read = [name for name in program.inputs if name in columns]
    if len(read) != 1:
        raise InputError(
            f"{option('plot')} draws a fit over one column; the model reads "
            f"{', '.join(read) or 'none'}"
        )
    return read[0]


def fit_curve(
    program: Program,
    columns: Mapping[str, Sequence[float]],
    result: Fit,
    band: float | None = None,
    logx: bool = False,
    logy: bool = False,
) -> FitCurve:
    """What a picture of a fit shows: the data, the residuals and the model along the range
    of the one column of `columns` the model reads, at the fitted parameters; with `band`,
    the confidence band at that level along it; `logx`, `logy` make an axis logarithmic
    (the curve then sampled evenly along it), which shows the rows at positive values only
    (`FitCurve.hidden` counts the others)."""
    import numpy as np

    from .render.figures import FitCurve
    from .sampling import CURVE_POINTS, title

    name = fit_predictor(program, columns)
    x = np.asarray(columns[name], dtype=float)
    fitted, residuals = _rows(result)
    observed = fitted + residuals
    target = result.target or "y"
    shown = np.ones(x.size, dtype=bool)  # on a log axis, the rows at a positive value
    for flag, asked, axis, values in (("logx", logx, name, x), ("logy", logy, target, observed)):
        if asked:
            shown &= values > 0
            if not shown.any():
                raise InputError(f"{option(flag)}: no {axis} is positive, for a log axis")
    spaced = np.geomspace if logx else np.linspace
    along = spaced(np.nanmin(x[shown]), np.nanmax(x[shown]), CURVE_POINTS)
    found = predict(result, {name: along}, band)
    curve = found.pop("fitted")
    del found["fitted_se"]
    parameters = flattened(result).parameters
    heading = title(program.source, {k: float(f"{v:.6g}") for k, v in parameters.items()})
    hidden = int(np.sum(~shown & ~np.isnan(observed)))  # (not those --drop-nan left out)
    errors = None
    if result.sigma is not None:  # each row's sigma, as the fit read it (nan: left out)
        from .fitting import sigma_values

        arrays = {n: np.asarray(v, dtype=float) for n, v in columns.items()}
        errors = sigma_values(result.sigma, arrays, x.size, drop_nan=True)[shown]
    return FitCurve(
        name, x[shown], observed[shown], residuals[shown], along, curve, heading, target,
        band, found, logx, logy, hidden, errors,
    )  # fmt: skip


def fit_group_curves(
    program: Program,
    columns: Mapping[str, Sequence[float]],
    result: Fit | Fits,
    groups: Sequence[Hashable],
    by: str,
    band: float | None = None,
    logx: bool = False,
    logy: bool = False,
) -> tuple[dict[str, FitCurve], str]:
    """`fit_curve` of each group of a fit by groups (Fits, or one fit with shared
    parameters), named `BY = GROUP` (`by` the column's name): its rows (`groups`, a value
    per row), and the model at its fit along the range of its predictor there; and the
    title of a picture of them all."""
    import dataclasses

    import numpy as np

    from .sampling import title

    if isinstance(result, Fits):
        heading = f"{program.source}, a fit per {by}"
    else:
        shared = {k: float(f"{v:.6g}") for k, v in result.parameters.items() if "[" not in k}
        heading = f"{title(program.source, shared)}, shared by every {by}"
    fitted, residuals = _rows(result)
    names = np.array([group_name(g) for g in groups], dtype=object)
    curves = {}
    for group in dict.fromkeys(groups):
        index = np.flatnonzero(names == group_name(group))
        fit = dataclasses.replace(
            group_fit(result, group), fitted=fitted[index], residuals=residuals[index]
        )
        rows: dict[str, Any] = {n: np.asarray(values)[index] for n, values in columns.items()}
        name = printable(f"{by} = {group_name(group)}")  # (data: no control character)
        curves[name] = fit_curve(program, rows, fit, band, logx, logy)
    return curves, heading


def fit_rows(
    table: Table,
    result: Fit | Fits,
    fmt: str,
    band: float | None = None,
    groups: Sequence[Hashable] | None = None,
    null: bool = False,
) -> bytes:
    """The rows of `table` that were fitted, with the columns fitted, fitted_se (and with
    `band` the bands of `predict`) and residual added, as a file of `fmt` (csv, parquet,
    arrow, jsonl); a fit by groups (Fits, or one fit with shared parameters) takes the group
    of each row from `groups`. JSON writes nan, inf and -inf as strings, or with `null` as
    null."""
    import numpy as np

    fitted, residuals = _rows(result)
    if groups is None:
        found = predict(result, table.columns, band, rows=fitted.size)  # type: ignore[arg-type]
    else:
        found = predict_groups(result, table.columns, groups, band)
    left_out = np.isnan(fitted)  # rows --drop-nan left out: nothing fitted there
    added = {name: np.where(left_out, np.nan, values) for name, values in found.items()}
    return with_columns(table, {**added, "fitted": fitted, "residual": residuals}, fmt, null)


def saved_fit(fit: Fit | Fits) -> str:
    """`fit` as a JSON document that `load_fit` reads back: what `fit --format json` prints,
    with the model, the target and sigma it was fitted with (of fits by group, each
    group's)."""
    import json

    from ._fit_predictions import saved
    from .render._text import to_json

    if isinstance(fit, Fits):
        return saved(fit, [json.loads(line) for line in to_json(fit).splitlines()])
    return saved(fit, json.loads(to_json(fit)))


def load_fit(path: str) -> Fit | Fits:
    """The fit saved (`saved_fit`) in the file `path`, or the fits of its groups; bad input
    where it is not one, or its model does not parse or has no input a parameter names."""
    from ._fit_predictions import loaded
    from ._language import parse

    fit = loaded(_saved_text(path), printable(path))
    one = fit if isinstance(fit, Fit) else next(iter(fit.values()))
    try:
        program = parse(one.source)
    except SourceError as error:
        raise InputError(f"{path}: the saved model does not parse: {error}") from None
    # a[g]: a of a fit with --shared; w[0,1]: an element of an array w
    alien = [n for n in one.parameters if n.partition("[")[0] not in program.input_slots]
    if alien:
        raise InputError(
            f"{path}: the saved model {one.source} has no input {alien[0]}, a parameter of "
            "the saved fit: the file's source and parameters disagree"
        )
    return fit


def saved_point(result: Minimum, source: str) -> str:
    """The point a descent of `source` reached, as a JSON document that `load_point` reads
    back: what `minimize --format json` prints, with the source and the point as
    `parameters`."""
    import json

    from ._saved_points import saved
    from .render._text import to_json

    return saved(source, json.loads(to_json(result)))


def load_point(path: str) -> dict[str, InputValue]:
    """The inputs' values saved in the file `path`: the point of `saved_point` or the
    parameters of `saved_fit`; bad input where it holds neither."""
    from ._saved_points import loaded

    return loaded(_saved_text(path), printable(path))


def _saved_text(path: str) -> str:
    """The text of the saved file `path` ("" where it is no UTF-8, which is no JSON)."""
    try:
        with open(file_name(path), encoding="utf-8") as file:
            reading(file)
            return file.read()
    except UnicodeDecodeError:
        return ""  # (not JSON: said as for any other file that holds no saved document)
    except OSError as error:
        raise NanogradError(f"cannot read {printable(path)}: {error.strerror}") from None


def with_columns(
    table: Table, added: Mapping[str, np.ndarray], fmt: str, null: bool = False
) -> bytes:
    """The rows of `table` with the columns `added` (one number per row) after its own, as
    a file of `fmt` (csv, parquet, arrow, jsonl); JSON's nan, inf and -inf are strings, or with
    `null` null. Every cell given comes back as it was: CSV and TSV write each column's text
    as read, a missing value (empty, NA) too; the other formats write a column read as
    numbers from text as those numbers, a missing value as null (`numbers.as_read`)."""
    import io as bytes_io

    from ._io.numbers import as_read
    from ._io.writers import open_writer  # PyArrow: loaded once the data is read
    from ._points import Batch

    sink = bytes_io.BytesIO()
    text = fmt in ("csv", "tsv")
    used = [] if text else [name for name in table.names if name in table.columns]
    writer = open_writer(
        sink, fmt, table.names, [], [], (), stream=False, named=list(added), null=null
    )
    for first_row, rows in table.batches:
        at = slice(first_row - 1, first_row - 1 + rows.num_rows)
        for name in used:
            k = rows.schema.get_field_index(name)
            rows = rows.set_column(k, name, as_read(rows.column(k), table.columns[name][at]))
        writer.write(Batch(first_row, rows, {}, [values[at] for values in added.values()]))
    writer.close(table.schema)
    return sink.getvalue()


def predict(
    fit: Fit,
    columns: Mapping[str, ArrayLike],
    band: float | None = None,
    rows: int | None = None,
    rows_option: str = "data",
) -> dict[str, np.ndarray]:
    """The model of `fit` at each row of `columns` (every column the model reads, by name):
    `fitted` and its standard error `fitted_se` by the delta method, from the model's exact
    gradient by the parameters and the fit's covariance; with `band` (a level, 0.95) the
    confidence band `lower`, `upper` and the band `pred_lower`, `pred_upper` where one new
    observation falls (none for a fit with sigma where `columns` lack what sigma reads).
    `rows` is the number of rows where the model reads no column; `rows_option` names
    where `columns` came from, for a column that is missing."""

    from ._fit_predictions import predicted
    from ._language import parse
    from .fitting import columns_of, row_count, sigma_values

    level = None if band is None else confidence("band", band)
    if not fit.source:
        raise InputError("this fit has no model to predict with: a fit from fit() or load_fit()")
    program = parse(fit.source)
    alien = [name for name in fit.parameters if name not in program.input_slots]
    if alien:  # a[g] of a fit with --shared: no parameter of the model itself
        raise InputError(
            f"this fit's parameter {alien[0]} is none of its model's: a fit of groups sharing "
            "parameters does not predict; predict with a fit of one group"
        )
    written, parameters, _ = scalarized(program, fit.parameters)
    read = [name for name in written.inputs if name not in parameters]
    missing = [name for name in read if name not in columns]
    if missing:
        plural = "s" * (len(missing) > 1)
        wanted = f"columns {', '.join(missing)}" if plural else f"a column {missing[0]}"
        raise InputError(
            f"missing value{plural} for input{plural} {', '.join(missing)}: give "
            f"{option(rows_option)} {wanted}"
            + (f" (the model reads {', '.join(read)})" if len(read) > len(missing) else "")
        )
    arrays = columns_of({name: columns[name] for name in read})
    rows = row_count(arrays) if arrays else rows or 1
    sigma = None
    spread = sigma_columns(fit.sigma)
    if level is not None and fit.sigma is not None and spread <= set(columns):
        sigma = sigma_values(fit.sigma, columns_of({name: columns[name] for name in spread}), rows)
    return predicted(written, parameters, fit, arrays, rows, level, sigma)


def group_fit(result: Fit | Fits, group: Hashable) -> Fit:
    """The fit of one group of a fit by groups: its Fit among Fits; of one fit with shared
    parameters, a Fit of the model's own parameters (a[g] named a, the shared ones kept)
    with their covariances, its dof and residual sd the joint fit's. KeyError for a group
    that was not fitted."""
    from dataclasses import replace

    name = group_name(group)
    if isinstance(result, Fits):
        fits = {group_name(g): fit for g, fit in result.items()}
        return fits[name]
    mark = f"[{name}]"
    own = [p for p in result.parameters if p.endswith(mark) or "[" not in p]
    if not any(p.endswith(mark) for p in own):
        raise KeyError(group)
    renamed = {p: p.removesuffix(mark) for p in own}

    def own_values(values: Mapping[str, Any]) -> dict[str, Any]:
        """The values of the group's own parameters, by the model's names."""
        return {renamed[p]: v for p, v in values.items() if p in renamed}

    def own_pairs(matrix: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        return {a: own_values(row) for a, row in own_values(matrix).items()}

    statistics = result.statistics.copy()  # t, p and correlations by the model's names
    if "t" in statistics:
        statistics["t"] = own_values(statistics["t"])
    if "p" in statistics:
        statistics["p"] = own_values(statistics["p"])
    if "correlation" in statistics:
        statistics["correlation"] = own_pairs(statistics["correlation"])
    return replace(
        result,
        parameters=own_values(result.parameters),
        stderr=own_values(result.stderr),
        covariance=own_pairs(result.covariance),
        statistics=statistics,
        inputs=own_values(result.inputs),
        at_bound=[renamed[p] for p in result.at_bound if p in renamed],
        fitted=None,
        residuals=None,
    )


def predict_groups(
    result: Fit | Fits,
    columns: Mapping[str, ArrayLike],
    groups: Sequence[Hashable],
    band: float | None = None,
    by: str = "group",
    rows_option: str = "data",
) -> dict[str, np.ndarray]:
    """`predict` of a fit by groups (Fits, or one fit with shared parameters) at the rows of
    `columns`, each row with the fit of its group in `groups` (a value per row); bad input
    naming the first row whose group was not fitted (`by` the column's name)."""
    import numpy as np

    names = np.array([group_name(g) for g in groups], dtype=object)
    found: dict[str, np.ndarray] = {}
    for group in dict.fromkeys(groups):
        index = np.flatnonzero(names == group_name(group))
        try:
            fit = group_fit(result, group)
        except KeyError:
            fitted = list(result) if isinstance(result, Fits) else _shared_groups(result)
            known = ", ".join(printable(group_name(g)) for g in fitted)  # (data: one line)
            raise InputError(
                f"row {index[0] + 1}: {by} = {printable(group_name(group))}, a group that was "
                "not fitted "
                f"(the groups fitted: {known})"
            ) from None
        rows = {name: np.asarray(values)[index] for name, values in columns.items()}
        for name, values in predict(fit, rows, band, index.size, rows_option).items():
            found.setdefault(name, np.full(len(names), np.nan))[index] = values
    return found


def _shared_groups(result: Fit) -> list[str]:
    """The groups of one fit with shared parameters, by its parameters' names a[g]."""
    return list(dict.fromkeys(p[p.index("[") + 1 : -1] for p in result.parameters if "[" in p))


def prediction_columns(fit: Fit) -> set[str]:
    """The columns `predict` reads of the rows it is given: those the model of `fit` reads
    (its inputs, the parameters among them unread), and those its sigma reads."""
    from ._language import parse

    return set(parse(fit.source).inputs) | sigma_columns(fit.sigma) if fit.source else set()


def _rows(result: Fit | Fits) -> tuple[np.ndarray, np.ndarray]:
    """The fitted value and the residual of each row, which a Fit made by `fit` has."""
    if result.fitted is None or result.residuals is None:
        raise TypeError("the Fit has no fitted values and residuals per row, as one from fit() has")
    return result.fitted, result.residuals


def draw(
    program: Program,
    point: Mapping[str, InputValue],
    fmt: str,
    rankdir: str | None = None,
    hide_constants: bool = False,
    edge_grads: bool = False,
    dpi: int | str | None = None,
    legend: bool = True,
    statements: bool = True,
    strict: bool = False,
    warn: Warn | None = None,
    on_slow: Callable[[int], None] | None = None,
    scalars: bool = False,
    grad_of: str | None = None,
) -> bytes:
    """The computation graph at `point`, every node with its data and gradient, as `fmt`:
    svg, png, pdf, dot, or html for the live page. A program with arrays is drawn as the
    source writes it, an array a node, unless `scalars` asks for its graph of scalars (which
    the live page always shows). A source of several outputs (`u, v`, or an array result in
    scalars) is drawn as one graph of all of them, each marked, with the gradients of the
    output `grad_of` (by default the first) and the data alone of what only the others read.
    Notes on the layout chosen and on graphs too big to read go to `warn`; `on_slow(nodes)`
    is called if Graphviz takes a while."""
    from .render.graph import POSITIONED_LIMIT, draw_evaluation, png_pixels, render_drawing

    fmt = choice("format", fmt, DRAW_FORMATS, any_case=True)
    if rankdir is not None:
        rankdir = choice("rankdir", rankdir, RANKDIRS, any_case=True)
    dpi = None if dpi is None else whole("dpi", dpi, *DPI)
    if dpi is not None and fmt != "png":
        raise InputError(f"{option('dpi')} is for png; {fmt} is not made of pixels")
    if edge_grads and fmt == "html":
        raise InputError(
            f"{option('edge_grads')} is for pictures; the live page shows local derivatives on "
            "hover"
        )
    if _has_arrays(program, point) and not scalars and fmt != "html":
        if program.outputs:
            raise InputError(_SEVERAL_ARRAYS)
        return _draw_arrays(
            program, point, fmt, rankdir, dpi, strict, warn, legend, edge_grads, hide_constants
        )
    program, point, _ = scalarized(program, point, missing=MissingInputs)
    outputs = program.outputs
    if grad_of is not None and grad_of not in outputs:
        if not outputs:
            raise InputError(
                f"{option('grad_of', grad_of)} chooses one of several outputs, and the source "
                "has one result"
            )
        raise InputError(
            f"{option('grad_of', grad_of)}: the outputs are {', '.join(outputs)}; "
            f"{grad_of} is none of them"
        )
    if outputs and fmt == "html":
        raise InputError(
            f"the live page follows the passes of one result, and the source lists "
            f"{len(outputs)} outputs ({', '.join(outputs)}): end it with one of them, or draw "
            "them all in a picture (svg, png, pdf, dot)"
        )
    if outputs:
        program = program.with_result(outputs[grad_of or next(iter(outputs))])
    evaluation = program.gradients(point)
    non_finite(evaluation.first_non_finite(), strict, warn)
    drawing = draw_evaluation(
        evaluation,
        rankdir,
        hide_constants,
        edge_grads=edge_grads,
        legend=legend and fmt != "html",
        statements=statements,
        outputs=outputs,
    )
    pixels = png_pixels(drawing.layout)
    png = f"; the png is at most {pixels:,} pixels across" if fmt == "png" and pixels else ""
    if warn and drawing.layout.engine == "sfdp":
        warn(
            f"note: the graph is too big for a layered layout in reasonable time; laid out "
            f"with sfdp (force-directed: no left-to-right order){png}"
        )
    elif warn and drawing.layout.engine == "nop2":
        warn(
            f"note: the graph has {drawing.nodes:,} nodes, more than the {POSITIONED_LIMIT:,} "
            "Graphviz lays out in reasonable time; placed by nanograd in ranks, in the order "
            f"the nodes are made, with straight edges and no search for fewer crossings{png}"
        )
    if warn and drawing.nodes > BIG_GRAPH and not hide_constants:
        warn(
            f"warning: the graph has {drawing.nodes:,} nodes; "
            f"for a picture you can read, try {option('hide_constants')}"
        )

    def still_drawing() -> None:
        if on_slow:
            on_slow(drawing.nodes)

    if fmt == "html":
        from .render._html import live_page

        return live_page(evaluation, drawing=drawing, legend=legend, on_slow=still_drawing)
    return render_drawing(drawing, fmt, dpi, still_drawing)


_ARRAY_RESULT = (
    "draw shows gradients, and the result is an array: draw a number made of it, such as "
    "sum(...) or one element [0], or add "
    f"{option('scalars')} to draw its elements in one graph"
)
_SEVERAL_ARRAYS = (
    "a source of several outputs with arrays is drawn in scalars, every output in one graph: "
    f"add {option('scalars')}"
)


def _draw_arrays(
    program: Program,
    point: Mapping[str, InputValue],
    fmt: str,
    rankdir: str | None,
    dpi: int | None,
    strict: bool,
    warn: Warn | None,
    legend: bool,
    edge_grads: bool = False,
    hide_constants: bool = False,
) -> bytes:
    """`draw` of a program with arrays, as the source writes them (render/_array_graph.py),
    with a legend if `legend`, the local derivatives on the edges if `edge_grads`, and the
    constants in their operations' labels if `hide_constants`."""
    from ._arrays import array_view
    from .render._array_graph import draw_arrays
    from .render.graph import render_drawing

    absent = [name for name in program.inputs if name not in point]
    if absent:  # missing, whatever its shape would be (as grad says)
        raise MissingInputs(absent)
    written, flat, nodes, known = array_view(program, point)
    if written.outputs:
        raise InputError(_ARRAY_RESULT)
    written.check_inputs(flat)
    evaluation = written.gradients(flat)
    non_finite(evaluation.first_non_finite(), strict, warn)
    data = [node.data for node in evaluation.nodes]
    grads = [node.grad for node in evaluation.nodes]
    code = written.code if edge_grads else None
    drawing = draw_arrays(program, nodes, data, grads, known, rankdir, legend, code, hide_constants)
    return render_drawing(drawing, fmt, dpi)


def plot(
    program: Program,
    fixed: Mapping[str, InputValue],
    ranges: Mapping[str, Range],
    points: int,
    picture: bool = True,
    warn: Warn | None = None,
    ylim: str | Sequence[float] = "auto",
    tangent: float | str | None = None,
    second: bool = False,
    title: str | None = None,
    logx: bool = False,
    logy: bool = False,
    size: str | float | Sequence[float] | None = None,
) -> Curve | Surface:
    """f and df/dx sampled at `points` points over one range (a Curve), or f and its
    gradient on a grid over two (a Surface, which only a `picture` can show, and whose y
    axis is an input's range, not `ylim`); gaps where f is nan or inf go to `warn`. With
    `tangent` A, the curve carries f and df/dx at A, for the tangent line drawn there; with
    `second`, d2f/dx2 at its points too. How it is drawn, checked here for every door, is
    the result's `look`: `ylim` (auto, full, LO:HI or (LO, HI)), `title`, log axes (`logx`,
    over a range above 0, and `logy`: a curve's), a picture's `size` in inches (W,H)."""
    from .sampling import (
        Look,
        check_ranges,
        gaps_warning,
        parse_size,
        parse_ylim,
        sample_curve,
        sample_surface,
        second_derivative,
    )

    limits = parse_ylim(ylim if isinstance(ylim, str) else ":".join(repr(v) for v in ylim))
    if size is not None and not picture:
        raise InputError(
            f"{option('size')} is a picture's: write the plot to a file "
            f"({option('output', 'plot.png')})"
        )
    if size is not None and not isinstance(size, str):
        size = ",".join(map(repr, size)) if isinstance(size, Sequence) else repr(size)
    look = Look(title, logx, logy, None if size is None else parse_size(size), limits)
    swept_elements(program, fixed, ranges)
    program, point, _ = scalarized(program, fixed)  # an array is a fixed value, not a range
    held = {name: value for name, value in point.items() if name not in ranges}  # x[0] swept
    check_ranges(one_output(program, "plot"), ranges)
    if len(ranges) == 2:
        if not picture:
            raise InputError("a contour plot of two ranges is a picture: add -o plot.png")
        if limits != "auto":
            raise InputError(
                f"{option('ylim')} sets the y axis of a curve: a contour plot's is the range of "
                f"{list(ranges)[1]}"
            )
        for asked, flag in (
            (tangent is not None, "tangent"),
            (second, "second"),
            (logx, "logx"),
            (logy, "logy"),
        ):
            if asked:
                raise InputError(f"{option(flag)} is for a curve, a plot over one range")
        result: Curve | Surface = sample_surface(program, held, ranges)
    else:
        ((name, span),) = ranges.items()
        if logx and min(span.low, span.high) <= 0:
            raise InputError(
                f"{option('logx')}: a log axis needs {name} above 0, and its range starts "
                f"at {min(span.low, span.high):g}"
            )
        result = sample_curve(program, held, name, span, points)
        if tangent is not None:
            result.tangent = _tangent(program, held, name, span, tangent)
        if second:
            result.second = second_derivative(program, held, name, result.x)
    result.look = look
    gaps = gaps_warning(result)
    if gaps and warn:
        warn(gaps)
    return result


def _tangent(
    program: Program, held: Mapping[str, float], name: str, span: Range, given: float | str
) -> tuple[float, float, float]:
    """A, f(A) and df/dx at A for plot's tangent line at `given` (a number, or a constant
    the language writes, `pi/2`): a point of the plotted range where f and df/dx are finite."""
    from ._language import constant_value

    text = given if isinstance(given, str) else None
    found = constant_value(text) if text is not None else None
    at = number("tangent", given if found is None else found, least=None)
    shown = option("tangent", f"{given}")
    if not math.isfinite(at):
        raise InputError(f"invalid value for {option('tangent')}: {at!r} is no point")
    if not span.low <= at <= span.high:
        raise InputError(
            f"{shown}: the point is outside the plotted range of {name}, "
            f"{span.low:g} to {span.high:g}"
        )
    touching = program.grad({**held, name: at})
    slope = touching.gradients[name]
    if not (math.isfinite(touching.value) and math.isfinite(slope)):
        raise InputError(
            f"{shown}: f is {touching.value} and df/d{name} {slope} at {name} = {at:g}: "
            "no tangent line there"
        )
    return at, touching.value, slope


def swept_elements(
    program: Program, fixed: Mapping[str, InputValue], ranges: Mapping[str, Range]
) -> None:
    """Each range of an element (`x[0]`) is of an array input whose value is given: the
    value gives the array's shape and holds its other elements."""
    import numpy as np

    for name in ranges:
        array, bracket, _ = name.partition("[")
        if not bracket or array not in program.inputs:
            continue
        value = fixed.get(array)
        swept = option("var", f"{name}=LO:HI")
        if value is None:
            raise InputError(
                f"{swept} sweeps an element of {array}, whose value is not given: give "
                f"{array} too ({option(array, '[1, 2, 3]', quoted=True)}), which holds its "
                "other elements"
            )
        if np.ndim(value) == 0:
            raise InputError(
                f"{swept} sweeps an element of {array}, which is a number: sweep "
                f"{option(array, 'LO:HI')}"
            )
        if name.replace(" ", "") not in element_names(array, np.shape(value)):
            raise InputError(f"{swept}: {array} has shape {np.shape(value)}: no element {name}")


def missing_of(data: Mapping[str, Any] | None) -> Callable[[list[str]], MissingInputs]:
    """The error for inputs given no value where `data` may give them as columns: said so,
    with the column a name was likely meant as (a column's name mistyped is as common as a
    start left out)."""

    from ._io import names_of

    columns = None if data is None else names_of(data)

    def missing(names: list[str]) -> MissingInputs:
        error = MissingInputs(names)
        return error if columns is None else error.or_columns_of(option("data"), columns)

    return missing


def scalarized(
    program: Program,
    point: Mapping[str, InputValue],
    columns: Iterable[str] = (),
    missing: Callable[[list[str]], Exception] | None = None,
) -> tuple[Program, dict[str, float], Layout]:
    """`program` and `point` written out in scalars, where either has arrays (`_arrays.py`),
    and the layout that gives results back as arrays. An input no value of `point` gives
    may be read from `columns` of data: x, or the elements x[0], x[1], ... of an array x.
    With `missing`, the inputs given no value at all are its error, before any shape is
    checked (`a @ [1, x]` without a: a is missing, whatever its shape would be)."""
    columns = list(columns)
    shapes: dict[str, tuple[int, ...]] = {}
    if columns:
        from ._arrays import column_shapes

        unshaped = [n for n in program.inputs if n not in point]
        shapes = column_shapes(unshaped, columns, option("data"))
    if missing is not None and program.arrays:
        named = set(columns)
        absent = [n for n in program.inputs if n not in point and n not in named | shapes.keys()]
        if absent:
            raise missing(absent)
    if not _has_arrays(program, point) and not shapes:
        return program, point, NO_ARRAYS  # type: ignore[return-value]  # numbers
    from ._arrays import scalarized as written_out

    return written_out(program, point, shapes)


def _has_arrays(program: Program, point: Mapping[str, InputValue]) -> bool:
    """Whether the program has array operations, or an input's value is an array."""
    return program.arrays or any(getattr(v, "ndim", 0) for v in point.values())


def one_output(program: Program, command: str) -> Program:
    """`program`, if it has one result: `command` takes one (and `jacobian()` several)."""
    return program.single(f"{command}()", "jacobian()")


def with_inputs(program: Program, otherwise: str) -> Program:
    """`program`, if it reads an input: else bad input, `the source has no inputs: ...`."""
    if not program.inputs:
        raise InputError(f"the source has no inputs: {otherwise}")
    return program


def _finite_rows_at_start(
    program: Program, rows: Mapping[str, Sequence[float]], point: Mapping[str, float]
) -> None:
    """Bad input, naming the first row and its data, where the loss is nan or inf on a row at
    the start, as fit names one: the start (or that row) is to blame, not the descent."""
    import numpy as np

    from ._tape import batch_values

    values = batch_values(program, {**rows, **point})
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        i = int(bad[0])
        listed = ", ".join(f"{name} = {float(column[i])!r}" for name, column in rows.items())
        raise InputError(
            f"at the start, row {i + 1} ({listed}): the loss is {float(values[i])!r}; start "
            "from a point where it is finite, or leave the row out"
        )


def _shown(formula: str) -> str:
    """A formula as a message quotes it: its first line, without diff's `# x > 0` lines."""
    lines = [line for line in formula.splitlines() if not line.lstrip().startswith("#")]
    first = lines[0] if lines else formula
    return repr(first + (" ..." if len(lines) > 1 else ""))


def check_wrt(wrt: Iterable[str], inputs: Sequence[str], elements: bool = False) -> None:
    """Every name to differentiate by is one of `inputs` (with `elements`, or an element
    of one, `x[0]`, which the written-out program checks)."""
    for name in wrt:
        if (array_of(name) if elements else name) not in inputs:
            raise NotAnInput(name, list(inputs))


def non_finite(where: SourceError | None, strict: bool, warn: Warn | None) -> None:
    """The IEEE policy: the first nan or inf (an input given as one, or an operation that made
    one out of finite numbers) is warned of, or with `strict` an error."""
    if where is None:
        return
    if strict:
        raise NonFiniteResult(str(where), where)
    if warn:
        warn(where)
