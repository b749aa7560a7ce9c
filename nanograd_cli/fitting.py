"""Least-squares fits of a model to rows of data, with the tape's exact derivatives.

`fit(program, columns, starts)` fits the inputs of `program` that name no column (the
parameters) so that the model comes as close as it can, in the least-squares sense, to the
target (the column `y`, or a Program over the columns) on every row. The residuals and the
Jacobian (rows x parameters) come from one batched pass of the NumPy tape per point, exact to
rounding; SciPy's `least_squares` chooses the steps (its trust region without bounds run by
`_trust_region`, step for step). docs/fit.md says what was measured on
the NIST StRD problems to choose the defaults below, and how standard errors are computed.

SciPy is imported only here, and only when fitting: `pip install 'nanograd-cli[fit]'`.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import math
import re
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from ._fit_statistics import correlated, statistics
from ._instructions import Apply, Const, Input
from ._io import complete_rows, names_of
from ._io import left_out as rows_left_out
from ._ops import CONSTANTS
from ._program import Program
from ._robust import checked, curvature_weights, objective, row_weights
from ._tape import Tape, batch_values
from ._trust_region import EPS, Solved
from ._trust_region import minimize as trust_region
from .errors import (
    InputError,
    Interrupted,
    NanogradError,
    NotAnInput,
    SourceError,
    UnknownInputs,
    column_hint,
    near_column,
    no_column,
    option,
    spell,
)
from .results import Fit, Fits, group_name

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from scipy.optimize import OptimizeResult

# The solver's defaults, chosen by measurement on the 54 NIST StRD fits (docs/fit.md,
# benchmarks/fit_nist.py): a trust region reflective run with the parameters scaled by the
# Jacobian's columns and tolerances at the limit of double precision, then, from where it
# stopped, Levenberg-Marquardt (MINPACK) with the same scaling, whose steps finish the valleys
# that the first stage crawls along. The point with the smaller RSS is kept.
# (keyword arguments of SciPy's least_squares)
FIRST_STAGE: dict[str, Any] = {
    "method": "trf",
    "x_scale": "jac",
    "ftol": 1e-15,
    "xtol": 1e-15,
    "gtol": 1e-15,
}
SECOND_STAGE: dict[str, Any] = {
    "method": "lm",
    "x_scale": "jac",
    "ftol": 1e-15,
    "xtol": 1e-15,
    "gtol": 1e-15,
}

# Trial steps rejected one after another for a residual or derivative nan or inf that end a
# stage: the trust region has shrunk by 4 each time, to 4**-64 (1e-39) of its size.
REJECTED_IN_A_ROW = 64

# Gauss-Newton steps at most after the solver stops (see `_polish`).
POLISH_STEPS = 3

# Why a fit stopped by Ctrl-C did not converge.
INTERRUPTED = "interrupted (Ctrl-C) before converging"

# Evaluations allowed when `steps` is not given, per stage.
DEFAULT_STEPS = 10_000

# A singular value of the column-scaled Jacobian at most this much of the largest (relative to
# the number of rows and parameters) is zero: the data cannot determine that direction.
RANK_TOLERANCE = 1e-10

# The gradient test for a point the solver did not move far from, or stopped at for its step
# or decrease being small: every parameter's column of J is this close to orthogonal to the
# residuals (|J_jᵀ r| ≤ GRADIENT_TOLERANCE · ‖J_j‖ · ‖r‖).
GRADIENT_TOLERANCE = 1e-8

# What a fit whose every free parameter the groups share says: it is no fit by group.
EVERY_PARAMETER_SHARED = (
    "every parameter is shared by the groups: this is one fit of all the rows, the same as "
    "the fit without groups"
)

# What a fit with as many rows as free parameters says of its numbers.
NO_DOF = (
    "as many rows as free parameters: the model can pass through every row, and the data "
    "leave nothing to estimate the standard errors from (dof 0)"
)

# Residuals this small relative to the target (in the 2-norm over rows) fit it to rounding:
# converged, whatever the gradient test says (a zero-residual problem such as Lanczos1).
EXACT_FIT = 1e-12

# The residuals and the Jacobian are scaled by a power of two, exact in binary, that brings the
# largest magnitude of the (weighted) target into [0.5, 1), and each free parameter is solved
# for in units of a power of two that brings its column of the Jacobian at the start into
# [0.5, 1) too: a fit of data at 1e-300, whose squared residuals would underflow to 0, or at
# 1e200, whose squares would overflow, with parameters of any size, is the same problem as at 1,
# and its RSS and standard errors come back exactly scaled (`_Problem.unscaled`).

# The Jacobian and the solver's copies of it: bytes per row and parameter, measured as the
# peak memory of fits of 1,000,000 rows (benchmarks/fit.py --memory).
BYTES_PER_ENTRY = 8 * 4


class MissingSciPy(NanogradError):
    """Fitting (or `what` else) without SciPy: a missing library, exit 1 like a missing
    renderer."""

    def __init__(self, what: str = "fitting"):
        from ._extras import install_command

        super().__init__(
            f"{what} needs SciPy, which is not installed: install it with: {install_command('fit')}"
        )


def fit(
    program: Program,
    columns: Mapping[str, ArrayLike],
    starts: Mapping[str, float],
    target: Program | None = None,
    sigma: str | None = None,
    fix: Iterable[str] = (),
    steps: int | None = None,
    progress: Callable[[int, float], None] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    absolute_sigma: bool = False,
    drop_nan: bool = False,
    loss: str = "linear",
    f_scale: float | None = None,
    groups: Sequence[Hashable] | None = None,
    shared: Iterable[str] = (),
) -> Fit | Fits:
    """Fit the parameters of `program` (its inputs that name no column of `columns`) to the
    rows of `columns`, from `starts` (one per parameter), minimizing the sum over rows of
    ((target - model) / sigma)**2. `target` is a Program over the columns (default: the
    column `y`), `sigma` names a column of each row's standard deviation, `fix` names
    parameters held at their start, `steps` caps the evaluations of each stage, `bounds`
    holds parameters between a low and a high value (either may be infinite);
    `absolute_sigma` takes sigma as known: standard errors from (JᵀJ)⁻¹ alone; `drop_nan`
    leaves out the rows where a column the fit reads, the target or sigma is nan; `loss`, one
    of robust.LOSSES, counts each row's (weighted) residual r as f_scale² rho((r/f_scale)²)
    (`f_scale` only with a robust loss; 1 by default), and the standard errors of a robust
    fit are approximate. `progress(evaluations, rss)` is called at every evaluation.

    With `groups` (a value per row), each group of rows with the same value is fitted alone,
    from the same starts, in the order the groups first appear: Fits. The fit is checked,
    parsed and compiled once; a group that cannot be fitted (fewer rows than free
    parameters, a model not finite at the start on its rows) has a Fit of nan values, not
    converged, its message saying why, and the other groups go on. With `shared` too, one
    fit over every group where the parameters `shared` are one for all and each other one
    per group, named `a[g]` for the group g: a Fit, whose standard errors are the joint fit's.

    Bad input raises InputError naming what is wrong; a fit that does not converge is no
    error: it comes back with `converged` False and the reason in `message`."""
    require_solver()
    problem = _Problem(program, columns, starts, target, sigma, fix, bounds or {}, drop_nan)
    problem.absolute_sigma = absolute_sigma
    problem.robust(loss, f_scale)
    if groups is None:
        return problem.solve(steps, progress)
    labels, indices = group_rows(groups, problem.given_rows)
    shared = list(dict.fromkeys(shared))
    if not shared:
        return _each_group(problem, dict(zip(labels, indices, strict=True)), steps)
    for name in shared:
        if name not in problem.starts:
            raise NotAnInput(name, problem.parameters, "shared", "parameter")
    joint = _Shared(problem, labels, indices, shared).solve(steps, progress)
    if all(name in shared for name in problem.free):
        joint.warnings.insert(0, EVERY_PARAMETER_SHARED)
    return joint


def _each_group(problem: _Problem, groups: dict[Hashable, np.ndarray], steps: int | None) -> Fits:
    """The fit of each group's rows alone: found for all the groups at once where nothing
    caps the steps, bounds the parameters or makes the loss robust (`grouped`), else one
    group after another."""
    fits: dict[Hashable, Fit] = {}
    problems: dict[Hashable, _Problem] = {}
    for label, index in groups.items():
        try:
            problems[label] = problem.rows(index)
        except InputError as error:
            fits[label] = _unfitted(problem, index.size, error.message)
    found: dict[Hashable, tuple] = {}
    try:
        sizes = [group.n for group in problems.values()]
        batched = steps is None and not problem.bounds and problem.loss == "linear"
        if problems and batched and _even(sizes):
            from ._grouped import Rows, minimize

            rows = Rows(problem.tape, problem.data, problem.observed, problem.inverse_sigma,
                        problem.starts, problem.free)  # fmt: skip
            batch = minimize(rows, [group.index for group in problems.values()], DEFAULT_STEPS)
            found = dict(zip(problems, zip(*batch, strict=True), strict=True))
        reached = {}
        for label, (values, units, *counts) in found.items():
            stage = _first_stage(problems[label], values, units, *counts)
            if stage is not None:
                reached[label] = stage
        notes = _poles(
            {label: problems[label] for label in reached},
            {label: problems[label].point(stage.x) for label, stage in reached.items()},
        )
        for label, group in problems.items():
            result = None
            if label in reached:  # judged as the single fit judges its first stage
                with np.errstate(all="ignore"):
                    # from its end alone: no step the trust region kept raised the RSS,
                    # so the start is never the better point
                    stage = reached[label]
                    result = _summary(group, stage.x, [stage], DEFAULT_STEPS,
                                      lambda *_, note=notes[label]: note)  # fmt: skip
            if result is None or not result.converged:  # alone, as a single fit is
                try:
                    result = problem.rows(groups[label]).solve(steps, None)
                except InputError as error:
                    result = _unfitted(problem, groups[label].size, error.message)
            fits[label] = result
    except Interrupted as stop:  # Ctrl-C in a group fitted alone: its best point too
        fits[label] = cast(Fit, stop.reached)
        stop.reached = _gathered(fits, groups, problem)
        raise
    except KeyboardInterrupt:  # Ctrl-C elsewhere: the groups fitted so far
        raise Interrupted(
            f"interrupted after {len(fits)} of {len(groups)} groups: the output is the groups "
            "fitted",
            _gathered(fits, groups, problem),
        ) from None
    return _gathered(fits, groups, problem)


# The grouped trust region holds each group's rows as many as the largest group's: it is
# used where that is at most this many times the rows there are.
PADDING = 4


def _even(sizes: list[int]) -> bool:
    """Whether groups of `sizes` rows are near enough in size to be fitted together."""
    return len(sizes) * max(sizes) <= PADDING * sum(sizes)


def _first_stage(
    problem: _Problem,
    values: np.ndarray,
    units: np.ndarray,
    status: int,
    nfev: int,
    njev: int,
    shorter: int,
) -> _Stage | None:
    """The first stage of a group's fit as the grouped trust region ran it (`values`, in the
    parameters' units, solved in `units`, and SciPy's `status`), where it stopped on a
    tolerance; None where the group is to be fitted alone (its start or end not finite, its
    steps out). A stage that the gradient test then fails is no fit's end either: its group
    is fitted alone, where the second stage takes over."""
    if status <= 0 or not np.all(np.isfinite(values)):
        return None
    problem.units = units
    x = values / units
    problem.evaluate(x)
    if problem.first_non_finite() is not None:
        return None
    problem.non_finite_trials = int(shorter)
    result = Solved(x, int(status), int(nfev), int(njev))
    return _Stage("trf", x, result, _reason(result))


def started_column(name: str) -> InputError:
    """The error for a start given to an input that is a column of the data."""
    return InputError(
        f"{name} is a column of the data, and a start is given for it too: a column is data, "
        "not a parameter"
    )


def no_start(names: list[str], columns: Sequence[str] = ()) -> InputError:
    """The error for parameters (inputs that name no column of `columns`) given no start:
    where one was likely meant as a column, that it is no column."""
    for name in names:
        meant = near_column(name, columns)
        if meant is not None:
            aside = f" (a start for it would make {name} a parameter)"
            return InputError(
                f"{name} is no column of {option('data')} (its columns: {', '.join(columns)})"
                + column_hint(meant, "the model", aside)
            )
    plural = "s" if len(names) > 1 else ""
    return InputError(
        f"no start for parameter{plural} {', '.join(names)}: give a start value for each "
        "input that is not a column of the data"
    )


def group_rows(groups: Sequence[Hashable], rows: int) -> tuple[list[Hashable], list[np.ndarray]]:
    """The values of `groups` (one per row of `rows`) in the order they first appear, and the
    rows of each, in order."""
    values = groups.tolist() if hasattr(groups, "tolist") else list(groups)
    if len(values) != rows:
        raise InputError(
            f"the groups are {len(values)} values for {rows} rows: give one group per row"
        )
    codes: dict[Hashable, int] = {}
    try:
        numbered = np.fromiter((codes.setdefault(v, len(codes)) for v in values), np.intp, rows)
    except TypeError:
        raise InputError("a group is a number or a text, one per row") from None
    order = np.argsort(numbered, kind="stable")
    return list(codes), np.split(order, np.cumsum(np.bincount(numbered, minlength=len(codes)))[:-1])


def _unfitted(problem: _Problem, rows: int, why: str) -> Fit:
    """The Fit of a group that could not be fitted: nan values, not converged, and why (the
    options it names written as where the fit was called writes them)."""
    names = problem.parameters
    nan = math.nan
    return Fit(
        parameters=dict.fromkeys(names, nan),
        stderr=dict.fromkeys(names, nan),
        covariance={a: dict.fromkeys(names, nan) for a in names},
        rss=nan,
        residual_sd=nan,
        dof=rows - len(problem.free),
        n=rows,
        iterations=0,
        converged=False,
        message=spell(why),
        inputs=dict(problem.starts),
        fitted=np.full(rows, nan),
        residuals=np.full(rows, nan),
    )


def _gathered(fits: dict[Hashable, Fit], rows: dict[Hashable, np.ndarray], problem) -> Fits:
    """The fits of the groups, with the fitted value and residual of every row of the data."""
    fitted, residuals = np.full(problem.given_rows, math.nan), np.full(problem.given_rows, math.nan)
    for label, result in fits.items():
        fitted[rows[label]] = result.fitted
        residuals[rows[label]] = result.residuals
    return Fits({label: fits[label] for label in rows if label in fits}, fitted, residuals)


def in_numbers(program: Program) -> Program:
    """`program` written out in numbers where it builds arrays of the columns (the target
    `sum([y1, y2])`): each row's value is one number, as the tape computes it."""
    if not program.arrays:
        return program
    from ._arrays import scalarized

    return scalarized(program, {})[0]


