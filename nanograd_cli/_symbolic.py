"""Symbolic derivatives: a program's gradient as expressions in the language itself.

Reverse mode, on expressions instead of numbers: each operation's local derivative comes from
its `formula` in the ops table, parsed by our own parser. Expressions are built in a canonical
form that simplifies them as they are made (`algebra.Builder`: constants folded, like terms
and powers collected, common factors cancelled), laid out as a person writes them
(`algebra.layout`) and printed with each large repeated sub-expression bound once to a name
(`formula`). Nothing here recurses on the size of a program.

Two forms. The exact one (`diff --exact`, and what `hessian` differentiates) uses the formulas
as the table has them, with the helpers that keep edge cases exact (`powlog`, `where`), and
keeps the engine's order of operations (`engine_form.EngineForm`, not the canonical form,
whose merged products overflow where the engine's steps do not): it is the engine's
derivative at every point, to rounding. The textbook one (`diff`'s default, and
explain's local column) is derived from those formulas by the rules in `TEXTBOOK_RULES`, which
write each helper as a textbook does, each with the condition where the two agree; a
derivative whose textbook form differs from the engine's somewhere carries that condition as
a note (`# x > 0`).

Either way, the argument of a function with a kink (relu, abs, step, max, floor, ...) is kept
as the engine computes it, not simplified: `2*x + 2 + x` is 1.1e-16 at x = -2/3 in floats,
where `3*x + 2` is 0, and relu's derivative there is 1 by the one and 0 by the other. And a
name the source binds once stands for what it is bound to, so that a derivative that uses it
more than once is written in the source's own names (`z = w*x + b`, `p = sigmoid(z)`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from ._algebra import (
    CALL,
    INPUT,
    NAMED,
    NAMED_CONSTANTS,
    NUMBER,
    PRODUCT,
    SUM,
    Builder,
    Expr,
    Written,
    known_number,
    layout,
    piecewise,
    positive,
    reachable,
)
from ._array_ops import ArrayOp
from ._engine_form import EngineForm
from ._formula import LOSES, WHOLE_UP_TO, Note, occurrences, shown, write
from ._instructions import Apply, Const, Input
from ._ops import ADD, MUL, POWER_RULE, SMALLEST_NORMAL, WHERE, Op, gaussian
from ._overflow_notes import Probe, add_notes, rare
from ._program import Program
from ._textbook import finish
from .engine import Value, apply
from .errors import InputError, NanogradError, command, option
from .results import Hessian, Shape

# (canonical, as the engine computes it): the second is what a kinked function's argument is
# made of. They are one node where the two agree (an input, a number, a name).
Pair = tuple[Expr, Expr]

# How a textbook writes the helpers of the ops table's formulas, and where (in the helper's
# parameters) that agrees with the helper; None: everywhere, to rounding.
#  * powlog(a, b) is the derivative of a**b by b, a**b*log(a) for a > 0; at a = 0 the helper
#    is 0 (PyTorch's limit), where a**b*log(a) is nan or -inf; for a < 0 both are nan.
#  * where((a == 0)*(b == 0), 0, ...) is the power rule, 0 at a = b = 0 (a**0 is 1
#    for every a) where b*a**(b - 1) is 0*0**-1, nan: the textbook's agrees wherever a != 0,
#    and wherever b is a number other than 0 (below the smallest normal float, the table's
#    keeps digits by halves, b*a**k*a**(b - 1 - k), ops.POWER_RULE).
#  * sigmoid(-a) is 1 - sigmoid(a), which cancels where sigmoid(a) is near 1 (so the table
#    has the first); the textbook's derivative of sigmoid is sigmoid(x)*(1 - sigmoid(x)).
#  * The forms that keep digits the textbook's lose (docs/calculus.md): sech(a)**2 (tanh's,
#    which does not overflow past 710) is 1/cosh(a)**2, (1 - a)*(1 + a) is
#    1 - a**2 (asin, acos, atanh), sqrt(a - 1)*sqrt(a + 1) is sqrt(a**2 - 1) (acosh, where
#    a >= 1), a/hypot(a, b) divided by the larger of a and b (hypot) is a/hypot(a, b), and
#    atan2's divided by the larger argument is a/(a**2 + b**2), to rounding where nothing
#    overflows or underflows.
#    A replacement may read `out`, the op's own value (the op called on its parameters, in
#    their order), as a derivative function does (_derivatives_writer.py): hypot's two formulas
#    are one shape, d/dy's d/dx's with x and y swapped, so one pattern matches both, with a
#    and b swapped; written a/hypot(a, b), d/dy was y/hypot(y, x) for the source's
#    hypot(x, y), where a/out is y/hypot(x, y).
#  * dsinc(a) is sinc's derivative, (cos(pi*a) - sinc(a))/a but at 0, where it is 0.
#  * 1/hypot(1, a) (asinh's, which does not overflow) is 1/sqrt(a**2 + 1).
#  * polygamma's derivative by x is polygamma(n + 1, x), but nan (as the function) for n < 0.
#  * 1 + tan(a)**2 (tan's) is sec(a)**2, written 1/cos(a)**2 as tanh's is 1/cosh(a)**2.
#  * A product by halves where it is below the smallest normal float (powlog's
#    powlog(a, b)*powlog(a, 0)) is the product, to rounding; erf's exp(-a**2) with an exact
#    square and by halves (ops.gaussian) is exp(-a**2), to rounding.
TEXTBOOK_RULES = (
    ("powlog(a, b)", "a**b*log(a)", "a > 0"),
    (
        POWER_RULE,
        "b*a**(b - 1)",
        "a != 0",
    ),
    ("sigmoid(-a)", "1 - sigmoid(a)", None),
    ("sech(a)**2", "1/cosh(a)**2", None),
    ("(1 - a)*(1 + a)", "1 - a**2", None),
    ("sqrt(a - 1)*sqrt(a + 1)", "sqrt(a**2 - 1)", None),
    ("where(abs(a) < abs(b), a/b/(1 + (a/b)**2)/b, 1/(1 + (b/a)**2)/a)", "a/(a**2 + b**2)", None),
    (
        "where(abs(b) < abs(a), -(b/a/(1 + (b/a)**2))/a, -(1/(1 + (a/b)**2))/b)",
        "-b/(a**2 + b**2)",
        None,
    ),
    (
        "where(abs(a) < abs(b), sign(b)*(a/b)/hypot(1, a/b), sign(a)/hypot(1, b/a))",
        "a/out",
        None,
    ),
    ("dsinc(a)", "(cos(pi*a) - sinc(a))/a", "a != 0"),
    ("1/hypot(1, a)", "1/sqrt(a**2 + 1)", None),
    ("where(a < 0, polygamma(a, b), polygamma(a + 1, b))", "polygamma(a + 1, b)", "a+1 > 0"),
    ("1 + tan(a)**2", "1/cos(a)**2", None),
    (gaussian("a"), "exp(-a**2)", None),
)


# Where a rule's textbook form loses digits the helper keeps, a note of it, under every
# derivative the rule is used in (docs/calculus.md, "Where the formulas keep their digits"):
# the part that loses them (no note where it cancels out of the derivative: x*asin(x) +
# sqrt(1 - x**2)'s asin(x); none where erf's exp(-x**2) is merged into another exp), the
# note, its `{}` the subject's text (the rule's `a` unless said), and the parameters that,
# where one is a number, make the note go (a power of a number exponent loses at most
# |n|/2 units of the subnormal grid more than the engine; hypot(x, 3) is never subnormal),
# unless that number is itself subnormal,
# and so does a base that is its own exponent where `apart` (x**x and x**(x - 1) are never
# below 0.69 where they are numbers).
# A rewrite that loses nothing has no note: tan's 1/cos(x)**2 is within 2.9 units in the
# last place of mpmath where 1 + tan(x)**2 is within 1.7.
class Loss(NamedTuple):
    part: str
    why: str
    subject: str = "a"
    unless: tuple[str, ...] = ()
    apart: bool = False
    extreme: bool = False  # it loses digits only past USUAL in size (or below its inverse)


_SQUARES = Loss(  # atan2's
    "a**2 + b**2",
    "loses digits where {} overflows or underflows",
    "a**2 + b**2",
    extreme=True,
)
_SUBNORMAL = "is below 2.2e-308 (it rounds first)"
LOSSES = {
    "1 - sigmoid(a)": Loss(
        "sigmoid(a)", "loses digits as {} grows, all past 37 (where sigmoid rounds to 1)"
    ),
    "1 - a**2": Loss("a**2", "loses digits near |{}| = 1 (1 - its square cancels)"),
    "sqrt(a**2 - 1)": Loss(
        "a**2",
        "loses digits near {} = 1 (its square - 1 cancels) and past 1e154 (it overflows)",
    ),
    "1/sqrt(a**2 + 1)": Loss(
        "a**2", "loses digits for |{}| > 1e154 (its square overflows)", extreme=True
    ),
    "1/cosh(a)**2": Loss("cosh(a)", "loses digits for |{}| > 355 (cosh's square overflows)"),
    "a/(a**2 + b**2)": _SQUARES,
    "-b/(a**2 + b**2)": _SQUARES,
    "a/out": Loss(
        "out",
        "loses digits where {} overflows or is subnormal",
        "out",
        ("a", "b"),
        extreme=True,
    ),
    "exp(-a**2)": Loss(
        "exp(-a**2)",
        "loses digits as |{}| grows, up to 3 digits near 26.6 (its square rounds)",
    ),
    "b*a**(b - 1)": Loss(
        "a**(b - 1)", f"loses digits where {{}} {_SUBNORMAL}", "a**(b - 1)", ("b",), True
    ),
    "a**b*log(a)": Loss("a**b", f"loses digits where {{}} {_SUBNORMAL}", "a**b", ("a",), True),
}
# The functions that only helpers use: a textbook derivative has none of them, unless the
# source calls them itself.
HELPERS = frozenset(("powlog", "dsinc"))


@functools.cache
def _parsed(text: str) -> Program:
    from ._language import parse

    return parse(text)


@dataclass(frozen=True)
class Formula:
    """A local derivative in an op's parameters, and the conditions (an expression in the
    parameters and `>` or `!=`, against 0) where it equals the ops table's formula."""

    program: Program
    conditions: tuple[tuple[Program, str], ...] = ()
    # where it loses digits: (its subject, the part that loses them, LOSSES' note, the
    # parameters of which one being a number drops it, and two that drop it being one)
    losses: tuple[tuple[Program, Program, Loss, tuple[Program, ...], tuple[Program, ...]], ...] = ()


