"""Gradient descent on a program, with the optimizers of `nn`: at a point, or on the mean of a
per-row loss over the rows of a table (all of them each step, or shuffled batches)."""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Mapping, Sequence

from ._compiled import compiled, function_of, gradient_body, worth_compiling
from ._program import Program
from ._training import Schedule, decayed
from .engine import Value
from .errors import Diverged, InputError, Interrupted, NanogradError, option
from .nn import SGD, Adam, Momentum
from .results import Minimum

OPTIMIZERS = {"sgd": SGD, "momentum": Momentum, "adam": Adam}

# A loss: the point (every parameter's value) to the loss there and its gradient.
Loss = Callable[[dict[str, float]], tuple[float, dict[str, float]]]
# The same on lists: every parameter's value, in an order agreed beforehand, to the loss and
# the gradient in that order.
ListLoss = Callable[[list[float]], tuple[float, Sequence[float]]]


class PointLoss:
    """The program's value and gradient at a point: compiled to straight-line code when
    `evaluations` of them pay for compiling (see `compiled.worth_compiling`), else from the
    engine; the same bits either way."""

    def __init__(self, program: Program, evaluations: int):
        self.program = program
        self.compiled = worth_compiling(program, evaluations)

    def __call__(self, point: dict[str, float]) -> tuple[float, dict[str, float]]:
        value, grads = self.on_lists(list(point))([point[n] for n in point])
        by_name = dict(zip(point, grads, strict=True))
        return value, {n: by_name[n] for n in self.program.inputs}  # in the engine's order

    def on_lists(self, names: Sequence[str]) -> ListLoss:
        """The loss of the values of `names` (every input, each once), in that order."""
        program = self.program
        program.check_inputs(dict.fromkeys(names, 0.0))
        if not self.compiled:

            def engine(data: list[float]) -> tuple[float, list[float]]:
                result = program.gradients(dict(zip(names, data, strict=True)))
                nodes = result.inputs
                return result.result.data, [nodes[n].grad for n in names]

            return engine
        gradient = compiled(program).gradient
        if list(names) == program.inputs:

            def in_order(data: list[float]) -> tuple[float, list[float]]:
                value, *grads = gradient(*data)
                return value, grads

            return in_order
        where = [list(names).index(n) for n in program.inputs]  # each input's place in data
        back = [program.inputs.index(n) for n in names]

        def reordered(data: list[float]) -> tuple[float, list[float]]:
            value, *grads = gradient(*[data[k] for k in where])
            return value, [grads[k] for k in back]

        return reordered


def at_point(program: Program, evaluations: int = 10001) -> PointLoss:
    """The program's value and gradient at a point, for up to `evaluations` points."""
    return PointLoss(program, evaluations)


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

    from ._tape import Tape, batch_gradients

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
    loss: Loss | PointLoss,
    start: Mapping[str, float],
    moving: Sequence[str] | None = None,
    steps: int = 10000,
    lr: float = 0.01,
    optimizer: str = "adam",
    tol: float = 1e-8,
    on_step: Callable[[int, float], None] | None = None,
    on_point: Callable[[dict[str, float], float], None] | None = None,
    settled: Callable[[dict[str, float]], bool] | None = None,
    weight_decay: float = 0.0,
    schedule: Schedule | None = None,
    on_log: Callable[[int, float, float], None] | None = None,
) -> Minimum:
    """Descend from `start`, moving the parameters named in `moving` (by default all), until
    their gradient's norm is at most `tol` or `steps` are taken. Where the loss is of a batch
    of rows, whose gradient may be small before the loss over every row has converged,
    `settled(point)` says whether it has, asked where a batch's gradient's norm is at most tol.

    Update number k (from 0) adds `weight_decay * p` to the gradient and takes the rate
    `schedule.lr(lr, k)`, as torch.optim with an LR scheduler does (`_training.py`).

    Raises if the value or gradient is nan or inf: an InputError at the start (the point is
    to blame), else Diverged with the last finite point (the step was too long); on Ctrl-C,
    Interrupted with the last point reached. `on_step(steps taken, loss)`, `on_point(point,
    loss)` and `on_log(steps taken, loss, gradient norm)` are called at each point, the
    start included.
    """
    names = list(start)
    data = [float(start[n]) for n in names]
    moved_names = list(start if moving is None else moving)
    place = {n: k for k, n in enumerate(names)}
    where = [place[n] for n in moved_names]
    settings = OPTIMIZERS[optimizer]([Value(data[k]) for k in where], lr=lr)
    plain = not weight_decay and schedule is None and on_log is None  # as compiled below
    if (
        plain
        and isinstance(loss, PointLoss)
        and loss.compiled
        and where
        and names == loss.program.inputs
    ):
        callbacks = (on_step is not None, on_point is not None)
        descend = _compiled_descent(loss.program, optimizer, where, callbacks)
        stopped, taken, value, data, grads, norm = descend(
            *data, steps, tol, *_hyperparameters(settings), tuple(names), on_step, on_point
        )
        if stopped is False:  # norm: the last point checked, if any
            gradient = {n: grads[k] for n, k in zip(moved_names, where, strict=True)}
            last = None
            if norm:
                at, was, inputs, gradients, size = norm
                size = _norm([gradients[k] for k in where]) if size is None else size
                last = _minimum(loss, names, at, was, inputs, gradients, size, tol)
            raise not_finite(value, gradient, taken, last)
        if norm is None:  # known to be finite and above tol, so not computed
            norm = _norm([grads[k] for k in where])
        minimum = _minimum(loss, names, taken, value, data, grads, norm, tol)
        if stopped is None:
            raise interrupted(minimum)
        return minimum
    every = where == list(range(len(names)))  # all move, in order: no gathering
    evaluate = loss.on_lists(names) if isinstance(loss, PointLoss) else _on_lists(loss, names)
    update = settings.update
    isfinite = math.isfinite
    taken = 0
    # the last point checked: (steps, value, point, gradients, norm)
    reached: tuple[int, float, list[float], Sequence[float], float] | None = None

    def at_point() -> dict[str, float]:
        return dict(zip(names, data, strict=True))

    try:
        while True:
            value, grads = evaluate(data)
            moved = grads if every else [grads[k] for k in where]
            norm = _norm(moved)
            if not isfinite(value) or not isfinite(norm):
                last = _minimum(loss, names, *reached, tol) if reached else None
                raise not_finite(value, dict(zip(moved_names, moved, strict=True)), taken, last)
            reached = (taken, value, data.copy(), grads, norm)
            if on_step:
                on_step(taken, value)
            if on_point:
                on_point(at_point(), value)
            if on_log:
                on_log(taken, value, norm)
            if taken == steps or (norm <= tol and (settled is None or settled(at_point()))):
                return _minimum(loss, names, *reached, tol)
            if schedule is not None:
                settings.lr = schedule.lr(lr, taken)
            if every:
                update(data, decayed(moved, data, weight_decay) if weight_decay else moved)
            else:
                part = [data[k] for k in where]
                update(part, decayed(moved, part, weight_decay) if weight_decay else moved)
                for k, moved_to in zip(where, part, strict=True):
                    data[k] = moved_to
            taken += 1
    except KeyboardInterrupt:
        if reached is None:
            raise
        raise interrupted(_minimum(loss, names, *reached, tol)) from None


