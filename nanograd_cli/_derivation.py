"""The derivation `diff --steps` writes: from the outside in, the rule of differentiation
each part of the source calls for and what it gives, ending with the derivative as `diff`
writes it.

The source is taken as written (`algebra.Written`: nothing simplified), with its functions
expanded and its names written out, so that each line is about a part the reader can find
in it. A line's right side keeps the derivatives still to be taken as `d/dx [u]`, each the
left side of a later line (once per part); a right side with none left is simplified as
`diff` simplifies. The rules are named by the ops table (`Op.rule`: the product rule, the
sin rule), and a function's own rule is its row's textbook formula
(`symbolic.textbook_formulas`) in u, times u' where the chain rule applies it to more than x.
Only the cases of a row are named here: a constant factor, an exponential, a variable
exponent, the chain rule.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass

from ._algebra import (
    CALL,
    INPUT,
    NAMED_CONSTANTS,
    NUMBER,
    Builder,
    Expr,
    Written,
    in_fractions,
    layout,
    reachable,
)
from ._formula import LOSES, Note, Printer, latex_text
from ._ops import ADD, DIV, MUL, NEG, OPS, POW, SUB, WHERE, Op
from ._overflow_notes import Probe, add_notes, rare
from ._program import Apply, Program
from ._symbolic import derive, textbook_formulas, whole_numbers
from ._textbook import finish
from .errors import InputError, option

CONSTANT = "constant rule"
VARIABLE = "variable rule"
CONSTANT_FACTOR = "constant factor rule"
EXPONENTIAL = "exponential rule"
VARIABLE_EXPONENT = "general power rule"
CHAIN = "chain rule"

LOG = OPS["log"]
# The names a function's own rule calls its arguments.
_PARTS = ("u", "v", "w")
# A hole's name begins with this, which no name of the language does.
_HOLE = "\x00"


@dataclass(frozen=True)
class Step:
    """The derivative of `part` is `result` by `rule`; `statement`, the rule in general (in u,
    and u' for u's derivative), where it is applied to more than the variable itself."""

    part: Expr
    result: Expr
    rule: str
    statement: tuple[Expr, Expr] | None = None


@dataclass
class Derivation:
    """The steps of the derivative by `name`, its result as `diff` writes it (laid out), with
    the conditions where that is the engine's, and what each hole of the steps stands for:
    the derivative of a part, or a name of a rule (u, u')."""

    name: str
    steps: list[Step]
    result: Expr
    notes: list[Note]
    derivatives: dict[int, tuple[Expr, Expr]]
    names: dict[int, tuple[Expr, str]]


def derivations(program: Program, wrt: list[str]) -> list[Derivation]:
    """The derivation of the derivative by each name of `wrt`."""
    if program.arrays:
        raise InputError(
            f"{option('steps')} is for numbers: the source has arrays; for their derivative, "
            f"leave out {option('steps')}"
        )
    if any(isinstance(ins, Apply) and ins.op is WHERE for ins in program.code):
        raise InputError(
            f"{option('steps')}: where(...) has no rule of differentiation a course writes; "
            f"for its derivative, leave out {option('steps')}"
        )
    written = Written()
    source = written.program(program)
    whole = whole_numbers(program)
    found = {name: _Deriver(written, source, name, whole).derivation(program) for name in wrt}
    # where a result loses digits by a part overflowing: probed once for them all
    by = {name: name for name in wrt}
    results = {name: d.result for name, d in found.items()}
    add_notes(Probe(program, by), results, {name: d.notes for name, d in found.items()})
    marked = rare(program, {name: d.notes for name, d in found.items()})
    for name, derivation in found.items():
        derivation.notes = marked[name]
    return list(found.values())


class _Deriver:
    """The steps of one derivative, by `name`, of `source` (built with `written`)."""

    def __init__(self, written: Written, source: Expr, name: str, whole: bool):
        self.w = written
        self.source = source
        self.name = name
        self.whole = whole
        self.zero, self.one = written.number(0.0), written.number(1.0)
        self.varies: dict[int, bool] = {}
        for e in reachable([source]):
            here = e.kind == INPUT and e.value == name
            self.varies[id(e)] = here or any(self.varies[id(a)] for a in e.args)
        self.derivatives: dict[int, tuple[Expr, Expr]] = {}  # hole -> (hole, part)
        self.names: dict[int, tuple[Expr, str]] = {}  # hole -> (hole, u)
        self.made: list[tuple[Expr, Expr]] = []  # (hole, part) of the step being made

    def derivation(self, program: Program) -> Derivation:
        steps: list[Step] = []
        seen: set[int] = set()
        stack = [self.source]
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            self.made = []
            step = self.step(e)
            if not any(id(n) in self.derivatives for n in reachable([step.result])):
                step = Step(step.part, self.simplified(step.result), step.rule, step.statement)
            steps.append(step)
            used = {id(n) for n in reachable([step.result])}
            stack.extend(u for hole, u in reversed(self.made) if id(hole) in used)
        found = derive(program, [self.name], textbook=True)
        notes = found.notes.get(self.name, [])
        result, *shown = layout(
            [found.roots[self.name], *(n.expr for n in notes)], fractions=True, whole=self.whole
        )
        notes = [n._replace(expr=e) for e, n in zip(shown, notes, strict=True)]
        return Derivation(self.name, steps, result, notes, self.derivatives, self.names)

    # the derivative of a part, and arithmetic on the parts of a step

    def d(self, u: Expr) -> Expr:
        """The derivative of `u`: 0, 1, or a hole for it, a step of its own."""
        if not self.varies[id(u)]:
            return self.zero
        if u.kind == INPUT:
            return self.one
        hole = self.w.input(f"{_HOLE}d{u.serial}")
        self.derivatives[id(hole)] = (hole, u)
        if (hole, u) not in self.made:
            self.made.append((hole, u))
        return hole

    def part(self, name: str, prime: bool = False) -> Expr:
        """A part of a rule in general, u (or u', its derivative)."""
        text = name + ("'" if prime else "")
        hole = self.w.input(f"{_HOLE}{text}")
        self.names[id(hole)] = (hole, text)
        return hole

    def number(self, value: float) -> Expr:
        (shown,) = layout([Builder(True).const(value)], fractions=True, whole=self.whole)
        return shown

    def negated(self, e: Expr) -> Expr:
        if e is self.zero:
            return e
        return e.args[0] if e.kind == CALL and e.op is NEG else self.w.op(NEG, e)

    def times(self, *factors: Expr) -> Expr:
        """The product, without factors 1, its sign in front: 0 if a factor is."""
        negative, kept = False, []
        for f in factors:
            if f is self.zero:
                return self.zero
            if f.kind == CALL and f.op is NEG:
                negative, f = not negative, f.args[0]
            if f is not self.one:
                kept.append(f)
        e = functools.reduce(lambda a, b: self.w.op(MUL, a, b), kept) if kept else self.one
        return self.negated(e) if negative else e

    def plus(self, terms: list[tuple[bool, Expr]]) -> Expr:
        """The sum of the terms (each added, or taken away if False), without zeros."""
        signed = []
        for add, t in terms:
            if t is self.zero:
                continue
            if t.kind == CALL and t.op is NEG:
                add, t = not add, t.args[0]
            signed.append((add, t))
        if not signed:
            return self.zero
        first, e = signed[0]
        e = e if first else self.w.op(NEG, e)
        for add, t in signed[1:]:
            e = self.w.op(ADD if add else SUB, e, t)
        return e

    def over(self, a: Expr, b: Expr) -> Expr:
        if a is self.zero:
            return a
        if a.kind == CALL and a.op is NEG:
            return self.w.op(NEG, self.w.op(DIV, a.args[0], b))
        return self.w.op(DIV, a, b)

    def power(self, base: Expr, exponent: Expr) -> Expr:
        if exponent.kind == NUMBER and exponent.value in (0.0, 1.0):
            return base if exponent.value else self.one
        return self.w.op(POW, base, exponent)

    def simplified(self, e: Expr) -> Expr:
        """`e` (without holes) simplified as `diff` simplifies a derivative."""
        builder = Builder(True)
        made: dict[int, Expr] = {}
        for n in reachable([e]):
            if n.kind == INPUT:
                made[id(n)] = builder.var(n.value)
            elif n.kind == NUMBER:
                made[id(n)] = builder.const(n.value)
            else:
                made[id(n)] = builder.apply(n.op, *(made[id(a)] for a in n.args))
        ((root, _),) = finish(builder, {"": made[id(e)]}).values()
        (shown,) = layout([root], fractions=True, whole=self.whole)
        return shown

    # the rules

    def step(self, e: Expr) -> Step:
        """The rule `e` calls for, and what it gives."""
        if not self.varies[id(e)]:
            return Step(e, self.zero, CONSTANT)
        if e.kind == INPUT:
            return Step(e, self.one, VARIABLE)
        op = e.op
        if op is ADD or op is SUB:
            terms, ops = _sum_terms(e)
            rule = SUB.rule if ops == {SUB} else ADD.rule
            return Step(e, self.plus([(add, self.d(t)) for add, t in terms]), rule)
        if op is NEG:
            return Step(e, self.negated(self.d(e.args[0])), NEG.rule)
        if op is MUL:
            return self.product(e)
        if op is DIV:
            return self.quotient(e)
        if op.forward is POW.forward:  # a**b and pow(a, b)
            return self.power_rule(e)
        return self.function(e)

    def product(self, e: Expr) -> Step:
        factors = _factors(e)
        varying = [k for k, f in enumerate(factors) if self.varies[id(f)]]
        if len(varying) == 1:
            return Step(e, self.times(*self.d_at(varying[0], factors)), CONSTANT_FACTOR)
        terms = [(True, self.times(*self.d_at(k, factors))) for k in varying]
        return Step(e, self.plus(terms), MUL.rule)

    def d_at(self, k: int, factors: list[Expr]) -> list[Expr]:
        """The factors, the k-th one's derivative in its place."""
        return [self.d(f) if j == k else f for j, f in enumerate(factors)]

    def quotient(self, e: Expr) -> Step:
        a, b = e.args
        if not self.varies[id(b)]:
            return Step(e, self.over(self.d(a), b), CONSTANT_FACTOR)
        top = self.plus([(True, self.times(self.d(a), b)), (False, self.times(a, self.d(b)))])
        return Step(e, self.over(top, self.w.op(POW, b, self.number(2.0))), DIV.rule)

    def power_rule(self, e: Expr) -> Step:
        a, b = e.args
        if not self.varies[id(b)]:  # u**n
            given = _constant(b)
            named = any(n.kind == NUMBER and n.value in NAMED_CONSTANTS for n in reachable([b]))
            if given is None or named:  # x**n, x**e: n - 1, e - 1
                less = self.w.op(SUB, b, self.one)
            else:  # in fractions where n is one: 1/3 - 1 is -2/3, not -0.6666666666666667
                exact = in_fractions(operator.sub, given, 1.0)
                less = self.number(given - 1.0 if exact is None else exact)
            result = self.times(b, self.power(a, less), self.d(a))
            u, n = self.part("u"), self.part("n")
            less = self.w.op(SUB, n, self.one)
            general = (
                self.w.op(e.op, u, n),
                self.times(n, self.power(u, less), self.part("u", True)),
            )
            return self.chained(e, result, e.op.rule, general, a)
        u, u_ = self.part("u"), self.part("u", True)
        if not self.varies[id(a)]:  # c**u
            natural = a.kind == NUMBER and a.value == _E
            log = self.one if natural else self.w.op(LOG, a)
            result = self.times(e, log, self.d(b))
            general = (self.w.op(e.op, a, u), self.times(self.w.op(e.op, a, u), log, u_))
            return self.chained(e, result, EXPONENTIAL, general, b)
        v, v_ = self.part("v"), self.part("v", True)
        inner = self.plus(
            [
                (True, self.times(self.d(b), self.w.op(LOG, a))),
                (True, self.over(self.times(b, self.d(a)), a)),
            ]
        )
        general_inner = self.plus(
            [(True, self.times(v_, self.w.op(LOG, u))), (True, self.over(self.times(v, u_), u))]
        )
        power = self.w.op(e.op, u, v)
        return Step(
            e, self.times(e, inner), VARIABLE_EXPONENT, (power, self.times(power, general_inner))
        )

    def function(self, e: Expr) -> Step:
        op: Op = e.op
        formulas = textbook_formulas(op)
        parts = [self.part(_PARTS[k]) for k in range(op.arity)]
        terms, general = [], []
        for k, f in enumerate(formulas):
            if self.varies[id(e.args[k])]:
                local = self.formula(op, f.program, e.args)
                terms.append((True, self.times(local, self.d(e.args[k]))))
            local = self.formula(op, f.program, parts)
            general.append((True, self.times(local, self.part(_PARTS[k], True))))
        statement = (self.w.op(op, *parts), self.plus(general))
        inner = [a for a in e.args if self.varies[id(a)]]
        result = self.plus(terms)
        if all(a.kind == INPUT for a in inner):
            return Step(e, result, op.rule)
        return Step(e, result, CHAIN, statement)

    def chained(
        self, e: Expr, result: Expr, rule: str, general: tuple[Expr, Expr], inner: Expr
    ) -> Step:
        """A step by `rule`, or by the chain rule (with the rule in general) where it is
        applied to more than the variable."""
        if inner.kind == INPUT:
            return Step(e, result, rule)
        return Step(e, result, CHAIN, general)

    def formula(self, op: Op, formula: Program, args: list[Expr] | tuple[Expr, ...]) -> Expr:
        """One of the op's local derivatives, `formula`, on `args`."""
        env = dict(zip(op.parameters, args, strict=True))
        nodes = formula.interpret(input=env.__getitem__, const=self.number, apply=self.w.op)
        return nodes[formula.result]


_E = OPS["exp"].forward(1.0)


def _sum_terms(e: Expr) -> tuple[list[tuple[bool, Expr]], set[Op]]:
    """The terms of a chain of + and - (a - b + c: a, -b, c), and the ops that join them."""
    terms: list[tuple[bool, Expr]] = []
    ops: set[Op] = set()
    while e.kind == CALL and (e.op is ADD or e.op is SUB):
        terms.append((e.op is ADD, e.args[1]))
        ops.add(e.op)
        e = e.args[0]
    terms.append((True, e))
    return terms[::-1], ops


def _factors(e: Expr) -> list[Expr]:
    """The factors of a chain of * (a*b*c: a, b, c)."""
    factors = []
    while e.kind == CALL and e.op is MUL:
        factors.append(e.args[1])
        e = e.args[0]
    factors.append(e)
    return factors[::-1]


def _constant(e: Expr) -> float | None:
    """The value of a part made of numbers alone (2, 1/2, -3), else None."""
    values: dict[int, float] = {}
    for n in reachable([e]):
        if n.kind == INPUT:
            return None
        values[id(n)] = (
            n.value if n.kind == NUMBER else n.op.forward(*(values[id(a)] for a in n.args))
        )
    return values[id(e)]


# A text line's rule is written in a column after the longest line, up to this long.
RULE_COLUMN = 64


def written(derivations: list[Derivation], fmt: str, partial: bool = False) -> str:
    """The derivations as `diff --steps` prints them: in `fmt` text, markdown or latex;
    `partial` (the source has several inputs): LaTeX's operator is ∂/∂x."""
    if fmt == "latex":
        rows = [row for d in derivations for row in _Lines(d, True, partial).latex()]
        return "\n".join([r"\begin{aligned}", " \\\\\n".join(_fitted(rows)), r"\end{aligned}"])
    lines = _Lines.markdown if fmt == "markdown" else _Lines.text
    return "\n\n".join(lines(_Lines(d, latex=False)) for d in derivations)


class _Lines:
    """One derivation's lines: each step's `d/dx [part] = result` and its rule."""

    def __init__(self, derivation: Derivation, latex: bool, partial: bool = False):
        self.d = derivation
        self.tex = latex
        printer = self.printer = Printer(latex)
        for hole, name in derivation.names.values():
            printer.write_as(hole, name)
        variable = printer(Written().input(derivation.name))
        d = r"\partial " if partial else "d"
        self.operator = rf"\frac{{{d.strip()}}}{{{d}{variable}}}" if latex else f"d/d{variable}"
        for hole, part in derivation.derivatives.values():
            printer.write_as(hole, self.of(part))

    def of(self, part: Expr) -> str:
        """d/dx [part]."""
        inside = self.printer(part)
        if self.tex:
            return rf"{self.operator}\left[{inside}\right]"
        return f"{self.operator} [{inside}]"

    def steps(self) -> list[tuple[str, str, str, str]]:
        """Each step as `d/dx [part]`, what it is, its rule, and the rule in general or ''."""
        rows = []
        for step in self.d.steps:
            general = ""
            if step.statement is not None:
                part, result = map(self.printer, step.statement)
                general = f"{self.operator} {part} = {result}"
            rows.append((self.of(step.part), self.printer(step.result), step.rule, general))
        return rows

    def result(self, losses: bool = True) -> tuple[str, str]:
        """The derivative, and where it is the engine's (`x > 0`), or ''; with `losses`, also
        where it loses digits the engine keeps, as `diff` says under it."""
        notes = [n for n in self.d.notes if losses or n.relation != LOSES]
        return self.printer(self.d.result), self.printer.conditions(notes)

    def losses(self, code: bool = False) -> str:
        """Where the derivative loses digits the engine keeps, as `diff` says it, or ''; with
        `code`, its formulas as Markdown's code."""
        lost = [n for n in self.d.notes if n.relation == LOSES]
        return self.printer.conditions(lost, code) if lost else ""

    def text(self) -> str:
        rows = [
            (f"{left} = {right}", f"{rule}: {general}" if general else rule)
            for left, right, rule, general in self.steps()
        ]
        width = min(max(len(line) for line, _ in rows), RULE_COLUMN)
        lines = [f"{line.ljust(width)}    ({rule})" for line, rule in rows]
        result, conditions = self.result()
        lines.append(f"= {result}")
        if conditions:
            lines.append(f"# {conditions}")
        return "\n".join(lines)

    def markdown(self) -> str:
        lines = [
            f"{k}. `{left} = {right}` ({rule}{f': `{general}`' if general else ''})"
            for k, (left, right, rule, general) in enumerate(self.steps(), 1)
        ]
        result, conditions = self.result(losses=False)
        where = f", where `{conditions}`" if conditions else ""
        lines.append(f"\nResult: `{self.of(self.d.steps[0].part)} = {result}`{where}")
        losses = self.losses(code=True)
        if losses:
            lines.append(f"\nAs written, it {losses}.")
        return "\n".join(lines)

    def latex(self) -> list[tuple[str, str, str]]:
        """Each step's row, and the result's: d/dx [part], what it is, and its rule (or where
        the result holds, or '')."""
        rows = []
        for left, right, rule, general in self.steps():
            said = rf"\text{{{latex_text(rule)}{': ' if general else ''}}}"
            rows.append((left, right, f"{said}{f' {general}' if general else ''}"))
        # where it loses digits is said under diff's own LaTeX, not in a derivation's steps
        result, conditions = self.result(losses=False)
        where = rf"\text{{for }} {conditions}" if conditions else ""
        rows.append((self.of(self.d.steps[0].part), result, where))
        return rows


# The narrowest a right side is broken to, in letters, however wide its neighbours; and the
# width the three columns may take: an article's text, about 62 letters, less the gap before
# the rule (a right side alone is kept to latex_lines.LINE, which leaves more room).
NARROWEST, COLUMNS = 14, 56


def _fitted(rows: list[tuple[str, str, str]]) -> list[str]:
    """The rows of an `aligned` display that fits a page: `left &= right && rule` where the
    widest left, right and rule fit together (a right side broken over lines to do so), else
    each step stacked, its left, `= right` and rule on lines of their own."""
    from ._latex_lines import LINE, broken, continued, pieces, width

    def lines(tex: str, room: float) -> list[str]:
        return [" ".join(line) for line in broken(pieces(tex), 0, room)] if tex else []

    widest_left = max(width(left) for left, _, _ in rows)
    room = COLUMNS - widest_left - max(width(rule) for _, _, rule in rows)
    rights = [lines(right, room) for _, right, _ in rows] if room >= NARROWEST else []
    if rights and all(width(line) <= room for right in rights for line in right):
        shown = []
        for (left, _, rule), (first, *rest) in zip(rows, rights, strict=True):
            shown.append(f"{left} &= {first}{f' && {rule}' if rule else ''}")
            shown += map(continued, rest)
        return shown
    shown = []
    for left, right, rule in rows:
        first, *rest = lines(right, LINE - 2)
        shown += [f"&{left}", f"&= {first}", *map(continued, rest)]
        shown += [rf"&\qquad {line}" for line in lines(rule, LINE - 4)]
    return shown