@functools.cache
def exact_formulas(op: Op) -> tuple[Formula, ...]:
    """The op's formulas as the ops table has them."""
    return tuple(Formula(_parsed(text)) for text in op.formulas)


@functools.cache
def textbook_formulas(op: Op) -> tuple[Formula, ...]:
    """The op's formulas as a textbook writes them: the helpers rewritten by TEXTBOOK_RULES,
    then simplified and laid out as `diff` prints (`-(a/b)/b` is `-a/b**2`)."""
    return tuple(_textbook(text, op) for text in op.formulas)


def _match(pattern: Expr, node: Expr) -> dict[str, Expr] | None:
    """The parts of `node` that the inputs of `pattern` stand for, if it has that shape."""
    binding: dict[str, Expr] = {}
    stack = [(pattern, node)]
    while stack:
        p, n = stack.pop()
        if p.kind == INPUT:
            if binding.setdefault(p.value, n) is not n:
                return None
        elif p.kind == NUMBER:
            if n.kind != NUMBER or n.value != p.value:
                return None
        elif n.kind != p.kind or n.op is not p.op:
            return None
        else:
            stack.extend(zip(p.args, n.args, strict=True))
    return binding


def _textbook(text: str, op: Op) -> Formula:
    written = Written()
    patterns = Written()
    out = written.op(op, *map(written.input, op.parameters))  # a replacement's `out`
    rules = [(patterns.program(_parsed(p)), r, c) for p, r, c in TEXTBOOK_RULES]
    tree = written.program(_parsed(text))
    rewritten: dict[int, Expr] = {}
    conditions: list[tuple[Expr, str]] = []
    losses: list[tuple[Expr, Expr, Loss, tuple[Expr, ...], tuple[Expr, ...]]] = []
    for e in reachable([tree]):
        node = e if not e.args else written.op(e.op, *(rewritten[id(a)] for a in e.args))
        for pattern, text, condition in rules:
            binding = _match(pattern, node)
            if binding is None:
                continue
            env = {**binding, "out": out}.__getitem__
            replacement = _parsed(text)
            if text in LOSSES:
                loss = LOSSES[text]
                subject, lossy = _parsed(loss.subject), _parsed(loss.part)
                made = {
                    "subject": subject.interpret(input=env, const=written.number, apply=written.op)[
                        subject.result
                    ],
                    "part": lossy.interpret(input=env, const=written.number, apply=written.op)[
                        lossy.result
                    ],
                }
                unless = tuple(binding[p] for p in loss.unless)
                alike = (binding["a"], binding["b"]) if loss.apart else ()
                losses.append((made["subject"], made["part"], loss, unless, alike))
            node = replacement.interpret(input=env, const=written.number, apply=written.op)[
                replacement.result
            ]
            if condition:
                side, relation, _ = condition.split(" ")
                program = _parsed(side)
                part = program.interpret(input=env, const=written.number, apply=written.op)
                conditions.append((part[program.result], relation))
            break
        rewritten[id(e)] = node
    builder = Builder(textbook=True)

    def canonical(root: Expr) -> Program:
        made: dict[int, Expr] = {}
        for e in reachable([root]):
            if e.kind == INPUT:
                made[id(e)] = builder.var(e.value)
            elif e.kind == NUMBER:
                made[id(e)] = builder.const(e.value)
            else:
                made[id(e)] = builder.apply(e.op, *(made[id(a)] for a in e.args))
        (shown,) = layout([made[id(root)]], fractions=True)
        return _parsed(write({"": shown}))

    return Formula(
        canonical(rewritten[id(tree)]),
        tuple((canonical(side), relation) for side, relation in conditions),
        tuple(
            (
                canonical(side),
                canonical(part),
                loss,
                tuple(map(canonical, unless)),
                tuple(map(canonical, alike)),
            )
            for side, part, loss, unless, alike in losses
        ),
    )


