"""Many groups of rows fitted at once (`fit --by`): the single fit's first stage, SciPy's
trust region reflective, run on every group together, one pass of the tape over all the rows
per step and the small SVDs and trust-region problems of the groups solved side by side, where
a loop of fits pays SciPy's Python steps per group. Each group takes the steps its own fit
takes (the same units, the same tolerances, the same rules for a step that makes a residual
not finite), so that it stops where its fit stops, after as many iterations.

The point each group reaches is polished by Gauss-Newton steps as one fit's is, then taken
through the single fit's own ending: the gradient test and the statistics
(`fitting._summary`). A group whose fit would need its second stage (Levenberg-Marquardt), or
that ran out of evaluations, is fitted again alone by the single fit's solver, and so is every
group where the batch does not apply (bounds, a cap on the steps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ._tape import Tape

# Gauss-Newton steps at most after the trust region, as after one fit's solver.
POLISH_STEPS = 3

# fitting.FIRST_STAGE's tolerances.
TOLERANCE = 1e-15


class Rows:
    """What the iteration fits: the model's tape, the data's columns and the target on every
    row, 1/sigma per row (or None), every parameter's start and the names of the free ones."""

    def __init__(
        self,
        tape: Tape,
        data: Mapping[str, np.ndarray],
        observed: np.ndarray,
        inverse_sigma: np.ndarray | None,
        starts: Mapping[str, float],
        free: Sequence[str],
    ):
        self.tape, self.data, self.observed = tape, data, observed
        self.inverse_sigma, self.starts, self.free = inverse_sigma, starts, free


def minimize(problem: Rows, groups: list[np.ndarray], budget: int) -> tuple[np.ndarray, ...]:
    """Where SciPy's trust region reflective (`least_squares(method="trf", x_scale="jac")`,
    no bounds, the tolerances of fitting.FIRST_STAGE) stops for each group, run on all the
    groups at once and polished as one fit is; from the starts, on the rows `groups` of
    `problem`'s data (each at least as many as free parameters). Per group: its free
    parameters (a row, in the order of `problem.free`), the units it was solved in (a
    power of two per parameter, as `fitting._Problem.choose_units` chooses them), its
    termination status as SciPy gives it (-1: not run, a start that is not finite), its
    evaluations of the residuals and of the Jacobian, and its trial steps that made a
    residual or a derivative not finite."""
    order = np.concatenate(groups)
    sizes = np.array([index.size for index in groups])
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    batch = _Batch(problem, order, np.repeat(np.arange(len(groups)), sizes), first)
    start = np.tile([problem.starts[name] for name in problem.free], (len(groups), 1))
    with np.errstate(all="ignore"):
        region = _TrustRegions(batch, sizes, start, budget)
        region.run()
        residuals, jacobian, _ = batch.evaluate(region.values)
        rss = batch.sums(residuals * residuals)
        values = _polished(batch, region.values, residuals, jacobian, rss)
    return values, region.units, region.status, region.nfev, region.njev, region.shorter


