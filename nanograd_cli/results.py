"""What the commands report: one type per kind of result, each written by `render`."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, TypeVar

from .errors import SourceError

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy as np

    # An input's value: a number or, for a program with arrays, an array.
    InputValue: TypeAlias = float | np.ndarray


# An array's shape, () for a number.
Shape = tuple[int, ...]
R = TypeVar("R")


class _Table:
    """A result that a notebook shows as its table."""

    def _repr_html_(self) -> str:
        from .render._notebook import html_table

        return html_table(self)


class LaTeX(str):
    """A derivative written in LaTeX, as `diff(..., latex=True)` gives it: a str (equal to the
    same text), which a notebook shows as the formula. Several lines come as one `aligned`
    environment already."""

    __slots__ = ()

    def _repr_latex_(self) -> str:
        if self.startswith("\\begin{aligned}"):
            return f"$$ {' '.join(self.splitlines())} $$"
        lines = [line.replace(" = ", " &= ", 1) for line in self.splitlines()]
        if len(lines) == 1 and "&=" not in lines[0]:
            return f"$$ {lines[0]} $$"
        return "$$ \\begin{aligned} " + " \\\\ ".join(lines) + " \\end{aligned} $$"


class Derivative(str):
    """A derivative as `diff` writes it in text: a str, what `nanograd diff` prints (each
    condition on a `#` line under its derivative), and apart, `text`, a program whose result
    is the derivative (with several names, a `d_x = ...` line each), and `conditions`, by the
    name each derivative is by (a mixed one's names joined, `x_y` for `d2_x_y`), where it
    holds when that is only part of the domain (`{"x": "x > 0"}`; a name whose derivative
    holds everywhere is absent)."""

    text: str
    conditions: Mapping[str, str]

    def __new__(cls, printed: str, text: str, conditions: Mapping[str, str]) -> Derivative:
        derivative = super().__new__(cls, printed)
        derivative.text = text
        derivative.conditions = conditions
        return derivative

    @classmethod
    def of(cls, printed: str, names: Sequence[str]) -> Derivative:
        """`diff`'s text split: a `#` line belongs to the derivative above it, which is the
        one of `names` alone, or the `d_x = ...` (`d2_x`, `d_x[1]`) line above it."""
        lines: list[str] = []
        conditions: dict[str, str] = {}
        by = names[0] if len(names) == 1 else None
        for line in printed.splitlines():
            if line[:1] == "#":
                if by is not None:
                    said = line[1:].strip()
                    conditions[by] = f"{conditions[by]}; {said}" if by in conditions else said
                continue
            found = re.match(r"d[0-9]*_(\S+?) = ", line) if len(names) > 1 else None
            if found:  # d_x_ where the source has a d_x: the derivative by x
                by = found[1]
                while array_of(by) not in names and by.endswith("_"):
                    by = by[:-1]
            lines.append(line)
        return cls(printed, "\n".join(lines), conditions)


def element_names(name: str, shape: tuple[int, ...]) -> list[str]:
    """The names of the elements of an array `name` of `shape`, row-major: x[0], x[1], ...;
    W[0,0], W[0,1], ...; a number's is its own name."""
    if not shape:
        return [name]
    import itertools

    return [f"{name}[{','.join(map(str, i))}]" for i in itertools.product(*map(range, shape))]


def array_of(name: str) -> str:
    """The array an element's name `x[0]`, `W[1, 2]` is of (x, W); any other name as it is."""
    base, bracket, _ = name.partition("[")
    return base.strip() if bracket and name.rstrip().endswith("]") else name


def element_name(name: str, shape: Shape) -> str:
    """The element `name` (`W[1, 2]`, `x[-1]`) of the array `array_of(name)` of `shape`, to
    differentiate by, as element_names writes it (`W[1,2]`, `x[2]`); else bad input."""
    from .errors import InputError, option

    base = array_of(name)
    given = name.strip()[len(base) + 1 : -1].replace(" ", "").split(",")
    if not shape:
        problem = f"{base} is a number, not an array: differentiate by {option('wrt', base)}"
    elif len(given) != len(shape) or not all(re.fullmatch(r"-?[0-9]+", i) for i in given):
        names = element_names(base, shape)
        indices = f"{len(shape)} {'index' if len(shape) == 1 else 'indices'}"
        problem = f"an element of {base} of shape {shape} has {indices}: {names[0]} to {names[-1]}"
    elif not all(-n <= int(i) < n for i, n in zip(given, shape, strict=True)):
        problem = f"out of range for {base} of shape {shape}"
    else:
        return f"{base}[{','.join(str(int(i) % n) for i, n in zip(given, shape, strict=True))}]"
    raise InputError(f"{option('wrt', name)}: {problem}")


# The fields of a result that hold values by input, parameter or output name: arrays where
# the program has them (given back by `Layout.shaped`, written out by `flattened`).
ARRAY_FIELDS = ("inputs", "gradients", "values", "parameters", "stderr")


def by_element(values: Mapping[str, Any]) -> dict[str, Any]:
    """Values by name, each array as its elements by name (x[0], W[1,2])."""
    flat: dict[str, Any] = {}
    for name, value in values.items():
        shape = getattr(value, "shape", ())
        if shape:
            flat.update(zip(element_names(name, shape), value.ravel().tolist(), strict=True))
        else:
            flat[name] = value.item() if hasattr(value, "item") else value  # NumPy's float64
    return flat


def has_arrays(result: object) -> bool:
    """Whether a result holds arrays (from an array program)."""
    fields = (getattr(result, f, None) for f in ARRAY_FIELDS)
    return any(
        getattr(v, "ndim", 0)
        for values in fields
        if isinstance(values, dict)
        for v in values.values()
    )


def flattened(result: R) -> R:
    """A result with arrays (from an array program) as its rows in a table or CSV: each
    element by name, x[0], d_W[1,2]; a Jacobian block row by row. Others as they are."""
    import dataclasses

    if not dataclasses.is_dataclass(result) or not hasattr(result, "inputs"):
        return result
    changes = {
        name: by_element(getattr(result, name)) for name in ARRAY_FIELDS if hasattr(result, name)
    }
    if isinstance(result, Jacobian):
        rows: dict = {}
        blocks: dict[str, dict] = result.jacobian  # NumPy arrays, for an array result
        for out, row in blocks.items():
            out_shape = getattr(result.values[out], "shape", ())
            for k, element in enumerate(element_names(out, out_shape)):
                rows[element] = by_element(
                    {
                        name: block.reshape(-1, *block.shape[len(out_shape) :])[k]
                        if out_shape
                        else block
                        for name, block in row.items()
                    }
                )
        changes["jacobian"] = rows
    return dataclasses.replace(result, **changes)  # type: ignore[type-var]


@dataclass(frozen=True)
class Layout:
    """The shape of every input and every result of a program written out in scalars
    (() for a number), to name their elements and to give results back as arrays."""

    inputs: dict[str, Shape]
    results: dict[str, Shape]

    @property
    def has_arrays(self) -> bool:
        return any(self.inputs.values()) or any(self.results.values())

    def elements(self, names: Iterable[str]) -> list[str]:
        """The scalar inputs that stand for the inputs `names`; an element's name, `x[0]`,
        stands for itself."""
        return [
            e
            for name in names
            for e in (
                element_names(name, self.inputs.get(name, ()))
                if array_of(name) == name
                else [element_name(name, self.inputs.get(array_of(name), ()))]
            )
        ]

    def shaped(self, result: R) -> R:
        """`result`, computed by the written-out program, with each array's elements as one
        NumPy array of its shape (its inputs, gradients and values); a Jacobian block has
        the shape of its result then of its input."""
        if not self.has_arrays:
            return result
        import dataclasses

        changes: dict[str, object] = {
            name: _grouped(getattr(result, name), self.inputs)
            for name in ARRAY_FIELDS
            if name != "values" and hasattr(result, name)  # values: by the results' shapes
        }
        if isinstance(result, Jacobian):
            changes["values"] = _grouped(result.values, self.results)
            changes["jacobian"] = self._blocks(result.jacobian)
        return dataclasses.replace(result, **changes)  # type: ignore[type-var]

    def _blocks(self, jacobian: Mapping[str, Mapping[str, float]]) -> dict[str, dict]:
        """A Jacobian by element, as a block per result and input."""
        import numpy

        blocks: dict[str, dict] = {}
        for out, out_shape in self.results.items():
            rows = [jacobian[e] for e in element_names(out, out_shape)]
            blocks[out] = {}
            for name, shape in self.inputs.items():
                names = element_names(name, shape)
                asked = [e for e in names if e in rows[0]]  # by wrt: every element, or some
                if len(asked) == len(names):
                    block = numpy.array([[row[e] for e in names] for row in rows])
                    whole = out_shape + shape
                    blocks[out][name] = block.reshape(whole) if whole else float(block[0, 0])
                for e in asked if len(asked) < len(names) else ():
                    column = numpy.array([row[e] for row in rows])
                    blocks[out][e] = column.reshape(out_shape) if out_shape else float(column[0])
        return blocks


def _grouped(flat: Mapping[str, float], shapes: Mapping[str, Shape]) -> dict:
    """Values by element name, grouped into an array per name of `shapes` whose elements
    are all present; an element of one whose elements are not all present by its name."""
    import numpy

    grouped: dict = {}
    for name, shape in shapes.items():
        names = element_names(name, shape)
        if all(e in flat for e in names):
            grouped[name] = (
                numpy.array([flat[e] for e in names]).reshape(shape) if shape else flat[name]
            )
        else:
            grouped.update((e, flat[e]) for e in names if e in flat)
    return grouped


@dataclass
class Gradients(_Table):
    """The value at one point and its gradient with respect to the inputs asked for.

    `non_finite` is where the first operation that made nan or inf is, if one did.
    """

    value: float
    inputs: dict[str, float]
    gradients: dict[str, float]
    non_finite: SourceError | None = field(default=None, compare=False, repr=False)

    def only(self, wrt: Sequence[str]) -> Gradients:
        """The same result with the gradients with respect to `wrt` only (0 for a name it
        does not read); all of them when `wrt` is empty."""
        if not wrt:
            return self
        return Gradients(self.value, self.inputs, _only(self.gradients, wrt), self.non_finite)

    def to_numpy(self) -> np.ndarray:
        """The gradient as one NumPy vector, by input in order (an array input's elements in
        row-major order, as `element_names` lists them)."""
        return _flat(self.gradients.values())

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return _flat(self.gradients.values()).astype(dtype or float)


@dataclass
class Jacobian(_Table):
    """The values of several outputs and their gradients: jacobian[u][x] = du/dx."""

    values: dict[str, float]
    inputs: dict[str, float]
    jacobian: dict[str, dict[str, float]]
    non_finite: SourceError | None = field(default=None, compare=False, repr=False)

    def only(self, wrt: Sequence[str]) -> Jacobian:
        """The same result with the derivatives with respect to `wrt` only; all of them when
        `wrt` is empty."""
        if not wrt:
            return self
        rows = {u: _only(row, wrt) for u, row in self.jacobian.items()}
        return Jacobian(self.values, self.inputs, rows, self.non_finite)

    @property
    def matrix(self) -> np.ndarray:
        """The Jacobian as a NumPy matrix: a row per output (an array result's elements), a
        column per input (an array input's elements), each in row-major order."""
        import numpy as np

        rows = []
        for u, row in self.jacobian.items():  # d(u)/d(x): u's shape, then x's
            size = np.size(self.values[u])
            rows.append(
                np.hstack([np.reshape(np.asarray(d, float), (size, -1)) for d in row.values()])
            )
        return np.vstack(rows) if rows else np.zeros((0, 0))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self.matrix.astype(dtype or float)


def _flat(values: Iterable[Any]) -> np.ndarray:
    """Numbers and arrays as one vector of floats, each array's elements in row-major order."""
    import numpy as np

    parts = [np.ravel(np.asarray(v, dtype=float)) for v in values]
    return np.concatenate(parts) if parts else np.zeros(0)


@dataclass
class LineGradients:
    """`grad --each-line`: one line's result, with the line's number and text."""

    line: int
    expression: str
    result: Gradients


@dataclass
class Hessian(_Table):
    """Value, gradient and the matrix of second derivatives: hessian[x][y] = d2f/dx dy."""

    value: float
    inputs: dict[str, float]
    gradients: dict[str, float]
    hessian: dict[str, dict[str, float]]
    non_finite: SourceError | None = field(default=None, compare=False, repr=False)

    @property
    def matrix(self) -> np.ndarray:
        """The Hessian as a NumPy matrix, rows and columns by input in order (an array
        input's elements in row-major order, x[0], x[1], ...)."""
        import numpy as np

        return np.array([list(row.values()) for row in self.hessian.values()], dtype=float)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self.matrix.astype(dtype or float)


@dataclass
class Taylor(_Table):
    """The Taylor polynomial of `source` in the input `wrt` around `at`, the other inputs
    held at their values in `inputs`: coefficients[k] = f⁽ᵏ⁾(at)/k!, k = 0..order, and the
    polynomial in the language and in LaTeX. Its str is the polynomial; a notebook shows
    the table of coefficients."""

    source: str
    wrt: str
    at: float
    inputs: dict[str, float]
    coefficients: list[float]
    polynomial: str = field(repr=False)
    latex: LaTeX = field(repr=False)
    non_finite: SourceError | None = field(default=None, compare=False, repr=False)

    @property
    def order(self) -> int:
        return len(self.coefficients) - 1

    def __str__(self) -> str:
        return self.polynomial


@dataclass
class Check:
    """One input's analytic derivative against its central finite difference. `kink`: the
    slopes to either side, where they differ by more than a step can explain (`abs(x)` at
    0: -1 and 1), which fails the check even where the central difference agrees."""

    analytic: float
    numeric: float
    abs_error: float
    rel_error: float
    passed: bool
    kink: tuple[float, float] | None = None


@dataclass
class GradientCheck(_Table):
    """Every input's check, and whether all passed."""

    value: float
    inputs: dict[str, float]
    checks: dict[str, Check]
    non_finite: SourceError | None = field(default=None, compare=False, repr=False)

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks.values())