def not_shadowed(program: Program, columns: Mapping[str, object], what: str) -> None:
    """An InputError where the data has a column named as a constant that `program` (`what`
    it is, for the message) reads by name: the source means the constant, the user often
    the column."""
    for name in program.constants_by_name():
        if name in columns:
            raise InputError(
                f"the data has a column {name}, and {what} reads {name} as the constant "
                f"{name} = {CONSTANTS[name]:.10g}: rename the column to read it"
            )


def sigma_values(
    text: str,
    arrays: Mapping[str, np.ndarray],
    rows: int,
    drop_nan: bool = False,
    headers: Sequence[str] = (),
) -> np.ndarray:
    """Each of `rows` rows' standard deviation for `fit`'s sigma: a column of `arrays`, or an
    expression over the columns (`0.05*y`, `sqrt(y)`); with `drop_nan` a nan is let through
    (its row is left out). `headers`: every column of the data, for the message of one that
    is not (by default those of `arrays`)."""
    headers = list(headers or arrays)
    from ._language import parse

    name = text.strip()
    if re.fullmatch(r"[A-Za-z_]\w*", name) and name not in arrays:
        raise InputError(no_column(name, headers, option("sigma")))
    if name in CONSTANTS:  # (the column, or the constant? as the model and target read it)
        not_shadowed(parse(name), arrays, "sigma")
    if name in arrays:
        values, what = arrays[name], f"of column {name}"
    else:
        try:
            program = in_numbers(parse(text)).single("sigma", None)
        except SourceError as error:
            raise InputError(f"sigma: {error}") from None
        not_shadowed(program, arrays, "sigma")
        missing = [n for n in program.inputs if n not in arrays]
        if missing:
            why = ": sigma is a column or an expression over the columns"
            raise InputError(no_column(missing[0], headers, option("sigma"), why))
        columns = {n: arrays[n] for n in program.inputs}
        with np.errstate(all="ignore"):
            values = (
                batch_values(program, columns)
                if program.inputs
                else np.full(rows, program.values({})[program.result])
            )
        what = f"of sigma = {text.strip()}"
    bad = ~(np.isfinite(values) & (values > 0))
    if drop_nan:
        bad &= ~np.isnan(values)  # a missing one: its row is left out
    tiny = ~bad & (values < 1 / sys.float_info.max)  # its weight, 1/sigma, would overflow
    if tiny.any():
        row = int(np.argmax(tiny))
        raise InputError(
            f"sigma: row {row + 1} {what} is {float(values[row])!r}, too small for the fit: "
            "its weight, 1/sigma, is past the largest float (scale sigma and the data up)"
        )
    if bad.any():
        row = int(np.argmax(bad))
        remedy = f" ({option('drop_nan')} leaves out the rows where it is missing)"
        raise InputError(
            f"sigma: row {row + 1} {what} is {float(values[row])!r}; a standard "
            "deviation is a positive number" + (remedy if math.isnan(values[row]) else "")
        )
    return values


# A profile's search for where the sum of squares reaches its threshold: steps from the
# value outward, the first its standard error (or a fifth of the value, as lmfit's), each
# twice the last, at most PROFILE_STEPS of them; then Brent's method on the bracket found, to
# PROFILE_TOLERANCE of the first step. A side where the sum of squares still changes by less
# than PROFILE_FLAT of the threshold's rise between steps, far out, has levelled off.
PROFILE_STEPS, PROFILE_TOLERANCE, PROFILE_FLAT = 30, 1e-9, 1e-6


