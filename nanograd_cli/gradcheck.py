"""Gradients against central finite differences."""

from __future__ import annotations

import math
from collections.abc import Mapping

from .compiled import compiled, worth_compiling
from .program import Program
from .results import Check, GradientCheck

# The step: cbrt(machine epsilon), which balances the truncation error of central differences
# (which grows as h**2) against rounding error (eps/h); scaled by |x| for large inputs.
STEP = (2.0**-52) ** (1 / 3)


def gradient_check(
    program: Program, values: Mapping[str, float], rtol: float = 1e-3, atol: float = 1e-5
) -> GradientCheck:
    """Per input, the analytic derivative at `values` against the numeric one: their absolute
    and relative error, and whether |analytic - numeric| <= atol + rtol * |numeric|
    (gradcheck's rule) with both finite."""
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

    checks = {}
    for name, analytic in result.gradients.items():
        x = point[name]
        step = STEP * max(1.0, abs(x))
        numeric = (result_at(name, x + step) - result_at(name, x - step)) / (2 * step)
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
            and bool(error <= atol + rtol * abs(numeric)),
        )
    return GradientCheck(result.value, result.inputs, checks, result.non_finite)


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
            named.append(f"{name} ({', '.join(bad)})" if bad else name)
    return ", ".join(named)