@dataclass
class Mismatch:
    """A point where the engine's derivative and a hand-derived formula differ."""

    inputs: dict[str, float]
    engine: float
    formula: float
    abs_error: float


@dataclass
class Kink:
    """A point where the source has a kink in an input (its slopes to the left and to the
    right differ): no derivative to compare a formula with."""

    inputs: dict[str, float]
    left: float
    right: float


@dataclass
class Agreement:
    """One input's derivative against a formula over the points checked: how many were
    compared, how many were left out (the engine's derivative is nan there: outside the
    source's domain), how many differ, the largest difference, the first that differ, and
    how many were outside the condition the formula states, not compared."""

    formula: str
    points: int
    skipped: int
    differ: int
    max_abs_error: float
    first: list[Mismatch]
    outside: int = 0  # points outside the condition the formula states (`# x > 0`)
    kinks: int = 0  # points at a kink of the source, not compared
    first_kinks: list[Kink] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.differ == 0 and self.points > self.skipped + self.outside + self.kinks


@dataclass
class FormulaCheck:
    """The engine's derivatives against hand-derived formulas, at a point (`inputs`) or over
    ranges of some inputs (`ranges`: low, high, points) with the others at `inputs`."""

    inputs: dict[str, float]
    ranges: dict[str, tuple[float, float, int]]
    checks: dict[str, Agreement]
    rtol: float
    atol: float
    non_finite: SourceError | None = field(default=None, compare=False, repr=False)

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks.values())