class _TrustRegions:
    """SciPy's `trf_no_bounds` with the Jacobian's scale, a step for every group at once.
    Each group is solved in the units a single fit solves it in: its residuals times a power
    of two (`fitting._exponent` of its weighted target) and each parameter in a power of two
    (of its column of the Jacobian at the start), so that its steps are the single fit's."""

    def __init__(self, batch: _Batch, sizes: np.ndarray, start: np.ndarray, budget: int):
        self.batch, self.sizes, self.budget = batch, sizes, budget
        groups, self.k = start.shape
        self.valid = np.arange(sizes.max()) < sizes[:, None]  # (group, row) of the padding
        residuals, jacobian, _ = batch.evaluate(start)
        target = self._padded(np.abs(batch.observed * batch.weights))
        self.factor = np.ldexp(1.0, _exponents(target))
        jacobian = self._padded(jacobian)
        scaled = np.abs(jacobian * self.factor[:, None, None])
        self.units = np.ldexp(1.0, _exponents(scaled.transpose(0, 2, 1)))
        self.x = start / self.units
        self.status = np.full(groups, -1)
        self.njev = np.ones(groups, dtype=np.intp)
        self.nfev = np.ones(groups, dtype=np.intp)
        self.shorter = np.zeros(groups, dtype=np.intp)  # trial steps not finite
        self.f, self.J = np.zeros(self.valid.shape), np.zeros(jacobian.shape)
        # the SVD of each group's scaled Jacobian: singular values, Vᵀ, Uᵀf
        self.s, self.uf = np.zeros((groups, self.k)), np.zeros((groups, self.k))
        self.vh = np.zeros((groups, self.k, self.k))
        self._set(np.ones(groups, dtype=bool), residuals, jacobian)
        finite = np.all(np.isfinite(self.f), axis=1) & np.all(np.isfinite(self.J), axis=(1, 2))
        self.active = finite
        self.status[finite] = 0
        self.cost = 0.5 * np.sum(self.f * self.f, axis=1)
        self.scale_inv = np.sqrt(np.sum(self.J**2, axis=1))
        self.scale_inv[self.scale_inv == 0] = 1
        delta = np.linalg.norm(self.x * self.scale_inv, axis=1)
        self.delta = np.where(delta == 0, 1.0, delta)
        self.alpha = np.zeros(groups)
        self.top = np.ones(groups, dtype=bool)  # at the top of the outer loop: a new SVD

    @property
    def values(self) -> np.ndarray:
        return self.x * self.units

    def _padded(self, flat: np.ndarray) -> np.ndarray:
        """Rows of all the groups, one after another, as a (group, row, ...) array with 0
        for the rows a group has fewer of."""
        out = np.zeros((*self.valid.shape, *flat.shape[1:]))
        out[self.valid] = flat
        return out

    def _set(self, which: np.ndarray, residuals: np.ndarray, jacobian: np.ndarray) -> None:
        """The residuals and Jacobian of the groups `which`, in their units, from the batch's
        (residuals flat, the Jacobian padded already)."""
        f = self._padded(residuals) * self.factor[:, None]
        J = jacobian * self.factor[:, None, None] * self.units[:, None, :]
        self.f[which], self.J[which] = f[which], J[which]
        self.g = np.einsum("grk,gr->gk", self.J, self.f)

    def run(self) -> None:
        eps = np.finfo(float).eps
        ftol = xtol = gtol = TOLERANCE
        for _ in range(self.budget):
            top = self.active & self.top
            small = top & (np.max(np.abs(self.g), axis=1) < gtol)
            self.status[small] = 1
            self.active &= ~small
            out = self.active & self.top & (self.nfev >= self.budget)
            self.active &= ~out
            if not self.active.any():
                break
            top = self.active & self.top
            if top.any():  # the SVD of the scaled Jacobian of the groups that moved
                scale = 1 / self.scale_inv
                u, s, vh = np.linalg.svd(self.J[top] * scale[top, None, :], full_matrices=False)
                self.s[top], self.vh[top] = s, vh
                self.uf[top] = np.einsum("grk,gr->gk", u, self.f[top])
                self.top &= ~top
            scale = 1 / self.scale_inv
            step_h, alpha = self._steps(eps)
            g_h = scale * self.g
            J_h_step = np.einsum("grk,gk->gr", self.J * scale[:, None, :], step_h)
            predicted = -(0.5 * np.sum(J_h_step**2, axis=1) + np.sum(step_h * g_h, axis=1))
            step = scale * step_h
            trial = np.where(self.active[:, None], self.x + step, self.x)
            residuals, jacobian, _ = self.batch.evaluate(trial * self.units)
            jacobian = self._padded(jacobian)
            f_new = self._padded(residuals) * self.factor[:, None]
            self.nfev += self.active
            step_h_norm = np.linalg.norm(step_h, axis=1)
            # a residual or a derivative not finite: a shorter step (fitting's residuals())
            finite = np.all(np.isfinite(f_new), axis=1) & np.all(np.isfinite(jacobian), axis=(1, 2))
            shorter = self.active & ~finite
            self.shorter += shorter
            self.delta = np.where(shorter, 0.25 * step_h_norm, self.delta)
            self.alpha = np.where(self.active, alpha, self.alpha)
            go = self.active & finite
            cost_new = 0.5 * np.sum(f_new * f_new, axis=1)
            reduction = self.cost - cost_new
            ratio = np.where(
                predicted > 0,
                reduction / np.where(predicted > 0, predicted, 1.0),
                np.where((predicted == 0) & (reduction == 0), 1.0, 0.0),
            )
            new_delta = np.where(
                ratio < 0.25,
                0.25 * step_h_norm,
                np.where(
                    (ratio > 0.75) & (step_h_norm > 0.95 * self.delta), 2 * self.delta, self.delta
                ),
            )
            step_norm = np.linalg.norm(step, axis=1)
            ftol_ok = (reduction < ftol * self.cost) & (ratio > 0.25)
            xtol_ok = step_norm < xtol * (xtol + np.linalg.norm(self.x, axis=1))
            status = np.where(ftol_ok & xtol_ok, 4, np.where(ftol_ok, 2, np.where(xtol_ok, 3, 0)))
            ended = go & (status > 0)
            moving = go & ~ended
            self.alpha = np.where(moving, self.alpha * self.delta / new_delta, self.alpha)
            self.delta = np.where(moving, new_delta, self.delta)
            accept = go & (reduction > 0)
            self.x = np.where(accept[:, None], trial, self.x)
            self.cost = np.where(accept, cost_new, self.cost)
            self._set(accept, residuals, jacobian)
            self.njev += accept
            norms = np.sqrt(np.sum(self.J**2, axis=1))
            self.scale_inv = np.where(
                accept[:, None], np.maximum(norms, self.scale_inv), self.scale_inv
            )
            self.top |= accept & ~ended
            self.status[ended] = status[ended]
            self.active &= ~ended
            # out of evaluations inside the inner loop: as SciPy, status 0
            spent = self.active & ~self.top & (self.nfev >= self.budget)
            self.active &= ~spent

    def _steps(self, eps: float) -> tuple[np.ndarray, np.ndarray]:
        """SciPy's `solve_lsq_trust_region` for every group: the step (in the scaled
        parameters) and the Levenberg-Marquardt parameter."""
        s, uf, delta = self.s, self.uf, self.delta
        v = np.swapaxes(self.vh, 1, 2)
        suf = s * uf
        full_rank = s[:, -1] > eps * self.sizes * s[:, 0]
        with np.errstate(all="ignore"):
            newton = -np.einsum("gij,gj->gi", v, uf / s)
        inside = full_rank & (np.linalg.norm(newton, axis=1) <= delta)
        upper = np.linalg.norm(suf, axis=1) / delta

        def phi(alpha):
            denom = s**2 + alpha[:, None]
            p_norm = np.linalg.norm(suf / denom, axis=1)
            return p_norm - delta, -np.sum(suf**2 / denom**3, axis=1) / p_norm

        at_zero, slope_zero = phi(np.zeros_like(delta))
        lower = np.where(full_rank, -at_zero / slope_zero, 0.0)
        alpha = self.alpha.copy()
        reset = ~full_rank & (alpha == 0)
        alpha = np.where(reset, np.maximum(0.001 * upper, np.sqrt(lower * upper)), alpha)
        going = ~inside
        for _ in range(10):
            outside = going & ((alpha < lower) | (alpha > upper))
            alpha = np.where(outside, np.maximum(0.001 * upper, np.sqrt(lower * upper)), alpha)
            value, slope = phi(alpha)
            upper = np.where(going & (value < 0), alpha, upper)
            ratio = value / slope
            lower = np.where(going, np.maximum(lower, alpha - ratio), lower)
            alpha = np.where(going, alpha - (value + delta) * ratio / delta, alpha)
            going &= ~(np.abs(value) < 0.01 * delta)
        p = -np.einsum("gij,gj->gi", v, suf / (s**2 + alpha[:, None]))
        p *= (delta / np.linalg.norm(p, axis=1))[:, None]
        return np.where(inside[:, None], newton, p), np.where(inside, 0.0, alpha)


