"""Gradients against central finite differences."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from ._algebra import piecewise
from ._compiled import compiled, worth_compiling
from ._program import Apply, Program
from .errors import SourceError
from .results import Agreement, Check, FormulaCheck, GradientCheck, Kink, Mismatch

# The step: cbrt(machine epsilon), which balances the truncation error of central differences
# (which grows as h**2) against rounding error (eps/h); scaled by |x| for large inputs.
STEP = (2.0**-52) ** (1 / 3)


def step_at(x: float) -> float:
    """The finite differences' step at x: relative to x, past 1."""
    return STEP * max(1.0, abs(x))


def gradient_check(
    program: Program,
    values: Mapping[str, float],
    rtol: float = 1e-3,
    atol: float = 1e-5,
    only: Sequence[str] = (),
) -> GradientCheck:
    """Per input (of `only`, where given), the analytic derivative at `values` against the
    numeric one: their absolute and relative error, and whether |analytic - numeric| <= atol
    + rtol * |numeric| (gradcheck's rule) with both finite and no kink at the point."""
    result = program.grad(values)
    point = {name: float(values[name]) for name in program.inputs}
    args = list(point.values())  # the same, in a list for the compiled function
    place = {name: k for k, name in enumerate(program.inputs)}
    if worth_compiling(program, 2 * len(program.inputs)):  # two evaluations per input
        value = compiled(program).value  # the same bits as Program.values
        evaluate = lambda: value(*args)  # noqa: E731
    else:
        evaluate = lambda: program.values(point)[program.result]  # noqa: E731

    def result_at(name: str, x: float) -> float:
        # the point is changed in place, not copied: with the inputs checked in linear time,
        # each of the two evaluations per input costs the program's size
        point[name] = args[place[name]] = x
        return evaluate()

    def sides(name: str, x: float, step: float) -> tuple[float, float]:
        """The result a step to the left and to the right of x."""
        return result_at(name, x - step), result_at(name, x + step)

    checks = {}
    for name, analytic in result.gradients.items():
        if only and name not in only:
            continue
        x = point[name]
        step = step_at(x)
        below, above = sides(name, x, step)
        numeric = (above - below) / (2 * step)
        tolerance = atol + rtol * abs(numeric)

        def along(v: float, name: str = name) -> float:
            return result_at(name, v)

        kink = kink_at(along, result.value, x, below, above, tolerance)
        point[name] = args[place[name]] = x
        error = abs(analytic - numeric)
        checks[name] = Check(
            analytic=analytic,
            numeric=numeric,
            abs_error=error,
            rel_error=error / abs(numeric) if numeric else (0.0 if error == 0 else math.inf),
            # Not finite, the two say nothing about each other: an overflow in f(x + h) makes
            # numeric inf whatever the derivative is, and two infinities cannot be compared.
            passed=math.isfinite(analytic)
            and math.isfinite(numeric)
            and bool(error <= tolerance)
            and kink is None,
            kink=kink,
        )
    return GradientCheck(result.value, result.inputs, checks, result.non_finite)


def kink_at(
    at: Callable[[float], float],
    value: float,
    x: float,
    below: float,
    above: float,
    tolerance: float,
) -> tuple[float, float] | None:
    """The slopes to the left and to the right of x where the source (`at`, `value` at x;
    `below` and `above` a step to each side) has a kink there, else None: the one-sided
    differences differ by more than `tolerance`, and a step a quarter as long leaves the gap
    as it is (a curve's shrinks fourfold)."""
    step = step_at(x)

    def slopes(left: float, right: float, step: float) -> tuple[float, float]:
        return (value - left) / step, (right - value) / step

    left, right = slopes(below, above, step)
    gap = abs(right - left)
    if not gap > tolerance:
        return None
    near = slopes(at(x - step / 4), at(x + step / 4), step / 4)
    noise = 2.0**-52 * (abs(value) + 1.0) / (step / 4) * 8
    close = abs(near[1] - near[0])
    if gap / 1.5 < close < gap * 1.5 and close > tolerance and close > noise:
        return near
    return None


def failures(result: GradientCheck) -> str:
    """The inputs whose check failed, each with the derivative that is nan or inf, if one is:
    `x (numeric is inf), y`."""
    named = []
    for name, check in result.checks.items():
        if not check.passed:
            bad = [
                f"{kind} is {number}"
                for kind, number in (("analytic", check.analytic), ("numeric", check.numeric))
                if not math.isfinite(number)
            ]
            if math.isnan(check.numeric) and math.isnan(result.value):  # log(-1) + log(x)
                bad[-1] += ": the source is nan at the point itself; check where it is a number"
            elif math.isnan(check.numeric) and math.isfinite(check.analytic):  # log(x) at 1e-8
                step = step_at(result.inputs[name])
                bad[-1] += (
                    f": the source is nan a step of {step:.2g} to a side, past the edge of "
                    "where it is defined; check farther from it"
                )
            if check.kink and not bad:
                left, right = check.kink
                bad = [f"a kink: the slope is {left:.6g} to the left and {right:.6g} to the right"]
            named.append(f"{name} ({', '.join(bad)})" if bad else name)
    return ", ".join(named)