@dataclass
class Minimum(_Table):
    """Where gradient descent stopped: the point, its value and gradient, and how it got there
    (`interrupted`: stopped by Ctrl-C after `steps` steps; `diverged`: the last point
    where the value and gradient were finite, before a step made one nan or inf; `stopped`:
    why SciPy's method stopped short of the tolerance, where not for want of steps). With
    bounds, `gradient_norm` is the norm of the gradient projected on them."""

    value: float
    inputs: dict[str, float]
    gradients: dict[str, float]
    gradient_norm: float
    steps: int
    converged: bool
    interrupted: bool = False
    diverged: bool = False
    stopped: str = field(default="", compare=False)
    # for a descent that ran out of steps: the value and gradient's norm at its start, which
    # say whether the loss kept falling as its slope did not shrink (no minimum, perhaps)
    start: tuple[float, float] | None = field(default=None, compare=False, repr=False)


class Term:
    """A node or a formula, written in the language (`text`) and in LaTeX. A result with no
    name of its own is written f in LaTeX, where partial derivatives need a name for it.
    `latex` may be given as a function that writes it, called when it is first read."""

    __slots__ = ("_latex", "text")
    text: str

    def __init__(self, text: str, latex: str | Callable[[], str]):
        self.text = text
        self._latex = latex

    @property
    def latex(self) -> str:
        if not isinstance(self._latex, str):
            self._latex = self._latex()
        return self._latex

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Term):
            return NotImplemented
        return (self.text, self.latex) == (other.text, other.latex)

    def __repr__(self) -> str:
        return f"Term(text={self.text!r}, latex={self.latex!r})"