def profile_intervals(
    program: Program,
    columns: Mapping[str, ArrayLike],
    result: Fit,
    level: float,
    target: Program | None = None,
    sigma: str | None = None,
    fix: Iterable[str] = (),
    steps: int | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    absolute_sigma: bool = False,
    drop_nan: bool = False,
) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """Profile-likelihood confidence intervals at `level` for the free parameters of
    `result` (a converged fit made by `fit` with the same arguments): for each, the values at
    which, held there with the others refitted, the sum of squares χ² rises to
    χ²min·(1 + F⁻¹(level; 1, dof)/dof), lmfit's `conf_interval` F-test, or with
    `absolute_sigma` to χ²min + the `level` quantile of χ² with one degree of freedom. A side
    where it never does is its bound, or ±inf, with a note saying so (the notes are returned
    with the intervals)."""
    from scipy import special
    from scipy.optimize import brentq

    fixed, bounds = list(fix), dict(bounds or {})
    free = [name for name in result.parameters if name not in fixed]
    dof = result.dof
    intervals: dict[str, tuple[float, float]] = {}
    notes: list[str] = []
    threshold = None
    for name in free:
        held = _Problem(
            program,
            columns,
            result.parameters,
            target,
            sigma,
            [*fixed, name] if len(free) > 1 else fixed,  # one parameter alone: evaluated
            bounds,
            drop_nan,
        )
        profile = _Profiled(held, name, steps)
        if threshold is None:  # χ² and its threshold in the problem's units, where neither
            # overflows nor underflows (data near 1e300 or 1e-300)
            chi2 = profile.minimum
            if absolute_sigma:
                threshold = chi2 + math.ldexp(
                    float(special.chdtri(1, 1 - level)), 2 * held.exponent
                )
            elif dof > 0:
                threshold = chi2 * (1 + float(special.fdtri(1, dof, level)) / dof)
            else:
                threshold = math.nan
            if not (math.isfinite(threshold) and threshold > chi2):
                why = "no degrees of freedom" if dof <= 0 else "a sum of squares of 0"
                notes.append(f"no profile intervals: the fit has {why}")
                return {name: (math.nan, math.nan) for name in free}, notes
        value, error = result.parameters[name], result.stderr[name]
        first = error if 0 < error < math.inf else max(abs(value) * 0.2, 1e-3)
        ends = []
        for side in (-1, 1):
            low, high = bounds.get(name, (-math.inf, math.inf))
            edge = low if side < 0 else high
            end, note = _profile_side(profile, value, side * first, edge, chi2, threshold, brentq)
            ends.append(end)
            if note:
                notes.append(f"the profile interval of {name} {note}")
        intervals[name] = (ends[0], ends[1])
    return intervals, notes


class _Profiled:
    """χ² with one parameter held at a value and the others refitted, each refit from where
    the one at the nearest value ended (from the last would follow a refit that ran off to
    an asymptote, where the others may be lost). χ² in the problem's working units, as
    `minimum`, the fit's own."""

    def __init__(self, problem: _Problem, name: str, steps: int | None) -> None:
        self.problem, self.name = problem, name
        self.budget = DEFAULT_STEPS if steps is None else int(steps)
        self.alone = name in problem.free  # no other parameter to refit
        x = problem.choose_units()  # (evaluated at the fit's parameters, its start)
        with np.errstate(over="ignore"):
            self.minimum = float(problem.residuals @ problem.residuals)
        self.reached: dict[float, tuple[np.ndarray, float]] = {problem.starts[name]: (x, math.nan)}

    def __call__(self, value: float) -> float:
        if value in self.reached and not math.isnan(self.reached[value][1]):
            return self.reached[value][1]
        problem = self.problem
        with np.errstate(all="ignore"):
            if self.alone:
                x = np.array([value]) / problem.units
                problem.evaluate(x)
                rss = float(problem.residuals @ problem.residuals)
            else:
                nearest = min(self.reached, key=lambda held: abs(held - value))
                start = self.reached[nearest][0]
                problem.starts[self.name] = value
                problem._at = None  # the same x is another point now
                stages: list[_Stage] = []
                problem._stages(start, self.budget, stages)
                x, rss = _least(problem, start, stages)
        self.reached[value] = (x, rss)
        return rss


def _profile_side(
    chi2_at: _Profiled,
    value: float,
    step: float,
    edge: float,
    chi2: float,
    threshold: float,
    brentq: Callable[..., float],
) -> tuple[float, str | None]:
    """Where, on the side of `value` that `step` points to, χ² reaches `threshold`: a
    bracket by steps that double, then Brent's method; or `edge` (a bound, or ±inf) where it
    does not, with a note saying why."""
    side = "below" if step < 0 else "above"
    inner, last, end = value, chi2, math.nan
    lower_found = None
    for count in range(PROFILE_STEPS):
        trial = value + step * 2.0**count
        at_edge = (trial - edge) * step >= 0
        trial = edge if at_edge else trial
        reached = chi2_at(trial)
        if not math.isfinite(reached):
            return math.nan, (
                f"has no end {side} the fit (nan): held at {trial:.6g}, the sum of squares is "
                "not finite"
            )
        if reached < chi2 - 1e-9 * (threshold - chi2) and lower_found is None:
            lower_found = trial
        if reached >= threshold:
            end = brentq(
                lambda v: chi2_at(v) - threshold,
                min(inner, trial),
                max(inner, trial),
                xtol=PROFILE_TOLERANCE * abs(step),
                rtol=4 * np.finfo(float).eps,
            )
            break
        if at_edge:
            return edge, (
                f"ends at its bound {edge:g}: held there, the sum of squares is still below "
                "the level's threshold"
            )
        if count >= 4 and abs(reached - last) < PROFILE_FLAT * (threshold - chi2):
            break  # levelled off
        inner, last = trial, reached
    if math.isnan(end):  # levelled off, or still below after every step
        return math.copysign(math.inf, step), (
            f"is open {side} the fit ({math.copysign(math.inf, step)}): the sum of squares "
            f"stays below the level's threshold as far as {trial:.6g}, so the data do not "
            "bound it there"
        )
    if lower_found is not None:
        return end, (
            f"may be wrong: held at {lower_found:.6g}, the others reach a lower sum of "
            "squares than the fit's, which is then no minimum; try other starts"
        )
    return end, None


def solver() -> Callable[..., Any]:
    """SciPy's `least_squares`, or MissingSciPy, whose command installs the whole `fit` extra
    (SciPy and the PyArrow that reads the data)."""
    try:
        from scipy.optimize import least_squares
    except ImportError:
        raise MissingSciPy() from None
    return least_squares


def _is(options: dict[str, Any], method: str) -> bool:
    """Whether a stage's `options` are `method` with the Jacobian's scaling, which
    `trust_region` (trf) and `levenberg_marquardt` (lm) run without SciPy's wrappers."""
    return options["method"] == method and options["x_scale"] == "jac"


def levenberg_marquardt(
    residuals: Callable[[np.ndarray], np.ndarray],
    jacobian: Callable[[np.ndarray], np.ndarray],
    x0: np.ndarray,
    max_nfev: int,
    ftol: float,
    xtol: float,
    gtol: float,
) -> Solved:
    """MINPACK's Levenberg-Marquardt (lmder) from `x0`, scaled by the Jacobian's columns:
    the one call of MINPACK that `least_squares(method="lm", x_scale="jac")` makes, through
    SciPy's `leastsq`, without least_squares' wrappers of every evaluation; the same point,
    evaluations and status to the last bit. A start whose residuals are not finite is a
    ValueError, as there."""
    try:
        from scipy.optimize import leastsq
    except ImportError:
        raise MissingSciPy() from None
    if not np.isfinite(residuals(x0)).all():
        raise ValueError("Residuals are not finite in the initial point.")
    x, _, info, _, code = leastsq(
        residuals, x0, Dfun=jacobian, full_output=True, ftol=ftol, xtol=xtol, gtol=gtol,
        maxfev=max_nfev,
    )  # fmt: skip
    # MINPACK's info as least_squares' status (6 to 8 need tolerances below an epsilon)
    status = {1: 2, 2: 3, 3: 4, 4: 1, 5: 0}[code]
    return Solved(x, status, int(info["nfev"]), int(info["njev"]))


@functools.cache  # (once found; a MissingSciPy is raised again at each call)
def require_solver() -> None:
    """MissingSciPy where `solver` would raise it, found without importing SciPy's optimize
    (a quarter of a second): many groups fitted at once may never need it."""
    try:
        found = importlib.util.find_spec("scipy.optimize") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise MissingSciPy()


