"""The forward and backward passes of a program at one point, written out node by node.

The numbers are those of the one engine pass `grad` makes (`Program.gradients`): explain walks
that graph afterwards, in the order the engine ran, so every gradient it totals is the engine's
to the bit. The words are the source's: a node is written as its sub-expression, or by the
name it is bound to, and a local derivative is its op's formula from the ops table with the
op's parameters replaced by the arguments.
"""

from __future__ import annotations

import gc
import itertools
import math
from collections.abc import Iterator, Mapping
from typing import NamedTuple, cast

from ._algebra import CALL, DENOMINATORS, INPUT, NUMBER, UNENDING, Expr, fraction
from ._formula import AS_WRITTEN, Printer, Template, holds
from ._ops import COMPARISONS, DIV, MUL, NEG, OPS, POW, SUB, WHERE, Op
from ._program import Apply, Const, Input, Program
from ._symbolic import exact_formulas, textbook_formulas, whole_numbers
from .engine import live_nodes
from .results import BackwardStep, Explanation, ForwardStep, LocalDerivative, Term

# An unnamed sub-expression whose text is longer than this is named (t1, t2, ...) and written
# by that name where it is used: the text stays short and linear in the size of the program.
# So is one whose text an earlier node has: (x + y)*(x + y) has two nodes x + y, which a
# reader must tell apart (x + y, and t1 = x + y; the result is (x + y)*t1).
LONGEST_INLINE = 24

NE, EQ = OPS["!="], OPS["=="]

_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")

# The formulas' templates made so far, by op, formula (its id), the arguments' shapes and the
# denominators of the fractions a worked-out number is written as;
# emptied when it holds MOST_TEMPLATES (a number's value is a shape: keys need not recur).
_TEMPLATES: dict[tuple[Op, int, tuple, tuple[int, ...]], Template] = {}
MOST_TEMPLATES = 4096


class Part(NamedTuple):
    """A part of a formula being written: its trees; its value, if constant (numbers of the
    source and of the formula: folded into one number where the op is arithmetic or the
    value a whole number, `1/(x*log(2))` stays as written); and whether it is a comparison,
    0 or 1 and never nan."""

    tree: Expr
    value: float | None
    comparison: bool


def explain(program: Program, point: Mapping[str, float]) -> Explanation:
    """The program's forward and backward passes at `point`, one step per node."""
    # Every object made here lives as long as the explanation: the cyclic collector, which
    # would look at all of them again and again while they are made (a fifth of the time
    # at 5,000 nodes), waits until the end.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _explained(program, point)
    finally:
        if collecting:
            gc.enable()


def _explained(program: Program, point: Mapping[str, float]) -> Explanation:
    evaluation = program.gradients(point)
    summary = evaluation.summary()
    nodes = evaluation.nodes
    writer = _Writer(program)
    forward = []
    for i, node in enumerate(nodes):
        expression = writer.add(i)
        if expression is not None:
            forward.append(ForwardStep(writer.terms[i], expression, node.data))

    code = program.code
    varying = program.varying()
    index = {id(node): i for i, node in enumerate(nodes)}
    contributions: dict[int, list[float]] = {}
    backward = []
    reached = set()
    order = evaluation.result.topological_order()  # backward's order: its sums, to the bit
    live = live_nodes(evaluation.result, order)  # a branch a where does not take passes nothing on
    for v in order:
        i = index[id(v)]
        reached.add(i)
        if not varying[i]:
            continue  # no input below it: its gradient flows nowhere that matters
        ins = code[i]
        local_derivatives = []
        if type(ins) is Apply:
            repeated = len(set(ins.args)) < len(ins.args)  # x**x: d/da and d/db tell them apart
            values = tuple(c.data for c in v.children)
            locals_ = ins.op.derivative(*values, v.data)
            for k, (a, local) in enumerate(zip(ins.args, locals_, strict=True)):
                if varying[a]:
                    # nothing flows back from a node below a branch a where does not take, nor
                    # from a where to its condition and the argument it does not take
                    passed = v in live and (ins.op is not WHERE or local == 1.0)
                    product = local * v.grad if passed else 0.0  # as Value.backward has it
                    if passed:
                        contributions.setdefault(a, []).append(product)
                    formula, domain = writer.formula(ins.op, k, ins.args, values)
                    by = writer.by_parameter(ins.op, k, ins.args) if repeated else None
                    local_derivatives.append(
                        LocalDerivative(writer.terms[a], formula, local, product, domain, by)
                    )
        step = BackwardStep(writer.terms[i], v.grad, contributions.get(i, []), local_derivatives)
        backward.append(step)
    for name in program.inputs:  # inputs the result does not depend on: gradient 0
        slot = program.input_slots[name]
        if slot not in reached:
            backward.append(BackwardStep(writer.terms[slot], nodes[slot].grad, [], []))
    result = writer.terms[program.result]
    return Explanation(
        summary.value,
        summary.inputs,
        summary.gradients,
        forward,
        backward,
        result,
        summary.non_finite,
    )


