"""Plain writers: JSON, CSV and aligned text. Pure functions from a Result to a string."""

from __future__ import annotations

import json
import math


class Result:
    """What `grad` reports at one point: the value, the inputs and the gradients asked for."""

    def __init__(self, value: float, inputs: dict[str, float], gradients: dict[str, float]):
        self.value = value
        self.inputs = inputs
        self.gradients = gradients


def number(x: float) -> float | str:
    """A float as JSON allows it: non-finite numbers become the strings nan, inf, -inf."""
    return x if math.isfinite(x) else repr(x)


def to_json(result: Result) -> str:
    """One JSON object: {"value": .., "inputs": {..}, "gradients": {..}}, full precision."""
    return json.dumps(
        {
            "value": number(result.value),
            "inputs": {k: number(v) for k, v in result.inputs.items()},
            "gradients": {k: number(v) for k, v in result.gradients.items()},
        },
        allow_nan=False,
    )


def csv_header(names: list[str]) -> str:
    """`value,d_x,d_y,...`"""
    return ",".join(["value", *(f"d_{name}" for name in names)])


def csv_row(result: Result, names: list[str]) -> str:
    """The value and the gradients with respect to `names` (0 for a name it does not read)."""
    return ",".join(repr(x) for x in [result.value, *(result.gradients.get(n, 0.0) for n in names)])


def plain_table(rows: list[list[str]]) -> str:
    """Rows of cells as left-aligned columns separated by two spaces, no trailing blanks."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def table_rows(result: Result) -> list[list[str]]:
    """The table of one result: a header, the result, then each input's value and gradient."""
    rows = [["", "value", "gradient"], ["result", repr(result.value), ""]]
    for name, value in result.inputs.items():
        gradient = result.gradients.get(name)
        rows.append([name, repr(value), "" if gradient is None else repr(gradient)])
    return rows


def lines_table_rows(results: list[tuple[str, Result]], names: list[str]) -> list[list[str]]:
    """The table of `--each-line`: one row per expression, its value and its gradients."""
    rows = [["expression", "value", *(f"d_{name}" for name in names)]]
    for expression, result in results:
        grads = [repr(result.gradients.get(n, 0.0)) for n in names]
        rows.append([expression, repr(result.value), *grads])
    return rows


def to_json_object(obj: dict) -> str:
    """Any result object as one line of JSON, non-finite numbers as strings."""

    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        return number(v) if isinstance(v, float) else v

    return json.dumps(clean(obj), allow_nan=False)


def hessian_rows(value: float, gradients: dict, matrix: dict) -> list[list[str]]:
    """Result, then per input: its gradient and its row of the Hessian."""
    names = list(matrix)
    rows = [
        ["", "gradient", *(f"d_{n}" for n in names)],
        ["result", repr(value), *[""] * len(names)],
    ]
    for n in names:
        rows.append([n, repr(gradients[n]), *(repr(matrix[n][m]) for m in names)])
    return rows


def hessian_csv(matrix: dict) -> str:
    """`wrt,d_x,d_y` then one row per input: `d_x,H_xx,H_xy`."""
    names = list(matrix)
    lines = [",".join(["wrt", *(f"d_{n}" for n in names)])]
    lines += [",".join([f"d_{n}", *(repr(matrix[n][m]) for m in names)]) for n in names]
    return "\n".join(lines)


CHECK_FIELDS = ("analytic", "numeric", "abs_error", "rel_error", "pass")


def check_rows(checks: dict) -> list[list[str]]:
    rows = [["input", *CHECK_FIELDS]]
    for name, c in checks.items():
        rows.append(
            [
                name,
                *(repr(c[f]) if f != "pass" else ("yes" if c[f] else "NO") for f in CHECK_FIELDS),
            ]
        )
    return rows


def check_csv(checks: dict) -> str:
    lines = [",".join(["input", *CHECK_FIELDS])]
    for name, c in checks.items():
        lines.append(
            ",".join(
                [name, *(repr(c[f]) if f != "pass" else str(c[f]).lower() for f in CHECK_FIELDS)]
            )
        )
    return "\n".join(lines)


def minimize_csv(summary: dict) -> str:
    """`value,x,...,d_x,...,gradient_norm,steps,converged` and one line."""
    names = list(summary["inputs"])
    header = ["value", *names, *(f"d_{n}" for n in names), "gradient_norm", "steps", "converged"]
    row = [
        repr(summary["value"]),
        *(repr(summary["inputs"][n]) for n in names),
        *(repr(summary["gradients"][n]) for n in names),
        repr(summary["gradient_norm"]),
        str(summary["steps"]),
        str(summary["converged"]).lower(),
    ]
    return ",".join(header) + "\n" + ",".join(row)


def minimize_rows(summary: dict) -> list[list[str]]:
    """The final point's table, then the gradient's norm and the steps taken."""
    rows = table_rows(Result(summary["value"], summary["inputs"], summary["gradients"]))
    rows.append(["gradient norm", repr(summary["gradient_norm"]), ""])
    done = "converged" if summary["converged"] else "step limit"
    rows.append(["steps", str(summary["steps"]), done])
    return rows
