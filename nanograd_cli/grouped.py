"""Many groups of rows fitted at once (`fit --by`): a Levenberg-Marquardt iteration run on
every group together, one pass of the tape over all the rows per step and the small systems
of the groups solved side by side, where a loop of fits would pay the solver's fixed costs
per group.

The point each group reaches is then taken through the single fit's own ending: the
Gauss-Newton polish, the gradient test and the statistics (`fitting._summary`), so that its
verdict and numbers are the single fit's. A group that this does not call converged is fitted
again alone by the single fit's solver, and so is every group where the iteration does not
apply (bounds, a cap on the steps): the batch never makes a group's answer worse than the
single fit's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .tape import Tape

# Steps at most for the batch; a group that has not stopped by then is fitted alone.
BATCH_STEPS = 200

# Gauss-Newton steps at most after the iteration, as after one fit's solver.
POLISH_STEPS = 3

# Levenberg-Marquardt's damping: its start, and its factors after a step kept and rejected.
DAMPING, DOWN, UP = 1e-3, 0.3, 10.0

# A group stops when a step kept moves each parameter by at most this (relative), or its
# damping grows past LOST (no step lowers its sum of squares).
STILL, LOST = 1e-12, 1e16


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


def minimize(problem: Rows, groups: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each group's free parameters (a row per group, in the order of `problem.free`) where
    the iteration stopped, and the steps each took: from the starts, all groups at once, on
    the rows `groups` of `problem`'s data (each at least as many as free parameters)."""
    order = np.concatenate(groups)
    sizes = np.array([index.size for index in groups])
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    batch = _Batch(problem, order, np.repeat(np.arange(len(groups)), sizes), first)
    k = len(problem.free)
    values = np.tile([problem.starts[name] for name in problem.free], (len(groups), 1))
    steps = np.zeros(len(groups), dtype=np.intp)
    residuals, jacobian, _ = batch.evaluate(values)
    rss = batch.sums(residuals * residuals)
    damping = np.full(len(groups), DAMPING)
    moving = np.isfinite(rss) & np.all(np.isfinite(jacobian), axis=1)[first]
    eye = np.eye(k)
    with np.errstate(all="ignore"):
        for _ in range(BATCH_STEPS):
            if not moving.any():
                break
            products = batch.sums(jacobian[:, :, None] * jacobian[:, None, :])  # JᵀJ per group
            gradient = batch.sums(jacobian * residuals[:, None])
            diagonal = np.einsum("gii->gi", products)
            scale = np.where(diagonal > 0, diagonal, 1.0)
            system = products + damping[:, None, None] * scale[:, :, None] * eye
            solvable = moving & np.all(np.isfinite(system), axis=(1, 2))
            step = np.zeros_like(values)
            try:
                solved = np.linalg.solve(system[solvable], -gradient[solvable, :, None])
                step[solvable] = solved[..., 0]
            except np.linalg.LinAlgError:  # a singular group: each alone, by least squares
                for g in np.flatnonzero(solvable):
                    step[g] = np.linalg.lstsq(system[g], -gradient[g], rcond=None)[0]
            trial = values + step
            trial_residuals, trial_jacobian, _ = batch.evaluate(trial)
            trial_rss = batch.sums(trial_residuals * trial_residuals)
            steps += moving
            kept = moving & (trial_rss <= rss) & np.all(np.isfinite(trial), axis=1)
            kept &= np.all(np.isfinite(trial_jacobian), axis=1)[first] | ~moving
            small = np.all(np.abs(step) <= STILL * np.abs(values), axis=1)
            still = kept & small
            values[kept] = trial[kept]
            rows = np.repeat(kept, sizes)
            residuals[rows] = trial_residuals[rows]
            jacobian[rows] = trial_jacobian[rows]
            rss = np.where(kept, trial_rss, rss)
            damping = np.where(kept, np.maximum(damping * DOWN, 1e-15), damping * UP)
            moving &= ~still & (damping < LOST)
        values = _polished(batch, values, residuals, jacobian, rss)
    return values, steps


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