class _Writer:
    """How each node is written: `terms[i]` where it is used, and the trees to print it."""

    def __init__(self, program: Program):
        self.program = program
        self.names = bound_names(program)
        self.terms: list[Term] = []
        self._trees: list[Expr] = []  # how each node is written where it is used
        self._serial = itertools.count()
        self._latex_names: dict[str, str] = {}  # names as LaTeX has them, where they differ
        self._printers = (Printer(), Printer(latex=True, names=self._latex_names))
        self._spare = spare_names(program)
        self._numbers: dict[tuple[Op, int], Term] = {}  # formulas that are numbers
        self._inline: set[str] = set()  # the texts of the nodes written as they are
        # the fractions written p/q: any simple one where the source's numbers are whole (1/2,
        # as a textbook has it), else those with no short decimal (1/3, not 0.5's 1/2)
        self._fractions = DENOMINATORS if whole_numbers(program) else UNENDING

    def add(self, i: int) -> Term | None:
        """Write node `i` (after the nodes before it); return the expression that computes
        it, or None for a number that is only written inside other expressions."""
        ins = self.program.code[i]
        name = self.names.get(i)
        if isinstance(ins, Input):
            leaf = self._leaf(name or (ins.name, ins.name))
            self._keep(self._term(leaf), leaf)
            return self.terms[i]
        if isinstance(ins, Const):
            tree = self._number(ins.value)
        else:
            tree = self._apply(ins.op, *[self._trees[a] for a in ins.args], value=AS_WRITTEN)
        expression = self._term(tree)
        if name is None and i == self.program.result:
            self._keep(Term(expression.text, self._result_name()), tree)
            return expression
        if name is None and type(ins) is Const:
            self._keep(expression, tree)
            return None
        if name is None and (
            len(expression.text) > LONGEST_INLINE or expression.text in self._inline
        ):
            name = next(self._spare)
        if name is None:
            self._inline.add(expression.text)
            self._keep(expression, tree)
        else:
            leaf = self._leaf(name)
            self._keep(self._term(leaf), leaf)
        return expression

    def formula(
        self, op: Op, k: int, args: tuple[int, ...], values: tuple[float, ...]
    ) -> tuple[Term, Term | None]:
        """The op's formula for d/d(argument k) as a textbook writes it (`diff`'s), its
        parameters replaced by the arguments, and where it is not the engine's at this point
        (the arguments' `values`), the condition where it is (`x > 0`), else None.

        What numbers of the source make constant is worked out, so `x**2` gives `2*x`, not
        `2*x**(2 - 1)`; a function of numbers stays as it is but for a whole number
        (`1/(x*log(2))`).
        """
        textbook = textbook_formulas(op)[k]
        formula = textbook.program
        domain: Term | None = None
        for side, relation in textbook.conditions:
            at = dict(zip(op.parameters, values, strict=True))
            value = side.values({n: at[n] for n in side.inputs})[side.result]
            if not holds(relation, value) and not _agrees(op, k, formula, at):
                shown = self._written(side, op, args)
                sign, latex = {">": (">", ">"), "!=": ("!=", r"\neq")}[relation]

                def domain_latex(s: Term = shown, r: str = latex) -> str:
                    return f"{s.latex} {r} 0"

                domain = Term(f"{shown.text} {sign} 0", domain_latex)
                break
        if not formula.inputs:  # a number, as for + and -: the same text at every use
            if (op, k) not in self._numbers:
                self._numbers[op, k] = self._term(self._number(formula.values({})[formula.result]))
            return self._numbers[op, k], domain
        return self._written(formula, op, args), domain

    def by_parameter(self, op: Op, k: int, args: tuple[int, ...]) -> Term:
        """The derivative of op by its parameter k, at the arguments: `d(a**b)/da at a = x,
        b = x`; in LaTeX, the partial evaluated at them."""
        names = op.parameters
        tree = self._apply(op, *(self._leaf((n, n)) for n in names))
        text, latex = self._printers
        at = [(n, self.terms[a]) for n, a in zip(names, args, strict=True)]

        def written_latex() -> str:
            of = latex(tree)
            bindings = r",\ ".join(f"{n} = {term.latex}" for n, term in at)
            return (
                rf"\left.\frac{{\partial \left({of}\right)}}{{\partial {names[k]}}}"
                rf"\right|_{{{bindings}}}"
            )

        bindings = ", ".join(f"{n} = {term.text}" for n, term in at)
        return Term(f"d({text(tree)})/d{names[k]} at {bindings}", written_latex)

    def _written(self, formula: Program, op: Op, args: tuple[int, ...]) -> Term:
        """A formula in the op's parameters, written with the arguments in their places: the
        text from a template made once per shape of the arguments (how their texts join in,
        and a number's value, which the formula works with), the LaTeX when first read."""
        parts = self._parts(args)
        text = self._printers[0]
        # x**2 gives 2*x: a number's value is its shape
        shapes = tuple([text.shape(p.tree) if p.value is None else p.value.hex() for p in parts])
        if None in shapes:
            return self._term(self._tree(formula, op, parts))
        shaped = cast("tuple[tuple[int, bool] | str, ...]", shapes)  # (no None in them)
        # a worked-out number is written by the source's fractions (1/5, or 0.2)
        key = (op, id(formula), shapes, self._fractions)
        template = _TEMPLATES.get(key)
        if template is None:
            holes = [
                p if p.value is not None else Part(self._leaf(("", "")), None, p.comparison)
                for p in parts
            ]
            tree = self._tree(formula, op, holes)
            template = Template(tree, [hole.tree for hole in holes], shaped)
            if len(_TEMPLATES) >= MOST_TEMPLATES:
                _TEMPLATES.clear()
            _TEMPLATES[key] = template
        latex = self._printers[1]
        return Term(
            template.fill([self.terms[a].text for a in args]),
            lambda: latex(self._tree(formula, op, parts)),
        )

    def _parts(self, args: tuple[int, ...]) -> list[Part]:
        """The arguments as parts of a formula: a number of the source by its value."""
        code = self.program.code
        parts = []
        for a in args:
            ins = code[a]
            number = ins.value if type(ins) is Const and a not in self.names else None
            comparison = type(ins) is Apply and ins.op in COMPARISONS  # 0 or 1, never nan
            parts.append(Part(self._trees[a], number, comparison))
        return parts

    def _tree(self, formula: Program, op: Op, parts: list[Part]) -> Expr:
        """The formula's tree with `parts` for the op's parameters, numbers worked out."""
        env = dict(zip(op.parameters, parts, strict=True))

        def apply(op: Op, *parts: Part) -> Part:
            values = [part.value for part in parts]
            comparison = op in COMPARISONS
            if None not in values:
                value = op.forward(*values)
                arithmetic = op.syntax != "call" and op is not POW
                by_name = arithmetic and (math.pi in values or math.e in values)  # e - 1
                if math.isfinite(value) and not by_name and (arithmetic or value.is_integer()):
                    return Part(self._worked_out(value), value, False)
            if op is POW and values[1] == 1.0:
                return parts[0]  # a**1 is a, exactly
            if op is MUL and (values[0] in (1.0, -1.0) or values[1] in (1.0, -1.0)):
                one, other = parts if values[0] in (1.0, -1.0) else parts[::-1]
                if one.value == 1.0:
                    return other  # 1*a is a, exactly
                return Part(self._apply(NEG, other.tree), None, False)  # -1*a is -a
            if op in (NE, EQ) and values[1] == 0.0 and parts[0].comparison:
                # where's (x > 0) != 0 is x > 0, and (x > 0) == 0 is 1 - (x > 0): an Iverson
                # bracket, [x > 0], in LaTeX
                if op is NE:
                    return parts[0]
                return Part(self._apply(SUB, self._number(1.0), parts[0].tree), None, False)
            if op is WHERE and values[0] is not None:
                return parts[1] if values[0] != 0.0 else parts[2]  # the branch taken
            zeros = [v == 0.0 and q.comparison for v, q in zip(values, parts[::-1], strict=True)]
            if op is MUL and any(zeros):
                return Part(self._number(0.0), 0.0, False)  # 0 times a comparison is 0
            tree = self._apply(op, *(part.tree for part in parts))
            return Part(tree, None, comparison)

        written = formula.interpret(
            input=env.__getitem__,
            const=lambda value: Part(self._number(value), value, False),
            apply=apply,
        )
        return written[formula.result].tree

    def _worked_out(self, value: float) -> Expr:
        """A number worked out from others: a fraction as p/q (1/3; 1/2 where the source's
        numbers are whole)."""
        ratio = fraction(value, self._fractions)
        if ratio is None:
            return self._number(value)
        return self._apply(DIV, self._number(float(ratio[0])), self._number(float(ratio[1])))

    def _keep(self, term: Term, tree: Expr) -> None:
        self.terms.append(term)
        self._trees.append(tree)

    def _result_name(self) -> str:
        """An unnamed result is written f in LaTeX's partial derivatives."""
        taken = {text for text, _ in self.names.values()} | set(self.program.inputs)
        return "f" if "f" not in taken else r"\hat{f}"

    # Trees, shared by every expression that uses them, each node written once as it is made,
    # and printed as `diff` prints; in LaTeX (where names differ: q₁ and q_1) when first read.

    def _leaf(self, name: tuple[str, str]) -> Expr:
        shown, latex = name
        if latex != shown:
            self._latex_names[shown] = latex
        return Expr(INPUT, None, (), (), shown, next(self._serial))

    def _number(self, value: float) -> Expr:
        return Expr(NUMBER, None, (), (), value, next(self._serial))

    def _apply(self, op: Op, *args: Expr, value: str | None = None) -> Expr:
        """A call; `value` AS_WRITTEN for a node of the source (formula.AS_WRITTEN)."""
        # (a serial need only order a node after its arguments)
        return Expr(CALL, op, args, (), value, next(self._serial))

    def _term(self, tree: Expr) -> Term:
        """The tree written in the language, and in LaTeX when that is first read."""
        text, latex = self._printers
        return Term(text(tree), lambda: latex(tree))