@dataclass
class ForwardStep:
    """One node of the forward pass: how other steps name it, what computes it, its value.

    For a node without a name of its own, `node` and `expression` are the same text.
    """

    node: Term
    expression: Term
    value: float


@dataclass
class LocalDerivative:
    """d(node)/d(argument): the op's formula with the arguments in it, its value, and the
    product value * upstream gradient that flows back to the argument. `domain`: where the
    formula (as a textbook writes it) holds, when it does not at this point, where the value
    is the engine's (`x**y*log(x)` at x = 0, where the engine's is 0: `x > 0`). `by`: where
    one node is two of the op's arguments (`x**x`), the derivative by the op's parameter
    (`d(a**b)/da at a = x, b = x`), which tells the two apart."""

    argument: Term
    formula: Term
    local: float
    product: float
    domain: Term | None = None
    by: Term | None = None


@dataclass
class BackwardStep:
    """One node of the backward pass: its gradient (the sum of `contributions`, the products
    flowing back from the nodes it feeds, in the order they are added; 1 for the result) and
    its local derivatives, each multiplied by that gradient."""

    node: Term
    gradient: float
    contributions: list[float]
    local_derivatives: list[LocalDerivative]


@dataclass
class Explanation:
    """The forward pass in the order it runs and the backward pass in reverse topological
    order, with the value, inputs and gradients as `grad` reports them. `result` names the
    result in LaTeX's partial derivatives."""

    value: float
    inputs: dict[str, float]
    gradients: dict[str, float]
    forward: list[ForwardStep]
    backward: list[BackwardStep]
    result: Term
    non_finite: SourceError | None = field(default=None, compare=False, repr=False)