def _interpret(
    builder: Builder,
    program: Program,
    env: Mapping[str, Pair],
    names: Mapping[int, str] | None = None,
    definitions: dict[str, Expr] | None = None,
) -> list[Pair]:
    """Each instruction of `program` as a pair (canonical, as the engine computes it), its
    inputs replaced by `env`'s. A function with a kink is applied to the second of its
    arguments. An instruction in `names` becomes that name (a leaf), and its definition, as
    the engine computes it, goes into `definitions`."""
    nodes: list[Pair] = []
    for i, ins in enumerate(program.code):
        if isinstance(ins, Apply):
            args = [nodes[a] for a in ins.args]
            as_computed = builder.written(ins.op, *(w for _, w in args))
            if piecewise(ins.op):
                canon = builder.apply(ins.op, *(w for _, w in args))
            else:
                canon = builder.apply(ins.op, *(c for c, _ in args))
            if names and i in names:
                assert definitions is not None, "names come with their definitions"
                definitions[names[i]] = as_computed
                canon = as_computed = builder.named(names[i], canon)
            nodes.append((canon, as_computed))
        elif isinstance(ins, Input):
            nodes.append(env[ins.name])
        else:
            number = builder.const(ins.value)
            nodes.append((number, number))
    return nodes


def from_program(builder: Builder, program: Program, env: dict[str, Expr]) -> list[Expr]:
    """One expression per instruction of `program`, its inputs replaced by `env`'s."""
    return [c for c, _ in _interpret(builder, program, {n: (e, e) for n, e in env.items()})]