def _exponents(magnitudes: np.ndarray) -> np.ndarray:
    """`fitting._exponent` along the last axis: the power of two that brings the largest
    finite magnitude into [0.5, 1) (0 where all are 0), within the normal floats."""
    largest = np.max(np.where(np.isfinite(magnitudes), magnitudes, 0.0), axis=-1)
    exponent = np.clip(-np.frexp(largest)[1], -1022, 1023)
    return np.where(largest > 0, exponent, 0)


def _polished(batch: _Batch, values, residuals, jacobian, rss) -> np.ndarray:
    """Gauss-Newton steps from `values`, as `fitting._polish` takes them for one fit: each
    group's kept while it makes the gradient measure smaller and the sum of squares no
    larger beyond its rounding, and the group stops at the first that does not."""
    measure = _gradient_measure(batch, residuals, jacobian)
    going = np.isfinite(measure) & (measure > 0)
    for _ in range(POLISH_STEPS):
        products = batch.sums(jacobian[:, :, None] * jacobian[:, None, :])
        gradient = batch.sums(jacobian * residuals[:, None])
        norms = np.sqrt(np.einsum("gii->gi", products))
        going &= np.all(np.isfinite(products), axis=(1, 2)) & np.all(norms > 0, axis=1)
        if not going.any():
            break
        scaled = products[going] / norms[going, :, None] / norms[going, None, :]
        step = np.zeros_like(values)
        try:
            solved = np.linalg.solve(scaled, -(gradient[going] / norms[going])[..., None])
        except np.linalg.LinAlgError:  # a singular group: no step, as for one fit
            break
        step[going] = solved[..., 0] / norms[going]
        trial = values + step
        trial_residuals, trial_jacobian, sizes = batch.evaluate(trial)
        trial_rss = batch.sums(trial_residuals * trial_residuals)
        eps = np.finfo(float).eps
        rounding = 8 * eps * trial_rss + 4 * eps * np.sqrt(trial_rss * batch.sums(sizes * sizes))
        trial_measure = _gradient_measure(batch, trial_residuals, trial_jacobian)
        going &= np.all(np.isfinite(trial), axis=1) & (trial_rss <= rss + rounding)
        going &= trial_measure < measure
        values[going] = trial[going]
        rows = np.repeat(going, np.diff([*batch.first, batch.n]))
        residuals[rows], jacobian[rows] = trial_residuals[rows], trial_jacobian[rows]
        rss = np.where(going, np.minimum(rss, trial_rss), rss)
        measure = np.where(going, trial_measure, measure)
    return values


