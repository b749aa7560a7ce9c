"""Symbolic derivatives: a program's gradient as expressions in the language itself.

Reverse mode, on expressions instead of numbers: each operation's local derivative comes from
its `formula` in the ops table, parsed by our own parser. Expressions are built in a canonical
form that simplifies them as they are made (`algebra.Builder`: constants folded, like terms
and powers collected, common factors cancelled), laid out as a person writes them
(`algebra.layout`) and printed with each large repeated sub-expression bound once to a name
(`formula`). Nothing here recurses.
"""

from __future__ import annotations

from .algebra import CALL, INPUT, NUMBER, SUM, Builder, Expr, layout, reachable
from .engine import Value, apply
from .formula import write
from .ops import ADD, MUL, WHERE, Op
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
    """d(result)/d(input) for each input in `wrt`, as expressions (reverse mode).

    A `where(c, a, b)` passes its adjoint g on as where(c, g, 0) to a and where(c, 0, g) to b
    (nothing to c), and such a guard stays outermost as the adjoint flows on: a local
    derivative d times where(c, g, 0) is where(c, d*g, 0). So the branch not taken adds 0, not
    0 times its derivatives (nan where the branch is nan), as in the engine."""
    builder = builder or Builder()
    nodes = from_program(builder, program, {n: builder.var(n) for n in program.inputs})
    code = program.code
    varies = program.varying()
    adjoint: dict[int, Expr] = {program.result: builder.const(1)}
    guards = _Guards(builder)
    for i in range(program.result, -1, -1):
        ins = code[i]
        if i not in adjoint or type(ins) is not Apply:
            continue
        if ins.op is WHERE:
            c, a, b = ins.args
            taken = [(a, True), (b, False)]
            contributions = [(x, guards.wrap(nodes[c], side, adjoint[i])) for x, side in taken]
        else:
            local = local_derivatives(builder, ins.op, tuple(nodes[a] for a in ins.args))
            contributions = [
                (a, guards.times(d, adjoint[i])) for a, d in zip(ins.args, local, strict=True)
            ]
        for a, contribution in contributions:
            if varies[a]:
                previous = adjoint.get(a)
                adjoint[a] = (
                    contribution if previous is None else guards.plus(previous, contribution)
                )
    slots = program.input_slots
    return {name: adjoint.get(slots[name], builder.const(0)) for name in wrt}


class _Guards:
    """Adjoints guarded by where: where(c, g, 0) (taken where c holds) or where(c, 0, g)."""

    def __init__(self, builder: Builder):
        self.builder = builder
        self.zero = builder.const(0)
        self.guarded: set[int] = set()  # the guards made here, by id (the builder shares them)

    def wrap(self, c: Expr, side: bool, g: Expr) -> Expr:
        """g where c holds (side True) or where it does not, 0 elsewhere: inside the guards g
        has already, so that the guards of two adjoints read alike from the outside in."""
        layers, inner = self.peel(g)
        return self.wrapped([*layers, (c, side)], inner)

    def _guard(self, c: Expr, side: bool, g: Expr) -> Expr:
        args = (c, g, self.zero) if side else (c, self.zero, g)
        e = self.builder.apply(WHERE, *args)
        if e.kind == CALL and e.op is WHERE:
            self.guarded.add(id(e))
        return e

    def peel(self, e: Expr) -> tuple[list[tuple[Expr, bool]], Expr]:
        """The guards around e, outermost first, and what they guard."""
        layers = []
        while id(e) in self.guarded:
            c, a, b = e.args
            side = b is self.zero
            layers.append((c, side))
            e = a if side else b
        return layers, e

    def wrapped(self, layers: list[tuple[Expr, bool]], e: Expr) -> Expr:
        for c, side in reversed(layers):
            e = self._guard(c, side, e)
        return e

    def times(self, d: Expr, g: Expr) -> Expr:
        layers, inner = self.peel(g)
        return self.wrapped(layers, self.builder.apply(MUL, d, inner))

    def plus(self, p: Expr, q: Expr) -> Expr:
        """p + q, inside the guards they share; where(c, P, 0) + where(c, 0, Q) is
        where(c, P, Q), no guard (every value of c passes something on). A guard q is added
        to the term of a sum p whose guards it shares the most of, if it shares any, and so
        on while the sum has such a term."""
        while p.kind == SUM and id(q) in self.guarded:
            terms = list(zip(p.args, p.weights, strict=True))
            best, k = max((self._shared(t, q), k) for k, (t, w) in enumerate(terms) if w == 1.0)
            if best == 0:
                break
            rest = self.builder.add(p.value, terms[:k] + terms[k + 1 :])
            if rest is None:
                break
            p, q = rest, self._add(terms[k][0], q)
        return self._add(p, q)

    def _add(self, p: Expr, q: Expr) -> Expr:
        (lp, ip), (lq, iq) = self.peel(p), self.peel(q)
        shared = self._common(lp, lq)
        rest_p, rest_q = lp[shared:], lq[shared:]
        if len(rest_p) == len(rest_q) == 1 and rest_p[0][0] is rest_q[0][0]:
            c, side = rest_p[0]  # the same condition, each on its own side
            taken = (c, ip, iq) if side else (c, iq, ip)
            return self.wrapped(lp[:shared], self.builder.apply(WHERE, *taken))
        inner = self.builder.apply(ADD, self.wrapped(rest_p, ip), self.wrapped(rest_q, iq))
        return self.wrapped(lp[:shared], inner)

    @staticmethod
    def _common(lp: list, lq: list) -> int:
        shared = 0
        while shared < min(len(lp), len(lq)) and lp[shared] == lq[shared]:
            shared += 1
        return shared

    def _shared(self, p: Expr, q: Expr) -> int:
        """How well p and q add up: the guards they share, plus one where they then differ
        by one guard each on the same condition (so they make one where)."""
        (lp, _), (lq, _) = self.peel(p), self.peel(q)
        shared = self._common(lp, lq)
        rest_p, rest_q = lp[shared:], lq[shared:]
        opposite = len(rest_p) == len(rest_q) == 1 and rest_p[0][0] is rest_q[0][0]
        return 2 * shared + opposite


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
