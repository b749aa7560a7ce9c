"""Expressions in the engine's own order of operations: the exact form of a derivative.

`diff --exact` and `hessian` differentiate a program's derivative again or evaluate it at
points, so it must give the engine's numbers, digits and all, wherever the engine's are
finite. The canonical form of `algebra.Builder` is exact in real arithmetic only: it merges
a/b/c into a/(b*c), whose b*c overflows or underflows where a/b and a/b/c do not (hypot's
derivative at 1.6e308), and collects -(1/x)/x*2/x into -2/x**3, whose x**3 overflows where the
engine's steps do not (and whose derivative is then inf*0, nan). Here every operation is kept
as the engine does it, one step each, with only the rewrites that give the same float at
every point where it is finite: numbers folded (as the engine folds them), a factor 1 or -1,
a term 0, a factor 0 (0 times g is 0 wherever g is a number), --x, x + x as 2*x, a where on
a known condition, x**1.
"""

from __future__ import annotations

from ._algebra import CALL, NUMBER, Builder, Expr
from ._array_ops import ArrayOp
from ._ops import ADD, DIV, MUL, NEG, OPS, POW, SUB, WHERE, Op

_POWERS = frozenset((POW, OPS["pow"]))


class EngineForm(Builder):
    """A builder that keeps the engine's order of operations (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__(textbook=False)

    def apply(self, op: Op, *args: Expr) -> Expr:
        if type(op) is not ArrayOp and all(a.kind == NUMBER for a in args):
            folded = op.forward(*(a.value for a in args))
            if folded - folded == 0.0:
                return self.const(folded)
        node = self._same_value(op, args) or self._make(CALL, op, args)
        return self._names.get(id(node), node)

    def written(self, op: Op, *args: Expr) -> Expr:
        return self.apply(op, *args)

    def _same_value(self, op: Op, args: tuple[Expr, ...]) -> Expr | None:
        """A simpler node with the same float as op(args) wherever that is finite."""
        numbers = [a.value if a.kind == NUMBER else None for a in args]
        if op is MUL:
            for k in (0, 1):
                other = args[1 - k]
                if numbers[k] == 1.0:
                    return other
                if numbers[k] == -1.0:
                    return self.apply(NEG, other)
                if numbers[k] == 0.0:
                    return self.const(0.0)
        elif op is DIV:
            if numbers[1] == 1.0:
                return args[0]
            if numbers[1] == -1.0:
                return self.apply(NEG, args[0])
            if numbers[0] == 0.0 and numbers[1] != 0.0:
                return self.const(0.0)
        elif op is ADD:
            if numbers[0] == 0.0:
                return args[1]
            if numbers[1] == 0.0:
                return args[0]
            if args[0] is args[1]:  # x + x is 2*x to the last bit, overflow included
                return self._make(CALL, MUL, (self.const(2.0), args[0]))
        elif op is SUB:
            if numbers[1] == 0.0:
                return args[0]
            if numbers[0] == 0.0:
                return self.apply(NEG, args[1])
        elif op is NEG:
            (a,) = args
            if a.kind == CALL and a.op is NEG:
                return a.args[0]
        elif op in _POWERS:
            if numbers[1] == 1.0:
                return args[0]
            if numbers[1] == 0.0:  # x**0 is 1 for every x, nan and inf too (IEEE pow)
                return self.const(1.0)
        elif op is WHERE:
            _, a, b = args
            if a is b:
                return a
            if numbers[0] is not None:  # a where c is not 0 (nan is not 0), else b
                return a if numbers[0] != 0.0 else b
        return None