# How many points where a formula differs a check keeps, to show.
SHOWN = 5


def agrees(engine: float, formula: float, rtol: float, atol: float) -> bool:
    """|engine - formula| <= atol + rtol * |engine|, or both the same infinity, or both nan."""
    if math.isnan(engine) or math.isnan(formula):
        return math.isnan(engine) and math.isnan(formula)
    if math.isinf(engine) or math.isinf(formula):
        return engine == formula
    return abs(engine - formula) <= atol + rtol * abs(engine)


def formula_check(
    program: Program,
    formulas: Mapping[str, tuple[str, Program, str, tuple[Program, ...]]],
    fixed: Mapping[str, float],
    ranges: Mapping[str, tuple[float, float, int]],
    rtol: float,
    atol: float,
) -> FormulaCheck:
    """The engine's derivative by each input of `formulas` (its text and program, and the
    condition where it holds: its text and programs) against the formula at every point of
    the grid the `ranges` make, the other inputs at `fixed`. A point where the source or the
    engine's derivative is nan is left out: the source is not defined there, and the formula
    may say anything; so is a point outside the formula's condition, where it claims nothing,
    and a kink of the source (abs(x) at 0), which has no derivative to compare with."""
    import itertools

    import numpy as np

    names = list(ranges)
    axes = [np.linspace(low, high, count).tolist() for low, high, count in ranges.values()]
    # per input: points, skipped, differ, the largest error and the first mismatches, counted
    checks = {name: Agreement(f[0], 0, 0, 0, 0.0, []) for name, f in formulas.items()}
    non_finite = None
    # only a source with a kinked function (abs, relu, max, floor, ...) is looked at for kinks
    kinked = any(type(ins) is Apply and piecewise(ins.op) for ins in program.code)
    for values in itertools.product(*axes):
        point = {**fixed, **dict(zip(names, values, strict=True))}
        result = program.grad(point)
        if non_finite is None and result.non_finite is not None:
            non_finite = _at(result.non_finite, dict(zip(names, values, strict=True)))
        for name, (_, formula, _, conditions) in formulas.items():
            tally = checks[name]
            tally.points += 1
            if not all(_holds(c, point) for c in conditions):
                tally.outside += 1
                continue
            engine = result.gradients[name]
            if math.isnan(engine) or math.isnan(result.value):  # (log(x) at x < 0: 1/x is no
                tally.skipped += 1  # derivative of a function not defined there)
                continue
            kink = kinked and _kink(program, point, name, result.value)
            if kink:  # abs(x) at 0: no derivative to compare with, whatever the formula says
                tally.kinks += 1
                if len(tally.first_kinks) < SHOWN:
                    tally.first_kinks.append(Kink(dict(point), *kink))
                continue
            theirs = formula.values({n: point[n] for n in formula.inputs})[formula.result]
            error = abs(engine - theirs)
            agreed = agrees(engine, theirs, rtol, atol)
            if not agreed or math.isfinite(error):  # the same infinity is no error
                # a formula that is nan where the engine is not makes the largest error nan
                nan = math.isnan(error) or math.isnan(tally.max_abs_error)
                tally.max_abs_error = math.nan if nan else max(tally.max_abs_error, error)
            if not agreed:
                tally.differ += 1
                if len(tally.first) < SHOWN:
                    tally.first.append(Mismatch(point, engine, theirs, error))
    shown_ranges = {name: (low, high, count) for name, (low, high, count) in ranges.items()}
    return FormulaCheck(dict(fixed), shown_ranges, checks, rtol, atol, non_finite)


# The tolerances of a kink: check's own (a finite difference is good to about 1e-8).
KINK_RTOL, KINK_ATOL = 1e-3, 1e-5


def _kink(
    program: Program, point: Mapping[str, float], name: str, value: float
) -> tuple[float, float] | None:
    """The slopes of the source in `name` to the left and right of `point`, at a kink there."""
    at = dict(point)

    def result_at(x: float) -> float:
        at[name] = x
        return program.values(at)[program.result]

    x = point[name]
    step = step_at(x)
    below, above = result_at(x - step), result_at(x + step)
    tolerance = KINK_ATOL + KINK_RTOL * abs((above - below) / (2 * step))
    return kink_at(result_at, value, x, below, above, tolerance)


def _holds(condition: Program, point: Mapping[str, float]) -> bool:
    """Whether a condition (`x > 0`: 1 where it holds) holds at `point`."""
    value = condition.values({n: point[n] for n in condition.inputs})[condition.result]
    return value != 0.0 and not math.isnan(value)


def _at(where: SourceError, point: Mapping[str, float]) -> SourceError:
    """The nan or inf `where` says, and the point of the ranges it was made at."""
    if not point:
        return where
    at = ", ".join(f"{n} = {v!r}" for n, v in point.items())
    return SourceError(f"{where.message} at {at}", where.source, where.offset)
