"""Gradients against central finite differences."""

from __future__ import annotations

import math
from collections.abc import Mapping

from .program import Evaluation, Program

# The step: cbrt(machine epsilon), which balances the truncation error of central differences
# (which grows as h**2) against rounding error (eps/h); scaled by |x| for large inputs.
STEP = (2.0**-52) ** (1 / 3)


def gradient_check(
    program: Program, values: Mapping[str, float], rtol: float = 1e-3, atol: float = 1e-5
) -> tuple[Evaluation, dict[str, dict]]:
    """The differentiated evaluation at `values` and, per input: analytic and numeric
    derivative, their absolute and relative error, and whether
    |analytic - numeric| <= atol + rtol * |numeric| (gradcheck's rule)."""
    evaluation = program.gradients(values)
    checks = {}
    for name, node in evaluation.inputs.items():
        step = STEP * max(1.0, abs(values[name]))
        up = program.evaluate({**values, name: values[name] + step}).result.data
        down = program.evaluate({**values, name: values[name] - step}).result.data
        numeric = (up - down) / (2 * step)
        error = abs(node.grad - numeric)
        checks[name] = {
            "analytic": node.grad,
            "numeric": numeric,
            "abs_error": error,
            "rel_error": error / abs(numeric) if numeric else (0.0 if error == 0 else math.inf),
            "pass": bool(error <= atol + rtol * abs(numeric)),
        }
    return evaluation, checks