def bound_names(program: Program) -> dict[int, tuple[str, str]]:
    """The name bound to each node that has one, as shown and as LaTeX is made from it. A name
    bound to several nodes in turn is numbered, q₁, q₂, ... (LaTeX: q_1, ...), so that every
    version can be told apart; in LaTeX q_(1), ... where the source has a name q_1 too."""
    taken = names_used(program)
    times: dict[str, int] = {}
    for name in program.labels.values():
        times[name] = times.get(name, 0) + 1
    seen: dict[str, int] = {}
    names = {}
    for i in sorted(program.labels):
        name = program.labels[i]
        if times[name] == 1:
            names[i] = (name, name)
        else:
            seen[name] = version = seen.get(name, 0) + 1
            clash = any(f"{name}_{k}" in taken for k in range(1, times[name] + 1))
            latex = f"{name}_({version})" if clash else f"{name}_{version}"
            names[i] = (name + str(version).translate(_SUBSCRIPTS), latex)
    return names


def names_used(program: Program) -> set[str]:
    """The inputs and the names the source binds."""
    return set(program.labels.values()) | set(program.inputs)


def spare_names(program: Program) -> Iterator[tuple[str, str]]:
    """t1, t2, ...: names the program does not use."""
    taken = names_used(program)
    for k in itertools.count(1):
        if f"t{k}" not in taken:
            yield f"t{k}", f"t{k}"


def _agrees(op: Op, k: int, formula: Program, at: dict[str, float]) -> bool:
    """Whether the textbook `formula` for d/d(argument k) of op gives the engine's value at
    the point `at` anyway (2*x at x = 0 for x**2: the power rule holds where b != 0)."""
    exact = exact_formulas(op)[k].program
    mine, theirs = (f.values({n: at[n] for n in f.inputs})[f.result] for f in (formula, exact))
    return mine == theirs or (math.isnan(mine) and math.isnan(theirs))