def _only(gradients: dict[str, float], wrt: Iterable[str]) -> dict[str, float]:
    """The gradients with respect to `wrt`, in its order; 0 for a name not differentiated by."""
    return {name: gradients.get(name, 0.0) for name in wrt}


def result_names(outputs: list[str], wrt: list[str]) -> list[str]:
    """The columns that results add: `value` and `d_NAME` per input for one result; for
    several outputs (`u, v`), each one's value under its name, then `du/dx` per output and
    input."""
    if not outputs:
        return ["value", *(f"d_{n}" for n in wrt)]
    return [*outputs, *(f"d{u}/d{x}" for u in outputs for x in wrt)]


class FitStatistics(TypedDict, total=False):
    """A fit's statistics (`Fit.statistics`), as R's `nls` and `summary.nls` give them: χ²
    (the weighted sum of squares), χ²/dof, R², AIC and BIC; with sigma known, the χ² test's
    p-value; and of each free parameter, its t = value/se, its two-sided p, and its
    correlation with each other free parameter. A fit read from a file has those it saved."""

    chi2: float
    reduced_chi2: float
    r2: float
    aic: float
    bic: float
    chi2_p: float
    t: dict[str, float]
    p: dict[str, float]
    correlation: dict[str, dict[str, float]]


class DerivedQuantity(TypedDict):
    """A quantity of the parameters (`fit(..., derive=...)`): its value and standard error
    by the delta method, and with intervals asked for, its interval (`ci`)."""

    value: float
    stderr: float
    ci: NotRequired[tuple[float, float]]
    # "asymptotic" in a fit with profile intervals: a quantity's interval is the delta method's
    ci_method: NotRequired[str]


