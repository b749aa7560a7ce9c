"""What a fit predicts: the model at rows of data, each value's standard error by the delta
method from the model's exact gradient by the parameters at that row, and the confidence and
prediction bands; and a fit written to JSON and read back, to predict without refitting."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

import numpy as np

from ._program import Program
from .errors import InputError
from .results import Fit, Fits, FitStatistics, by_element

# What a saved fit says it is, and the version of its layout.
FORMAT, VERSION = "nanograd fit", 1


def predicted(
    written: Program,
    parameters: Mapping[str, float],
    fit: Fit,
    columns: Mapping[str, np.ndarray],
    rows: int,
    level: float | None = None,
    sigma: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """The model `written` (in scalars) at the fitted `parameters` over `rows` rows of
    `columns`: `fitted`, and `fitted_se`, sqrt(gᵀCg) with g the gradient by the parameters
    and C the fit's covariance; with `level`, the confidence band `lower`, `upper` (value ±
    t·se) and the prediction band `pred_lower`, `pred_upper` (value ± t·sqrt(se² + the
    variance of one observation: the residual variance, times sigma² at the row for a fit
    with sigma, or sigma² alone where sigma is known). A fit with sigma, predicted where
    sigma is not given (`sigma` None), has no prediction band."""
    from ._fit_statistics import quantile
    from ._tape import batch_gradients

    data = {name: columns[name] for name in written.inputs if name not in parameters}
    with np.errstate(all="ignore"):
        value, gradients = batch_gradients(written, {**data, **parameters})
        fitted = np.broadcast_to(np.asarray(value, dtype=float), (rows,)).copy()
        se = standard_errors(fit, gradients, rows)
        found = {"fitted": fitted, "fitted_se": se}
        if level is None:
            return found
        half = quantile(level, None if fit.absolute_sigma else fit.dof)
        found["lower"], found["upper"] = fitted - half * se, fitted + half * se
        if fit.sigma is None:
            observation = np.full(rows, fit.residual_sd)
        elif sigma is None:
            return found
        else:
            observation = sigma * (1.0 if fit.absolute_sigma else fit.residual_sd)
        spread = half * np.hypot(se, observation)  # (no square to overflow or underflow)
        found["pred_lower"], found["pred_upper"] = fitted - spread, fitted + spread
    return found


def standard_errors(fit: Fit, gradients: Mapping[str, np.ndarray], rows: int) -> np.ndarray:
    """sqrt(gᵀCg) per row, with g the `gradients` by the parameters and C the fit's
    covariance, as se_a·se_b·r_ab: with each row's g·se scaled to at most 1 by a power of two,
    so that it is finite where the covariance itself overflows or underflows (data near 1e300
    or 1e-300). A parameter at its bound is held there, as the others' covariances take it;
    a fixed one adds nothing."""
    held = set(fit.at_bound)
    correlation = fit.statistics.get("correlation")
    if correlation is None:  # (a saved fit edited by hand): from the covariance
        from ._fit_statistics import correlation_of

        c = fit.covariance
        varied = [a for a in c if c[a][a] > 0]
        correlation = {a: {b: correlation_of(c, a, b) for b in varied} for a in varied}
    names = [n for n in correlation if n in gradients and n not in held]
    if not names:
        return np.zeros(rows)
    stderr = by_element(fit.stderr)  # (an array parameter's by element: w[0,1])
    sizes = np.column_stack([np.broadcast_to(gradients[n], (rows,)) * stderr[n] for n in names])
    r = np.array([[correlation[a][b] for b in names] for a in names])
    exponent = np.frexp(np.max(np.abs(sizes), axis=1))[1]
    scaled = np.ldexp(sizes, -exponent[:, None])
    variance = np.einsum("ij,jk,ik->i", scaled, r, scaled)
    return np.ldexp(np.sqrt(np.maximum(variance, 0.0)), exponent)  # (a nan stays nan)


def saved(fit: Fit | Fits, summary: Mapping[str, Any] | list[dict]) -> str:
    """The fit as a JSON document that `loaded` reads back: what `fit --format json` prints
    (`summary`), and the model, target and sigma it was fitted with; a fit of groups sharing
    parameters also the column of the groups (`"by"`), and fits by group (Fits) each
    group's object, its value under the column's name, in a list `"groups"`."""
    one = fit if isinstance(fit, Fit) else next(iter(fit.values()))
    document = {
        "format": FORMAT,
        "version": VERSION,
        "source": one.source,
        "target": one.target,
        "sigma": one.sigma,
        "absolute_sigma": one.absolute_sigma,
    }
    if isinstance(fit, Fits):
        document |= {"by": fit.by, "groups": summary}
    else:
        document |= ({"by": fit.by} if fit.by is not None else {}) | dict(summary)  # type: ignore[arg-type]
    return json.dumps(document, allow_nan=True) + "\n"


def loaded(text: str, path: str) -> Fit | Fits:
    """The fit saved in `text` (the file `path`), or the fits of its groups: bad input where
    it is not one."""

    def damaged(why: str) -> InputError:
        return InputError(f"{path}: not a fit saved by nanograd fit --save ({why})")

    try:
        document = json.loads(text)
    except ValueError as error:
        raise damaged(f"not JSON: {error}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise damaged('no "format": "nanograd fit"')
    if document.get("version") != VERSION:
        raise damaged(f"version {document.get('version')!r}, where this nanograd reads {VERSION}")
    by = document.get("by")
    if by is not None and not isinstance(by, str):
        raise damaged('"by" is not the name of a column')
    if "groups" not in document:
        fit = _fit_of(document, document, damaged)
        fit.by = by
        return fit
    groups = document["groups"]
    if by is None or not isinstance(groups, list) or not groups:
        raise damaged('"groups" is not a list of the groups\' fits under "by"')
    fits = {}
    for entry in groups:
        if not isinstance(entry, dict) or not isinstance(entry.get(by), int | float | str):
            raise damaged(f'a group without its value of "{by}"')
        fits[entry[by]] = _fit_of(entry, document, damaged)
    return Fits(fits, by=by)


def _fit_of(document: dict, model: dict, damaged: Callable[[str], InputError]) -> Fit:
    """The Fit saved in `document`, fitted with `model`'s source, target and sigma."""
    try:
        parameters = named_numbers(document, "parameters")
        stderr = named_numbers(document, "stderr")
        covariance = {
            str(a): {str(b): _number(x, f'"covariance" of {a} and {b}') for b, x in row.items()}
            for a, row in _mapping(document["covariance"]).items()
        }
        source, target, sigma = model["source"], model["target"], model["sigma"]
        if not isinstance(source, str) or not all(
            isinstance(t, str | None) for t in (target, sigma)
        ):
            raise TypeError("source, target and sigma are text")
        fit = Fit(
            parameters=parameters,
            stderr=stderr,
            covariance=covariance,
            rss=_number(document["rss"], '"rss"'),
            residual_sd=_number(document["residual_sd"], '"residual_sd"'),
            dof=_count(document, "dof", 0),
            n=_count(document, "n", 1),
            iterations=_count(document, "iterations", 0),
            converged=bool(document["converged"]),
            message=str(document["message"]),
            inputs=named_numbers(document, "inputs"),
        )
        if fit.dof >= fit.n:
            raise ValueError(f'"dof" {fit.dof} of "n" {fit.n} rows: no parameter was fitted')
        names = set(stderr)
        if set(parameters) != names or set(fit.inputs) != names:
            raise ValueError("its parameters, standard errors and starts name different parameters")
        rows = set(covariance)
        covered = all(n in rows or any(r.startswith(f"{n}[") for r in rows) for n in names)
        if not covered or any(set(row) != rows for row in covariance.values()):
            raise ValueError("its covariance is not of every parameter by every parameter")
        if any(covariance[n][n] < 0 for n in rows):  # (nan: a parameter held at its bound)
            raise ValueError("a variance, on its covariance's diagonal, that is negative")
        if any(not _same(covariance[a][b], covariance[b][a]) for a in rows for b in rows):
            raise ValueError("its covariance is not symmetric")
        if not fit.converged:
            raise ValueError('"converged": false, where --save writes a fit that converged')
    except KeyError as error:
        raise damaged(f"no {json.dumps(error.args[0])}") from None
    except (TypeError, ValueError, AttributeError) as error:
        raise damaged(str(error) or "a value of the wrong kind") from None
    if not all(math.isfinite(x) for x in _flat(parameters)):
        raise damaged("a parameter that is not a number")
    fit.source, fit.target, fit.sigma = source, target, sigma
    fit.absolute_sigma = bool(model.get("absolute_sigma", False))
    try:  # the statistics as numbers, each where the file has it
        figures = {k: float(document[k]) for k in FIGURES if k in document}
        per: dict[str, Any] = {k: {str(n): float(v) for n, v in _names(document, k)}
                               for k in ("t", "p") if k in document}  # fmt: skip
        if "correlation" in document:
            pairs = _mapping(document["correlation"]).items()
            per["correlation"] = {str(a): {str(b): float(r) for b, r in row.items()}
                                  for a, row in pairs}  # fmt: skip
    except (TypeError, ValueError, AttributeError):
        raise damaged("a statistic that is not a number") from None
    fit.statistics = cast(FitStatistics, {**figures, **per})
    fit.derived = document.get("derived", {})
    fit.loss = str(document.get("loss", "linear"))
    fit.f_scale = float(document.get("f_scale", 1.0))
    # saved with a robust loss; a least-squares fit's is half its rss
    half = fit.rss / 2 if fit.loss == "linear" else math.nan
    fit.cost = float(document["cost"]) if "cost" in document else half
    fit.at_bound = list(document.get("at_bound", []))
    if "ci" in document:
        fit.ci = {k: (float(lo), float(hi)) for k, (lo, hi) in document["ci"].items()}
        fit.ci_level = float(document["ci_level"])
        fit.ci_method = str(document.get("ci_method", "asymptotic"))
    return fit


# The statistics a saved fit holds as one number each.
FIGURES = ("chi2", "reduced_chi2", "r2", "aic", "bic")


def _names(document: dict, key: str) -> Iterable[tuple[Any, Any]]:
    """The items of `document[key]`, an object of names, or ValueError."""
    value = document[key]
    if not isinstance(value, dict):
        raise ValueError(f"{json.dumps(key)} is not an object of names")
    return value.items()


def _same(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


def named_numbers(document: dict, key: str) -> dict[str, Any]:
    """`document[key]`, an object of names, with each value a number or an array."""
    return {str(k): number_or_array(v, f'"{key}" of {k}') for k, v in _names(document, key)}


def _number(value: object, what: str) -> float:
    """A saved number (nan, inf as text), or TypeError saying `what` is not one."""
    if isinstance(value, list):
        raise TypeError(f"{what} is a list, not a number")
    return number_or_array(value, what)


def _count(document: dict, key: str, least: int) -> int:
    """`document[key]`, a whole number from `least`, or ValueError."""
    value = document[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(
            f"{json.dumps(key)} is {json.dumps(value)}, not a whole number from {least}"
        )
    return value


def _mapping(value: object) -> dict:
    """A saved object of names, or ValueError."""
    if not isinstance(value, dict) or not all(isinstance(row, dict) for row in value.values()):
        raise ValueError("its covariance is not of every parameter by every parameter")
    return value


def number_or_array(value: object, what: str = "a value") -> Any:  # a float, or an array
    """A saved number (or nan, inf as text), or a saved array's nested lists; else TypeError
    saying that `what` is not one. A number that JSON read as inf (1e999; a file written by
    --save has "inf") is too large for a float, as on the command line."""
    if _overflowed(value):
        raise TypeError(f"{what} is too large for a float")
    try:
        if isinstance(value, list):
            array = np.asarray(value, dtype=float)
            if array.dtype.kind == "f":
                return array
        elif not isinstance(value, bool) and isinstance(value, int | float | str):
            return float(value)
    except (TypeError, ValueError, OverflowError):
        pass
    raise TypeError(f"{what} is {json.dumps(value)[:40]}, not a number")


def _overflowed(value: object) -> bool:
    """Whether `value`, or a number in its nested lists, is a float JSON read as inf."""
    if isinstance(value, list):
        return any(_overflowed(x) for x in value)
    return isinstance(value, float) and math.isinf(value)


def _flat(values: Mapping[str, float | np.ndarray]) -> list[float]:
    return [float(x) for v in values.values() for x in np.ravel(v)]