class _Problem:
    """A fit checked and ready: the residuals and Jacobian at any point of the free
    parameters, in batches of rows through the tape."""

    def __init__(
        self, program, columns, starts, target, sigma, fix, bounds=None, drop_nan=False
    ) -> None:
        program = program.single("fit", None)
        self.program = program
        self.headers = names_of(columns)
        arrays = columns_of(columns)
        self.n = self.given_rows = row_count(arrays)
        inputs = set(program.inputs)
        unknown = [name for name in starts if name not in inputs]
        if unknown:  # the parameters listed, which take starts, and the columns said apart
            parameters = [name for name in program.inputs if name not in arrays]
            read = [name for name in program.inputs if name in arrays]
            raise UnknownInputs(unknown, parameters, columns=read)
        given_column = next((name for name in starts if name in arrays), None)
        if given_column is not None:
            raise started_column(given_column)
        self.parameters = [name for name in program.inputs if name not in arrays]
        missing = [name for name in self.parameters if name not in starts]
        if missing:
            raise no_start(missing, self.headers)
        if not self.parameters:
            raise InputError("the model has no parameters: every input is a column of the data")
        self.starts = {name: _start(name, starts[name]) for name in self.parameters}
        fixed = list(dict.fromkeys(fix))
        not_parameters = [name for name in fixed if name not in self.starts]
        if not_parameters:
            raise NotAnInput(not_parameters[0], list(self.starts), "fix", "parameter")
        self.fixed = set(fixed)
        self.free = [name for name in self.parameters if name not in self.fixed]
        if not self.free:
            raise InputError("every parameter is fixed: nothing is left to fit")
        self.bounds = checked_bounds(bounds or {}, self.starts, self.free)
        if self.n < len(self.free):
            k = len(self.free)
            raise InputError(
                f"{self.n} row{'s' * (self.n != 1)} of data and {k} parameter{'s' * (k != 1)} "
                "to fit: a fit needs at least as many rows as free parameters"
            )
        self.data = {name: arrays[name] for name in program.inputs if name in arrays}
        not_shadowed(program, arrays, "the model")
        observed = self._target(target, arrays)
        sigmas = (
            None if sigma is None else sigma_values(sigma, arrays, self.n, drop_nan, self.headers)
        )
        self.kept: np.ndarray | None = None  # with drop_nan, the rows fitted
        if drop_nan:
            read = [*self.data.values(), *([] if sigmas is None else [sigmas])]
            keep = ~np.isnan(observed) & complete_rows(read, self.n)
            if not keep.all():
                self.kept = keep
                self.data = {name: values[keep] for name, values in self.data.items()}
                observed = observed[keep]
                sigmas = None if sigmas is None else sigmas[keep]
                self.n = int(keep.sum())
                if self.n < len(self.free):
                    n, k = self.n, len(self.free)
                    left = "none is" if n == 0 else f"{n} {'is' if n == 1 else 'are'}"
                    raise InputError(
                        f"with the rows that have a missing value left out, {left} left for "
                        f"{k} parameter{'s' * (k > 1)}: a fit needs at least as many"
                    )
        self.observed = observed
        self.index = np.arange(self.n)  # the rows held, of those fitted (`rows`)
        self.inverse_sigma = None if sigmas is None else 1.0 / sigmas
        self.absolute_sigma = False  # sigma taken as known (fit's absolute_sigma)
        self.loss, self.f_scale = "linear", 1.0  # (`robust`); a group's are its fit's
        self.tape = Tape(program, wrt=self.parameters)  # (no gradient by the data)
        self._prepare()

    def _prepare(self) -> None:
        """The scaling and the arrays of the rows held: after the checks, or for a group of
        them (`rows`)."""
        self._scale(self.observed)
        self.units = np.ones(len(self.free))  # parameter j is units[j] * the solver's x[j]
        _check_memory(self.n, len(self.free))
        self.jacobian = np.zeros((self.n, len(self.free)), order="F")
        block = min(self.n, self.tape.block)
        self._filled = {name: np.empty(block) for name in self.program.inputs}
        # per block of rows: its rows, its data, and its rows of each column of the Jacobian
        self._blocks = [
            (
                rows,
                {name: values[rows] for name, values in self.data.items()},
                [self.jacobian[rows, j] for j in range(len(self.free))],
            )
            for rows in (
                slice(start, min(self.n, start + block)) for start in range(0, self.n, block)
            )
        ]
        self.residuals = np.empty(self.n)
        self.model = np.empty(self.n)
        self._at: bytes | None = None
        self.evaluations = 0
        self.non_finite_trials = 0
        self.stage_jacobians = 0  # Jacobians of the stage running
        self.stuck = False  # a stage ended by trial steps that were all nan or inf

    def _scale(self, sizes: np.ndarray) -> None:
        """The power of two of the residuals: the one that brings the largest of `sizes` (the
        target's, or also the model's), weighted, into [0.5, 1)."""
        weights = self.inverse_sigma
        self.exponent = _exponent(sizes if weights is None else sizes * weights)
        # r = (target - model) * w, so dr/dp = -w * dmodel/dp; w holds the power of two
        factor = math.ldexp(1.0, self.exponent)
        self.weights = factor if weights is None else np.ldexp(weights, self.exponent)
        self._slope = -self.weights

    def robust(self, loss: str, f_scale: float | None) -> None:
        """Fit with the robust `loss` at `f_scale`, in the units of the weighted residuals."""
        self.loss, self.f_scale = checked(loss, f_scale)

    def objective(self) -> float:
        """What the fit minimizes, at the point evaluated last (in the solver's units): the
        sum of squares, or with a robust loss f² Σ rho((r/f)²)."""
        with np.errstate(over="ignore"):
            return objective(self.loss, self.residuals, self._solver_f_scale())

    def _solver_f_scale(self) -> float:
        return math.ldexp(self.f_scale, self.exponent)

    def weighted(self) -> tuple[np.ndarray, np.ndarray]:
        """The Jacobian and the residuals at the point evaluated last, each row scaled by
        the square root of its weight in the loss's gradient (1 without a robust loss): the
        least-squares problem whose gradient is the loss's there."""
        if self.loss == "linear":
            return self.jacobian, self.residuals
        root = np.sqrt(row_weights(self.loss, self.residuals, self._solver_f_scale()))
        return self.jacobian * root[:, None], self.residuals * root

    def rows(self, index: np.ndarray) -> _Problem:
        """The same fit of the rows `index` (of the data as given) alone: checked, parsed and
        compiled once for every group of `fit_groups`. A group with fewer rows than free
        parameters is an InputError."""
        group = copy.copy(self)
        kept = None
        if self.kept is not None:  # the group's rows among those fitted
            kept = self.kept[index]
            index = (np.cumsum(self.kept) - 1)[index[kept]]
            dropped = int((~kept).sum())
            kept = None if kept.all() else kept
        group.kept = kept
        group.index = index
        group.n = index.size
        if group.n < len(self.free):
            k = len(self.free)
            out = f" ({dropped} left out for a missing value)" if kept is not None else ""
            raise InputError(
                f"{group.n} row{'s' * (group.n != 1)}{out} for {k} parameter"
                f"{'s' * (k != 1)}: a fit needs at least as many rows as free parameters"
            )
        group.data = {name: values[index] for name, values in self.data.items()}
        group.observed = self.observed[index]
        if self.inverse_sigma is not None:
            group.inverse_sigma = self.inverse_sigma[index]
        group._prepare()
        return group

    def _target(self, target: Program | None, arrays: dict) -> np.ndarray:
        if target is None:
            if "y" not in arrays:
                raise InputError(
                    f"the data has no column y, the default target (its columns: "
                    f"{', '.join(self.headers)}): give {option('target')}, a column or an "
                    "expression over the columns"
                )
            return arrays["y"]
        target = in_numbers(target).single("the target", None)
        not_shadowed(target, arrays, "the target")
        missing = [name for name in target.inputs if name not in arrays]
        if missing:
            why = ": the target is a column or an expression over the columns"
            raise InputError(no_column(missing[0], self.headers, option("target"), why))
        if not target.inputs:
            value = target.values({})[target.result]
            return np.full(self.n, value)
        for name, slot in target.input_slots.items():
            if slot == target.result:  # a column as it is, as the default y: no tape to run
                return arrays[name]
        return batch_values(target, {name: arrays[name] for name in target.inputs})

    def point(self, free: np.ndarray) -> dict[str, float]:
        """Every parameter's value, the free ones from the solver's `free`."""
        values = dict(self.starts)
        values.update(zip(self.free, (free * self.units).tolist(), strict=True))
        return values

    def choose_units(self) -> np.ndarray:
        """The units of the free parameters, from the Jacobian at their start, and the start
        in them."""
        x0 = np.array([self.starts[name] for name in self.free])
        self.evaluate(x0)
        magnitudes = np.abs(self.jacobian)
        largest = np.max(magnitudes, axis=0, where=np.isfinite(magnitudes), initial=0.0)
        self.units = np.ldexp(1.0, [_exponent(column) for column in largest])
        x = x0 / self.units
        if np.array_equal(x * self.units, x0):  # (a power of two: exact, unless out of range)
            self.jacobian *= self.units  # the same bits as evaluating at x again
            self._at = x.tobytes()
        else:
            self._at = None
        return x

    def evaluate(self, free: np.ndarray) -> None:
        """Residuals and Jacobian at `free`, into `self.residuals` and `self.jacobian`: one
        pass of the tape, forward and back, a block of rows at a time."""
        key = np.asarray(free, dtype=np.float64).tobytes()
        if key == self._at:
            return
        self.evaluations += 1
        point = self.point(free)
        tape, slope = self.tape, self._slope
        with np.errstate(all="ignore"):
            for rows, data, columns in self._blocks:
                length = rows.stop - rows.start
                inputs = self._with_parameters(point, rows, dict(data))
                (value, gradients), *_ = tape.run(inputs, length)
                self.model[rows] = value
                sloped = slope[rows] if isinstance(slope, np.ndarray) else slope
                self._fill_jacobian(rows, columns, gradients, sloped)
            np.subtract(self.observed, self.model, out=self.residuals)
            self.residuals *= self.weights
        self._at = key

    def _with_parameters(self, point: dict[str, float], rows: slice, inputs: dict) -> dict:
        """`inputs`, the data on `rows`, with every parameter's value at `point` on them."""
        length = rows.stop - rows.start
        for name in self.parameters:
            filled = self._filled[name]
            filled.fill(point[name])
            inputs[name] = filled if filled.size == length else filled[:length]
        return inputs

    def _fill_jacobian(self, rows: slice, columns: list, gradients: dict, slope) -> None:
        """The Jacobian's `rows` (`columns`, their views): each free parameter's gradient
        times the slope of the residual (and its unit)."""
        for column, name, unit in zip(columns, self.free, self.units.tolist(), strict=True):
            np.multiply(gradients[name], slope, out=column)
            column *= unit

    def scaled_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The bounds of the free parameters in the solver's units (infinite where none)."""
        low = np.array([self.bounds.get(n, (-math.inf, math.inf))[0] for n in self.free])
        high = np.array([self.bounds.get(n, (-math.inf, math.inf))[1] for n in self.free])
        return low / self.units, high / self.units

    def inside(self, x: np.ndarray) -> bool:
        low, high = self.scaled_bounds()
        return bool(np.all((low <= x) & (x <= high)))

    def at_bound(self, x: np.ndarray) -> np.ndarray:
        """Per free parameter: is it at its bound at `x` (to 1e-10 of the bound's size)?"""
        low, high = self.scaled_bounds()
        near = 1e-10 * np.maximum(1.0, np.abs(x))
        with np.errstate(invalid="ignore"):
            return (x - low <= near) | (high - x <= near)

    def unscaled(self, rss: float) -> float:
        """A sum of squared residuals of the problem as solved, in the data's units."""
        with np.errstate(over="ignore"):
            return float(np.ldexp(rss, -2 * self.exponent))  # inf beyond the largest float

    def first_non_finite(self) -> int | None:
        bad = ~np.isfinite(self.residuals)
        return int(np.argmax(bad)) if bad.any() else None

    def solve(self, steps, progress) -> Fit:
        x0 = self.choose_units()
        self.evaluate(x0)
        row = self.first_non_finite()
        if row is not None:
            raise InputError(_not_finite_at_start(self, row))
        with np.errstate(over="ignore"):
            start_rss = float(self.residuals @ self.residuals)
        start_cost = self.objective()  # (what the stages' ends are compared with)
        if not math.isfinite(start_rss):
            largest = math.ldexp(float(np.max(np.abs(self.residuals))), -self.exponent)
            size = math.ldexp(1.0, -self.exponent)
            raise InputError(
                "at the start, the sum of the squared residuals is too large for a float in "
                f"units of the target's size ({size:.3g}), which the fit works in (the largest "
                f"residual is {largest:.3g}, of a target at most "
                f"{float(np.max(np.abs(self.observed))):.3g}): start nearer the data's scale"
            )
        bad = ~np.isfinite(self.jacobian)
        if bad.any():
            row, j = map(int, np.argwhere(bad)[0])
            raise InputError(_derivative_not_finite_at_start(self, row, self.free[j]))
        if self.free and not self.jacobian.any():
            raise InputError(_flat_at_start(self))
        budget = DEFAULT_STEPS if steps is None else int(steps)
        if budget < 1:
            raise InputError(f"steps must be at least 1, not {steps}")

        # the least objective (RSS, or robust loss) evaluated, and where: what Ctrl-C reports
        best_cost, best_x = math.inf, x0

        def seen(x: np.ndarray, rss: float) -> None:
            nonlocal best_cost, best_x
            if math.isfinite(rss):
                # the objective, without the sum of squares again where it is that sum
                cost = rss if self.loss == "linear" else self.objective()
                if cost < best_cost:
                    best_cost, best_x = cost, np.array(x)
            if progress is not None:
                progress(self.evaluations, self.unscaled(rss))

        stages: list[_Stage] = []
        # Overflow and invalid values on the way are the solver's to handle (a trial step
        # too long), and the summary's to say: never a NumPy warning to the user.
        with np.errstate(all="ignore"):
            try:
                self._stages(x0, budget, stages, seen)
            except KeyboardInterrupt:
                stages.append(
                    _Stage("interrupted", best_x, None, INTERRUPTED, self.stage_jacobians)
                )
                reached = _summary(self, x0, stages, budget, start_cost=start_cost)
                done = self.evaluations
                raise Interrupted(
                    f"interrupted after {done} evaluation{'s' * (done != 1)}: the output is "
                    "the best point reached",
                    reached,
                ) from None
            return _summary(self, x0, stages, budget, start_cost=start_cost)

    def _stages(self, x0, budget, stages, seen=None) -> None:
        """The solver's stages from `x0`, each appended to `stages` as it ends; `seen(x,
        rss)` is called at every point evaluated whose derivatives are finite."""

        in_a_row = 0  # trial steps rejected one after another, for a nan or inf

        def rejected() -> None:
            nonlocal in_a_row
            self.non_finite_trials += 1
            in_a_row += 1
            if in_a_row == REJECTED_IN_A_ROW:
                self.stuck = True
                raise _Stuck(
                    f"{REJECTED_IN_A_ROW} trial steps in a row made a residual or a "
                    "derivative nan or inf, however short: the solver cannot go on from "
                    "there (try another start)"
                )

        def residuals(x):
            nonlocal in_a_row
            self.evaluate(x)
            rss = float(self.residuals @ self.residuals)  # (called where NumPy warns of none)
            if not math.isfinite(rss) and self.first_non_finite() is not None:
                rejected()  # (a finite sum has every residual finite)
            elif not np.isfinite(self.jacobian).all():
                # a derivative nan or inf where the residuals are finite: rejected as a
                # residual would be, so that the solver takes a shorter step
                rejected()
                return np.where(np.isfinite(self.jacobian).all(axis=1), self.residuals, np.inf)
            else:
                in_a_row = 0
            if seen is not None:
                seen(x, rss)
            return self.residuals.copy()

        def jacobian(x):
            self.evaluate(x)
            self.stage_jacobians += 1
            return self.jacobian.copy(order="F")

        x = x0
        # Levenberg-Marquardt takes no bounds and no robust loss: such a fit is the first
        # stage's alone, and its polish (Gauss-Newton on the sum of squares) is left out
        robust = self.loss != "linear"
        alone = self.bounds or robust
        stages_run = (FIRST_STAGE,) if alone else (FIRST_STAGE, SECOND_STAGE)
        limits: dict[str, Any] = {"bounds": self.scaled_bounds()} if self.bounds else {}
        if robust:
            limits |= {"loss": self.loss, "f_scale": self._solver_f_scale()}
        for options in stages_run:
            self.stage_jacobians = 0
            with np.errstate(all="ignore"):
                try:
                    tolerances = (options["ftol"], options["xtol"], options["gtol"])
                    if _is(options, "trf") and not limits:
                        result = trust_region(residuals, jacobian, x, budget, *tolerances)
                    elif _is(options, "lm") and not limits:
                        result = levenberg_marquardt(residuals, jacobian, x, budget, *tolerances)
                    else:
                        result = solver()(
                            residuals, x, jac=jacobian, max_nfev=budget, **options, **limits
                        )
                except (ValueError, np.linalg.LinAlgError, _Stuck) as error:
                    failed = _Stage(options["method"], x, None, str(error), self.stage_jacobians)
                    stages.append(failed)
                    break
            minimized = f"the {self.loss} loss" if robust else "the sum of squares"
            stage = _Stage(options["method"], result.x, result, _reason(result, minimized))
            stages.append(stage)
            if result.status == 0 or not np.all(np.isfinite(result.x)):
                break  # out of steps, or lost: the point reached is reported as it is
            if not robust:
                self.evaluate(result.x)
                rss = float(self.residuals @ self.residuals)
                stage.x, _ = _polish(self, result.x, rss)
            if _small_gradient(self, stage.x):
                break  # converged: the second stage is for a first that stopped short
            x = stage.x


