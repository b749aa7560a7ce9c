"""The statistics a paper reports of a least-squares fit, from the fit's own numbers: χ², R²,
AIC and BIC as R's `nls` computes them, each parameter's t and p, the correlation of each
pair, and asymptotic confidence intervals (value ± t(dof)·se)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from .results import FitStatistics

# A pair of parameters correlated beyond this is said in a note.
CORRELATED = 0.99
LN2 = math.log(2.0)


def statistics(
    free: Sequence[str],
    values: Mapping[str, float],
    stderr: Mapping[str, float],
    scaled_covariance: Mapping[str, Mapping[str, float]],
    scaled_chi2: float,
    dof: int,
    target: np.ndarray,
    weights: np.ndarray | float,
    known_sigma: bool = False,
    exponent: int = 0,
) -> FitStatistics:
    """χ² (the weighted sum of squares at the solution), χ²/dof, R² (1 - χ² over the
    weighted sum of squares of the target about its weighted mean), AIC and BIC (R's
    `logLik.nls`, weights 1/sigma², counting the n - dof parameters fitted and sigma, one
    at a bound too, as R does), and of the `free` parameters t = value/se, its two-sided
    p from Student's t with `dof` degrees of freedom (with `known_sigma`, from the normal
    distribution, with the χ² test's p-value `chi2_p`), and their correlations, from
    `scaled_covariance`: the covariance in any units of the parameters (the solver's, where
    the data's would overflow or underflow).

    `weights` (1/sigma, or 1) and `scaled_chi2` are in the fit's working units: times
    2**exponent and 4**exponent, where neither overflows nor underflows, so that R², AIC
    and BIC, which do not depend on the data's scale but through a logarithm, are finite for
    data at 1e300 or 1e-300 (χ² itself is in the data's units, inf beyond a float)."""
    # the distributions' functions themselves: scipy.stats would add 0.2 s to every fit
    from scipy import special  # the [fit] extra, which fitting needs already

    n = target.size
    k = n - dof  # the parameters fitted, of which `free` leaves out those at a bound
    root = np.broadcast_to(np.asarray(weights, dtype=float), target.shape)  # 1/sigma, scaled
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        chi2 = float(np.ldexp(scaled_chi2, -2 * exponent))  # (inf beyond a float)
        relative = (root / root.max()) ** 2  # the weights 1/sigma², the largest 1
        centre = float(np.sum(relative * target) / np.sum(relative))
        total = float(np.sum((root * (target - centre)) ** 2))  # in the units of scaled_chi2
        # log(1/sigma²) summed, and log χ², in the data's units
        log_weights = 2 * (float(np.sum(np.log(root))) - n * exponent * LN2)
        log_chi2 = math.log(scaled_chi2) - 2 * exponent * LN2 if scaled_chi2 > 0 else 0.0
    log_likelihood = (
        0.5 * (log_weights - n * (math.log(2 * math.pi) + 1 - math.log(n) + log_chi2))
        if scaled_chi2 > 0
        else math.inf
    )
    t = {name: values[name] / stderr[name] if stderr[name] else math.nan for name in free}
    chi2_p = None  # reported with known sigma only, so computed only then
    if known_sigma:
        p = {name: float(2 * special.ndtr(-abs(t[name]))) for name in free}
        chi2_p = float(special.chdtrc(dof, chi2)) if dof > 0 else math.nan
    else:
        p = {
            name: float(2 * special.stdtr(dof, -abs(t[name]))) if dof > 0 else math.nan
            for name in free
        }
    correlation = {a: {b: correlation_of(scaled_covariance, a, b) for b in free} for a in free}
    found: FitStatistics = {
        "chi2": chi2,
        "reduced_chi2": chi2 / dof if dof > 0 else math.nan,
        "r2": 1 - scaled_chi2 / total if total > 0 else math.nan,
        "aic": -2 * log_likelihood + 2 * (k + 1),
        "bic": -2 * log_likelihood + math.log(n) * (k + 1),
        "t": t,
        "p": p,
        "correlation": correlation,
    }
    if chi2_p is not None:
        found["chi2_p"] = chi2_p
    return found


def correlation_of(covariance: Mapping[str, Mapping[str, float]], a: str, b: str) -> float:
    """The correlation of a and b from their `covariance` (nan where a variance is 0)."""
    scale = math.sqrt(covariance[a][a] * covariance[b][b])
    return covariance[a][b] / scale if scale > 0 else math.nan


def correlated(correlation: Mapping[str, Mapping[str, float]]) -> list[str]:
    """A note per pair of parameters correlated beyond CORRELATED."""
    names = list(correlation)
    return [
        f"{a} and {b} are correlated (r = {correlation[a][b]:.4g}): the data fix a "
        "combination of them better than either; their standard errors are large together"
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if abs(correlation[a][b]) > CORRELATED
    ]


def quantile(level: float, dof: int | None) -> float:
    """The (1 + level)/2 quantile of Student's t with `dof` degrees of freedom, or of the
    normal distribution for `dof` None (sigma known): half an interval's width in standard
    errors."""
    from scipy import special

    if dof is None:
        return float(special.ndtri((1 + level) / 2))
    return float(special.stdtrit(dof, (1 + level) / 2)) if dof > 0 else math.nan


def asymptotic_intervals(
    free: Sequence[str],
    values: Mapping[str, float],
    stderr: Mapping[str, float],
    dof: int | None,
    level: float,
) -> dict[str, tuple[float, float]]:
    """value ± t·se with t the (1 + level)/2 quantile of Student's t with `dof` degrees of
    freedom, or of the normal distribution for `dof` None (sigma known)."""
    half = quantile(level, dof)
    return {
        name: (values[name] - half * stderr[name], values[name] + half * stderr[name])
        for name in free
    }