def _gradient_measure(batch: _Batch, residuals: np.ndarray, jacobian: np.ndarray) -> np.ndarray:
    """Per group, max over parameters j of |J_jᵀ r| / (‖J_j‖ ‖r‖), as `fitting` measures it."""
    norm_r = np.sqrt(batch.sums(residuals * residuals))
    norms = np.sqrt(batch.sums(jacobian * jacobian))
    with np.errstate(all="ignore"):
        cosines = np.abs(batch.sums(jacobian * residuals[:, None])) / (norms * norm_r[:, None])
    cosines = np.where(norms > 0, cosines, 0.0)
    return np.where(norm_r > 0, cosines.max(axis=1), 0.0)


class _Batch:
    """The rows of every group, group after group, through the tape with each row's own
    group's parameters."""

    def __init__(self, problem: Rows, order: np.ndarray, group: np.ndarray, first: np.ndarray):
        self.problem, self.group, self.first = problem, group, first
        self.data = {name: values[order] for name, values in problem.data.items()}
        self.observed = problem.observed[order]
        sigma = problem.inverse_sigma
        self.weights = np.ones(order.size) if sigma is None else sigma[order]
        self.n = order.size

    def sums(self, values: np.ndarray) -> np.ndarray:
        """Per group, the sum of `values` (a row per row of data) over its rows."""
        return np.add.reduceat(values, self.first, axis=0)

    def evaluate(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every row's weighted residual and its derivatives by the free parameters, with the
        parameters of its group at `values` (a row per group), and the size the residual is
        the difference of ((|target| + |model|) * weight: its rounding)."""
        problem, n = self.problem, self.n
        tape = problem.tape
        residuals, sizes = np.empty(n), np.empty(n)
        jacobian = np.empty((n, len(problem.free)))
        columns = {name: values[:, j][self.group] for j, name in enumerate(problem.free)}
        with np.errstate(all="ignore"):
            for start in range(0, n, tape.block):
                rows = slice(start, min(n, start + tape.block))
                length = rows.stop - rows.start
                inputs = {name: column[rows] for name, column in self.data.items()}
                for name, start_value in problem.starts.items():
                    inputs[name] = (
                        columns[name][rows] if name in columns else np.full(length, start_value)
                    )
                (value, gradients), *_ = tape.run(inputs, length)
                residuals[rows] = self.observed[rows] - value
                sizes[rows] = np.abs(self.observed[rows]) + np.abs(value)
                weights = self.weights[rows]
                for j, name in enumerate(problem.free):
                    jacobian[rows, j] = np.multiply(gradients[name], weights) * -1.0
            residuals *= self.weights
            sizes *= self.weights
        return residuals, jacobian, sizes
