"""Writers for `explain`: the forward and backward passes as tables (Rich on a terminal, plain
text in a pipe), Markdown, LaTeX and JSON. Pure functions of an `Explanation`, but for the
terminal writer, which prints."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

from ..results import BackwardStep, Explanation, ForwardStep, LocalDerivative
from ._text import number as json_number
from ._text import plain_table

Number = Callable[[float], str]

FORWARD_HEADER = ["node", "value"]
BACKWARD_HEADER = ["node", "gradient", "argument", "local", "value", "product"]
# What the backward pass shows for a source that reads no input.
NOTHING_TO_DIFFERENTIATE = "the source reads no input: there is nothing to differentiate"
# The columns that hold expressions (left-aligned, and code in Markdown); the others numbers.
FORWARD_TEXT = (0,)
BACKWARD_TEXT = (0, 2, 3)


def shown(step: ForwardStep) -> str:
    """A forward step as the table shows it: `q₂ = q₁ + 1`, or the expression alone."""
    node, expression = step.node.text, step.expression.text
    return node if node == expression else f"{node} = {expression}"


def signed(term: str) -> str:
    """A number as a term after the first of a sum: `+ 0.07`, `- 0.5` (not `+ -0.5`)."""
    return f"- {term[1:]}" if term.startswith("-") else f"+ {term}"


def written_sum(terms: list[str]) -> str:
    """Numbers as a sum on one line: `3.0 + 0.07 - 0.5`."""
    return " ".join([terms[0], *map(signed, terms[1:])])


def gradient_cells(step: BackwardStep, number: Number) -> list[str]:
    """A node's gradient, a cell per row: where several contributions make it, the sum
    written out a term per row, as an addition is written on paper, then `= total`."""
    if len(step.contributions) < 2:
        return [number(step.gradient)]
    first, *rest = (number(c) for c in step.contributions)
    return [first, *map(signed, rest), f"= {number(step.gradient)}"]


def local_text(d: LocalDerivative) -> str:
    """A local derivative's formula, with the condition where it holds when it does not at
    the point (the value is the engine's there): `x**y*log(x)  # x > 0`."""
    return f"{d.formula.text}  # {d.domain.text}" if d.domain else d.formula.text


def forward_rows(result: Explanation, number: Number = repr) -> list[list[str]]:
    """The forward pass: a row per node, in the order the nodes are computed."""
    return [FORWARD_HEADER, *([shown(step), number(step.value)] for step in result.forward)]


def backward_rows(result: Explanation, number: Number = repr) -> list[list[str]]:
    """The backward pass: per node, in the order the engine visits them, its gradient and
    then, from the row showing its total, a row per argument: local derivative, its value,
    and the product of the two."""
    rows = [BACKWARD_HEADER]
    for step in result.backward:
        *terms, total = gradient_cells(step, number)
        derivatives = [
            [d.argument.text, local_text(d), number(d.local), number(d.product)]
            for d in step.local_derivatives
        ] or [["", "", "", ""]]
        node = step.node.text  # on the first row only
        for term in terms:
            rows.append([node, term, "", "", "", ""])
            node = ""
        rows.append([node, total, *derivatives[0]])
        rows += (["", "", *cells] for cells in derivatives[1:])
    return rows


def plain(result: Explanation, number: Number = repr) -> str:
    """Both passes as aligned plain text, numbers by `number` (full precision by default):
    what a pipe gets."""
    backward = plain_table(backward_rows(result, number)) if result.backward else None
    return "\n".join(
        [
            "forward pass",
            plain_table(forward_rows(result, number)),
            "",
            "backward pass",
            backward or NOTHING_TO_DIFFERENTIATE,
            *rounding_note(result, number),
        ]
    )


def unsigned_zero(number: Number) -> Number:
    """`number`, but for -0.0, written 0 as a page writes it (0 times a negative number)."""
    return lambda x: number(x + 0.0)  # -0.0 + 0.0 is 0.0; every other x is itself


def written(result: Explanation, fmt: str, number: Number = repr, null: bool = False) -> str:
    """Both passes as `fmt` writes them: a plain table, Markdown, LaTeX or JSON."""
    if fmt == "json":
        return to_json(result, null)
    number = unsigned_zero(number)
    if fmt == "markdown":
        return markdown(result, number)
    if fmt == "latex":
        return latex(result, number)
    return plain(result, number)


def print_tables(result: Explanation, digits: str | None) -> None:
    """Both passes as Rich tables on standard output, each in the most digits that fit (or
    in `digits`, with the note where rounded terms do not add up)."""
    from ._table import number_formats, print_table

    tables = [
        ("forward pass", lambda n: forward_rows(result, unsigned_zero(n)), FORWARD_TEXT),
        ("backward pass", lambda n: backward_rows(result, unsigned_zero(n)), BACKWARD_TEXT),
    ]
    for title, make_rows, text_columns in tables[: 2 if result.backward else 1]:
        print_table(make_rows, digits, title, frozenset(text_columns))
    if not result.backward:
        print(f"\nbackward pass: {NOTHING_TO_DIFFERENTIATE}")
    if digits is not None:  # the digits every table shows
        for line in rounding_note(result, unsigned_zero(number_formats(digits)[0])):
            print(line)


def markdown(result: Explanation, number: Number = repr) -> str:
    """Both passes as Markdown tables, expressions as code."""

    def table(rows: list[list[str]], text_columns: tuple[int, ...]) -> list[str]:
        rule = ["---" if i in text_columns else "---:" for i in range(len(rows[0]))]
        lines = [rows[0], rule]
        for row in rows[1:]:
            lines.append([f"`{c}`" if c and i in text_columns else c for i, c in enumerate(row)])
        return ["| " + " | ".join(cells) + " |" for cells in lines]

    return "\n".join(
        [
            "**Forward pass**",
            "",
            *table(forward_rows(result, number), FORWARD_TEXT),
            "",
            "**Backward pass**",
            "",
            *(
                table(backward_rows(result, number), BACKWARD_TEXT)
                if result.backward
                else [NOTHING_TO_DIFFERENTIATE]
            ),
            *(["", *note] if (note := rounding_note(result, number)) else []),
        ]
    )


# A LaTeX term that needs no parentheses after \partial: a name, a version of one, a number,
# or a function called on arguments, \tanh(x).
_ATOMIC = re.compile(
    r"(?:[A-Za-z]|\\[A-Za-z]+|\\mathrm\{[^{}]*\}|\\hat\{f\})(?:_\{[^{}]*\})?|[\d.]+"
)
_CALL = re.compile(r"\\(?:[A-Za-z]+|operatorname\{[A-Za-z0-9]+\})\(")


def atomic(tex: str) -> bool:
    """Whether a LaTeX term reads as one unit: a name, a number, one call, `\\tanh(x)`, or
    an Iverson bracket, `[x > 0]`."""
    if _ATOMIC.fullmatch(tex):
        return True
    call = _CALL.match(tex) or (re.match(r"\[", tex))
    if not call:
        return False
    depth = 0
    for k in range(call.end() - 1, len(tex)):
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(tex[k], 0)
        if depth == 0:
            return k == len(tex) - 1  # the call's parenthesis closes the term
    return False


def latex_number(text: str) -> str:
    """A number as printed (repr or %g) in LaTeX: 1e-07 as 1 \\cdot 10^{-7}, 2.0 as 2."""
    if text in ("nan", "inf", "-inf"):
        return {"nan": r"\mathrm{nan}", "inf": r"\infty", "-inf": r"-\infty"}[text]
    mantissa, e, exponent = text.partition("e")
    if mantissa.endswith(".0"):
        mantissa = mantissa[:-2]
    return rf"{mantissa} \cdot 10^{{{int(exponent)}}}" if e else mantissa


def latex(result: Explanation, number: Number = repr) -> str:
    """Both passes as displayed equations (amsmath), each line within an article page's
    text width (`latex_lines`): the forward values, then per node of the backward pass its
    gradient and, per argument, the local derivative beside the product. A comparison is an
    Iverson bracket, [x > 0]; where one node is two arguments (x^x), a local derivative is by
    the op's parameter, evaluated at the arguments."""
    from .._latex_lines import equations

    def num(x: float) -> str:
        return latex_number(number(x))

    def factor(x: float) -> str:
        text = num(x)
        return rf"\left({text}\right)" if text.startswith("-") else text

    def partial(of: str, by: str) -> str:
        of, by = (t if atomic(t) else rf"\left({t}\right)" for t in (of, by))
        if r"\frac" in of:  # one fraction beside another, not inside it
            return rf"\frac{{\partial}}{{\partial {by}}} {of}"
        return rf"\frac{{\partial {of}}}{{\partial {by}}}"

    forward = []
    for ahead in result.forward:
        node, expression = ahead.node.latex, ahead.expression.latex
        forward.append((node if node == expression else f"{node} = {expression}", num(ahead.value)))

    f = result.result.latex
    # A local derivative is of the node's operation: for an unnamed result, written f in
    # gradients (df/d(x y)), the operation is written out (d(x y + tanh(x))/d(x y)).
    last = next((s for s in result.forward if s.node == result.result), None)
    unnamed = last is not None and last.node.text == last.expression.text
    operation = {f: last.expression.latex} if last is not None and unnamed else {}
    backward = []
    for step in result.backward:
        of = step.node.latex
        gradient = num(step.gradient)
        if len(step.contributions) > 1:
            gradient = f"{written_sum([num(c) for c in step.contributions])} = {gradient}"
        rows = [(partial(f, of), gradient)]
        for d in step.local_derivatives:
            value = num(d.local)
            formula = value if d.formula.latex == value else f"{d.formula.latex} = {value}"
            if d.domain:  # the formula does not hold here: the value is the engine's
                formula = (
                    rf"{value} \quad \left({d.formula.latex} \text{{ for }} {d.domain.latex}\right)"
                )
            product = f"{factor(d.local)} \\cdot {factor(step.gradient)} = {num(d.product)}"
            local = d.by.latex if d.by else partial(operation.get(of, of), d.argument.latex)
            rows.append((local, f"{formula}, \\qquad {product}"))
        backward.append(rows)

    rounded = [partial(f, step.node.latex) for step in sums_not_shown(result, number)]
    note = (
        [
            rf"\noindent Rounded, the terms of ${'$, $'.join(rounded)}$ do not add up to the "
            "total shown: the total is the sum of the unrounded terms."
        ]
        if rounded
        else []
    )
    return "\n".join(
        [
            "% Forward pass",
            *equations(forward),
            f"% Backward pass: the gradient of {f} with respect to each node"
            if backward
            else f"% Backward pass: {NOTHING_TO_DIFFERENTIATE}",
            *(line for rows in backward for line in equations(rows)),
            *note,
        ]
    )


def sums_not_shown(result: Explanation, number: Number) -> list[BackwardStep]:
    """The nodes whose gradient, a sum of several terms, is not the sum of the terms as
    `number` rounds them, rounded the same way (at 3 digits, 1.25 + 1.25 shown 1.25 + 1.25
    = 2.5, but 1.254 + 1.254 shown 1.25 + 1.25 = 2.51)."""
    found = []
    for step in result.backward:
        if len(step.contributions) > 1 and math.isfinite(step.gradient):
            shown = sum(float(number(c)) for c in step.contributions)
            if number(shown) != number(step.gradient):
                found.append(step)
    return found


def rounding_note(result: Explanation, number: Number) -> list[str]:
    """A line saying which nodes' gradients are not the sum of their terms as shown."""
    nodes = [step.node.text for step in sums_not_shown(result, number)]
    if not nodes:
        return []
    return [
        f"note: rounded, the terms of the gradient of {', '.join(nodes)} do not add up to "
        "the total shown: the total is the sum of the unrounded terms"
    ]


def to_json(result: Explanation, null: bool = False) -> str:
    """One JSON object: value, inputs and gradients as `grad` gives them, and every step of
    both passes, numbers at full precision (nan, inf, -inf as strings, or with `null`,
    null)."""

    def n(x: float) -> float | str | None:
        return json_number(x, null)

    data = {
        "value": n(result.value),
        "inputs": {name: n(x) for name, x in result.inputs.items()},
        "gradients": {name: n(x) for name, x in result.gradients.items()},
        "forward": [
            {"node": s.node.text, "expression": s.expression.text, "value": n(s.value)}
            for s in result.forward
        ],
        "backward": [
            {
                "node": s.node.text,
                "gradient": n(s.gradient),
                "contributions": [n(c) for c in s.contributions],
                "local_derivatives": [
                    {
                        "argument": d.argument.text,
                        "formula": d.formula.text,
                        **({"domain": d.domain.text} if d.domain else {}),
                        **({"by": d.by.text} if d.by else {}),
                        "local": n(d.local),
                        "product": n(d.product),
                    }
                    for d in s.local_derivatives
                ],
            }
            for s in result.backward
        ],
    }
    return json.dumps(data, allow_nan=False)
