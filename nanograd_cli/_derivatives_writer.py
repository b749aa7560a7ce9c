"""The ops' local derivatives in Python, written from the formulas of the ops table.

Each row of `ops.OPS` writes its derivatives in the language (`Op.formulas`). Here they are
parsed by the language's parser and written out as Python, one function per op,
`(*parameters, out) -> (d/d argument 1, ...)` with the op's own value as `out` (where a
formula calls the op on its parameters, as `tan(x)` in tan's `1 + tan(x)**2`, it reads `out`),
into `_derivatives.py`, which _ops.py reads. The engine, forward mode, `explain` and the
compiled code call them on every step, so they are plain Python, stored: no parsing when a
program runs, and the parser (which reads the ops table) stays above it.

The written code keeps the formula's arithmetic step for step, with these exceptions, each the
same number or a nearer one:
- a number computed from numbers alone (`log(2)`, `2/sqrt(pi)`) is computed once, here;
- `t**2` is `t*t`, which is correctly rounded where C's pow(t, 2) is not always (1 random
  double in 1,000 differs by an ulp);
- `/` is `a / b`, and ops.divide where b is 0 (where Python raises);
- `where(c, a, b)` and the comparisons are conditional expressions.
A sub-expression used twice is computed once. No text of a formula reaches the code but as
a comment: names come from the parameters, `out`, the ops' keys and `t1, t2, ...`; numbers
are written by `repr`.

Regenerate after adding an op or editing a formula: python -m nanograd_cli._derivatives_writer
(tests/test_derivatives.py fails until the stored file is the one this writes).
"""

from __future__ import annotations

import math
import os

from ._algebra import CALL, INPUT, NUMBER, Expr, Written, reachable
from ._language import parse
from ._ops import ADD, COMPARISONS, DIV, MUL, NEG, OPS, POW, SUB, WHERE, Op

PATH = os.path.join(os.path.dirname(__file__), "_derivatives.py")
OUT = "out"  # the op's own value

# The name of each op's function in the written code, where its key is no Python name.
NAMES = {
    "/": "divide",
    "**": "power",
    "%": "mod",
    "log/2": "log_base",
    "neg": "negate",
    "<": "less",
    "<=": "less_equal",
    ">": "greater",
    ">=": "greater_equal",
    "==": "equal",
    "!=": "not_equal",
    "+": "add",
    "-": "subtract",
    "*": "multiply",
}
_SYMBOLS = {ADD: "+", SUB: "-", MUL: "*"}
_RELATIONS = {OPS[k]: k for k in ("<", "<=", ">", ">=", "==", "!=")}


def name_of(key: str) -> str:
    """The Python name of the op `key`'s forward function in the written code."""
    name = NAMES.get(key, key)
    if not name.isidentifier():
        raise KeyError(f"the op {key!r} needs a Python name in NAMES in {__name__}")
    return name


def function_name(key: str) -> str:
    """The name of the op `key`'s derivative function in the written code."""
    return "d_" + name_of(key)


def _keys() -> dict[Op, str]:
    return {op: key for key, op in OPS.items()}


def _literal(x: float) -> str:
    if x != x:
        return "NAN"
    if math.isinf(x):
        return "INF" if x > 0 else "(-INF)"
    text = repr(float(x))
    return f"({text})" if text.startswith("-") else text


def _folded(e: Expr, values: dict[int, float]) -> float | None:
    """The value of a node made of numbers alone, computed as the program would."""
    if e.kind == NUMBER:
        return float(e.value)
    if e.kind == CALL and all(id(a) in values for a in e.args):
        return e.op.forward(*(values[id(a)] for a in e.args))
    return None


