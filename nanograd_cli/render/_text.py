"""Plain writers: JSON, CSV and the rows of a table, for every result type. Pure functions
from a result to text; `cli.output.emit` picks one by the format asked for."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import singledispatch
from typing import Any, cast

from ..errors import printable
from ..results import (
    FormulaCheck,
    GradientCheck,
    Gradients,
    Hessian,
    Jacobian,
    LaTeX,
    LineGradients,
    Minimum,
    Taylor,
    flattened,
)

Number = Callable[[float], str]


def number(x: float, null: bool = False) -> float | str | None:
    """A float as JSON allows it: non-finite numbers become the strings nan, inf, -inf, or
    with `null` (`--nan null`) null."""
    if math.isfinite(x):
        return x
    return None if null else repr(x)


def _json_numbers(obj, null: bool):
    if hasattr(obj, "tolist"):  # an array (of an array program): nested lists
        obj = obj.tolist()
    if isinstance(obj, dict):
        return {k: _json_numbers(v, null) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_numbers(v, null) for v in obj]
    return number(obj, null) if isinstance(obj, float) else obj


def to_json(result, null: bool = False) -> str:
    """One line of JSON, full precision, non-finite numbers as strings (or with `null`,
    null); for a result of many (fits by group), JSON Lines: a line each."""
    made = json_object(result)
    objects = made if isinstance(made, list) else [made]
    return "\n".join(json.dumps(_json_numbers(o, null), allow_nan=False) for o in objects)


def to_csv(result) -> str:
    """A header line, then the result's rows (an array's elements one column each)."""
    result = flattened(result)
    return "\n".join([csv_header(result), *csv_rows(result)])


def plain_table(rows: list[list[str]]) -> str:
    """Rows of cells as left-aligned columns separated by two spaces, no trailing blanks."""
    widths = column_widths(rows)
    template = "  ".join(f"{{:<{width}}}" for width in widths)  # one call per row
    return "\n".join(template.format(*row).rstrip() for row in rows)


def columns_table(columns: Mapping[str, Iterable[Any]], number: Number) -> list[list[str]]:
    """Columns of numbers as the rows of a table: their names, then a row per row (a value
    that is text, a group's name, as it is, with a control character shown as its escape)."""
    values = zip(*columns.values(), strict=True)
    return [list(columns), *([_cell(x, number) for x in row] for row in values)]


def _cell(value: Any, number: Number) -> str:
    """A number as `number` writes it; text as it is (data: no control character)."""
    return printable(value) if isinstance(value, str) else number(float(value))


def column_widths(rows: list[list[str]]) -> list[int]:
    """The width of each column of `rows`: its longest cell."""
    return [max(map(len, column)) for column in zip(*rows, strict=True)]


def aligned(cells: list[str], widths: list[int]) -> str:
    """One row of `plain_table`, in columns of `widths`."""
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()


def _point(result) -> dict:
    return {"value": result.value, "inputs": result.inputs}


def _gradient_columns(names) -> list[str]:
    return [f"d_{name}" for name in names]


def _wrt(result: Jacobian) -> list[str]:
    """The inputs a Jacobian has derivatives by (those of --wrt, or all)."""
    return list(next(iter(result.jacobian.values())))


# JSON: one object per result; every one has "value" and "inputs", as grad's does.


@singledispatch
def json_object(result) -> dict:
    raise TypeError(f"no JSON writer for {type(result).__name__}")


@json_object.register(Gradients)
def _(result: Gradients) -> dict:
    return {**_point(result), "gradients": result.gradients}


@json_object.register(Jacobian)
def _(result: Jacobian) -> dict:
    return {"values": result.values, "inputs": result.inputs, "jacobian": result.jacobian}


@json_object.register(LineGradients)
def _(result: LineGradients) -> dict:
    return {"line": result.line, **json_object(result.result)}


@json_object.register(Hessian)
def _(result: Hessian) -> dict:
    return {**_point(result), "gradients": result.gradients, "hessian": result.hessian}


@json_object.register(Taylor)
def _(result: Taylor) -> dict:
    return {
        "source": result.source,
        "wrt": result.wrt,
        "at": result.at,
        "order": result.order,
        "inputs": result.inputs,
        "coefficients": result.coefficients,
        "polynomial": result.polynomial,
    }


@json_object.register(GradientCheck)
def _(result: GradientCheck) -> dict:
    checks = {
        name: {
            "analytic": c.analytic,
            "numeric": c.numeric,
            "abs_error": c.abs_error,
            "rel_error": c.rel_error,
            "pass": c.passed,
            **({"kink": list(c.kink)} if c.kink else {}),
        }
        for name, c in result.checks.items()
    }
    return {**_point(result), "checks": checks, "pass": result.passed}


@json_object.register(FormulaCheck)
def _(result: FormulaCheck) -> dict:
    checks = {
        name: {
            "formula": c.formula,
            "points": c.points,
            "skipped": c.skipped,
            "outside": c.outside,
            "differ": c.differ,
            "max_abs_error": c.max_abs_error,
            "pass": c.passed,
            "first": [
                {
                    "inputs": m.inputs,
                    "engine": m.engine,
                    "formula": m.formula,
                    "abs_error": m.abs_error,
                }
                for m in c.first
            ],
            "kinks": c.kinks,
            "first_kinks": [
                {"inputs": k.inputs, "left": k.left, "right": k.right} for k in c.first_kinks
            ],
        }
        for name, c in result.checks.items()
    }
    ranges = {
        name: {"low": low, "high": high, "points": count}
        for name, (low, high, count) in result.ranges.items()
    }
    return {
        "inputs": result.inputs,
        "ranges": ranges,
        "rtol": result.rtol,
        "atol": result.atol,
        "checks": checks,
        "pass": result.passed,
    }


@json_object.register(Minimum)
def _(result: Minimum) -> dict:
    return {
        **_point(result),
        "gradients": result.gradients,
        "gradient_norm": result.gradient_norm,
        "steps": result.steps,
        "converged": result.converged,
        **({"interrupted": True} if result.interrupted else {}),
        **({"diverged": True} if result.diverged else {}),
    }


# CSV: a header line and the rows; numbers in full precision.


def csv_number(x: float) -> str:
    """A number as a CSV field: `repr`, but nan as `NaN`, which pandas, polars and DuckDB
    all read as a float (polars reads `nan` as text), as `grad --points` writes it."""
    return "NaN" if x != x else repr(x)


@singledispatch
def csv_header(result) -> str:
    raise TypeError(f"no CSV writer for {type(result).__name__}")


@singledispatch
def csv_rows(result) -> list[str]:
    raise TypeError(f"no CSV writer for {type(result).__name__}")


@csv_header.register(Gradients)
def _(result: Gradients) -> str:
    return _csv_line(["value", *_gradient_columns(result.gradients)])


@csv_rows.register(Gradients)
def _(result: Gradients) -> list[str]:
    return [_csv_line(map(csv_number, [result.value, *result.gradients.values()]))]


@csv_header.register(Jacobian)
def _(result: Jacobian) -> str:
    return _csv_line(["output", "value", *_gradient_columns(_wrt(result))])


@csv_rows.register(Jacobian)
def _(result: Jacobian) -> list[str]:
    return [
        _csv_line([name, *map(csv_number, [result.values[name], *result.jacobian[name].values()])])
        for name in result.values
    ]


@csv_header.register(LineGradients)
def _(result: LineGradients) -> str:
    return lines_csv_header(list(result.result.gradients))


def lines_csv_header(names: list[str]) -> str:
    """The header of `--each-line`'s CSV, with gradients by `names`: known before any line
    is read, so that no input still gives a header."""
    return _csv_line(["line", "value", *_gradient_columns(names)])


@csv_rows.register(LineGradients)
def _(result: LineGradients) -> list[str]:
    return [f"{result.line},{row}" for row in csv_rows(result.result)]


@csv_header.register(Hessian)
def _(result: Hessian) -> str:
    return _csv_line(["name", *table_rows(result)[0][1:]])  # the table's header names no column


@csv_rows.register(Hessian)
def _(result: Hessian) -> list[str]:
    return [_csv_line(row) for row in table_rows(result, csv_number)[1:]]


CHECK_FIELDS = ("analytic", "numeric", "abs_error", "rel_error", "pass")


@csv_header.register(GradientCheck)
def _(result: GradientCheck) -> str:
    return _csv_line(["input", *CHECK_FIELDS])


@csv_rows.register(GradientCheck)
def _(result: GradientCheck) -> list[str]:
    return [
        _csv_line(
            [name, *(csv_number(getattr(c, f)) for f in CHECK_FIELDS[:-1]), str(c.passed).lower()]
        )
        for name, c in result.checks.items()
    ]


AGAINST_FIELDS = ("formula", "points", "skipped", "differ", "max_abs_error", "pass")
# The heading of the kinks check --against found: points it does not compare.
KINKS = "kinks, where the source has no derivative (not compared):"


@csv_header.register(FormulaCheck)
def _(result: FormulaCheck) -> str:
    return _csv_line(["input", *AGAINST_FIELDS])


@csv_rows.register(FormulaCheck)
def _(result: FormulaCheck) -> list[str]:
    rows = table_rows(result, csv_number)[1:]
    for row in rows:
        row[-1] = "true" if row[-1] == "yes" else "false"
    return [_csv_line(row) for row in rows]


def _csv_field(text: str) -> str:
    """A CSV field: quoted where it holds a comma, a quote or a line break (a formula,
    log(x, 2); an element of a matrix, d_W[1,2])."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def _csv_line(fields: Iterable[str]) -> str:
    """A CSV line of `fields`, each quoted where it must be."""
    return ",".join(map(_csv_field, fields))


@csv_header.register(Minimum)
def _(result: Minimum) -> str:
    names = list(result.inputs)
    return _csv_line(
        ["value", *names, *_gradient_columns(names), "gradient_norm", "steps", *DESCENT_ENDS]
    )


# How a descent ended, as CSV's last columns: what JSON says by its keys of the same names.
DESCENT_ENDS = ("converged", "interrupted", "diverged")


@csv_rows.register(Minimum)
def _(result: Minimum) -> list[str]:
    numbers = [result.value, *result.inputs.values(), *result.gradients.values()]
    numbers.append(result.gradient_norm)
    tail = [str(result.steps), *(str(getattr(result, end)).lower() for end in DESCENT_ENDS)]
    return [_csv_line([*map(csv_number, numbers), *tail])]


# Tables: rows of cells, the first the header; `number` formats each number.


def in_blocks(number: Number) -> Callable[[object], str]:
    """`number` for a table whose cells may be arrays: an array is a block of lines, one per
    row of a matrix, its numbers aligned (`[[1.0, 2.0],` / ` [3.0, 4.0]]`)."""

    def cell(value) -> str:
        if not getattr(value, "ndim", 0):
            return number(float(value))  # type: ignore[arg-type]
        texts = [number(x) for x in value.ravel().tolist()]
        wide = max(map(len, texts))
        padded = iter(t.rjust(wide) for t in texts)

        def nested(shape: tuple[int, ...], depth: int) -> str:
            if len(shape) == 1:
                return "[" + ", ".join(next(padded) for _ in range(shape[0])) + "]"
            inner = [nested(shape[1:], depth + 1) for _ in range(shape[0])]
            return "[" + (",\n" + " " * (depth + 1)).join(inner) + "]"

        return nested(value.shape, 0)

    return cell


@singledispatch
def table_rows(result, number: Number = repr) -> list[list[str]]:
    raise TypeError(f"no table writer for {type(result).__name__}")


@table_rows.register(Gradients)
def _(result: Gradients, number: Number = repr) -> list[list[str]]:
    rows = [["", "value", "gradient"], ["result", number(result.value), ""]]
    for name, value in result.inputs.items():
        gradient = result.gradients.get(name)
        rows.append([name, number(value), "" if gradient is None else number(gradient)])
    return rows


@table_rows.register(Jacobian)
def _(result: Jacobian, number: Number = repr) -> list[list[str]]:
    names = _wrt(result)
    rows = [["output", "value", *_gradient_columns(names)]]
    for output, row in result.jacobian.items():
        rows.append([output, number(result.values[output]), *(number(row[n]) for n in names)])
    return rows


def lines_table_rows(results: list[LineGradients], number: Number = repr) -> list[list[str]]:
    """The table of `--each-line`: one row per line, its value and its gradients."""
    names = list(results[0].result.gradients)
    rows = [["line", "expression", "value", *_gradient_columns(names)]]
    for r in results:
        grads = [number(r.result.gradients[n]) for n in names]
        rows.append([str(r.line), printable(r.expression), number(r.result.value), *grads])
    return rows


@table_rows.register(Hessian)
def _(result: Hessian, number: Number = repr) -> list[list[str]]:
    names = list(result.hessian)
    rows = [
        ["", "value", "gradient", *_gradient_columns(names)],
        ["result", number(result.value), "", *[""] * len(names)],
    ]
    for n, value in result.inputs.items():  # an input not differentiated by: its value
        by = result.hessian.get(n)
        if by is None:
            rows.append([n, number(value), "", *[""] * len(names)])
        else:
            row = (number(by[m]) for m in names)
            rows.append([n, number(value), number(result.gradients[n]), *row])
    return rows


def rounded(result: Taylor, digits: str | None) -> Taylor:
    """`result` with its coefficients to `digits` significant digits (`--digits`), so that
    its polynomial, in text and LaTeX, shows them as its table does, and its centre too
    unless it is written as a fraction of pi; None or `full`: as it is."""
    if digits is None or digits == "full":
        return result
    from .._jets import pi_fraction, polynomial  # (the language, loaded for taylor's output only)

    def shorter(value: float) -> float:
        return float(format(value, f".{digits}g"))

    coefficients = [shorter(c) for c in result.coefficients]
    at = result.at if pi_fraction(abs(result.at)) else shorter(result.at)
    # the exact coefficients (1/2, sqrt(3)/2) kept where the polynomial has them, the others
    # rounded
    whole = polynomial(result.coefficients, result.wrt, result.at, whole=True)
    exact = whole == result.polynomial
    text, latex = (
        polynomial(result.coefficients, result.wrt, at, latex, exact, int(digits))
        for latex in (False, True)
    )
    return replace(result, coefficients=coefficients, polynomial=text, latex=LaTeX(latex))


@table_rows.register(Taylor)
def _(result: Taylor, number: Number = repr) -> list[list[str]]:
    return [["k", "coefficient"], *([str(k), number(c)] for k, c in enumerate(result.coefficients))]


@table_rows.register(GradientCheck)
def _(result: GradientCheck, number: Number = repr) -> list[list[str]]:
    rows = [["input", *CHECK_FIELDS]]
    for name, c in result.checks.items():
        errors = (number(c.abs_error), number(c.rel_error))
        rows.append([name, *apart(c.analytic, c.numeric, number), *errors, _yes(c.passed)])
    return rows


def _yes(passed: bool) -> str:
    return "yes" if passed else "NO"


def apart(a: float, b: float, number: Number) -> tuple[str, str]:
    """`a` and `b` written by `number`; where that writes two different numbers alike, `b`
    is marked ≈ (nearly, not exactly): a check does not show a difference as none."""
    pair = number(a), number(b)
    if pair[0] == pair[1] and a != b:
        return pair[0], f"≈{pair[1]}"
    return pair


@table_rows.register(FormulaCheck)
def _(result: FormulaCheck, number: Number = repr) -> list[list[str]]:
    rows = [["input", *AGAINST_FIELDS]]
    for name, c in result.checks.items():
        counts = (str(c.points), str(c.skipped), str(c.differ))
        rows.append([name, printable(c.formula), *counts, number(c.max_abs_error), _yes(c.passed)])
    return rows


def mismatch_rows(result: FormulaCheck, number: Number = repr) -> list[list[str]]:
    """The first points where a formula differs: which derivative, the point, the two."""
    names = list(next((m.inputs for c in result.checks.values() for m in c.first), {}))
    rows = [["d/d", *names, "engine", "formula", "abs_error"]]
    for name, c in result.checks.items():
        for m in c.first:
            point = (number(m.inputs[n]) for n in names)
            rows.append([name, *point, number(m.engine), number(m.formula), number(m.abs_error)])
    return rows


def kink_rows(result: FormulaCheck, number: Number = repr) -> list[list[str]]:
    """The first kinks of the source, where no formula is compared: which derivative, the
    point, the slopes to its left and right."""
    names = list(next((k.inputs for c in result.checks.values() for k in c.first_kinks), {}))
    rows = [["d/d", *names, "left", "right"]]
    for name, c in result.checks.items():
        for k in c.first_kinks:
            point = (number(k.inputs[n]) for n in names)
            rows.append([name, *point, number(k.left), number(k.right)])
    return rows


@table_rows.register(Minimum)
def _(result: Minimum, number: Number = repr) -> list[list[str]]:
    rows = table_rows(Gradients(result.value, result.inputs, result.gradients), number)
    rows.append(["gradient norm", number(result.gradient_norm), ""])
    stopped = "interrupted" if result.interrupted else "step limit"
    stopped = "stopped short" if result.stopped else stopped  # (SciPy's reason: a note)
    stopped = "diverged" if result.diverged else stopped
    rows.append(["steps", str(result.steps), "converged" if result.converged else stopped])
    return rows


# Fits (`nanograd fit`): the shape of docs/fit.md and the spec's §2b.

from ..results import Fit, Fits, group_name  # noqa: E402


@json_object.register(Fit)
def _(result: Fit) -> dict:
    return {
        "parameters": result.parameters,
        "stderr": result.stderr,
        "covariance": result.covariance,
        "rss": result.rss,
        "residual_sd": result.residual_sd,
        "dof": result.dof,
        "n": result.n,
        "iterations": result.iterations,
        "converged": result.converged,
        "message": result.message,
        "inputs": result.inputs,
        **result.statistics,
        **(
            {"ci": result.ci, "ci_level": result.ci_level, "ci_method": result.ci_method}
            if result.ci
            else {}
        ),
        **({"derived": result.derived} if result.derived else {}),
        **(
            {
                "loss": result.loss,
                "f_scale": result.f_scale,
                "cost": result.cost,
                "stderr_approximate": True,
            }
            if result.loss != "linear"
            else {}
        ),
        **({"restarts": result.restarts} if result.restarts else {}),
        **({"at_bound": result.at_bound} if result.at_bound else {}),
        **({"warnings": result.warnings} if result.warnings else {}),
    }


@csv_header.register(Fit)
def _(result: Fit) -> str:
    shown = result.table_statistics and result.statistics
    return (
        "parameter,value,stderr" + (",t,p" if shown else "") + (",lower,upper" if result.ci else "")
    )


@csv_rows.register(Fit)
def _(result: Fit) -> list[str]:
    shown = result.table_statistics and result.statistics
    rows = []
    for name, value in result.parameters.items():
        cells = [name, csv_number(value), csv_number(result.stderr[name])]
        if shown:
            t, p = result.statistics["t"], result.statistics["p"]
            cells += [csv_number(t[name]), csv_number(p[name])] if name in t else ["", ""]
        if result.ci:
            cells += [csv_number(x) for x in result.ci[name]] if name in result.ci else ["", ""]
        rows.append(_csv_line(cells))
    return rows


@table_rows.register(Fit)
def _(result: Fit, number: Number = repr) -> list[list[str]]:
    shown = result.table_statistics and result.statistics
    extra = (["t", "p"] if shown else []) + (["lower", "upper"] if result.ci else [])
    rows = [["", "value", "stderr", *extra]]
    blank = [""] * len(extra)
    for name, value in result.parameters.items():
        se = "at bound" if name in result.at_bound else number(result.stderr[name])
        cells = [printable(name), number(value), se]  # (a[g]: g is data)
        if shown:
            t, p = result.statistics["t"], result.statistics["p"]
            cells += [number(t[name]), number(p[name])] if name in t else ["", ""]
        if result.ci:
            cells += [number(x) for x in result.ci[name]] if name in result.ci else ["", ""]
        rows.append(cells)
    for name, quantity in result.derived.items():
        cells = [name, number(quantity["value"]), number(quantity["stderr"])]
        if shown:
            cells += ["", ""]
        if result.ci:
            cells += [number(x) for x in quantity["ci"]]
        rows.append(cells)
    rows.append(["rss", number(result.rss), "", *blank])
    rows.append(["residual sd", number(result.residual_sd), "", *blank])
    if shown:
        figures = result.statistics
        for label, value in (
            ("reduced chi2", figures["reduced_chi2"]),
            ("r2", figures["r2"]),
            ("aic", figures["aic"]),
            ("bic", figures["bic"]),
        ):
            rows.append([label, number(value), "", *blank])
    rows.append(["dof", str(result.dof), "", *blank])
    rows.append(["rows", str(result.n), "", *blank])
    rows.append(["iterations", str(result.iterations), "", *blank])
    if result.restarts:
        reached = f"{result.restarts['reached']} of {result.restarts['starts']}"
        rows.append(["starts", reached, "reached the least rss", *blank])
    if result.loss != "linear":
        scale = f"f_scale {number(result.f_scale)}; stderr approximate"
        rows.append(["loss", result.loss, scale, *blank])
    # the reason last, where its length widens no column of numbers
    rows.append(["converged", "yes" if result.converged else "no", *blank, result.message])
    return rows


# Fits by group (`fit --by COLUMN`): a row per group.


@json_object.register(Fits)
def _(result: Fits) -> list[dict]:
    return [{result.by: group, **json_object(fit)} for group, fit in result.items()]


def _group_names(result: Fits) -> list[str]:
    """The parameters, from the first group (every group has the same)."""
    return list(next(iter(result.values())).parameters) if result else []


def _with_ci(result: Fits) -> bool:
    """Whether the groups have confidence intervals (--ci), which their rows show."""
    return any(fit.ci for fit in result.values())


def _with_stats(result: Fits) -> bool:
    """Whether the rows show the statistics (--stats): each parameter's t and p, and the
    group's reduced chi2, r2, aic and bic."""
    return any(fit.table_statistics for fit in result.values())


_GROUP_STATISTICS = ("reduced_chi2", "r2", "aic", "bic")


def _t_and_p(fit: Fit, name: str, number: Number) -> list[str]:
    """A parameter's t and p as two cells: nan for a group without them, empty for a fixed
    parameter."""
    t, p = fit.statistics.get("t", {}), fit.statistics.get("p", {})
    if name in t:
        return [number(t[name]), number(p[name])]
    return [number(math.nan)] * 2 if not fit.converged else ["", ""]


def _group_statistics(fit: Fit, number: Number) -> list[str]:
    """A group's reduced chi2, r2, aic and bic as cells (nan for a group without them)."""
    figures = cast(dict[str, float], fit.statistics)
    return [number(figures.get(key, math.nan)) for key in _GROUP_STATISTICS]


def _restarted(result: Fits) -> bool:
    """Whether the groups were fitted with restarts (--restarts), which their rows count."""
    return any(fit.restarts for fit in result.values())


def _starts(fit: Fit) -> tuple[int, int]:
    """How many starts a group's fit had and how many reached its least rss."""
    return fit.restarts.get("starts", 0), fit.restarts.get("reached", 0)


def _derived_names(result: Fits) -> list[str]:
    """The quantities of --derive, which every group fitted has (none where none was)."""
    return next((list(fit.derived) for fit in result.values() if fit.derived), [])


def _derived_cells(fit: Fit, name: str, ci: bool, number: Number) -> list[str]:
    """A derived quantity's value and standard error (and interval) as cells: nan for a
    group that has none (not fitted)."""
    quantity = fit.derived.get(name)
    if quantity is None:
        return [number(math.nan)] * (4 if ci else 2)
    cells = [number(quantity["value"]), number(quantity["stderr"])]
    return cells + ([number(x) for x in quantity["ci"]] if ci else [])


def _interval(fit: Fit, name: str, number: Number) -> list[str]:
    """A parameter's interval as two cells: nan for a group without one, empty for a fixed
    parameter."""
    if name in fit.ci:
        return [number(x) for x in fit.ci[name]]
    free = name in fit.statistics.get("t", {}) or not fit.converged
    return [number(math.nan)] * 2 if free else ["", ""]


@csv_header.register(Fits)
def _(result: Fits) -> str:
    ci, stats, names = _with_ci(result), _with_stats(result), _group_names(result)
    columns = [
        column
        for name in [*names, *_derived_names(result)]
        for column in [
            name,
            f"stderr_{name}",
            *([f"t_{name}", f"p_{name}"] if stats and name in names else []),
            *([f"lower_{name}", f"upper_{name}"] if ci else []),
        ]
    ]
    starts = ["starts", "reached"] if _restarted(result) else []
    statistics = list(_GROUP_STATISTICS) if stats else []
    return _csv_line([result.by, *columns, "rss", *statistics, *starts, "converged", "message"])


@csv_rows.register(Fits)
def _(result: Fits) -> list[str]:
    rows = []
    ci, restarted, derived = _with_ci(result), _restarted(result), _derived_names(result)
    stats = _with_stats(result)
    for group, fit in result.items():
        cells = [group_name(group)]
        for name in fit.parameters:
            cells += [csv_number(fit.parameters[name]), csv_number(fit.stderr[name])]
            if stats:
                cells += _t_and_p(fit, name, csv_number)
            if ci:
                cells += _interval(fit, name, csv_number)
        for name in derived:
            cells += _derived_cells(fit, name, ci, csv_number)
        why = "" if fit.converged else fit.message
        cells.append(csv_number(fit.rss))
        if stats:
            cells += _group_statistics(fit, csv_number)
        if restarted:  # (empty for a group not restarted: Ctrl-C came first)
            cells += [str(count) for count in _starts(fit)] if fit.restarts else ["", ""]
        cells += ["true" if fit.converged else "false", why]
        rows.append(_csv_line(cells))
    return rows


@table_rows.register(Fits)
def _(result: Fits, number: Number = repr) -> list[list[str]]:
    names, derived = _group_names(result), _derived_names(result)
    ci, stats = _with_ci(result), _with_stats(result)
    interval = ("lower", "upper") if ci else ()
    starts = ["starts"] if _restarted(result) else []
    columns = [
        c
        for name in [*names, *derived]
        for c in (name, "stderr", *(("t", "p") if stats and name in names else ()), *interval)
    ]
    statistics = ["reduced chi2", "r2", "aic", "bic"] if stats else []
    rows = [[result.by, *columns, "rss", *statistics, *starts, "converged"]]
    for group, fit in result.items():
        cells = [printable(group_name(group))]  # (data: no control character, widths right)
        for name in names:
            se = "at bound" if name in fit.at_bound else number(fit.stderr[name])
            cells += [number(fit.parameters[name]), se]
            if stats:
                cells += _t_and_p(fit, name, number)
            if ci:
                cells += _interval(fit, name, number)
        for name in derived:
            cells += _derived_cells(fit, name, ci, number)
        cells.append(number(fit.rss))
        if stats:
            cells += _group_statistics(fit, number)
        if starts:  # (how many of them reached the least rss; none: not restarted)
            cells.append("{1} of {0}".format(*_starts(fit)) if fit.restarts else "")
        # why a group did not converge: last, where its length widens no column of numbers
        cells.append("yes" if fit.converged else f"no: {fit.message}")
        rows.append(cells)
    return rows
