"""Symbolic derivatives: a program's gradient as expressions in the language itself.

Reverse mode, on expressions instead of numbers: each operation's local derivative comes from
its `formula` in the ops table, parsed by our own parser. Expressions are hash-consed (an
expression that occurs twice is one object), simplified as they are built (constants folded,
`*1`, `+0`, `*0` removed), and printed with each repeated sub-expression bound once to a name.
Nothing here recurses.
"""

from __future__ import annotations

import math

from .engine import Value, apply
from .ops import ADD, CONST, DIV, MUL, NEG, POW, SUB, Op
from .program import Apply, Program
from .results import Hessian


class Expr:
    """An expression node: a constant (op CONST), an input (op None) or an op on args."""

    __slots__ = ("args", "op", "serial", "value")

    def __init__(self, op: Op | None, args: tuple[Expr, ...], value: float | str, serial: int):
        self.op = op
        self.args = args
        self.value = value  # the number of a constant, the name of an input
        self.serial = serial  # creation order: a node comes after its arguments


class Builder:
    """Makes expressions, sharing equal ones and simplifying as it goes."""

    def __init__(self):
        self._interned: dict[tuple, Expr] = {}

    def _make(self, op, args: tuple[Expr, ...], value) -> Expr:
        key = (op.name if op else None, tuple(id(a) for a in args), value)
        node = self._interned.get(key)
        if node is None:
            node = self._interned[key] = Expr(op, args, value, len(self._interned))
        return node

    def const(self, value: float) -> Expr:
        return self._make(CONST, (), float(value) + 0.0)  # -0.0 and 0.0 are one constant

    def var(self, name: str) -> Expr:
        return self._make(None, (), name)

    def apply(self, op: Op, *args: Expr) -> Expr:
        values = [a.value for a in args if a.op is CONST]
        if len(values) == len(args):
            folded = op.forward(*values)
            if math.isfinite(folded):
                return self.const(folded)
        simpler = self._simplify(op, args)
        return simpler if simpler is not None else self._make(op, args, None)

    def _simplify(self, op: Op, args: tuple[Expr, ...]) -> Expr | None:
        def is_const(e: Expr, v: float) -> bool:
            return e.op is CONST and e.value == v

        if op is ADD:
            a, b = args
            return b if is_const(a, 0) else a if is_const(b, 0) else None
        if op is SUB:
            a, b = args
            if is_const(b, 0):
                return a
            if is_const(a, 0):
                return self.apply(NEG, b)
            return self.const(0) if a is b else None
        if op is MUL:
            a, b = args
            if is_const(a, 0) or is_const(b, 0):
                return self.const(0)
            if is_const(a, 1) or is_const(b, 1):
                return b if is_const(a, 1) else a
            if is_const(a, -1) or is_const(b, -1):
                return self.apply(NEG, b if is_const(a, -1) else a)
            return None
        if op is DIV:
            a, b = args
            return a if is_const(b, 1) else self.const(0) if is_const(a, 0) else None
        if op is POW:
            a, b = args
            return a if is_const(b, 1) else self.const(1) if is_const(b, 0) else None
        if op is NEG:
            (a,) = args
            return a.args[0] if a.op is NEG else None
        return None


def from_program(builder: Builder, program: Program, env: dict[str, Expr]) -> list[Expr]:
    """One expression per instruction of `program`, its inputs replaced by `env`'s."""
    return program.interpret(input=env.__getitem__, const=builder.const, apply=builder.apply)


_formulas: dict[Op, list[Program]] = {}


def local_derivatives(builder: Builder, op: Op, args: tuple[Expr, ...]) -> list[Expr]:
    """d(op)/d(each argument), from the op's formulas in the ops table."""
    from .language import parse

    if op not in _formulas:
        _formulas[op] = [parse(formula) for formula in op.formulas]
    env = dict(zip(op.parameters, args, strict=True))
    return [from_program(builder, f, env)[f.result] for f in _formulas[op]]


def gradient(program: Program, wrt: list[str], builder: Builder | None = None) -> dict[str, Expr]:
    """d(result)/d(input) for each input in `wrt`, as expressions (reverse mode)."""
    builder = builder or Builder()
    nodes = from_program(builder, program, {n: builder.var(n) for n in program.inputs})
    code = program.code
    varies = program.varying()
    adjoint: dict[int, Expr] = {program.result: builder.const(1)}
    for i in range(program.result, -1, -1):
        ins = code[i]
        if i not in adjoint or type(ins) is not Apply:
            continue
        local = local_derivatives(builder, ins.op, tuple(nodes[a] for a in ins.args))
        for a, d in zip(ins.args, local, strict=True):
            if varies[a]:
                contribution = builder.apply(MUL, d, adjoint[i])
                previous = adjoint.get(a)
                adjoint[a] = (
                    contribution if previous is None else builder.apply(ADD, previous, contribution)
                )
    slots = program.input_slots
    return {name: adjoint.get(slots[name], builder.const(0)) for name in wrt}


def _reachable(roots: list[Expr]) -> list[Expr]:
    """Every node the roots depend on, arguments before users."""
    seen = {id(r): r for r in roots}
    stack = list(roots)
    while stack:
        for a in stack.pop().args:
            if id(a) not in seen:
                seen[id(a)] = a
                stack.append(a)
    return sorted(seen.values(), key=lambda e: e.serial)


