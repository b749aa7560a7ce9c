"""A fit's first stage without bounds or a robust loss: the trust-region method for least
squares whose steps solve the trust-region subproblem through the SVD of the Jacobian (Moré,
"The Levenberg-Marquardt algorithm: implementation and theory", 1978; Nocedal and Wright,
"Numerical Optimization", 4.3), each parameter scaled by the largest norm its column of the
Jacobian has had. These are the steps of SciPy's `least_squares(method="trf",
x_scale="jac")` where nothing bounds the parameters, with its tolerances, its statuses and
its rule for a trial point where a residual is not finite (a step a quarter as long), so that
a fit stops where that solver stops; `_grouped` takes the same steps for many groups at once.

A small fit spends most of its time between its evaluations: here a step costs one SVD of
the Jacobian and a few products of vectors as long as the parameters, where the general solver
pays for its checks and wrappers at every evaluation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

EPS = float(np.finfo(float).eps)

# why the solver stopped, by status (SciPy's words)
MESSAGES = {
    0: "The maximum number of function evaluations is exceeded.",
    1: "`gtol` termination condition is satisfied.",
    2: "`ftol` termination condition is satisfied.",
    3: "`xtol` termination condition is satisfied.",
    4: "Both `ftol` and `xtol` termination conditions are satisfied.",
}


class Solved(NamedTuple):
    """Where the solver stopped and why: `status` 1 to 4 a tolerance (gradient; decrease;
    step; decrease and step), 0 out of evaluations; evaluations of the residuals and of the
    Jacobian."""

    x: np.ndarray
    status: int
    nfev: int
    njev: int

    @property
    def message(self) -> str:
        return MESSAGES[self.status]


def minimize(
    residuals: Callable[[np.ndarray], np.ndarray],
    jacobian: Callable[[np.ndarray], np.ndarray],
    x0: np.ndarray,
    max_nfev: int,
    ftol: float,
    xtol: float,
    gtol: float,
) -> Solved:
    """The least sum of squares of `residuals` from `x0`, with their `jacobian`, in at most
    `max_nfev` evaluations. A start whose residuals are not finite is a ValueError."""
    x = np.array(x0, dtype=float)
    f = residuals(x)
    if not np.isfinite(f).all():
        raise ValueError("Residuals are not finite in the initial point.")
    J = jacobian(x)
    nfev = njev = 1
    m = f.size
    cost = 0.5 * (f @ f)
    g = J.T @ f
    scale_inv = _column_norms(J)
    scale_inv[scale_inv == 0] = 1.0
    delta = _norm(x * scale_inv) or 1.0
    alpha = 0.0
    status = None
    while True:
        if abs(g).max() < gtol:
            status = 1
        if status is not None or nfev == max_nfev:
            break
        scale = 1 / scale_inv
        J_h = J * scale
        g_h = g * scale
        u, s, vt = _svd(J_h)
        uf = u.T @ f
        reduction = -1.0
        while reduction <= 0 and nfev < max_nfev:
            step_h, alpha = _subproblem(m, uf, s, vt, delta, alpha)
            J_step = J_h @ step_h
            predicted = -(0.5 * (J_step @ J_step) + g_h @ step_h)
            step = scale * step_h
            x_new = x + step
            f_new = residuals(x_new)
            nfev += 1
            step_h_norm = _norm(step_h)
            cost_new = 0.5 * (f_new @ f_new)  # (finite where every residual is)
            if not np.isfinite(cost_new) and not np.isfinite(f_new).all():
                delta = 0.25 * step_h_norm
                continue
            reduction = cost - cost_new
            if predicted > 0:
                ratio = reduction / predicted
            else:
                ratio = 1.0 if predicted == reduction == 0 else 0.0
            if ratio < 0.25:
                new_delta = 0.25 * step_h_norm
            elif ratio > 0.75 and step_h_norm > 0.95 * delta:
                new_delta = 2.0 * delta
            else:
                new_delta = delta
            decreased = reduction < ftol * cost and ratio > 0.25
            small_step = _norm(step) < xtol * (xtol + _norm(x))
            if decreased or small_step:
                status = 4 if decreased and small_step else 2 if decreased else 3
                break
            alpha *= delta / new_delta
            delta = new_delta
        if reduction > 0:
            x, f, cost = x_new, f_new, cost_new
            J = jacobian(x)
            njev += 1
            g = J.T @ f
            scale_inv = np.maximum(scale_inv, _column_norms(J))
    return Solved(x, 0 if status is None else status, nfev, njev)


def _svd(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The thin SVD as SciPy's trf takes it from `scipy.linalg.svd`, to the bit, with the
    finite check done here (a matrix not finite is SciPy's ValueError), at a third of the
    cost where it can be: up to SciPy 1.17 that svd is LAPACK's gesdd with the workspace it
    asks for, called here directly, without the wrappers (16 µs against 4 on a 30-row
    Jacobian); from 1.18 it is SciPy's own batched C code, called as it is."""
    if not np.isfinite(a).all():
        raise ValueError("array must not contain infs or NaNs")
    return _thin_svd()(a)