@dataclass
class Fit:
    """A least-squares fit (from Python, `nanograd_cli.fit` gives a `nanograd_cli.Fit`: this,
    with `predict` and `save`): each parameter's value, standard error and covariances (a fixed
    parameter's are 0), the residual sum of squares and its standard deviation, the degrees
    of freedom n - k and rows n, iterations (Jacobian evaluations), whether it converged and
    why it stopped, the starts (`inputs`), per row the fitted value and the residual
    target - fitted (arrays, for writing the rows back out), and `warnings` on the point
    reached (a pole of the model between two rows)."""

    parameters: dict[str, float]
    stderr: dict[str, float]
    covariance: dict[str, dict[str, float]]
    rss: float
    residual_sd: float
    dof: int
    n: int
    iterations: int
    converged: bool
    message: str
    inputs: dict[str, float]
    fitted: np.ndarray | None = field(default=None, repr=False, compare=False)
    residuals: np.ndarray | None = field(default=None, repr=False, compare=False)
    # the parameters the fit ended at a bound of (--bound): held there, no standard error
    at_bound: list[str] = field(default_factory=list, compare=False)
    # notes on the point reached: a pole of the model inside the data, parameters correlated
    warnings: list[str] = field(default_factory=list, compare=False)
    # chi2, reduced_chi2, r2, aic, bic, and per free parameter t, p and correlation
    statistics: FitStatistics = field(default_factory=FitStatistics, compare=False, repr=False)
    # confidence intervals by parameter, at `ci_level`, when asked for
    ci: dict[str, tuple[float, float]] = field(default_factory=dict, compare=False)
    ci_level: float | None = None
    # how they were found: "asymptotic" (value ± t·se) or "profile" (the profile likelihood)
    ci_method: str = field(default="asymptotic", compare=False)
    # with restarts: how many starts in all, and how many reached the best sum of squares
    restarts: dict[str, int] = field(default_factory=dict, compare=False)
    # quantities of the parameters (--derive) by name: value, stderr (and ci)
    derived: dict[str, DerivedQuantity] = field(default_factory=dict, compare=False)
    # whether a table shows the statistics too (they are always in JSON)
    table_statistics: bool = field(default=False, compare=False, repr=False)
    # what was fitted, to save the fit and predict with it: the model's source, the target
    # and sigma as given, and whether sigma was taken as known
    source: str = field(default="", compare=False, repr=False)
    target: str | None = field(default=None, compare=False, repr=False)
    sigma: str | None = field(default=None, compare=False, repr=False)
    absolute_sigma: bool = field(default=False, compare=False, repr=False)
    # of a fit of groups sharing parameters (a[g]): the column of the groups, to predict
    by: str | None = field(default=None, compare=False, repr=False)
    # the loss minimized (robust.LOSSES): with a robust one, its f_scale, SciPy's cost
    # ½ f² Σ rho((r/f)²) at the solution, and standard errors that are approximate
    loss: str = field(default="linear", compare=False)
    f_scale: float = field(default=1.0, compare=False)
    cost: float = field(default=math.nan, compare=False)

    @property
    def objective(self) -> float:
        """What the fit minimized: the RSS, or with a robust loss twice its cost."""
        return self.rss if self.loss == "linear" else 2 * self.cost

    def _repr_html_(self) -> str:
        """A small table for notebooks: the parameters (with their intervals under `ci`),
        then the fit's statistics."""
        from html import escape

        def cell(x) -> str:
            return f"{x:.6g}" if isinstance(x, float) else escape(str(x))

        level = f"{self.ci_level:g} " if self.ci_level is not None else ""
        heads = ["value", "stderr"] + ([f"{level}lower", f"{level}upper"] if self.ci else [])
        rows = []
        for name, value in self.parameters.items():
            interval = self.ci.get(name, ("", "")) if self.ci else ()
            cells = [value, self.stderr[name], *interval]
            rows.append(
                f"<tr><th>{escape(name)}</th>" + "".join(f"<td>{cell(c)}</td>" for c in cells)
            )
        figures: Mapping[str, object] = self.statistics
        stats = [
            ("RSS", self.rss),
            ("residual sd", self.residual_sd),
            *[(label, figures[key]) for label, key in _NOTEBOOK_STATISTICS if key in figures],
            ("dof", self.dof),
            ("rows", self.n),
            ("iterations", self.iterations),
            ("converged", "yes" if self.converged else "no"),
        ]
        span = len(heads)
        rows += [f'<tr><th>{k}</th><td colspan="{span}">{cell(v)}</td></tr>' for k, v in stats]
        head = "".join(f"<th>{escape(h)}</th>" for h in heads)
        return (
            f"<table><thead><tr><th></th>{head}</tr></thead><tbody>"
            + "".join(rows)
            + f"</tbody></table><p>{escape(self.message)}</p>"
        )


