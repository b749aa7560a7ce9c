"""Gradient descent on a program, with the optimizers of `nn`: at a point, or on the mean of a
per-row loss over the rows of a table (all of them each step, or shuffled batches)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence

from .engine import Value
from .errors import InputError, Interrupted, NanogradError
from .nn import SGD, Adam, Momentum
from .program import Program
from .results import Minimum

OPTIMIZERS = {"sgd": SGD, "momentum": Momentum, "adam": Adam}

# A loss: the point (every parameter's value) to the loss there and its gradient.
Loss = Callable[[dict[str, float]], tuple[float, dict[str, float]]]


def at_point(program: Program) -> Loss:
    """The program's value and gradient at a point, from the engine."""

    def loss(point: dict[str, float]) -> tuple[float, dict[str, float]]:
        result = program.gradients(point)
        return result.result.data, {n: node.grad for n, node in result.inputs.items()}

    return loss


def over_rows(
    program: Program,
    columns: Mapping[str, Sequence[float]],
    batch: int | None = None,
    seed: int | None = None,
) -> Loss:
    """The mean of the program over the rows of `columns` (each a 1-D array, one per input
    that is data) and its gradient by every other input, on the NumPy tape. With `batch`,
    each call takes the next `batch` rows of an order shuffled afresh (with `seed`) each
    pass through the rows."""
    import numpy as np

    from .tape import Tape, batch_gradients

    tape = Tape(program)
    data = {name: np.asarray(values, dtype=np.float64) for name, values in columns.items()}
    rows = len(next(iter(data.values())))
    shuffle = random.Random(seed)
    order: list[int] = []

    def loss(point: dict[str, float]) -> tuple[float, dict[str, float]]:
        nonlocal order
        taken = data
        if batch is not None and batch < rows:
            if len(order) < batch:
                order = list(range(rows))
                shuffle.shuffle(order)
            chosen = np.array(order[:batch])
            order = order[batch:]
            taken = {name: values[chosen] for name, values in data.items()}
        value, gradients = batch_gradients(program, {**taken, **point}, tape)
        return float(np.mean(value)), {n: float(np.mean(gradients[n])) for n in point}

    return loss


def minimize(
    loss: Loss,
    start: Mapping[str, float],
    moving: Sequence[str] | None = None,
    steps: int = 10000,
    lr: float = 0.01,
    optimizer: str = "adam",
    tol: float = 1e-8,
    on_step: Callable[[int, float], None] | None = None,
    on_point: Callable[[dict[str, float], float], None] | None = None,
) -> Minimum:
    """Descend from `start`, moving the parameters named in `moving` (by default all), until
    their gradient's norm is at most `tol` or `steps` are taken.

    Raises if the value or gradient is nan or inf: an InputError at the start (the point is
    to blame), else a NanogradError (the step was too long); on Ctrl-C, Interrupted with the
    last point reached. `on_step(steps taken, loss)` and `on_point(point, loss)` are called
    at each point, the start included.
    """
    point = {name: Value(value) for name, value in start.items()}
    names = list(start if moving is None else moving)
    update = OPTIMIZERS[optimizer]([point[name] for name in names], lr=lr)
    taken = 0
    reached = None
    try:
        while True:
            now = {n: v.data for n, v in point.items()}
            value, grads = loss(now)
            moved = {n: grads[n] for n in names}
            size = math.hypot(*moved.values())  # no overflow where the squares would
            if not math.isfinite(value) or not math.isfinite(size):
                raise _not_finite(value, moved, taken)
            reached = Minimum(value, now, grads, size, taken, size <= tol)
            if on_step:
                on_step(taken, value)
            if on_point:
                on_point(now, value)
            if reached.converged or taken == steps:
                return reached
            for name, node in point.items():
                node.grad = grads[name]
            update.step()
            taken += 1
    except KeyboardInterrupt:
        if reached is None:
            raise
        raise Interrupted(
            f"interrupted at step {reached.steps}: the output is the point reached", reached
        ) from None


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