def _minimum(
    loss: Loss | PointLoss,
    names: list[str],
    taken: int,
    value: float,
    data: Sequence[float],
    grads: Sequence[float],
    norm: float,
    tol: float,
) -> Minimum:
    """The result at a point checked: its inputs and gradient by name (the gradient in the
    program's input order for a loss at a point, as the engine has it, else the point's)."""
    order = loss.program.inputs if isinstance(loss, PointLoss) else names
    by_name = dict(zip(names, grads, strict=True))
    gradients = {n: by_name[n] for n in order}
    return Minimum(value, dict(zip(names, data, strict=True)), gradients, norm, taken, norm <= tol)


def interrupted(reached: Minimum) -> Interrupted:
    return Interrupted(
        f"interrupted at step {reached.steps}: the output is the point reached",
        dataclasses.replace(reached, interrupted=True),
    )


def _on_lists(loss: Loss, names: list[str]) -> ListLoss:
    """A loss of a point as a loss of the list of its values."""

    def on_lists(data: list[float]) -> tuple[float, list[float]]:
        value, grads = loss(dict(zip(names, data, strict=True)))
        return value, [grads[n] for n in names]

    return on_lists


def _hyperparameters(optimizer: SGD) -> tuple[float, ...]:
    """The settings the compiled descent's update reads, in its order."""
    if isinstance(optimizer, Adam):
        return (optimizer.lr, *optimizer.betas, optimizer.eps)
    if isinstance(optimizer, Momentum):
        return (optimizer.lr, optimizer.beta)
    return (optimizer.lr,)


# The compiled descent's code per optimizer: its settings, its state per moving parameter k
# (made 0.0), the lines of its update before those of the parameters, and those of
# parameter k (whose gradient is d<k>, value a<k>). The same arithmetic, in the same order,
# as the optimizer's `update` in nn.py; tests/test_minimize.py holds the two to the same bits.
_UPDATES: dict[str, tuple[str, tuple[str, ...], list[str], list[str]]] = {
    "sgd": ("lr", (), [], ["a{k} -= lr * d{k}"]),
    "momentum": (
        "lr, beta",
        ("u{k}",),
        [],
        ["u{k} = beta * u{k} + d{k}", "a{k} -= lr * u{k}"],
    ),
    "adam": (
        "lr, beta1, beta2, eps",
        ("m{k}", "v{k}"),
        ["t += 1", "correction1 = 1 - beta1**t", "correction2 = 1 - beta2**t"],
        [
            "m{k} = beta1 * m{k} + keep1 * d{k}",
            "v{k} = beta2 * v{k} + keep2 * d{k} * d{k}",
            "a{k} -= lr * (m{k} / correction1) / ((v{k} / correction2) ** 0.5 + eps)",
        ],
    ),
}