def _locals(builder: Builder, formulas, op: Op, args: tuple[Pair, ...]) -> list[Expr]:
    env = dict(zip(op.parameters, args, strict=True))
    return [_interpret(builder, f.program, env)[f.program.result][0] for f in formulas]


def bindable(program: Program) -> dict[int, str]:
    """The instructions that can stand for their names in a derivative: bound to a name the
    source binds once (no input), by a statement that reads only inputs, numbers and such
    names, so that its definition is the statement as the source has it. (`q += 1` binds q
    twice: a statement that reads it is not restated.)"""
    times: dict[str, int] = {}
    for name in program.labels.values():
        times[name] = times.get(name, 0) + 1
    inputs = set(program.inputs)
    names: dict[int, str] = {}
    restated: list[bool] = []  # per instruction: made of inputs, numbers and such names
    for i, ins in enumerate(program.code):
        if type(ins) is not Apply:
            restated.append(True)
            continue
        ok = all(restated[a] for a in ins.args)
        label = program.labels.get(i)
        if label is not None and (times[label] > 1 or label in inputs):
            ok = False
        elif label is not None and ok:
            names[i] = label
        restated.append(ok)
    return names


class ArrayAdjoints(Protocol):
    """What `derive` needs for a program on arrays (`array_diff` has it): each array
    operation's adjoints (the conditions where a textbook form of them is the engine's added
    to `conditions`), a contribution summed down to its argument's shape, and a derivative
    spread over its input's."""

    def adjoints(
        self,
        ins: Apply,
        args: list[Expr],
        out: Expr,
        g: Expr,
        conditions: list[tuple[int, Note]],
    ) -> list[tuple[int, Expr]]: ...

    def reduced(self, contribution: Expr, arg: int, value: int) -> Expr: ...

    def expanded(self, e: Expr, shape: Shape | int) -> Expr: ...


@dataclass
class Derivatives:
    """d(result)/d(input) per input, the names they are written in (each bound to its
    definition, as the engine computes it), and per input the conditions where the
    derivative is the engine's (empty for the exact form)."""

    roots: dict[str, Expr]
    definitions: dict[str, Expr] = field(default_factory=dict)
    notes: dict[str, list[Note]] = field(default_factory=dict)
    textbook: bool = False
    whole: bool = False  # the source's numbers are whole: simple fractions as p/q (1/2)
    partial: bool = False  # of several inputs (or arrays): LaTeX names them ∂f/∂x, not df/dx
    function: str = "f"  # what LaTeX names the source in them: its result's name, if it has one
    # per name of a higher derivative, the inputs it is by in turn (d2_x_y: x, then y)
    sequences: dict[str, tuple[str, ...]] = field(default_factory=dict)


def derive(
    program: Program,
    wrt: list[str],
    textbook: bool = False,
    names: Mapping[int, str] | None = None,
    builder: Builder | None = None,
    arrays: ArrayAdjoints | None = None,
) -> Derivatives:
    """The derivatives by `wrt` (reverse mode), exact or as a textbook writes them, with the
    instructions in `names` standing for their names; with `arrays`, of a program on arrays,
    in vector form (`array_diff`).

    A `where(c, a, b)` passes its adjoint g on as where(c, g, 0) to a and where(c, 0, g) to b
    (nothing to c), and such a guard stays outermost as the adjoint flows on: a local
    derivative d times where(c, g, 0) is where(c, d*g, 0). So the branch not taken adds 0, not
    0 times its derivatives (nan where the branch is nan), as in the engine."""
    if builder is None:  # (the source's numbers whole: 0.5 is 1/2, and log(1/2) stays)
        builder = Builder(True, whole_numbers(program)) if textbook else EngineForm()
    definitions: dict[str, Expr] = {}
    inputs = {n: (builder.var(n), builder.var(n)) for n in program.inputs}
    nodes = _interpret(builder, program, inputs, names, definitions)
    code = program.code
    varies = program.varying()
    adjoint: dict[int, Expr] = {program.result: builder.const(1)}
    conditions: list[tuple[int, Note]] = []  # (the argument it is about, the condition)
    guards = _Guards(builder)
    for i in range(program.result, -1, -1):
        ins = code[i]
        if i not in adjoint or type(ins) is not Apply:
            continue
        if ins.op is WHERE:
            c, a, b = ins.args
            condition = nodes[c][0]
            contributions = [
                (a, guards.wrap(condition, True, adjoint[i])),
                (b, guards.wrap(condition, False, adjoint[i])),
            ]
        elif arrays is not None and type(ins.op) is ArrayOp:
            contributions = arrays.adjoints(
                ins, [nodes[a][0] for a in ins.args], nodes[i][0], adjoint[i], conditions
            )
        else:
            local = _local_derivatives(builder, ins, nodes, varies, textbook, conditions)
            contributions = [
                (a, guards.times(d, adjoint[i])) for a, d in zip(ins.args, local, strict=True)
            ]
        for a, contribution in contributions:
            if varies[a]:
                if arrays is not None:
                    contribution = arrays.reduced(contribution, a, i)
                previous = adjoint.get(a)
                adjoint[a] = (
                    contribution if previous is None else guards.plus(previous, contribution)
                )
    slots = program.input_slots
    roots = {name: adjoint.get(slots[name], builder.const(0)) for name in wrt}
    if arrays is not None:
        roots = {name: arrays.expanded(root, slots[name]) for name, root in roots.items()}
    notes: dict[str, list[Note]] = {}
    if textbook and arrays is None:
        for name, (root, found) in finish(builder, roots).items():
            roots[name] = root
            if found:
                notes[name] = found
    if conditions:
        order = {n: 1 << k for k, n in enumerate(program.inputs)}
        reads = program.interpret(
            input=order.__getitem__, const=lambda value: 0, apply=lambda op, *a: _union(a)
        )
        for name in wrt:
            found = [n for a, n in conditions if reads[a] & order[name]]
            shown = {_shape(e) for e in reachable([roots[name]])} if textbook else set()
            found = [n for n in found if n.part is None or _shape(n.part) in shown]
            notes[name] = _simplest(found + notes.get(name, []))
    return Derivatives(roots, definitions, notes, textbook)


