"""Implicit differentiation (`diff --implicit y --wrt x`): dy/dx where an equation
`lhs == rhs` (or an expression equal to 0) relates x and y.

With F = lhs - rhs, dy/dx = -F_x/F_y; each higher order is the derivative of the one before
along the curve, d/dx G(x, y) = G_x + G_y*dy/dx. The partial derivatives are `symbolic`'s,
as a textbook writes them, and each result is simplified as `diff` simplifies.
"""

from __future__ import annotations

from ._algebra import NUMBER, Builder, Expr, layout
from ._formula import LOSES, Note, write
from ._ops import ADD, COMPARISONS, DIV, MUL, NEG, OPS, SUB
from ._program import Apply, Program
from ._symbolic import (
    HIGHER_TEXT,
    Derivatives,
    derive,
    from_program,
    too_long,
    whole_numbers,
    written,
)
from ._textbook import finish, one_fraction
from .errors import InputError, NanogradError, option

# An implicit derivative is one fraction, as a course writes it, where that is at most this
# many operations longer than its terms apart (-9*(9*x**2 + 16*y**2)/(256*y**3), of an
# ellipse, is 2 longer than -81*x**2/(256*y**3) - 9/(16*y)).
IMPLICIT_LONGER = 2

EQUALS = OPS["=="]


def implicit_text(
    program: Program, dependent: str, wrt: str, latex: bool, order: int, showing: str = "usual"
) -> str:
    """d`dependent`/d`wrt` (its `order`-th derivative) along the curve the source's equation
    makes, as `diff` prints a derivative (`showing`: which notes, diff's notes)."""
    if dependent not in program.inputs:
        raise InputError(
            f"{option('implicit', dependent)}: the source has no input {dependent} "
            f"(its inputs: {', '.join(program.inputs) or 'none'})"
        )
    if wrt not in program.inputs:
        raise InputError(
            f"{option('wrt', wrt)}: the source has no input {wrt} "
            f"(its inputs: {', '.join(program.inputs)})"
        )
    if wrt == dependent:
        raise InputError(
            f"{option('implicit', dependent)} and {option('wrt', wrt)} name the same input: "
            f"give the variable {dependent} depends on"
        )
    builder = Builder(True, whole_numbers(program))
    function = _function(program, builder)
    slope, notes = _slope(builder, function, dependent, wrt)
    root = slope
    for reached in range(1, order):
        try:
            root, found = _along(builder, root, slope, dependent, wrt)
        except _TooLong as long:
            derivative = f"derivative of {dependent} by {wrt}"
            raise NanogradError(too_long(derivative, order, reached, long.length)) from None
        notes += found
    # named as the derivative is (dy/dx, d2y/dx): LaTeX's label where bound parts come first
    name = f"d{order if order > 1 else ''}{dependent}/d{wrt}"
    ((root, found),) = finish(builder, {name: root}).values()
    root, cancelled = one_fraction(builder, root, IMPLICIT_LONGER)
    found += cancelled
    # where it holds; not where a rule's form loses digits: the slope is no form of the
    # engine's, and --exact is not for it
    kept = [n for n in notes + found if n.relation != LOSES]
    result = Derivatives({name: root}, notes={name: kept}, textbook=True)
    result.whole = whole_numbers(program)
    return written(result, latex, notes=showing)


def _function(program: Program, builder: Builder) -> Program:
    """F, whose zeros the source's equation describes: lhs - rhs, or the expression itself."""
    last = program.code[program.result]
    nodes = from_program(builder, program, {n: builder.var(n) for n in program.inputs})
    if isinstance(last, Apply) and last.op is EQUALS:
        lhs, rhs = (nodes[a] for a in last.args)
        return _program(builder.apply(SUB, lhs, rhs))
    if isinstance(last, Apply) and last.op in COMPARISONS:
        raise InputError(
            f"{option('implicit')} takes an equation, lhs == rhs, or an expression that is 0, "
            f"not a comparison with {last.op.name}"
        )
    return program


def _program(e: Expr) -> Program:
    """An expression as a program, written out and read again."""
    from ._language import parse

    (shown,) = layout([e], fractions=True)
    text = write({"": shown})
    if len(text) > HIGHER_TEXT:
        raise _TooLong(len(text))
    return parse(text)


class _TooLong(Exception):
    """A derivative written out in more than HIGHER_TEXT characters: `length` of them."""

    def __init__(self, length: int):
        super().__init__(length)
        self.length = length


def _partials(
    builder: Builder, program: Program, names: tuple[str, str]
) -> tuple[list[Expr], list[Note]]:
    """The derivatives of `program` by each name (0 by a name it does not read)."""
    present = [n for n in names if n in program.inputs]
    found = derive(program, present, textbook=True, builder=builder)
    roots = [found.roots.get(n, builder.const(0.0)) for n in names]
    return roots, [note for n in present for note in found.notes.get(n, [])]


def _slope(
    builder: Builder, function: Program, dependent: str, wrt: str
) -> tuple[Expr, list[Note]]:
    """dy/dx = -F_x/F_y."""
    (by_x, by_y), notes = _partials(builder, function, (wrt, dependent))
    if by_y.kind == NUMBER and by_y.value == 0.0:
        raise InputError(
            f"{option('implicit', dependent)}: the equation does not change with {dependent} "
            f"(its derivative by {dependent} is 0), so it does not make {dependent} a "
            f"function of {wrt}"
        )
    return builder.apply(NEG, builder.apply(DIV, by_x, by_y)), notes


def _along(
    builder: Builder, g: Expr, slope: Expr, dependent: str, wrt: str
) -> tuple[Expr, list[Note]]:
    """d/dx of g(x, y) along the curve: g_x + g_y*dy/dx."""
    (by_x, by_y), notes = _partials(builder, _program(g), (wrt, dependent))
    return builder.apply(ADD, by_x, builder.apply(MUL, by_y, slope)), notes
