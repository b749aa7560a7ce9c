"""Gradients against central finite differences."""

from __future__ import annotations

import math
from collections.abc import Mapping

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
    (gradcheck's rule)."""
    result = program.grad(values)  # checks the inputs, once
    point = {name: float(values[name]) for name in program.inputs}

    def result_at(name: str, x: float) -> float:
        # the point is changed in place and the inputs not checked again, so each of the two
        # evaluations per input costs the program's size, not also the number of inputs
        point[name] = x
        nodes = program.interpret(input=point.__getitem__, const=float, apply=_forward)
        return nodes[program.result]

    checks = {}
    for name, analytic in result.gradients.items():
        x = point[name]
        step = STEP * max(1.0, abs(x))
        numeric = (result_at(name, x + step) - result_at(name, x - step)) / (2 * step)
        point[name] = x
        error = abs(analytic - numeric)
        checks[name] = Check(
            analytic=analytic,
            numeric=numeric,
            abs_error=error,
            rel_error=error / abs(numeric) if numeric else (0.0 if error == 0 else math.inf),
            passed=bool(error <= atol + rtol * abs(numeric)),
        )
    return GradientCheck(result.value, result.inputs, checks, result.non_finite)


def _forward(op, *args: float) -> float:
    return op.forward(*args)