def evaluate(roots: list[Expr], inputs: dict[str, Value]) -> list[Value]:
    """The roots as Value graphs over the given input nodes (so they can be differentiated)."""
    values: dict[int, Value] = {}
    for e in _reachable(roots):
        if e.op is None:
            values[id(e)] = inputs[e.value]
        elif e.op is CONST:
            values[id(e)] = Value.constant(e.value)
        else:
            values[id(e)] = apply(e.op, *(values[id(a)] for a in e.args))
    return [values[id(r)] for r in roots]


# Printing. Precedence: what each node's text binds as, and what each operand needs.
_LOOSEST, _SUM, _PRODUCT, _UNARY, _POWER, _ATOM = range(6)
_BINARY = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT}


def _precedence(e: Expr) -> int:
    if e.op is CONST:
        return _UNARY if e.value < 0 else _ATOM
    if e.op is None or e.op.syntax == "call":
        return _ATOM
    return _UNARY if e.op is NEG else _POWER if e.op is POW else _BINARY[e.op.name]


def _number(x: float) -> str:
    text = repr(x)
    return text[:-2] if text.endswith(".0") else text


class _Printer:
    """Text for expressions, in the language or in LaTeX."""

    def __init__(self, latex: bool):
        self.latex = latex

    def precedence(self, e: Expr) -> int:
        if self.latex and e.op is DIV:
            return _ATOM  # a fraction is one visual unit
        return _precedence(e)

    def wrap(self, text: str, inner: int, needed: int) -> str:
        if inner >= needed:
            return text
        return rf"\left({text}\right)" if self.latex else f"({text})"

    def node(self, e: Expr, text: dict[int, tuple[str, int]]) -> str:
        if e.op is CONST:
            return _number(e.value)
        if e.op is None:
            return e.value
        args = [text[id(a)] for a in e.args]
        if e.op is NEG:
            return "-" + self.wrap(*args[0], _UNARY)
        if e.op.syntax == "call":
            inner = ", ".join(text for text, _ in args)
            if self.latex:
                if e.op.name == "sqrt":
                    return rf"\sqrt{{{inner}}}"
                known = e.op.name in ("exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh")
                name = rf"\{e.op.name}" if known else rf"\operatorname{{{e.op.name}}}"
                return rf"{name}\left({inner}\right)"
            return f"{e.op.name}({inner})"
        (a, pa), (b, pb) = args
        if e.op is POW:
            if self.latex:
                return f"{{{self.wrap(a, pa, _ATOM)}}}^{{{b}}}"
            return f"{self.wrap(a, pa, _ATOM)}**{self.wrap(b, pb, _UNARY)}"
        if self.latex and e.op is DIV:
            return rf"\frac{{{a}}}{{{b}}}"
        level = _BINARY[e.op.name]
        symbol = r" \cdot " if self.latex and e.op is MUL else f" {e.op.name} "
        return self.wrap(a, pa, level) + symbol + self.wrap(b, pb, level + 1)


def to_source(roots: dict[str, Expr], latex: bool = False) -> str:
    """Statements that compute the roots: each repeated sub-expression bound once to a name
    (t1, t2, ...), then one `NAME = expression` per root (the last is the result)."""
    order = _reachable(list(roots.values()))
    uses: dict[int, int] = {}
    for e in order:
        for a in e.args:
            uses[id(a)] = uses.get(id(a), 0) + 1
    taken = {e.value for e in order if e.op is None}
    printer = _Printer(latex)
    text: dict[int, tuple[str, int]] = {}  # node -> (its text, its precedence)
    lines: list[str] = []
    counter = 0
    for e in order:
        text[id(e)] = (printer.node(e, text), printer.precedence(e))
        if uses.get(id(e), 0) > 1 and e.args:
            counter += 1
            while f"t{counter}" in taken:
                counter += 1
            name = f"t_{{{counter}}}" if latex else f"t{counter}"
            lines.append(f"{name} = {text[id(e)][0]}")
            text[id(e)] = (name, _ATOM)
    if len(roots) == 1:  # one derivative: the last line is the expression itself
        (root,) = roots.values()
        return "\n".join([*lines, text[id(root)][0]])
    lines += [f"{name} = {text[id(root)][0]}" for name, root in roots.items()]
    return "\n".join(lines)


def derivative_names(wrt: list[str], taken: set[str]) -> dict[str, str]:
    """A name for each derivative that is free in the source: d_x, or d_x_ if d_x is taken."""
    names = {}
    for w in wrt:
        name = f"d_{w}"
        while name in taken:
            name += "_"
        names[w] = name
    return names


def derivatives_text(program: Program, wrt: list[str], latex: bool = False) -> str:
    """The derivative by each input in `wrt` (all when empty) as `diff` prints it: with one,
    a source whose result is the derivative; else one `d_NAME = ...` line each."""
    names = wrt or program.inputs
    gradients = gradient(program, names)
    labels = derivative_names(names, set(program.inputs))
    return to_source({labels[n]: gradients[n] for n in names}, latex=latex)


def hessian(program: Program, values: dict[str, float]) -> Hessian:
    """The value, gradient and Hessian at `values`, the Hessian by differentiating the
    symbolic gradient (reverse over reverse)."""
    first = program.grad(values)
    names = program.inputs
    grads = gradient(program, names)
    inputs = {n: Value(values[n]) for n in names}
    rows = evaluate([grads[n] for n in names], inputs)
    matrix = {}
    for name, row in zip(names, rows, strict=True):
        for node in inputs.values():
            node.grad = 0.0
        row.backward()
        matrix[name] = {n: inputs[n].grad for n in names}
    return Hessian(first.value, first.inputs, first.gradients, matrix, first.non_finite)