def function_source(key: str, op: Op) -> tuple[str, set[str]]:
    """The Python source of the op's derivative function, and the op names it calls."""
    if len(op.formulas) != op.arity:
        raise KeyError(f"the op {key!r} needs a formula per argument in _ops.py")
    written = Written()
    value = written.op(op, *map(written.input, op.parameters))
    roots = [written.program(parse(formula)) for formula in op.formulas]
    nodes = reachable(roots)
    uses: dict[int, int] = {}
    for e in nodes:
        for a in e.args:
            uses[id(a)] = uses.get(id(a), 0) + 1
    for root in roots:
        uses[id(root)] = uses.get(id(root), 0) + 1
    keys = _keys()
    text: dict[int, str] = {}
    numbers: dict[int, float] = {}
    lines: list[str] = []
    called: set[str] = set()
    taken = set(op.parameters) | {OUT}

    def atom(e: Expr) -> str:
        """The node's text as a name or a number, binding it to a name if it is neither."""
        t = text[id(e)]
        if t.isidentifier() or e.kind == NUMBER or id(e) in numbers:
            return t
        name = f"t{len(lines) + 1}"
        lines.append(f"    {name} = {t}")
        text[id(e)] = name
        return name

    for e in nodes:
        if e is value:
            text[id(e)] = OUT
            continue
        number = _folded(e, numbers)
        if number is not None:
            numbers[id(e)] = number
            text[id(e)] = _literal(number)
            continue
        if e.kind == INPUT:
            text[id(e)] = e.value
            continue
        args = [text[id(a)] for a in e.args]
        o = e.op
        if o in _SYMBOLS:
            t = f"({args[0]} {_SYMBOLS[o]} {args[1]})"
        elif o is NEG:
            t = f"(-{args[0]})"
        elif o is DIV:
            b = atom(e.args[1])
            a = args[0]
            if id(e.args[1]) in numbers and numbers[id(e.args[1])] != 0.0:
                t = f"({a} / {b})"
            else:
                called.add("/")
                t = f"({a} / {b} if {b} else divide({a}, {b}))"
        elif o is POW and id(e.args[1]) in numbers and numbers[id(e.args[1])] == 2.0:
            a = atom(e.args[0])
            t = f"({a} * {a})"
        elif o in COMPARISONS:
            t = f"(1.0 if {args[0]} {_RELATIONS[o]} {args[1]} else 0.0)"
        elif o is WHERE:
            t = f"({args[1]} if {args[0]} != 0.0 else {args[2]})"
        else:
            k = keys[o]
            called.add(k)
            t = f"{name_of(k)}({', '.join(args)})"
        text[id(e)] = t
        if uses.get(id(e), 0) > 1:
            atom(e)
    clash = taken & {name_of(k) for k in called}
    if clash:
        raise KeyError(f"the op {key!r}: its parameter {sorted(clash)[0]} names an op")
    results = [text[id(r)] for r in roots]
    parameters = ", ".join([*op.parameters, OUT])
    returned = ", ".join(results) + ("," if len(results) == 1 else "")
    head = f"def {function_name(key)}({parameters}):  # {'; '.join(op.formulas)}"
    return "\n".join([head, *lines, f"    return ({returned})"]) + "\n", called


def _indented(source: str) -> str:
    return "".join(f"    {line}\n" if line else "\n" for line in source.splitlines())


def module_source() -> str:
    """The text of _derivatives.py for the ops table as it is."""
    functions, calls = [], set()
    for key, op in OPS.items():
        source, called = function_source(key, op)
        functions.append(_indented(source))
        calls |= called
    bound = "".join(f"    {name_of(k)} = forward[{k!r}]\n" for k in sorted(calls, key=name_of))
    table = "".join(f"        {key!r}: {function_name(key)},\n" for key in OPS)
    formulas = "".join(f"    {key!r}: {op.formulas!r},\n" for key, op in OPS.items())
    return (
        '"""Written by `python -m nanograd_cli._derivatives_writer` from the formulas of the '
        "ops table (_ops.py):\ndo not edit. Each op's local derivatives as its formulas write "
        'them, the op\'s own value as `out`."""\n\n'
        "# ruff: noqa\n"
        "# fmt: off\n\n"
        'INF = float("inf")\nNAN = float("nan")\n\n'
        "# The formulas each function was written from, per key of ops.OPS: _ops.py uses a "
        "function only\n# while its row still has these.\n"
        f"FORMULAS = {{\n{formulas}}}\n\n\n"
        "def derivatives(forward):\n"
        '    """Per key of ops.OPS, its derivative function; `forward` holds each op\'s '
        'forward\n    function by its key."""\n'
        f"{bound}\n" + "\n".join(functions) + f"\n    return {{\n{table}    }}\n"
    )


def main() -> None:
    with open(PATH, "w", encoding="utf-8") as file:
        file.write(module_source())
    print(f"wrote {PATH}")


if __name__ == "__main__":
    main()