def descent_source(
    program: Program, optimizer: str, where: list[int], callbacks: tuple[bool, bool]
) -> str:
    """The Python source of `descend(a0, a1, ..., steps, tol, settings..., names, on_step,
    on_point)`: `minimize`'s loop, with the program's compiled gradient and the optimizer's
    update written out, moving the inputs numbered `where`, calling on_step and on_point
    where `callbacks` says. It returns (stopped, steps taken, value, inputs, gradients, norm):
    stopped is True where the descent stops, False where the value or the norm is not finite
    (at that point, with the last point checked, as (steps, value, inputs, gradients, norm),
    or False, in place of the norm), None on Ctrl-C (at the last point checked); norm is None
    where it is finite and above tol, and not computed."""
    body, returns = gradient_body(program)
    count = len(program.inputs)
    inputs = ", ".join(f"a{k}" for k in range(count))
    grads = ", ".join(f"d{k}" for k in range(count))
    settings, state, before, each = _UPDATES[optimizer]
    lines = [f"{name.format(k=k)} = 0.0" for k in where for name in state]
    if optimizer == "adam":
        lines += ["keep1 = 1 - beta1", "keep2 = 1 - beta2", "t = 0"]
    moved = [f"d{k}" for k in where]
    bounded = " and ".join(f"-1e300 <= {d} <= 1e300" for d in moved)
    above = " or ".join(f"{d} > tol or -{d} > tol" for d in moved)
    norm = [f"norm = HYPOT({', '.join(moved)})"]
    returned = f"taken, value, ({inputs},), ({grads},), norm"
    snapshot = [f"p{k}" for k in range(count)], [f"e{k}" for k in range(count)]
    last = (
        f"reached is not None and (reached, kept, ({', '.join(snapshot[0])},), "
        f"({', '.join(snapshot[1])},), norm_kept)"
    )
    loop = [
        "while True:",
        "    try:",
        *(f"        {line}" for line in body),
        *(
            f"        {d} = {r}"
            for d, r in zip(["value", *grads.split(", ")], returns, strict=True)
        ),
        "    except ARITHMETIC:",
        f"        value, {grads} = EXACT({inputs})",
        # minimize's checks, the norm as _norm computes it (math.hypot). The norm is at least
        # the largest magnitude and finite where each is at most 1e300, so where it is above
        # tol and each is at most 1e300, it is not computed here.
        f"    if {bounded} and ({above}) and value - value == 0.0:",
        "        norm = None",
        "    else:",
        *(f"        {line}" for line in norm),
        "        if not ISFINITE(value) or not ISFINITE(norm):",
        f"            return False, taken, value, ({inputs},), ({grads},), {last}",
        # the point checked, kept until the next, for Ctrl-C
        *(f"    {p} = a{k}" for k, p in enumerate(snapshot[0])),
        *(f"    {e} = d{k}" for k, e in enumerate(snapshot[1])),
        "    kept = value",
        "    norm_kept = norm",
        "    reached = taken",
        *(["    on_step(taken, value)"] if callbacks[0] else []),
        *([f"    on_point(DICT(ZIP(names, ({inputs},))), value)"] if callbacks[1] else []),
        "    if taken == steps or norm is not None and norm <= tol:",
        f"        return True, {returned}",
        *(f"    {line}" for line in before),
        *(f"    {line.format(k=k)}" for k in where for line in each),
        "    taken += 1",
    ]
    lines += [
        "taken = 0",
        "reached = None",
        "try:",
        *(f"    {line}" for line in loop),
        "except INTERRUPT:",
        "    if reached is None:",
        "        raise",
        f"    return None, reached, kept, ({', '.join(snapshot[0])},), "
        f"({', '.join(snapshot[1])},), norm_kept",
    ]
    head = f"def descend({inputs + ', ' if inputs else ''}steps, tol, {settings}, names, "
    return head + "on_step, on_point):\n" + "".join(f"    {line}\n" for line in lines)


def _compiled_descent(
    program: Program, optimizer: str, where: list[int], callbacks: tuple[bool, bool]
) -> Callable:
    functions = compiled(program)

    def make() -> Callable:
        names = {
            "EXACT": functions.exact_gradient,
            "ISFINITE": math.isfinite,
            "HYPOT": math.hypot,
            "DICT": dict,
            "ZIP": zip,
            "INTERRUPT": KeyboardInterrupt,
        }
        source = descent_source(program, optimizer, where, callbacks)
        return function_of(source, "descend", names)

    return functions.cached(("descend", optimizer, tuple(where), callbacks), make)


def _norm(components: Sequence[float]) -> float:
    """The Euclidean norm, without overflow where the squares would."""
    return math.hypot(*components)


def not_finite(
    loss: float, grads: Mapping[str, float], taken: int, last: Minimum | None
) -> NanogradError:
    """The error for a value or gradient that is nan or inf after `taken` steps: what is not
    finite, and what to change; after the start, Diverged with `last`, the last point where
    both were finite."""
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
    if taken == 0 or last is None:
        return InputError(f"{what} at the start: {fix}")
    message = f"diverged at step {taken}: {what}; try a smaller {option('lr')}"
    return Diverged(message, dataclasses.replace(last, diverged=True))