class _Shared(_Problem):
    """One fit over groups of rows: each parameter of `shared` is one number for every
    group, each other one number per group (a[g]). A row's model reads, for a parameter, the
    number of its group; that number's column of the Jacobian is the model's derivative on
    the rows of its group and 0 on the others."""

    def __init__(
        self,
        problem: _Problem,
        labels: list[Hashable],
        indices: list[np.ndarray],
        shared: list[str],
    ) -> None:
        self.__dict__.update(problem.__dict__)
        group = np.empty(problem.given_rows, dtype=np.intp)
        for code, index in enumerate(indices):
            group[index] = code
        if problem.kept is not None:
            group = group[problem.kept]
        # per parameter of the program: the position of each group's number among them all
        numbers: list[str] = []
        origin: dict[str, str] = {}
        slots: dict[str, np.ndarray] = {}
        for name in problem.parameters:
            own = [name] if name in shared else [f"{name}[{group_name(g)}]" for g in labels]
            slots[name] = np.arange(len(numbers), len(numbers) + len(own))
            numbers += own
            origin.update(dict.fromkeys(own, name))
        self.parameters = numbers
        self.starts = {name: problem.starts[origin[name]] for name in numbers}
        self.fixed = {name for name in numbers if origin[name] in problem.fixed}
        self.free = [name for name in numbers if name not in self.fixed]
        if self.n < len(self.free):
            raise InputError(
                f"{self.n} rows of data and {len(self.free)} parameters to fit over the "
                f"{len(labels)} groups: a fit needs at least as many rows as free parameters"
            )
        self.bounds = {
            name: problem.bounds[origin[name]]
            for name in self.free
            if origin[name] in problem.bounds
        }
        column = {name: j for j, name in enumerate(self.free)}
        # per parameter of the program and row: its number, and that number's column (-1: fixed)
        self.number_of_row = {
            name: slots[name][0] if name in shared else slots[name][group]
            for name in problem.parameters
        }
        self.column_of_row = {
            name: np.array([column.get(n, -1) for n in numbers])[rows]
            for name, rows in self.number_of_row.items()
        }
        self._prepare()

    def _with_parameters(self, point: dict[str, float], rows: slice, inputs: dict) -> dict:
        values = np.array([point[name] for name in self.parameters])
        for name, numbers in self.number_of_row.items():
            inputs[name] = np.broadcast_to(values[numbers], (self.n,))[rows]
        return inputs

    def _fill_jacobian(self, rows: slice, columns: list, gradients: dict, slope) -> None:
        at = np.arange(rows.start, rows.stop)
        for name, columns in self.column_of_row.items():
            j = np.broadcast_to(columns, (self.n,))[rows]
            moving = j >= 0
            d = np.broadcast_to(np.multiply(gradients[name], slope), (at.size,))
            self.jacobian[at[moving], j[moving]] = d[moving] * self.units[j[moving]]


@dataclass
class _Stage:
    method: str
    x: np.ndarray
    result: OptimizeResult | Solved | None  # None for a stage that failed or was interrupted
    message: str
    iterations: int = 0  # (of a stage without a result: its result's njev says them)


