"""Gradient descent on a program, with the optimizers of `nn`."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from .engine import Value
from .errors import InputError, NanogradError
from .nn import SGD, Adam, Momentum
from .program import Program
from .results import Minimum

OPTIMIZERS = {"sgd": SGD, "momentum": Momentum, "adam": Adam}


def minimize(
    program: Program,
    start: Mapping[str, float],
    steps: int = 10000,
    lr: float = 0.01,
    optimizer: str = "adam",
    tol: float = 1e-8,
    on_step: Callable[[int, float], None] | None = None,
    on_point: Callable[[dict[str, float], float], None] | None = None,
) -> Minimum:
    """Descend from `start` until the gradient's norm is at most `tol` or `steps` are taken.

    Raises if the value or gradient is nan or inf: an InputError at the start (the point is
    to blame), else a NanogradError (the step was too long). `on_step(steps taken, loss)` and
    `on_point(point, loss)` are called at each point, the start included.
    """
    program.check_inputs(start)
    point = {name: Value(start[name]) for name in program.inputs}
    update = OPTIMIZERS[optimizer](list(point.values()), lr=lr)
    taken = 0
    while True:
        evaluation = program.gradients({n: v.data for n, v in point.items()})
        loss = evaluation.result.data
        grads = {n: node.grad for n, node in evaluation.inputs.items()}
        norm = math.hypot(*grads.values())  # no overflow where the squares would
        if not math.isfinite(loss) or not math.isfinite(norm):
            raise _not_finite(loss, grads, taken)
        if on_step:
            on_step(taken, loss)
        if on_point:
            on_point({n: v.data for n, v in point.items()}, loss)
        converged = norm <= tol
        if converged or taken == steps:
            break
        for name, node in point.items():
            node.grad = grads[name]
        update.step()
        taken += 1
    return Minimum(loss, {n: v.data for n, v in point.items()}, grads, norm, taken, converged)


def _not_finite(loss: float, grads: Mapping[str, float], taken: int) -> NanogradError:
    """The error for a value or gradient that is nan or inf after `taken` steps: what is not
    finite, and what to change."""
    fix = "start from a point where it is finite"
    if math.isfinite(loss):
        name, bad = next(((n, g) for n, g in grads.items() if not math.isfinite(g)), (None, 0))
        if name is None:  # each derivative finite, their norm beyond the largest float
            what = "the gradient's norm is too large for a float (each derivative is finite)"
            fix = "start from a point where it is smaller"
        else:
            what = f"the gradient by {name} is {bad}"
    else:
        what = f"the value is {loss}"
    if taken == 0:
        return InputError(f"{what} at the start: {fix}")
    return NanogradError(f"diverged at step {taken}: {what}; try a smaller --lr")