def _local_derivatives(
    builder: Builder,
    ins: Apply,
    nodes: list[Pair],
    varies: list[bool],
    textbook: bool,
    conditions: list[tuple[int, Note]],
) -> list[Expr]:
    """The local derivatives of `ins`, exact or as a textbook writes them; the conditions
    where a textbook form is the engine's are added to `conditions`."""
    args = tuple(nodes[a] for a in ins.args)
    formulas = textbook_formulas(ins.op) if textbook else exact_formulas(ins.op)
    local = _locals(builder, formulas, ins.op, args)
    if textbook and any(f.conditions or f.losses for f in formulas):
        exact = _locals(builder, exact_formulas(ins.op), ins.op, args)
        env = dict(zip(ins.op.parameters, args, strict=True))
        for k, f in enumerate(formulas):
            if local[k] is exact[k] or not varies[ins.args[k]]:
                continue
            found = []
            for side, relation in f.conditions:
                expr = _interpret(builder, side, env)[side.result][0]
                found.append(Note(expr, relation))
            values = [_constant(n.expr) for n in found]
            # (-2)**x: no textbook form agrees anywhere; but a number that is nan (log(-2))
            # makes both forms nan everywhere, and the textbook one reads as one
            if any(
                v is not None and not math.isnan(v) and not n.holds(v)
                for n, v in zip(found, values, strict=True)
            ):
                local[k] = exact[k]
                continue
            conditions.extend(
                (ins.args[k], n)
                for n, v in zip(found, values, strict=True)
                if v is None and not positive(n.expr)  # x**2 + 1 > 0 goes without saying
            )
            for side, part, loss, unless, alike in f.losses:
                expr = _interpret(builder, side, env)[side.result][0]
                lossy = _interpret(builder, part, env)[part.result][0]
                numbers = [_constant(_interpret(builder, u, env)[u.result][0]) for u in unless]
                if any(v is not None and not _subnormal(v) for v in numbers):
                    continue  # hypot(x, 3), but not hypot(x, 1e-320)
                if len({id(_interpret(builder, u, env)[u.result][0]) for u in alike}) == 1:
                    continue  # x**x
                if _constant(expr) is None:
                    note = Note(expr, LOSES, loss.why, lossy, loss.extreme)
                    conditions.append((ins.args[k], note))
    return local


def _subnormal(value: float) -> bool:
    return 0.0 < abs(value) < SMALLEST_NORMAL


def _shape(e: Expr) -> tuple:
    """A node as the parts it is made of, a product's number aside (4*x**2 has x**2's)."""
    weights = tuple(e.weights) if e.kind in (PRODUCT, SUM) else ()
    return (e.kind, e.op, tuple(id(a) for a in e.args), weights)


def _constant(e: Expr) -> float | None:
    """The value of an expression of numbers alone (2, sqrt(2), pi by name), else None."""
    numbers = {}
    for r in reachable([e]):
        if r.kind in (INPUT, NAMED):
            number = known_number(r)
            if number is None:
                return None
            numbers[r.value] = Value.constant(number)
    return e.value if e.kind == NUMBER else evaluate([e], numbers)[0].data


def _union(masks) -> int:
    total = 0
    for m in masks:
        total |= m
    return total


def _simplest(notes: list[Note]) -> list[Note]:
    """The notes once each, `e != 0` left out where `e > 0` says more."""
    seen: dict[tuple[int, str, str], Note] = {}
    for n in notes:
        seen.setdefault((id(n.expr), n.relation, n.why), n)
    return [
        n
        for (key, relation, _), n in seen.items()
        if not (relation == "!=" and (key, ">", "") in seen)
    ]