# The statistics a notebook's table of a fit shows, by label.
_NOTEBOOK_STATISTICS = (("χ²/dof", "reduced_chi2"), ("R²", "r2"), ("AIC", "aic"), ("BIC", "bic"))


def group_name(group: Any) -> str:
    """A group's value as a table and a parameter's name (a[g]) write it: s0, 3, 2.5."""
    if isinstance(group, float) and group.is_integer():
        return str(int(group))
    return str(group)


@dataclass
class Fits(Mapping[Any, Fit]):
    """Fits of one model, a group of rows each (`fit(..., by=COLUMN)`, which from Python gives
    a `nanograd_cli.Fits`: this, with `save`, each group's Fit a `nanograd_cli.Fit`): a
    mapping of each group's value to its Fit, in the order the groups first appear in the
    data. A group
    that could not be fitted (fewer rows than free parameters) has a Fit of nan values, not
    converged, whose message says why. `fitted` and `residuals` are per row of the data, in
    its order (each group's, nan where a group was not fitted)."""

    fits: dict[Any, Fit]
    fitted: np.ndarray | None = field(default=None, repr=False, compare=False)
    residuals: np.ndarray | None = field(default=None, repr=False, compare=False)
    # the column the groups are the values of, which the output names
    by: str = "group"

    def __getitem__(self, group: Any) -> Fit:
        return self.fits[group]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fits)

    def __len__(self) -> int:
        return len(self.fits)

    @property
    def converged(self) -> bool:
        """Whether every group's fit converged."""
        return all(result.converged for result in self.fits.values())

    @property
    def unconverged(self) -> list[Any]:
        """The groups whose fit did not converge."""
        return [group for group, result in self.fits.items() if not result.converged]

    def _repr_html_(self) -> str:
        """A table for notebooks: a row per group, as the command's table."""
        from html import escape

        from .render._text import table_rows

        rows = table_rows(self, lambda x: f"{x:.6g}")
        head = "".join(f"<th>{escape(cell)}</th>" for cell in rows[0])
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>"
            for row in rows[1:]
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
