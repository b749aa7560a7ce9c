"""The ops table in JavaScript, for the live page: each op's forward and local derivatives,
written from its row of `_ops.py` when a page is built (once per op, then cached).

The forward calls the op's function in ops.js, which has the op's name unless FORWARD names
another; +, -, *, / and negation are JavaScript's operators. The local derivatives are the
row's `formulas`, parsed by the language's parser and written by `formula.javascript`, with
the op's own value as `out` (as the engine uses it). OVERRIDES holds the few written by hand.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources

from .._algebra import Expr, Written
from .._formula import javascript
from .._language import parse
from .._ops import OPS, Op
from ..errors import SourceError

# Per key of ops.OPS, the op's function in ops.js where it is not named as the op.
FORWARD: dict[str, str] = {
    "**": "power",
    "pow": "power",
    "log/2": "logBase",
    "%": "mod",
    "<": "less",
    "<=": "lessEqual",
    ">": "greater",
    ">=": "greaterEqual",
    "==": "equal",
    "!=": "notEqual",
}

# Local derivatives written by hand, per key of ops.OPS: a JavaScript array in the op's
# parameters and `out`. Only where the engine computes one in a way its formula does not say.
OVERRIDES: dict[str, str] = {}

OUT = "out"  # the op's value, in the derivatives
_CALLED = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)\(")


@functools.cache
def helpers() -> str:
    """ops.js: the functions the ops call."""
    return resources.files(__package__).joinpath("ops.js").read_text(encoding="utf-8")


@functools.cache
def defined() -> frozenset[str]:
    """The names ops.js declares at its top level (`function f`, `const f = ..., g = ...`)."""
    names: set[str] = set()
    for line in helpers().splitlines():
        if match := re.match(r"function (\w+)", line):
            names.add(match[1])
        elif line.startswith("const "):
            names.update(re.findall(r"(?:^const|,) (\w+) = ", line))
    return frozenset(names)


def called(code: str) -> set[str]:
    """The functions a piece of JavaScript calls by a bare name (not `Math.exp`)."""
    return set(_CALLED.findall(code))


def _functions(key: str, op: Op) -> dict[Op, str]:
    """The function in ops.js of every op of the table, and of `op`."""
    functions = {o: FORWARD.get(k, o.name) for k, o in OPS.items()}
    functions[op] = FORWARD.get(key, op.name)
    return functions


def _applied(written: Written, op: Op) -> Expr:
    """The op applied to its parameters."""
    return written.op(op, *map(written.input, op.parameters))


def formula_javascript(key: str, op: Op) -> str:
    """The op's local derivatives as its formulas write them, a JavaScript array over its
    parameters and `out`; a KeyError says what is missing."""
    if len(op.formulas) != op.arity:
        raise KeyError(
            f"the op {key!r} has no JavaScript derivative: it needs a formula per argument "
            "in _ops.py, or a row in OVERRIDES in nanograd_cli/render/_ops_js.py"
        )
    written = Written()
    value = _applied(written, op)
    try:
        roots = [written.program(parse(formula)) for formula in op.formulas]
    except SourceError as error:
        raise KeyError(f"the op {key!r} has no JavaScript derivative: {error}") from None
    return "[" + ", ".join(javascript(roots, _functions(key, op), {value: OUT})) + "]"


@functools.cache
def op_javascript(key: str, op: Op) -> tuple[str, str]:
    """The op's forward (over its parameters) and its local derivatives (an array, over its
    parameters and `out`) in JavaScript; a KeyError names the op and what it lacks."""
    (forward,) = javascript([_applied(Written(), op)], _functions(key, op))
    derivative = OVERRIDES.get(key) or formula_javascript(key, op)
    missing = sorted(called(forward + derivative) - defined())
    if missing:
        raise KeyError(
            f"the op {key!r} has no JavaScript: nanograd_cli/render/ops.js defines no "
            + ", ".join(missing)
        )
    return forward, derivative


def ops_script(keys: list[str]) -> str:
    """JavaScript that defines `OPS`: per key of ops.OPS, `f` (the forward function) and `d`
    (the local derivatives, as an array, given the arguments and the forward value). The
    functions of ops.js stay inside it, out of the way of the page's names."""
    rows = []
    for key in keys:
        if key not in OPS:
            raise KeyError(f"the op {key!r} has no JavaScript: it is not in the ops table")
        forward, derivative = op_javascript(key, OPS[key])
        parameters = ", ".join(OPS[key].parameters)
        rows.append(
            f"  {json.dumps(key)}: {{f: ({parameters}) => {forward}, "
            f"d: ({parameters}, {OUT}) => {derivative}}},"
        )
    return "const OPS = (() => {\n" + helpers() + "return {\n" + "\n".join(rows) + "\n};\n})();\n"
