"""`minimize --method bfgs|lbfgs|newton`: SciPy's quasi-Newton and Newton methods on the
engine's exact gradient (and, for newton, its exact Hessian, at a point or of the mean over
rows of data), stopping where the gradient's norm is at most the tolerance, as the descent
does.

bfgs is SciPy's BFGS, lbfgs its L-BFGS-B (the one that keeps to bounds), newton its
trust-exact (Newton's step in a trust region, which a Hessian that is not positive definite
does not lead astray). SciPy is imported only here, and only for these methods."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ._descent import Loss, PointLoss, interrupted, not_finite
from .errors import Diverged, NanogradError, command, option
from .results import Minimum

# The command's names for SciPy's methods.
METHODS = {"bfgs": "BFGS", "lbfgs": "L-BFGS-B", "newton": "trust-exact"}
# Those that keep to bounds.
BOUNDED = ("lbfgs",)


def minimize(
    loss: Loss | PointLoss,
    start: Mapping[str, float],
    moving: Sequence[str],
    steps: int,
    method: str,
    tol: float,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    on_step: Callable[[int, float], None] | None = None,
    on_point: Callable[[dict[str, float], float], None] | None = None,
    hessian: Callable[[dict[str, float]], Mapping[str, Mapping[str, float]]] | None = None,
    on_log: Callable[[int, float, float], None] | None = None,
) -> Minimum:
    """Minimize `loss` from `start` over the inputs in `moving` with SciPy's `method` (a key
    of METHODS), at most `steps` iterations, until the gradient's norm is at most `tol`
    (with `bounds` by name, for lbfgs, the gradient projected on them). newton needs the
    loss's `hessian` at a point, by name, over every input. The start's value and gradient
    must be finite (InputError); on Ctrl-C, Interrupted with the last iterate. `on_log(steps
    taken, loss, gradient norm)` is called at each iterate, as descent's is."""
    try:
        from scipy import optimize
    except ImportError:
        raise _missing(method) from None
    names = list(start)
    point = {n: float(start[n]) for n in names}
    bounds = dict(bounds or {})

    def at(x: np.ndarray) -> dict[str, float]:
        return {**point, **dict(zip(moving, map(float, x), strict=True))}

    last: list[tuple[np.ndarray, float, np.ndarray]] = []  # the point evaluated last

    def value_and_gradient(x: np.ndarray) -> tuple[float, np.ndarray]:
        """The loss and its gradient at x; again at the point SciPy evaluated last (the
        iterate it reports, whose gradient's norm --log writes), what it gave there."""
        if last and np.array_equal(last[0][0], x):
            return last[0][1], last[0][2]
        value, grads = loss(at(x))
        gradient = np.array([grads[n] for n in moving])
        last[:] = [(x.copy(), value, gradient)]
        return value, gradient

    x0 = np.array([point[n] for n in moving])
    value, gradient = value_and_gradient(x0)
    if not math.isfinite(value) or not np.isfinite(gradient).all():
        raise not_finite(value, dict(zip(moving, map(float, gradient), strict=True)), 0, None)
    taken, reached = 0, x0  # the last iterate, and how many iterations made it
    finite = (0, x0)  # the last iterate where the value and gradient were finite, and when

    def record(x: np.ndarray, value: float) -> None:
        if on_step:
            on_step(taken, value)
        if on_point:
            on_point(at(x), value)
        if on_log:
            on_log(taken, value, float(np.linalg.norm(value_and_gradient(x)[1])))

    def callback(intermediate_result) -> None:  # SciPy passes the iterate by this name
        nonlocal taken, reached, finite
        taken, reached = taken + 1, intermediate_result.x.copy()
        value, gradient = value_and_gradient(reached)
        if math.isfinite(value) and np.isfinite(gradient).all():
            finite = (taken, reached)
        record(reached, intermediate_result.fun)

    options: dict[str, object] = {"maxiter": steps}
    extra: dict[str, object] = {}
    if method == "bfgs":
        options.update(gtol=tol, norm=2)
    elif method == "lbfgs":
        # L-BFGS-B's test is on the largest component: that of the norm, divided by sqrt(n),
        # implies it. No test on the decrease of the value, so as to stop on the gradient.
        options.update(gtol=tol / math.sqrt(len(moving)), ftol=0.0, maxfun=20 * steps + 100)
        extra["bounds"] = [bounds.get(n, (-math.inf, math.inf)) for n in moving]
    else:
        assert hessian is not None  # (api gives newton its Hessian)
        options.update(gtol=tol)
        extra["hess"] = lambda x: _matrix(hessian(at(x)), moving)
    record(x0, value)
    try:
        # an overflow on the way is SciPy's to handle, and the result's to say: no warning
        with np.errstate(all="ignore"):
            found = optimize.minimize(
                value_and_gradient,
                x0,
                jac=True,
                method=METHODS[method],
                callback=callback,
                options=options,
                **extra,
            )
    except KeyboardInterrupt:
        raise interrupted(_minimum(loss, at(reached), moving, bounds, taken, tol)) from None
    result = _minimum(loss, at(found.x), moving, bounds, taken, tol)
    if not math.isfinite(result.value) or not math.isfinite(result.gradient_norm):
        steps, x = finite
        reached_last = _minimum(loss, at(x), moving, bounds, steps, tol)
        raise Diverged(
            f"diverged after {taken} steps: the value is {result.value}, the gradient's norm "
            f"{result.gradient_norm:.3g}; the loss may decrease without bound (no minimum to "
            "reach): start elsewhere, or bound the inputs",
            dataclasses.replace(reached_last, diverged=True),
        )
    if not result.converged and found.nit < steps:  # SciPy stopped for a reason of its own
        why = str(found.message).strip().rstrip(":").strip()  # L-BFGS-B's "ABNORMAL: "
        result.stopped = f"{METHODS[method]} stopped: {why}"
    return result


def _minimum(
    loss: Loss | PointLoss,
    point: dict[str, float],
    moving: Sequence[str],
    bounds: Mapping[str, tuple[float, float]],
    taken: int,
    tol: float,
) -> Minimum:
    """The result at `point`: its value and gradient, and the norm of the gradient by the
    inputs that moved, less the components that push an input at its bound outwards."""
    value, gradients = loss(point)
    kept = []
    for name in moving:
        low, high = bounds.get(name, (-math.inf, math.inf))
        g = gradients[name]
        outwards = (point[name] <= low and g > 0) or (point[name] >= high and g < 0)
        kept.append(0.0 if outwards else g)
    norm = math.hypot(*kept)
    return Minimum(value, point, gradients, norm, taken, norm <= tol)


def _matrix(hessian: Mapping[str, Mapping[str, float]], moving: Sequence[str]) -> np.ndarray:
    """The Hessian's rows and columns of the inputs that move."""
    return np.array([[hessian[a][b] for b in moving] for a in moving])


def _missing(method: str) -> NanogradError:
    from .fitting import MissingSciPy

    return MissingSciPy(f"{command('minimize')} {option('method', method)}")
