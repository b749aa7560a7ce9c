"""Symbolic derivatives: a program's gradient as expressions in the language itself.

Reverse mode, on expressions instead of numbers: each operation's local derivative comes from
its `formula` in the ops table, parsed by our own parser. Expressions are built in a canonical
form that simplifies them as they are made (`algebra.Builder`: constants folded, like terms
and powers collected, common factors cancelled), laid out as a person writes them
(`algebra.layout`) and printed with each large repeated sub-expression bound once to a name
(`formula`). Nothing here recurses.
"""

from __future__ import annotations

from .algebra import INPUT, NUMBER, Builder, Expr, layout, reachable
from .engine import Value, apply
from .formula import write
from .ops import ADD, MUL, Op
from .program import Apply, Program
from .results import Hessian


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


def evaluate(roots: list[Expr], inputs: dict[str, Value]) -> list[Value]:
    """The roots, as printed, as Value graphs over the given input nodes (so they can be
    differentiated)."""
    shown = layout(roots)
    values: dict[int, Value] = {}
    for e in reachable(shown):
        if e.kind == INPUT:
            values[id(e)] = inputs[e.value]
        elif e.kind == NUMBER:
            values[id(e)] = Value.constant(e.value)
        else:
            values[id(e)] = apply(e.op, *(values[id(a)] for a in e.args))
    return [values[id(r)] for r in shown]


def to_source(roots: dict[str, Expr], latex: bool = False) -> str:
    """Statements that compute the roots: each large repeated sub-expression bound once to a
    name (t1, t2, ...), then, for one root, its expression, or one `NAME = expression` per
    root (the last is the result)."""
    shown = layout(list(roots.values()))
    return write(dict(zip(roots, shown, strict=True)), latex=latex)


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
