"""The robust losses of a fit (`fit --loss`), as SciPy's `least_squares` defines them: each
row's squared residual z = (r/f)² counts as rho(z) instead of z, which grows slower than z for
the rows far off the model (outliers), so that they pull the fit less. A fit minimizes
f² Σ rho(z), which is the sum of squares for `linear`."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .errors import InputError, option

# rho(z) and its first two derivatives by z, per loss (z ≥ 0): SciPy's own formulas.
Rho = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _linear(z: np.ndarray):
    return z, np.ones_like(z), np.zeros_like(z)


def _soft_l1(z: np.ndarray):
    t = 1 + z
    return 2 * (np.sqrt(t) - 1), t**-0.5, -0.5 * t**-1.5


def _huber(z: np.ndarray):
    inside = z <= 1
    root = np.sqrt(np.where(inside, 1.0, z))
    return (
        np.where(inside, z, 2 * root - 1),
        np.where(inside, 1.0, 1 / root),
        np.where(inside, 0.0, -0.5 / root**3),
    )


def _cauchy(z: np.ndarray):
    t = 1 + z
    return np.log1p(z), 1 / t, -1 / t**2


def _arctan(z: np.ndarray):
    t = 1 + z**2
    return np.arctan(z), 1 / t, -2 * z / t**2


LOSSES: dict[str, Rho] = {
    "linear": _linear,
    "soft_l1": _soft_l1,
    "huber": _huber,
    "cauchy": _cauchy,
    "arctan": _arctan,
}


def objective(loss: str, residuals: np.ndarray, f_scale: float) -> float:
    """f² Σ rho((r/f)²): twice SciPy's `cost`, the sum of squares for `linear`."""
    if loss == "linear":
        return float(residuals @ residuals)
    rho, _, _ = LOSSES[loss]((residuals / f_scale) ** 2)
    return float(f_scale**2 * np.sum(rho))


def row_weights(loss: str, residuals: np.ndarray, f_scale: float) -> np.ndarray:
    """rho'(z) per row: the weight of each row in the loss's gradient, Jᵀ(rho' r), as in
    iteratively reweighted least squares."""
    return LOSSES[loss]((residuals / f_scale) ** 2)[1]


def curvature_weights(loss: str, residuals: np.ndarray, f_scale: float) -> np.ndarray:
    """rho'(z) + 2 z rho''(z) per row, at least the float epsilon: the rows of J scaled by its
    square root make JᵀJ the Gauss-Newton approximation of the loss's Hessian, as SciPy's
    `least_squares` returns its `jac` (and `curve_fit` its covariance) for a robust loss."""
    z = (residuals / f_scale) ** 2
    _, first, second = LOSSES[loss](z)
    return np.maximum(first + 2 * z * second, np.finfo(float).eps)


def checked(loss: str, f_scale: object) -> tuple[str, float]:
    """`loss` and `f_scale` (None for 1) as a fit takes them, or InputError saying what is
    wrong: no such loss, a scale that is not a positive finite number, or a scale given
    without a robust loss, where it would do nothing."""
    if loss not in LOSSES:
        raise InputError(
            f"{option('loss', loss, quoted=True)} is no loss: choose one of {', '.join(LOSSES)}"
        )
    if f_scale is not None and loss == "linear":
        raise InputError(
            f"{option('f_scale')} sets where a robust {option('loss')} turns from squares: "
            "with the linear loss it does nothing"
        )
    try:
        scale = 1.0 if f_scale is None else float(f_scale)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        scale = math.nan  # said below
    if not (math.isfinite(scale) and scale > 0):
        raise InputError(
            f"{option('f_scale', f_scale)}: a positive finite number, the size of residual "
            "beyond which a row counts less than its square"
        )
    return loss, scale