def _summary(
    problem: _Problem,
    x0: np.ndarray,
    stages: list[_Stage],
    budget: int,
    pole: Callable[[_Problem, dict[str, float]], str | None] | None = None,
    start_cost: float | None = None,
) -> Fit:
    """The Fit: the best point any stage reached, its statistics, and whether (and why not)
    it converged. `start_cost` is the objective at `x0`, where the caller knows it."""
    best, best_cost = _least(problem, x0, stages, start_cost)
    if problem.bounds:
        best, best_cost = _on_bounds(problem, best, best_cost)
    problem.evaluate(best)
    best_rss = (
        float(problem.residuals @ problem.residuals) if math.isfinite(best_cost) else math.inf
    )
    jac = problem.jacobian
    n, k = problem.n, len(problem.free)
    iterations = sum(s.result.njev or 0 if s.result else s.iterations for s in stages)
    reasons = []
    ran_out = any(s.result is not None and s.result.status == 0 for s in stages)
    failed = next((s for s in stages if s.result is None), None)
    if failed is not None:
        stopped = failed.message == INTERRUPTED
        reasons.append(failed.message if stopped else f"the solver failed: {failed.message}")
    if ran_out:
        plural = "s" if budget != 1 else ""
        reasons.append(
            f"stopped after {budget} evaluation{plural} (the steps limit) before converging"
        )
    if not math.isfinite(best_rss):
        reasons.append("the residuals are nan or inf at every point reached")
    scale = np.sqrt(np.sum(jac * jac, axis=0))
    decomposed = _scaled_svd(jac, scale)  # for the rank test, and the standard errors
    undetermined = _undetermined(problem.free, scale, decomposed)
    if len(undetermined) == 1:
        (name,) = undetermined
        reasons.append(
            f"the data cannot determine {name}: the model does not change with it there "
            "(fix it at a value, or leave it out)"
        )
    elif undetermined:
        which = " and ".join(undetermined) if len(undetermined) == 2 else ", ".join(undetermined)
        reasons.append(
            f"the data cannot determine {which}: the Jacobian is singular there (a "
            "combination of them leaves the model unchanged)"
        )
    moved = not np.array_equal(best, x0)
    gradient_ok = _small_gradient(problem, best)
    if not reasons and not gradient_ok:
        why = "did not move from the start" if not moved else "stopped"
        reasons.append(
            f"the solver {why} where the gradient test fails, so this may not be a minimum "
            f"(largest |J_jᵀr| / (|J_j| |r|) is {_gradient_measure(problem, best):.2g}, more "
            f"than {GRADIENT_TOLERANCE:g}): try another start"
        )
    trials = problem.non_finite_trials
    if trials and not reasons:
        pass  # rejected steps that the solver recovered from: said below, still converged
    elif trials and not problem.stuck:  # (which says so)
        reasons.append(
            f"{trials} trial step{'s' * (trials > 1)} made a residual or a derivative nan or inf"
        )
    converged = not reasons
    if converged:
        last = next((s for s in reversed(stages) if s.result is not None), None)
        message = last.message if last else "the start is a minimum"
        if trials:
            message += (
                f" ({trials} trial step{'s' * (trials > 1)} made a residual or a derivative "
                "nan or inf and the solver took shorter ones)"
            )
    else:
        message = "; ".join(reasons)
    # in the solver's units, then the parameters': the standard errors from the first, where
    # their squares (the covariances) may be too small or too large for a float
    # a parameter at its bound is held there, as a fixed one is: its standard error is no
    # interval's (nan), and the others' come from the columns of the rest
    held = problem.at_bound(best) if problem.bounds else np.zeros(k, dtype=bool)
    moving = np.flatnonzero(~held)
    known = problem.absolute_sigma
    if problem.loss == "linear":
        if moving.size < k:  # the columns of the parameters that move
            decomposed = _scaled_svd(jac[:, moving], scale[moving])
        solved = _covariance(decomposed, scale[moving], best_rss, n, k, known)
    else:  # approximate: J scaled by the loss's curvature, and its objective for the RSS
        f_scale = problem._solver_f_scale()
        curved = (
            jac[:, moving]
            * np.sqrt(curvature_weights(problem.loss, problem.residuals, f_scale))[:, None]
        )
        norms = np.sqrt(np.sum(curved * curved, axis=0))
        solved = _covariance(_scaled_svd(curved, norms), norms, best_cost, n, k, known)
    # known sigma: (JᵀJ)⁻¹ of the residuals in the data's units, not the power of two's
    units = problem.units[moving] * (math.ldexp(1.0, problem.exponent) if known else 1.0)
    with np.errstate(over="ignore", under="ignore"):
        covariance = solved * np.outer(units, units)
        errors = np.sqrt(np.diag(solved)) * units
    values = problem.point(best)
    names = problem.parameters
    at_bound = [problem.free[j] for j in np.flatnonzero(held)]
    slot = {problem.free[j]: i for i, j in enumerate(moving)}
    stderr = {}
    for a in names:
        i = slot.get(a)
        nothing = math.nan if a in at_bound else 0.0
        stderr[a] = nothing if i is None else float(errors[i])

    def by_name(matrix: np.ndarray) -> dict[str, dict[str, float]]:
        """Entries of a matrix of the moving parameters, by name: 0 for a fixed one, nan
        for one at its bound."""
        return {
            a: {
                b: (math.nan if a in at_bound or b in at_bound else 0.0)
                if a not in slot or b not in slot
                else float(matrix[slot[a], slot[b]])
                for b in names
            }
            for a in names
        }

    cov = by_name(covariance)
    dof = n - k
    # in the data's units: from the RSS as solved, so that neither underflows where the other
    # would not
    residual_sd = math.ldexp(math.sqrt(best_rss / dof), -problem.exponent) if dof > 0 else math.nan
    fitted = problem.model.copy()
    residuals = problem.observed - fitted
    left_out = []
    if problem.kept is not None:  # every row of the data, nan for those left out
        dropped = int((~problem.kept).sum())
        left_out = [rows_left_out(dropped)]
        fitted, residuals = (_all_rows(problem.kept, part) for part in (fitted, residuals))
    note = (pole or _pole)(problem, problem.point(best))
    rss = problem.unscaled(best_rss)
    summary = statistics(  # with sigma known, the χ² test's p-value too
        [name for name in problem.free if name not in at_bound],
        values,
        stderr,
        by_name(solved),  # (the correlations of the parameters' units: the same, but finite)
        best_rss,
        dof,
        problem.observed,
        problem.weights,  # 1/sigma, or 1, times 2**exponent
        known,
        problem.exponent,
    )
    return Fit(
        parameters=values,
        stderr=stderr,
        covariance=cov,
        rss=rss,
        residual_sd=residual_sd,
        dof=dof,
        n=n,
        iterations=iterations,
        converged=converged,
        message=message,
        inputs=dict(problem.starts),
        fitted=fitted,
        residuals=residuals,
        # correlations said of a minimum only, where they describe the fit
        at_bound=at_bound,
        warnings=left_out
        + ([note] if note else [])
        + ([NO_DOF] if dof == 0 else [])
        + (correlated(summary["correlation"]) if converged else []),  # type: ignore[arg-type]
        statistics=summary,
        loss=problem.loss,
        f_scale=problem.f_scale,
        cost=problem.unscaled(best_cost) / 2,
    )


def _least(
    problem: _Problem, x0: np.ndarray, stages: list[_Stage], start_cost: float | None = None
) -> tuple[np.ndarray, float]:
    """The point of `x0` and the stages' with the least objective, and that objective (inf
    where every one has a residual nan or inf); `x0`'s is `start_cost` where that is given
    (else it is evaluated)."""
    best, best_cost = x0, math.inf if start_cost is None else start_cost
    ends = [s.x for s in stages if np.isfinite(s.x).all()]
    for x in ends if start_cost is not None else [x0, *ends]:
        problem.evaluate(x)
        if problem.first_non_finite() is None:
            cost = problem.objective()
            if cost <= best_cost:
                best, best_cost = x, cost
    return best, best_cost


def _on_bounds(problem: _Problem, x: np.ndarray, cost: float) -> tuple[np.ndarray, float]:
    """`x` with each parameter at a bound (to `at_bound`'s 1e-10) exactly there, where the
    solver leaves it a rounding inside (0.10000000000000002 for a bound at 0.1), and the
    objective there; `x` as it is where that point's residuals are not finite."""
    held = problem.at_bound(x)
    if not held.any():
        return x, cost
    low, high = problem.scaled_bounds()
    placed = np.where(held, np.where(x - low <= high - x, low, high), x)
    problem.evaluate(placed)
    if problem.first_non_finite() is not None:
        return x, cost
    return placed, problem.objective()


def _polish(problem: _Problem, x: np.ndarray, rss: float) -> tuple[np.ndarray, float]:
    """Gauss-Newton steps from where the solver stopped, each kept while it makes the
    gradient smaller and the RSS no larger beyond rounding: where the sum of squares is flat
    to the last bit (ENSO's b8), the solvers stop on its change, while the gradient, which the
    tape computes to full precision, still shows the way to the minimum."""
    measure = _gradient_measure(problem, x)
    for _ in range(POLISH_STEPS):
        if measure == 0.0:
            break
        problem.evaluate(x)
        newton = _gauss_newton(problem.jacobian, problem.residuals)
        if newton is None:
            break
        trial = x + newton[0]
        if not np.all(np.isfinite(trial)) or not problem.inside(trial):
            break
        problem.evaluate(trial)
        if problem.first_non_finite() is not None:
            break
        trial_rss = float(problem.residuals @ problem.residuals)
        trial_measure = _gradient_measure(problem, trial)
        if trial_rss > rss + _rss_rounding(problem) or trial_measure >= measure:
            break
        x, rss, measure = trial, min(rss, trial_rss), trial_measure
    return x, rss


# Points tried between two neighbouring values of the predictor, to find a pole of the model,
# and at most in all (fewer between each pair of a long column).
POLE_SAMPLES, POLE_POINTS = 64, 200_000
# The operations that are finite and continuous wherever their arguments are: a model made of
# them alone in its predictor (and whole powers of it, x**2) has no pole there, and is not
# searched for one.
NO_POLE = frozenset(
    "+ - * neg exp expm1 sin cos sinh cosh tanh sech sigmoid atan asinh erf erfc abs max min "
    "relu softplus logaddexp hypot cbrt sinc dsinc clamp".split()
)


