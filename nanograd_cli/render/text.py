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