@functools.cache
def _thin_svd() -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    import scipy
    from scipy import linalg

    if tuple(int(part) for part in scipy.__version__.split(".")[:2]) >= (1, 18):
        return lambda a: linalg.svd(a, full_matrices=False, check_finite=False)
    gesdd, gesdd_lwork = linalg.get_lapack_funcs(
        ("gesdd", "gesdd_lwork"), (np.empty((1, 1)),), ilp64="preferred"
    )

    @functools.cache
    def workspace(m: int, n: int) -> int:
        work, _ = gesdd_lwork(m, n, compute_uv=1, full_matrices=0)
        return int(work.real)

    def svd(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        u, s, vt, info = gesdd(a, compute_uv=1, lwork=workspace(*a.shape), full_matrices=0)
        if info > 0:
            raise np.linalg.LinAlgError("SVD did not converge")
        return u, s, vt

    return svd


def _subproblem(
    m: int, uf: np.ndarray, s: np.ndarray, vt: np.ndarray, delta: float, alpha: float
) -> tuple[np.ndarray, float]:
    """The step within `delta` that most lowers the quadratic model of the sum of squares,
    from the SVD of the scaled Jacobian (`uf` is Uᵀf), and its Levenberg-Marquardt parameter:
    the Gauss-Newton step where it is inside, else the alpha whose step has length `delta`,
    found by Newton's method on ‖p(alpha)‖ - delta from `alpha`, to 1% of delta."""
    suf = s * uf
    full_rank = m >= vt.shape[1] and s[-1] > EPS * m * s[0]
    if full_rank:
        newton = -(vt.T @ (uf / s))
        if _norm(newton) <= delta:
            return newton, 0.0
    upper = _norm(suf) / delta
    lower = 0.0
    phi = _Phi(suf, s, delta)
    if full_rank:
        value, slope = phi(0.0)
        lower = -value / slope
    if not full_rank and alpha == 0:
        alpha = max(0.001 * upper, (lower * upper) ** 0.5)
    for _ in range(10):
        if alpha < lower or alpha > upper:
            alpha = max(0.001 * upper, (lower * upper) ** 0.5)
        value, slope = phi(alpha)
        if value < 0:
            upper = alpha
        ratio = value / slope
        lower = max(lower, alpha - ratio)
        alpha -= (value + delta) * ratio / delta
        if abs(value) < 0.01 * delta:
            break
    p = -(vt.T @ (suf / (phi.squares + alpha)))
    return p * (delta / _norm(p)), alpha


class _Phi:
    """‖p(alpha)‖ - delta, and its derivative by alpha, for the step p(alpha) of `_subproblem`
    (the squares of s and of sUᵀf computed once)."""

    def __init__(self, suf: np.ndarray, s: np.ndarray, delta: float):
        self.suf, self.squares, self.delta = suf, s * s, delta
        self.suf_squared = suf**2

    def __call__(self, alpha: float) -> tuple[float, float]:
        denominator = self.squares + alpha
        p_norm = _norm(self.suf / denominator)
        return p_norm - self.delta, -(self.suf_squared / denominator**3).sum() / p_norm


def _column_norms(J: np.ndarray) -> np.ndarray:
    return (J**2).sum(axis=0) ** 0.5


def _norm(v: np.ndarray) -> float:
    """The 2-norm, a NumPy float: a division by 0 is inf or nan, as in NumPy's arithmetic."""
    return np.sqrt(v @ v)