def gradient(program: Program, wrt: list[str], builder: Builder | None = None) -> dict[str, Expr]:
    """d(result)/d(input) for each input in `wrt`, as exact expressions (reverse mode)."""
    return derive(program, wrt, builder=builder).roots


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
            shares = [(self._shared(t, q), k) for k, (t, w) in enumerate(terms) if w == 1.0]
            best, k = max(shares, default=(0, 0))  # (none of weight 1: 2*x - 3*y)
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
    return written(Derivatives(roots), latex)


def written(
    derivatives: Derivatives,
    latex: bool = False,
    is_array: Callable[[Expr], bool] | None = None,
    probe: Probe | None = None,
    notes: str = "usual",
) -> str:
    """The derivatives as `diff` prints them: the names they use, each bound to its
    definition, then each large repeated sub-expression bound to a new name (t1, ...), then
    the derivatives, each with a note under it where it is not the engine's everywhere;
    `is_array` says which parts are arrays (for LaTeX's element-by-element product). With
    `probe` (the source, and the input each derivative is by), a textbook derivative's note
    also says where it loses digits by a part overflowing (_overflow_notes.py). `notes`: which
    are shown (diff's notes)."""
    roots, definitions = derivatives.roots, derivatives.definitions
    found_notes: Mapping[str, list[Note]] = derivatives.notes
    if probe is not None and derivatives.textbook and notes == "usual":
        found_notes = rare(probe.program, found_notes)
    said = {name: shown(found, notes) for name, found in found_notes.items()}
    parts = [*roots.values(), *definitions.values()]
    parts += [n.expr for name in roots for n in said.get(name, [])]
    laid = iter(layout(parts, fractions=derivatives.textbook, whole=derivatives.whole))
    shown_roots = {name: next(laid) for name in roots}
    shown_definitions = {name: next(laid) for name in definitions}
    shown_notes = {
        name: [n._replace(expr=next(laid)) for n in said.get(name, [])] for name in roots
    }
    if probe is not None and derivatives.textbook and notes in ("all", "usual"):
        add_notes(probe, {n: r for n, r in shown_roots.items() if n in probe.by}, shown_notes)
        shown_notes = {name: shown(found, notes) for name, found in shown_notes.items()}
    by = (derivatives.function, derivatives.partial, derivatives.sequences)
    # a whole number past 2**53 is a float's rounding of one: written as the float it is
    # (7.9792266297612e+16, where 7**20 is 79792266297612001), not in digits it may not have
    past = 2.0**53 if derivatives.textbook else WHOLE_UP_TO
    return write(shown_roots, latex, shown_definitions, shown_notes, is_array, by, past)


def derivative_names(wrt: list[str], taken: set[str]) -> dict[str, str]:
    """A name for each derivative that is free in the source: d_x, or d_x_ if d_x is taken
    (`higher_names` for the second and on)."""
    names = {}
    for w in wrt:
        name = f"d_{w}"
        while name in taken:
            name += "_"
        names[w] = name
    return names


def derivatives_text(
    program: Program,
    wrt: list[str],
    latex: bool = False,
    exact: bool = False,
    order: int = 1,
    read: Callable[[str], Program] | None = None,
    notes: str = "usual",
    mixed: bool = False,
) -> str:
    """The derivative by each input in `wrt` (all when empty) as `diff` prints it: with one,
    a source whose result is the derivative; else one `d_NAME = ...` line each. Textbook
    unless `exact`; in the source's own names where one of them would be used twice.
    `order` N: the N-th derivative by each, written out (`d2_x = ...`), each derivative's
    text read again by `read` (the parser by default; for a program written out from arrays,
    one that reads `x[0]` as the input of that name); with `mixed`, every mixed partial
    derivative of that order too (`d2_x_y`: by x, then by y). `notes`: which are shown
    (diff's notes)."""
    wrt = wrt or program.inputs
    if order > 1:
        return _higher(program, wrt, latex, exact, order, read, notes, mixed)
    labels = derivative_names(wrt, set(program.inputs) | set(program.labels.values()))
    candidates = bindable(program)
    kept = _names_used_twice(program, wrt, candidates, not exact) if candidates else {}
    result = derive(program, wrt, textbook=not exact, names=kept)
    used = {e.value for r in _every_root(result) for e in reachable([r]) if e.kind == NAMED}
    result.definitions = {n: d for n, d in result.definitions.items() if n in used}
    result.roots = {labels[n]: e for n, e in result.roots.items()}
    result.notes = {labels[n]: e for n, e in result.notes.items()}
    result.whole = whole_numbers(program)
    result.partial, result.function = len(program.inputs) > 1, function_name(program)
    probe = Probe(program, {label: n for n, label in labels.items()})
    return written(result, latex, probe=probe, notes=notes)


# A derivative written out in at most this many characters is differentiated again (each
# order can triple the length of a quotient's, and the time: the 10th of exp(x)/(1 + exp(x))
# has 70,000, in 4 s).
HIGHER_TEXT = 30_000