def _may_have_pole(program: Program, predictor: str) -> bool:
    """Whether `program` can have a pole or a jump as `predictor` varies: an operation other
    than NO_POLE's on a value that depends on it (the denominator only, of a quotient), other
    than a power by a whole number at least 0."""
    depends: set[int] = set()
    for k, instruction in enumerate(program.code):
        if isinstance(instruction, Input):
            if instruction.name == predictor:
                depends.add(k)
            continue
        if not isinstance(instruction, Apply) or not depends.intersection(instruction.args):
            continue
        depends.add(k)
        name, args = instruction.op.name, instruction.args
        if name in NO_POLE or (name == "/" and args[1] not in depends):
            continue
        if name == "**" and args[1] not in depends:
            exponent = program.code[args[1]]
            if isinstance(exponent, Const) and exponent.value >= 0:
                if float(exponent.value).is_integer():
                    continue
        return True
    return False


def _pole(problem: _Problem, point: dict[str, float]) -> str | None:
    """Where the model at `point` has a pole between two neighbouring values of its one
    predictor (or is not finite there): a fit on the far side of a pole is often a local
    minimum. A pole shows as a change of sign between the largest values on either side,
    where a zero of a smooth model changes sign between small ones."""
    grid = _pole_grid(problem)
    if grid is None:
        return None
    name, rows, points = grid
    with np.errstate(all="ignore"):
        values = batch_values(problem.program, {name: points.ravel(), **point}, problem.tape)
    k = int(_first_poles(np.broadcast_to(values, points.size).reshape(points.shape)))
    return None if k < 0 else _pole_note(name, rows[k], rows[k + 1])


def _poles(problems: dict[Hashable, _Problem], points: dict[Hashable, dict]) -> dict:
    """`_pole` of each of `problems` (groups of one fit's rows) at its point of `points`: the
    model evaluated on the points of many groups at once, POLE_POINTS at a time."""
    notes: dict[Hashable, str | None] = dict.fromkeys(problems)
    grids: dict[Hashable, tuple[str, np.ndarray, np.ndarray]] = {}
    for label, problem in problems.items():
        grid = _pole_grid(problem)
        if grid is not None:
            grids[label] = grid
    labels = list(grids)
    while labels:
        chunk: list[Hashable] = []
        size = 0
        while labels and (not chunk or size + grids[labels[0]][2].size <= POLE_POINTS):
            chunk.append(labels.pop(0))
            size += grids[chunk[-1]][2].size
        name = grids[chunk[0]][0]
        problem = problems[chunk[0]]
        columns = {name: np.concatenate([grids[label][2].ravel() for label in chunk])}
        for parameter in problem.parameters:
            columns[parameter] = np.concatenate(
                [np.full(grids[label][2].size, points[label][parameter]) for label in chunk]
            )
        with np.errstate(all="ignore"):
            values = batch_values(problem.program, columns, problem.tape)
        values = np.broadcast_to(values, columns[name].shape)
        shapes = {grids[label][2].shape for label in chunk}
        if len(shapes) == 1:  # every group's lines alike: all at once
            firsts = _first_poles(values.reshape(len(chunk), *shapes.pop()))
        else:
            bounds = np.cumsum([0] + [grids[label][2].size for label in chunk])
            firsts = np.array([
                _first_poles(values[a:b].reshape(grids[label][2].shape))
                for label, a, b in zip(chunk, bounds[:-1], bounds[1:], strict=True)
            ])  # fmt: skip
        for label, k in zip(chunk, firsts.tolist(), strict=True):
            rows = grids[label][1]
            notes[label] = None if k < 0 else _pole_note(name, rows[k], rows[k + 1])
    return notes