def too_long(derivative: str, order: int, reached: int, length: int) -> str:
    """The message for the `order`-th `derivative` ("derivative by x") whose `reached`-th,
    the highest written out, has `length` characters, more than HIGHER_TEXT."""
    highest = _ordinal(reached)
    return (
        f"the {_ordinal(order)} {derivative} is too long to work out: the {highest}, the "
        f"highest written out, has {length:,} characters (at most {HIGHER_TEXT:,} are "
        f"differentiated again); ask for at most the {highest}"
    )


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _higher(
    program: Program,
    wrt: list[str],
    latex: bool,
    exact: bool,
    order: int,
    read: Callable[[str], Program] | None,
    showing: str,
    mixed: bool = False,
) -> str:
    """The `order`-th derivative by each name of `wrt` (with `mixed`, by each combination of
    them, in their order): the derivative of the derivative, each written out as a program
    (no names of the source) and read again (by `read`); the conditions of each step are the
    result's."""
    from ._language import parse

    whole = whole_numbers(program)
    builder = EngineForm() if exact else Builder(True, whole)
    taken = set(program.inputs) | set(program.labels.values())
    labels = higher_names(wrt, taken, order, mixed)
    roots: dict[str, Expr] = {}
    notes: dict[str, list[Note]] = {}

    def differentiated(
        current: Program | None, found: list[Note], sequence: tuple[str, ...], step: int
    ) -> tuple[Program | None, list[Note], Expr]:
        """The derivative of `current` by the name `sequence[step]`: as a program read
        again (None where it is 0, and so on: d/dx of 2*y), the notes so far, and its root."""
        name = sequence[step]
        if current is None or name not in current.inputs:
            return None, found, builder.const(0.0)
        result = derive(current, [name], textbook=not exact, builder=builder)
        root = result.roots[name]
        # where each order holds, but digits lost only by the one printed
        found = [n for n in found if n.relation != LOSES] + result.notes.get(name, [])
        if step < order - 1:
            (shown,) = layout([root], fractions=not exact, whole=whole)
            text = write({"": shown})
            if len(text) > HIGHER_TEXT:
                names = " then ".join(dict.fromkeys(sequence))
                raise NanogradError(
                    f"{too_long(f'derivative by {names}', order, step + 1, len(text))}, or for "
                    f"the value of a higher one at a point: {command('taylor')} gives "
                    "f^(n)(A)/n! to high orders"
                )
            current = (read or parse)(text)
        return current, found, root

    # each derivative by a sequence of names once: the mixed ones share their beginnings
    done: dict[tuple[str, ...], tuple[Program | None, list[Note], Expr]] = {}
    for sequence, label in labels.items():
        current: Program | None = program
        found: list[Note] = []
        for step in range(order):
            if sequence[: step + 1] not in done:
                done[sequence[: step + 1]] = differentiated(current, found, sequence, step)
            current, found, root = done[sequence[: step + 1]]
        roots[label], notes[label] = root, _simplest(found)
    result = Derivatives(
        roots,
        notes={label: e for label, e in notes.items() if e},
        textbook=not exact,
        whole=whole,
        partial=len(program.inputs) > 1,
        function=function_name(program),
        sequences={label: sequence for sequence, label in labels.items()},
    )
    # (not for the elements of arrays, x[0], which only `read` reads back; nor are they at
    # the first order, array_diff's; nor for a mixed one, which Taylor's series in one input
    # cannot check)
    by = {label: s[0] for s, label in labels.items() if len(set(s)) == 1}
    probe = Probe(program, by, order)
    return written(result, latex, probe=probe if read is None else None, notes=showing)


# The most derivatives `diff --mixed` writes (those of order N by k inputs are
# (N + k - 1)! / (N! (k - 1)!): 4th by 10 inputs, 715).
MAX_MIXED = 100


def higher_names(
    wrt: list[str], taken: set[str], order: int, mixed: bool = False
) -> dict[tuple[str, ...], str]:
    """The name of each `order`-th derivative (of `mixed` ones too) by its names in turn:
    d2_x by (x, x), d2_x_y by (x, y); each free in the source (d2_x_ where d2_x is taken).
    A name given twice is one."""
    wrt = list(dict.fromkeys(wrt))
    if not mixed:
        sequences = [(name,) * order for name in wrt]
    else:
        sequences = list(itertools.combinations_with_replacement(wrt, order))
        if len(sequences) > MAX_MIXED:
            raise InputError(
                f"{option('mixed')}: {len(sequences):,} derivatives of order {order} by "
                f"{len(wrt)} inputs; at most {MAX_MIXED} are written (name fewer with "
                f"{option('wrt')})"
            )
    names: dict[tuple[str, ...], str] = {}
    for sequence in sequences:
        by = sequence[0] if len(set(sequence)) == 1 else "_".join(sequence)
        name = f"d{order}_{by}"
        while name in taken or name in names.values():
            name += "_"
        names[sequence] = name
    return names


def function_name(program: Program) -> str:
    """The name of the source in its derivatives' names (LaTeX's ∂f/∂x): that of its result
    (`loss = ...; loss`), else f."""
    return program.labels.get(program.result, "f")


def whole_numbers(program: Program) -> bool:
    """Whether every number of the source is a whole number (or pi or e): then a textbook
    derivative writes its fractions as fractions (x/2 - sin(2*x)/4: 1/2 - cos(2*x)/2)."""
    return all(
        float(ins.value).is_integer() or ins.value in NAMED_CONSTANTS
        for ins in program.code
        if type(ins) is Const
    )