def _pole_grid(problem: _Problem) -> tuple[str, np.ndarray, np.ndarray] | None:
    """The one predictor, its values in order, and the points tried between each two
    neighbours (a line per pair, the two rows at either end); None where there is not one
    predictor with two values."""
    if len(problem.data) != 1 or isinstance(problem, _Shared):
        return None
    ((name, column),) = problem.data.items()
    if not _may_have_pole(problem.program, name):
        return None
    rows = np.unique(column[np.isfinite(column)])
    if rows.size < 2:
        return None
    samples = max(1, min(POLE_SAMPLES, POLE_POINTS // (rows.size - 1)))
    t = np.linspace(0.0, 1.0, samples + 2)
    return name, rows, rows[:-1, None] + (rows[1:] - rows[:-1])[:, None] * t


def _first_poles(lines: np.ndarray) -> np.ndarray:
    """The first pair of neighbouring rows between which the model has a pole (or is not
    finite), -1 for none: `lines` holds its values between each pair (..., pair, point)."""
    sizes = np.abs(lines)
    with np.errstate(invalid="ignore"):
        flips = np.sign(lines[..., :-1]) * np.sign(lines[..., 1:]) < 0
        largest_before = np.maximum.accumulate(sizes, axis=-1)[..., :-1]
        largest_after = np.flip(np.maximum.accumulate(np.flip(sizes, -1), axis=-1), -1)[..., 1:]
        poles = flips & (sizes[..., :-1] >= largest_before) & (sizes[..., 1:] >= largest_after)
    bad = ~np.all(np.isfinite(lines), axis=-1) | poles.any(axis=-1)
    return np.where(bad.any(axis=-1), np.argmax(bad, axis=-1), -1)


def _pole_note(name: str, low: float, high: float) -> str:
    return (
        f"at the point reached, the model has a pole between {name} = {low:g} and "
        f"{name} = {high:g}: the fit may have stopped on the far side of it, away from the "
        "best one; try another start"
    )


def _rss_rounding(problem: _Problem) -> float:
    """How much the sum of squares at the point evaluated last may be off by rounding: each
    residual is a difference of the target and the model, each rounded to about an epsilon
    of itself, so a residual far smaller than them carries their rounding (8 epsilons of the
    sum for its own rounding on top)."""
    r = problem.residuals
    sizes = (np.abs(problem.observed) + np.abs(problem.model)) * problem.weights
    return float(8 * EPS * (r @ r) + 4 * EPS * _norm(r) * _norm(sizes))


def _reason(result, minimized: str = "the sum of squares") -> str:
    return {
        1: "the gradient is zero to within the tolerance",
        2: f"{minimized} stopped decreasing (relative change below the tolerance)",
        3: "the step became smaller than the tolerance, relative to the parameters",
        4: f"{minimized} stopped decreasing and the step became negligible",
    }.get(result.status, str(result.message))


def _gradient_measure(problem: _Problem, x: np.ndarray) -> float:
    """max over parameters j of |J_jᵀ r| / (‖J_j‖ ‖r‖): 0 at a minimum, at most 1 (with a
    robust loss, of J and r weighted as `_Problem.weighted` says)."""
    problem.evaluate(x)
    jac, r = problem.weighted()
    norm_r = _norm(r)
    norms = _column_norms(jac)
    if norm_r == 0.0:
        return 0.0
    with np.errstate(all="ignore"):
        cosines = np.abs(jac.T @ r) / (norms * norm_r)
    # a parameter held at its bound by the fit may have its gradient pointing outward
    held = problem.at_bound(x) if problem.bounds else np.zeros(norms.shape, dtype=bool)
    cosines = np.where((norms > 0) & ~held, cosines, 0.0)
    return float(np.max(cosines)) if cosines.size else 0.0


def _small_gradient(problem: _Problem, x: np.ndarray) -> bool:
    """Whether `x` passes the gradient test, fits the target to rounding, or is a minimum to
    the rounding of the sum of squares: a Gauss-Newton step from it would lower the sum by
    less than the sum's own rounding, so that no point the solver can tell apart is lower
    (where the residuals are large, or the minimum is flat, the gradient there is larger
    than the test's tolerance, yet nothing is left to find)."""
    problem.evaluate(x)
    observed = problem.observed * problem.weights
    if _norm(problem.residuals) <= EXACT_FIT * _norm(observed):
        return True
    if _gradient_measure(problem, x) <= GRADIENT_TOLERANCE:  # (evaluated at x still)
        return True
    jac, r = problem.weighted()
    if problem.bounds:
        jac = jac[:, ~problem.at_bound(x)]
    newton = _gauss_newton(jac, r)
    return newton is not None and newton[1] <= _rss_rounding(problem)


def _gauss_newton(jac: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The Gauss-Newton step for residuals `r` and their Jacobian `jac` (solved with the
    columns scaled to unit length), and the decrease of the sum of squares it predicts,
    ‖J step‖²; None where a column is zero or not finite."""
    scale = _column_norms(jac)
    if not np.isfinite(jac).all() or not (scale > 0).all():
        return None
    columns = jac / scale
    scaled, *_ = np.linalg.lstsq(columns, -r, rcond=None)
    return scaled / scale, float(np.sum((columns @ scaled) ** 2))


def _norm(v: np.ndarray) -> float:
    """The 2-norm, as np.linalg.norm computes it (without its wrapper's cost)."""
    return math.sqrt(v @ v)


def _column_norms(jac: np.ndarray) -> np.ndarray:
    """The 2-norm of each column, as np.linalg.norm(jac, axis=0) computes it."""
    return np.sqrt((jac * jac).sum(axis=0))


class _ScaledSVD(NamedTuple):
    """A Jacobian with its columns scaled to unit length, and its SVD's singular values and
    Vᵀ (the scaling leaves the SVD accurate for columns of any size)."""

    scaled: np.ndarray
    s: np.ndarray
    vt: np.ndarray


def _scaled_svd(jac: np.ndarray, scale: np.ndarray) -> _ScaledSVD | None:
    """`jac` with each column divided by its norm (`scale`), and its SVD; None where it has no
    columns, a column is zero or an entry is not finite."""
    if jac.shape[1] == 0 or not np.all(scale > 0):
        return None
    with np.errstate(all="ignore"):
        scaled = jac / scale
    if not np.all(np.isfinite(scaled)):
        return None
    _, s, vt = np.linalg.svd(scaled, full_matrices=False)
    return _ScaledSVD(scaled, s, vt)


def _undetermined(free: list[str], scale: np.ndarray, decomposed: _ScaledSVD | None) -> list[str]:
    """The parameters (`free`, of the Jacobian's columns: their norms `scale`, and the SVD
    `decomposed`) that a (numerically) zero singular value leaves free: a parameter whose
    column is zero, or those that a null direction combines."""
    zero = [name for name, s in zip(free, scale, strict=True) if not s > 0]
    if zero:
        return zero
    if decomposed is None:
        return []
    scaled, s, vt = decomposed
    tolerance = RANK_TOLERANCE * max(scaled.shape) * s[0]
    names: list[str] = []
    for i in np.flatnonzero(s <= tolerance):
        v = np.abs(vt[i])
        names.extend(free[j] for j in np.flatnonzero(v >= 0.1 * v.max()) if free[j] not in names)
    return names


def _covariance(
    decomposed: _ScaledSVD | None,
    scale: np.ndarray,
    rss: float,
    n: int,
    k: int,
    known: bool = False,
) -> np.ndarray:
    """(JᵀJ)⁻¹ · RSS/(n-k), or with `known` (sigma taken as known) (JᵀJ)⁻¹ alone, from the
    SVD of J with its columns scaled to unit length (`decomposed`, from `_scaled_svd(J,
    scale)`: the scaling leaves the result unchanged); never by inverting a formed JᵀJ. nan
    where J is singular or there are no degrees of freedom."""
    m = scale.size  # the columns of the parameters that move; k, of those fitted
    if m == 0:
        return np.empty((0, 0))
    if n <= k or not math.isfinite(rss) or decomposed is None:
        return np.full((m, m), math.nan)
    scaled, s, vt = decomposed
    if s[-1] <= RANK_TOLERANCE * max(scaled.shape) * s[0]:
        return np.full((m, m), math.nan)
    inverse = (vt.T / s**2) @ vt  # (SᵀS)⁻¹ for the scaled columns
    covariance = inverse / np.outer(scale, scale) * (1.0 if known else rss / (n - k))
    return (covariance + covariance.T) / 2  # symmetric to the last bit


def _not_finite_at_start(problem: _Problem, row: int) -> str:
    value, observed = float(problem.model[row]), float(problem.observed[row])
    data = {name: float(values[row]) for name, values in problem.data.items()}
    listed = ", ".join(f"{name} = {v!r}" for name, v in data.items())
    at = f"row {row + 1}" + (f" ({listed})" if listed else "")
    bad = [name for name, v in data.items() if not math.isfinite(v)]
    if bad or not math.isfinite(observed):
        value = data[bad[0]] if bad else observed
        what = f"{bad[0]} is {value!r}" if bad else f"the target is {value!r}"
        remedy = (  # an infinite value is no missing one, which is all drop_nan leaves out
            f"leave the row out ({option('drop_nan')} leaves out every row with a missing value)"
            if math.isnan(value)
            else f"correct the row or leave it out of the data ({option('drop_nan')} leaves out "
            "missing values only)"
        )
        return f"{at}: {what}; a fit needs finite data on every row: {remedy}"
    if math.isfinite(value):  # the residual, in units of the target's size, overflowed
        size = math.ldexp(1.0, -problem.exponent)
        return (
            f"at the start, {at}: the model is {value!r} where the target is {observed!r}, "
            f"too far apart for the fit, which works in units of the target's size ({size:.3g}): "
            "start nearer the data's scale"
        )
    return f"at the start, {at}: the model is {value!r}; start from values where it is finite"


def _all_rows(kept: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values` of the rows `kept`, spread over every row, nan in the others."""
    every = np.full(kept.size, np.nan)
    every[kept] = values
    return every


def checked_bounds(
    bounds: Mapping[str, tuple[float, float]], starts: Mapping[str, float], free: list[str]
) -> dict[str, tuple[float, float]]:
    """The bounds of the free parameters, each low < high, around its start."""
    checked = {}
    for name, (low, high) in bounds.items():
        if name not in starts:
            raise NotAnInput(name, list(starts), "bound", "parameter")
        low, high = float(low), float(high)
        if not low < high:
            raise InputError(_bad_bound(name, low, high))
        start = starts[name]
        if not low <= start <= high:
            raise InputError(
                f"the start of {name}, {start!r}, is outside its bound {low:g}:{high:g}: "
                "start inside it"
            )
        if name in free:
            checked[name] = (low, high)
    return checked


def _bad_bound(name: str, low: float, high: float) -> str:
    """Why LO:HI, which is not LO < HI, is no bound of `name`."""
    given = f"the bound of {name}, {low:g}:{high:g},"
    if math.isnan(low) or math.isnan(high):
        return f"{given} has nan for a side: give a number, or -inf or inf for an open side"
    if low == high:
        return f"{given} holds one value: LO must be below HI (to hold {name} at {low:g}, fix it)"
    return f"{given} is the wrong way round: LO must be below HI ({high:g}:{low:g})"


class _Stuck(Exception):
    """A stage that cannot go on: its trial steps all make a nan or inf (its message)."""


def _flat_at_start(problem: _Problem) -> str:
    """Where no parameter moves the model at the start: every derivative is 0 on every row."""
    names = ", ".join(problem.free)
    return (
        f"at the start, the model does not change with {names}: its derivative by each "
        "parameter is 0 on every row, so the fit has no direction to go: start elsewhere (a "
        "peak's centre inside the data, a factor other than 0)"
    )


def _derivative_not_finite_at_start(problem: _Problem, row: int, name: str) -> str:
    """Where the model is finite at the start but its derivative by `name` is not."""
    data = {column: float(values[row]) for column, values in problem.data.items()}
    listed = ", ".join(f"{column} = {v!r}" for column, v in data.items())
    at = f"row {row + 1}" + (f" ({listed})" if listed else "")
    slope = float(problem.jacobian[row, problem.free.index(name)])
    point = {**problem.starts, **data}
    derivative = problem.program.grad({n: point[n] for n in problem.program.inputs}).gradients
    if math.isfinite(derivative[name]):  # in units of the target's size, it overflowed
        size = math.ldexp(1.0, -problem.exponent)
        return (
            f"at the start, {at}: the model's derivative by {name} is {derivative[name]!r} "
            f"where the target is {float(problem.observed[row])!r}, too far apart for the fit, "
            f"which works in units of the target's size ({size:.3g}): start nearer the data's "
            "scale"
        )
    what = "nan" if math.isnan(slope) else "infinite"
    return (
        f"at the start, {at}: the model is finite but its derivative by {name} is {what}; "
        f"change the start of {name}, or of the parameters it is combined with, to values "
        "where it is finite"
    )


def _exponent(values) -> int:
    """The power of two that brings the largest finite magnitude of `values` into [0.5, 1)
    (0 where every one is 0), within the powers of two that are normal floats."""
    magnitudes = np.abs(values)
    largest = float(np.max(magnitudes, initial=0.0))
    if not math.isfinite(largest):  # (the quick maximum, unless some are not finite)
        largest = float(np.max(magnitudes, where=np.isfinite(magnitudes), initial=0.0))
    return min(1023, max(-1022, -math.frexp(largest)[1])) if largest > 0 else 0


def columns_of(columns: Mapping[str, ArrayLike]) -> dict[str, np.ndarray]:
    """Each column of a fit's data as a 1-D array of floats."""
    return {name: _column(name, values) for name, values in columns.items()}


def _column(name: str, values) -> np.ndarray:
    from ._batch import column_floats

    array = column_floats(name, values, "column ")
    if array.ndim != 1:
        raise InputError(f"column {name} has shape {array.shape}: give a 1-D array per column")
    return array


def row_count(arrays: dict[str, np.ndarray]) -> int:
    """The rows of the columns `arrays`, which must all have as many."""
    lengths = {array.size for array in arrays.values()}
    if len(lengths) > 1:
        listed = ", ".join(f"{name} {array.size}" for name, array in arrays.items())
        raise InputError(
            f"the columns differ in length ({listed}): give every column the same number of rows"
        )
    return lengths.pop() if lengths else 0


def _start(name: str, value) -> float:
    try:
        start = float(value)
    except OverflowError:
        raise InputError(f"the start of {name} is too large for a float") from None
    except (TypeError, ValueError):
        raise InputError(f"the start of {name} is not a number: {value!r}") from None
    if not math.isfinite(start):
        raise InputError(f"the start of {name} is {start!r}: a start is a finite number")
    return start


# The memory of a fit below which `_check_memory` reads nothing (a small fit among thousands
# would pay for reading /proc and the cgroup's files each time).
SMALL_FIT = 16 * 2**20


def rows_that_fit(parameters: int, available: int) -> int:
    """How many rows of data a fit of `parameters` free parameters can hold in `available`
    bytes."""
    return available // (BYTES_PER_ENTRY * max(1, parameters) + 8 * 8)


def _check_memory(n: int, k: int, meminfo: str = "/proc/meminfo") -> None:
    """Refuse, before allocating, a Jacobian (and the solver's copies of it) that would not
    fit in the memory this process can still use (see `memory.available`)."""
    needed = n * (BYTES_PER_ENTRY * k + 8 * 8)
    if needed <= SMALL_FIT:  # no machine lacks this much: not worth the files read
        return
    from ._memory import available, gigabytes

    left = available(meminfo)
    if left is not None and needed > left:
        raise NanogradError(
            f"a fit of {n:,} rows and {k} parameters needs about {gigabytes(needed)} of "
            f"memory for its Jacobian, and {gigabytes(left)} is free: about "
            f"{rows_that_fit(k, left):,} rows would fit"
        )