def _every_root(result: Derivatives) -> list[Expr]:
    notes = [n.expr for found in result.notes.values() for n in found]
    return [*result.roots.values(), *result.definitions.values(), *notes]


def _names_used_twice(
    program: Program, wrt: list[str], candidates: dict[int, str], textbook: bool
) -> dict[int, str]:
    """The names of the source that a derivative written in all of them would print twice or
    more, counting the uses inside the definitions of those kept (a name used once is
    written out where it is used)."""
    trial = derive(program, wrt, textbook, candidates)
    shown = layout([*trial.roots.values(), *trial.definitions.values()])
    roots, definitions = shown[: len(trial.roots)], shown[len(trial.roots) :]
    uses = occurrences(roots)
    inside = {
        name: occurrences([d]) for name, d in zip(trial.definitions, definitions, strict=True)
    }
    kept: dict[int, str] = {}
    for i in sorted(candidates, reverse=True):  # a name's definition uses only earlier ones
        name = candidates[i]
        if name not in inside:
            continue
        times = uses.get(name, 0)
        if times >= 2:
            kept[i] = name
        if times >= 1:
            for other, count in inside[name].items():
                uses[other] = uses.get(other, 0) + count
    return kept


def hessian(program: Program, values: dict[str, float], wrt: Sequence[str] = ()) -> Hessian:
    """The value, gradient and Hessian at `values`, by the inputs `wrt` (by default all):
    the exact gradient (the engine's steps, `EngineForm`) differentiated in forward mode
    (forward over reverse), so that a tiny second derivative is made from the inputs outward,
    rounding once where it underflows (reverse over reverse multiplies a tiny adjoint first:
    erf's at 27 was 13 units in the last place off), then made symmetric: each mixed pair is
    the mean of the two orders, which round apart (the one that is not nan where the other
    is)."""
    return hessian_at(program, wrt)(values)


def hessian_at(program: Program, wrt: Sequence[str] = ()) -> Callable[[dict[str, float]], Hessian]:
    """`hessian` at any point: the symbolic gradient is found once, for the many points of
    Newton's method."""
    from ._forward import forward_jacobian

    names = list(wrt) or program.inputs
    of_gradient = _program_of(gradient(program, names), program.inputs) if names else None

    def at(values: dict[str, float]) -> Hessian:
        first = program.grad(values)
        gradients = {name: first.gradients[name] for name in names}
        if of_gradient is None:
            return Hessian(first.value, first.inputs, gradients, {}, first.non_finite)
        columns = forward_jacobian(of_gradient, values).jacobian
        matrix = {a: {b: columns[a][b] for b in names} for a in names}
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                matrix[a][b] = matrix[b][a] = _mean(matrix[a][b], matrix[b][a])
        return Hessian(first.value, first.inputs, gradients, matrix, first.non_finite)

    return at


def hessian_over_rows(
    program: Program, columns: Mapping[str, Sequence[float]]
) -> Callable[[dict[str, float]], dict[str, dict[str, float]]]:
    """The Hessian of the mean of `program` over the rows of `columns` (the inputs that are
    data, each a column) by its other inputs, at any point of those: the symbolic gradient,
    found once, differentiated again on the NumPy tape over every row, and averaged."""
    import numpy as np

    from ._tape import Tape, batch_jacobian

    names = [n for n in program.inputs if n not in columns]
    of_gradient = _program_of(gradient(program, names), program.inputs)
    tape = Tape(of_gradient)
    data = {n: np.asarray(columns[n], dtype=np.float64) for n in program.inputs if n in columns}

    def at(point: dict[str, float]) -> dict[str, dict[str, float]]:
        per_row = batch_jacobian(of_gradient, {**data, **point}, tape)
        matrix = {
            a: {b: float(np.mean(rows[b])) for b in names}
            for a, (_, rows) in zip(names, per_row, strict=True)
        }
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                matrix[a][b] = matrix[b][a] = _mean(matrix[a][b], matrix[b][a])
        return matrix

    return at


def _mean(p: float, q: float) -> float:
    """The mean of two roundings of one number, without overflow; where one is nan, the
    other."""
    if p == q or q != q:
        return p
    if p != p:
        return q
    total = p + q
    return total / 2 if total - total == 0.0 else p / 2 + q / 2


def _program_of(roots: dict[str, Expr], inputs: list[str]) -> Program:
    """The expressions, as printed, as one program with an output per root, over `inputs`."""
    shown = layout(list(roots.values()))
    code: list = [Input(name, 0) for name in inputs]
    slot = {name: k for k, name in enumerate(inputs)}
    places: dict[int, int] = {}
    for e in reachable(shown):
        if e.kind == INPUT:
            places[id(e)] = slot[e.value]
            continue
        if e.kind == NUMBER:
            code.append(Const(e.value, 0))
        else:
            code.append(Apply(e.op, tuple(places[id(a)] for a in e.args), 0))
        places[id(e)] = len(code) - 1
    outputs = {name: places[id(e)] for name, e in zip(roots, shown, strict=True)}
    return Program("", code, list(inputs), max(outputs.values()), {}, outputs)
