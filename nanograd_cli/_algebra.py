"""Expressions in a canonical form, simplified as they are built, and laid out for printing.

A sum is a constant plus numeric multiples of terms; a product is a numeric coefficient times
bases raised to numeric exponents; both are kept in one order. So like terms and numeric
coefficients are collected (`2*x*3 + x` is `7*x`), powers of a base add their exponents
(`x**2 * x**-1` is `x`), `-a*-b` is `a*b`, and a multiple of a sum is spread over it where that
collects terms (`2*(x + 1) + x` is `3*x + 2`). `layout` turns the canonical form into the ops
of the language the way a person writes them: `x - y` not `x + -1*y`, `2/x` not `2*x**-1`,
`sqrt(x)` not `x**0.5`, common factors taken out.

Every rewrite is exact in real arithmetic and keeps the ops' IEEE conventions, with one chosen
exception: a factor cancels against its inverse (`x/x` is 1) only when it is made of analytic
functions, which are zero or undefined at isolated points only; there the printed derivative
may be a number where grad's is nan (0/0). Functions with kinks or flat pieces (relu, abs,
step, sign, min, ...) and functions undefined on intervals (log, sqrt, ...) never cancel, and
neither does a term that can be nan on an interval (`log(x) - log(x)` stays `0*log(x)`).
Whether an op is so is read off the ops table (its derivative formulas and its values), not
listed here. Nothing here recurses on the size of an expression.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import itertools
import math
import operator
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any, cast

from ._array_ops import ArrayOp
from ._language import parse
from ._ops import ADD, COMPARISONS, DIV, MUL, NEG, OPS, POW, SUB, WHERE, Op, power
from ._program import Apply, Program

NUMBER, INPUT, SUM, PRODUCT, POWER, CALL = "number", "input", "sum", "product", "power", "call"
# A name the source binds once (`z = w*x + b`), standing for its definition: a leaf, printed as
# the name, with what is known of the definition (total, analytic, degree).
NAMED = "named"
SQRT = OPS["sqrt"]

# Sums and products are flattened up to this many operands; past it, one is kept whole as a
# single term or factor, so that building a long chain stays linear instead of copying
# ever longer operand lists at each step.
FLAT_LIMIT = 64

# Where an op is sampled to see whether it is nan on an interval (log, sqrt, asin, ...).
_SAMPLES = (-2.5, -0.5, 0.5, 2.5)


class Expr:
    """A node: a number, an input, a sum, a product, a power with a non-numeric exponent, or
    an op of the table applied to arguments (a call, or in a layout any op).

    A sum is `value + sum(w * a for a, w in zip(args, weights))`, a product
    `value * prod(a ** w for a, w in zip(args, weights))`. `total`: it is nan nowhere but at
    isolated points (where its inputs are finite); `analytic`: also, it is made of analytic
    functions only, so it is zero at isolated points only, and may be cancelled.
    """

    __slots__ = (
        "analytic",
        "args",
        "degree",
        "key",
        "kind",
        "op",
        "serial",
        "total",
        "value",
        "weights",
    )
    # filled in by _describe (and Builder.named)
    total: bool
    analytic: bool
    degree: float
    key: tuple[float, str, int]  # rank, name, serial

    def __init__(self, kind, op, args, weights, value, serial):
        self.kind = kind
        self.op = op  # the table op of a call
        self.args = args
        self.weights = weights
        self.value = value  # a number's value, an input's name, a sum's constant, a coefficient
        self.serial = serial  # creation order: a node comes after its arguments


def _integer(x: float) -> bool:
    return float(x).is_integer()


def _exactly(value):
    """A value as a key that tells -0.0 from 0.0 (1/-0.0 is -inf)."""
    return value.hex() if isinstance(value, float) else value


def _finite(*xs: float) -> bool:
    return all(math.isfinite(x) for x in xs)


@functools.cache
def _piecewise_ops() -> frozenset[Op]:
    """The functions with kinks or flat pieces: those whose derivative is the number 0 (step,
    sign, floor, ...) and those whose derivative formulas call one of them (relu, abs, max,
    ...). Arithmetic and powers are not looked at: the builder sees their exponents."""
    calls: dict[Op, set[Op]] = {}
    piecewise = set()
    for op in OPS.values():
        if op.syntax != "call" or op.forward is POW.forward:
            continue
        programs = [parse(formula) for formula in op.formulas]
        if programs and all(_is_zero(p) for p in programs):
            piecewise.add(op)
        calls[op] = {ins.op for p in programs for ins in p.code if type(ins) is Apply}
    changed = True
    while changed:
        changed = False
        for op, called in calls.items():
            if op not in piecewise and called & piecewise:
                piecewise.add(op)
                changed = True
    return frozenset(piecewise)


def _is_zero(program) -> bool:
    return not program.inputs and program.values({})[program.result] == 0.0


@functools.cache
def _op_nature(op: Op) -> tuple[bool, bool]:
    """(total, analytic) for an op: total if it is a number at every sample point (log is nan
    for x < 0), analytic if also it has no kinks or flat pieces."""
    total = all(
        not math.isnan(op.forward(*point)) for point in itertools.product(_SAMPLES, repeat=op.arity)
    )
    return total, total and op not in _piecewise_ops()


def defined_everywhere(op: Op) -> bool:
    """Whether op is a number wherever its arguments are, but at isolated points (not log)."""
    return _op_nature(op)[0]


def _power_of_power(p: float, k: float) -> float | None:
    """The exponent e such that (b**p)**k is b**e for every b (IEEE, up to rounding), if any:
    not (x**2)**0.5 (that is abs(x)), not (x**0.5)**2 (nan for x < 0, where x is not)."""
    e = p * k
    if not _finite(e):
        return None
    if _integer(e) and not (_integer(p) and _integer(k)):
        return None
    if not _integer(k) and _integer(p) and p % 2 == 0:
        return None
    return e


def _exponent_sum(q: float, p: float, base: Expr, exactly: bool = False) -> float | None:
    """The exponent of base**q * base**p as one power, if that keeps every value: not
    x**0.5 * x**0.5 (nan for x < 0, where x is not), and with opposite signs (a
    cancellation, x**2/x) only for an analytic base, whose zeros are isolated; any for a
    positive number whose powers are finite and not 0. `exactly`: added in fractions, and
    any for a base that is positive wherever it is a number (x**2 + 1)."""
    s = exact_sum(q, p, exactly)
    if not _finite(s):  # x**1e308 * x**1e308: kept apart, not x**inf
        return None
    number = known_number(base)
    if number is not None and number > 0.0:  # sqrt(pi)/sqrt(pi) is 1
        powers = (power(number, e) for e in (q, p, s))
        return s if all(math.isfinite(v) and v != 0.0 for v in powers) else None
    if exactly and positive(base):  # sqrt(x**2 + 1)**2 is x**2 + 1
        return s
    if exactly and (q > 0) == (p > 0) and _at_least_0(base):  # sqrt(x**2 + y**2)**2 too
        return s
    if _integer(s) and not (_integer(q) and _integer(p)):
        return None
    if (q > 0) != (p > 0) and not (base.analytic and base.kind != NUMBER):
        return None
    return s


# The numbers a textbook derivative keeps by name, as leaves of the input kind.
NAMED_CONSTANTS = {math.pi: "pi", math.e: "e"}
_BY_NAME = {name: value for value, name in NAMED_CONSTANTS.items()}


def known_number(e: Expr) -> float | None:
    """The value of a number, or of pi or e kept by name; else None."""
    if e.kind == NUMBER:
        return e.value
    return _BY_NAME.get(e.value) if e.kind == INPUT else None


def _factor_total(base: Expr, p: float) -> bool:
    """Whether base**p is nan nowhere but at isolated points (a number is a base only where
    its power overflows)."""
    number = known_number(base)
    if number is not None:  # sqrt(2), kept as it is written in a textbook derivative
        return math.isfinite(power(number, p))
    if positive(base):  # sqrt(x**2 + 1)
        return True
    return base.total and _integer(p) and (p > 0 or base.analytic)


# The arithmetic that a textbook derivative does in fractions.
_RATIONAL: dict[Op, Callable[..., Any]] = {
    ADD: operator.add,
    SUB: operator.sub,
    MUL: operator.mul,
    DIV: operator.truediv,
    NEG: operator.neg,
}
# The ops that fold numbers as arithmetic does (a textbook derivative keeps log(2) and sqrt(2)
# as they are written, and folds only what is a whole number: log(1), cos(0), sqrt(4)).
_ARITHMETIC = frozenset((ADD, SUB, MUL, DIV, NEG, POW, OPS["pow"]))


def _symbolic(args: tuple[Expr, ...], value: float, denominators: tuple[int, ...] = ()) -> bool:
    """Whether a textbook keeps a function of these numbers as it is written: of whole
    numbers or fractions without a short decimal (log(2), log(2/3)), or of any of
    `denominators` (where the source's numbers are whole, 0.5 is 1/2: log(1/2)), when it is
    no whole number itself. (A function of 2.5 is worked out, as SymPy works out one of a
    float; pi and e are kept by name, not as numbers.)"""
    kept = UNENDING + denominators
    exact = all(_integer(a.value) or fraction(a.value, kept) for a in args)
    return exact and not _integer(value)


# The denominators of the fractions a textbook derivative writes as p/q: in an exponent and
# a coefficient, every small one but 10 (x**(3/2), 3*x/2; x**0.7 stays), elsewhere those with
# no short decimal (2/3, but 0.5); and the largest numerator.
DENOMINATORS = (2, 3, 4, 5, 6, 7, 8, 9, 11, 12)
UNENDING = (3, 6, 7, 9, 11, 12)
_EXACT = tuple(range(2, 13))  # the fractions that arithmetic keeps exact: 0.7 - 1 is -0.3
_NUMERATOR = 1000


def fraction(value: float, denominators: tuple[int, ...] = DENOMINATORS) -> tuple[int, int] | None:
    """(p, q) where value is p/q correctly rounded, for q in `denominators` (not 1)."""
    for q in denominators:
        scaled = value * q
        p = round(scaled) if math.isfinite(scaled) else 0  # (1e308*3 overflows)
        if p and abs(p) <= _NUMERATOR and math.gcd(p, q) == 1 and p / q == value:
            return p, q
    return None


# Where every number of the source is whole, a derivative's numbers that are p/q to the last
# bit are written so for any q up to this (10/27, 81/16, 2187/64), as the exact arithmetic of
# a textbook gives them: fractions this small are about 1/q**2 apart, far more than a float's
# rounding, so a float is p/q only where the arithmetic made it so.
_WHOLE_DENOMINATOR = 10_000


def any_fraction(value: float) -> tuple[int, int] | None:
    """(p, q) where value is p/q correctly rounded, for any q from 2 to _WHOLE_DENOMINATOR,
    and no other such fraction is: two of them are at least 1/(q*_WHOLE_DENOMINATOR) apart,
    so a float whose spacing is that large (from about 1e7) may round from several
    (-94456227930.13573 is -586667631674073/6211 to the last bit, and is
    -6190283353629375/65536)."""
    if not math.isfinite(value) or _integer(value):
        return None
    ratio = Fraction(value).limit_denominator(_WHOLE_DENOMINATOR)
    p, q = ratio.numerator, ratio.denominator
    if q < 2 or p / q != value or math.ulp(value) * q * _WHOLE_DENOMINATOR >= 1:
        return None
    return p, q


def as_fraction(value: float) -> Fraction | None:
    """value as an exact fraction, if it is a whole number or a fraction p/q to the last bit
    for a q up to _WHOLE_DENOMINATOR (4/5 and 24/25, whose difference in floats is
    -0.15999999999999992, in fractions -4/25)."""
    if _integer(value) and abs(value) <= 2.0**53:
        return Fraction(int(value))
    ratio = fraction(value, _EXACT) or any_fraction(value)
    return None if ratio is None else Fraction(*ratio)


def in_fractions(f: Callable, *values: float) -> float | None:
    """f of the values done in fractions, correctly rounded, where each is a whole number or a
    simple fraction (2/3 - 1 is -1/3, where floats give -0.33333333333333337); else None."""
    exact = [as_fraction(v) for v in values]
    if None in exact:
        return None
    try:
        return float(f(*exact))
    except ZeroDivisionError:
        return None


def exact_sum(q: float, p: float, exactly: bool = True) -> float:
    """q + p; `exactly`, in fractions where both are simple ones."""
    s = in_fractions(operator.add, q, p) if exactly else None
    return q + p if s is None else s


def exact_product(q: float, p: float, exactly: bool = True) -> float:
    """q * p; `exactly`, in fractions where both are simple ones."""
    s = in_fractions(operator.mul, q, p) if exactly else None
    return q * p if s is None else s


def _power(c: float, k: float, exactly: bool) -> float:
    """c**k; `exactly`, in fractions where c is a simple one and k a small whole number
    ((1/5)**3 is 1/125, where floats give 0.008000000000000002)."""
    if exactly and _integer(k) and abs(k) <= _EXACT_POWER:
        with contextlib.suppress(OverflowError):  # (2**53)**64 is past a float
            s = in_fractions(lambda base: base ** int(k), c)
            if s is not None:
                return s
    return power(c, k)


# The largest whole number whose square factors are taken out of its root, and the largest
# of those factors' roots tried (by trial division: a thousand at most)
_LARGEST_ROOTED, _LARGEST_SQUARE_ROOT = 1e12, 1000


def _square_part(n: int) -> int:
    """The largest m up to _LARGEST_SQUARE_ROOT whose square divides n (12: 2)."""
    m, d = 1, 2
    while d * d <= n and d <= _LARGEST_SQUARE_ROOT:
        while n % (d * d) == 0:
            n //= d * d
            m *= d
        d += 1
    return m


# The largest whole exponent taken in fractions: (p/q)**k has k times the digits of p/q.
_EXACT_POWER = 64


def piecewise(op: Op) -> bool:
    """Whether op has kinks or flat pieces (relu, abs, step, sign, max, floor, ...): where its
    argument is near a kink, which side it falls on must be computed as the engine does."""
    return op in _piecewise_ops()


class Builder:
    """Makes canonical expressions, sharing equal ones.

    `textbook`: for a derivative as a person reads it, calls on numbers stay as written
    (`log(2)`, `sqrt(2)`) unless they are whole numbers, pi and e are kept by name (`2*pi`,
    leaves that are numbers), arithmetic on fractions is done in fractions, and powers of one
    base with symbolic exponents add them up (`x*x**(x - 1)` is `x**x`), exact but where the
    base is 0 (as `x/x` is 1: the base is analytic, so that is at isolated points only).
    """

    def __init__(self, textbook: bool = False, whole: bool = False):
        self._interned: dict[tuple, Expr] = {}
        self.textbook = textbook
        # the denominators of the numbers a function of which is kept as written, besides
        # those without a short decimal: where the source's numbers are whole, every one
        self._exact = DENOMINATORS if whole else ()
        # an expression a source binds to a name, and the name: where a derivative builds it
        # again (sigmoid(z) in sigmoid's own derivative), it is the name
        self._names: dict[int, Expr] = {}

    def _make(self, kind, op, args=(), weights=(), value=None) -> Expr:
        key = (kind, op, tuple(map(id, args)), weights, _exactly(value))
        node = self._interned.get(key)
        if node is None:
            node = Expr(kind, op, args, weights, value, len(self._interned))
            _describe(node)
            self._interned[key] = node
        return node

    def const(self, value: float) -> Expr:
        value = float(value)
        if self.textbook and abs(value) in NAMED_CONSTANTS:  # 2*pi, not 6.283185307179586
            leaf = self._make(INPUT, None, value=NAMED_CONSTANTS[abs(value)])
            leaf.degree = 0.0  # a number: x + pi, not pi + x
            if value > 0.0:
                return leaf
            negated = self.multiply(-1.0, [(leaf, 1.0)])
            assert negated is not None  # (-1.0 * pi overflows nothing)
            return negated
        return self._make(NUMBER, None, value=value)

    def var(self, name: str) -> Expr:
        return self._make(INPUT, None, value=name)

    def named(self, name: str, definition: Expr) -> Expr:
        """The name a source binds `definition` to, as a leaf that stands for it."""
        node = self._make(NAMED, None, value=name)
        node.total, node.analytic = definition.total, definition.analytic
        node.degree = definition.degree
        if definition.kind != NAMED:
            self._names[id(definition)] = node
        return node

    def written(self, op: Op, *args: Expr) -> Expr:
        """op applied to args as the engine computes it, nothing simplified (numbers folded,
        which is exact): what the argument of a function with a kink is made of, so that a
        point falls on the side of the kink that it falls on in the engine."""
        if all(a.kind == NUMBER for a in args) and type(op) is not ArrayOp:
            folded = op.forward(*(a.value for a in args))
            if math.isfinite(folded):
                return self.const(folded)
        return self._make(CALL, op, args)

    def apply(self, op: Op, *args: Expr) -> Expr:
        """op applied to args: simplified, or as it is when simplifying would overflow. An
        array operation (`A@x`, `ones(3)`) is kept as it is."""
        if type(op) is ArrayOp:
            return self._make(CALL, op, args)
        numbers = all(a.kind == NUMBER for a in args)
        if self.textbook and not numbers and op not in _ARITHMETIC:
            values = [known_number(a) for a in args]
            if None not in values:  # of pi or e by name: log(e) is 1, cos(pi) -1
                folded = op.forward(*values)
                if _integer(folded):
                    return self.const(folded)
        if numbers:
            folded = op.forward(*(a.value for a in args))
            if self.textbook and op in _RATIONAL:  # 2/3 - 1 is -1/3, as a textbook has it
                exact = in_fractions(_RATIONAL[op], *(a.value for a in args))
                folded = folded if exact is None else exact
            arithmetic = op in _ARITHMETIC and op.forward is not POW.forward
            kept = self.textbook and not arithmetic and _symbolic(args, folded, self._exact)
            if math.isfinite(folded) and not kept:
                return self.const(folded)
        simpler = self._rewrite(op, args)
        node = simpler if simpler is not None else self._make(CALL, op, args)
        return self._names.get(id(node), node)

    def _rewrite(self, op: Op, args: tuple[Expr, ...]) -> Expr | None:
        if op is ADD:
            return self.add(0.0, [(args[0], 1.0), (args[1], 1.0)])
        if op is SUB:
            return self.add(0.0, [(args[0], 1.0), (args[1], -1.0)])
        if op is NEG:
            return self.multiply(-1.0, [(args[0], 1.0)])
        if op is MUL:
            return self.multiply(1.0, [(args[0], 1.0), (args[1], 1.0)])
        if op is DIV:
            return self.multiply(1.0, [(args[0], 1.0), (args[1], -1.0)])
        if op.forward is POW.forward:  # ** and pow(a, b)
            return self.power(*args)
        if op is SQRT:
            return self.multiply(1.0, [(args[0], 0.5)])
        if op is WHERE and (args[0].kind == NUMBER or args[1] is args[2]):
            c, a, b = args  # a constant condition, or the same either way
            return a if c.value != 0.0 or a is b else b
        return None

    def power(self, base: Expr, exponent: Expr) -> Expr | None:
        if exponent.kind != NUMBER:
            return self._make(POWER, None, (base, exponent))
        if exponent.value == 0.0:  # x**0 is 1 for every x, nan and inf too (IEEE pow)
            return self.const(1.0)
        return self.multiply(1.0, [(base, exponent.value)])

    def add(self, constant: float, items: list[tuple[Expr, float]]) -> Expr | None:
        """constant + sum of weight * expression, or None if a number overflows."""
        weights: dict[int, float] = {}
        terms: dict[int, Expr] = {}
        exactly = self.textbook  # in fractions: 1/3 - 1 is -2/3
        for e, w in items:
            if e.kind == NUMBER:
                constant = exact_sum(constant, exact_product(w, e.value, exactly), exactly)
                continue
            for term, u in self._terms(e):
                if term is None:
                    constant = exact_sum(constant, exact_product(w, u, exactly), exactly)
                    continue
                terms[id(term)] = term
                held = weights.get(id(term), 0.0)
                weights[id(term)] = exact_sum(held, exact_product(w, u, exactly), exactly)
        constant = self._spread(constant, terms, weights)
        if not _finite(constant, *weights.values()):
            return None
        # a term that cancels goes, unless it can be nan on an interval: 0*log(x) stays
        kept = [(terms[i], w + 0.0) for i, w in weights.items() if w != 0.0 or not terms[i].total]
        if not kept:
            return self.const(constant)
        if len(kept) == 1 and constant == 0.0:
            term, w = kept[0]
            return term if w == 1.0 else self.multiply(w, [(term, 1.0)])
        kept.sort(key=lambda tw: _term_order(tw[0]))
        return self._make(
            SUM, None, tuple(t for t, _ in kept), tuple(w for _, w in kept), constant + 0.0
        )

    def _spread(self, constant: float, terms: dict[int, Expr], weights: dict[int, float]) -> float:
        """Spread each multiple of a sum among the terms over them where that collects half its
        terms (its constant counts as one) or more, or, for s or -s or the only term besides
        the constant, where that collects one or s is no factor of another term:
        2*(x + 1) + x is 3*x + 2, but 2*s + x*s and x*s - s keep s whole (a common factor,
        for `layout` to take out). Returns the new constant."""
        sums = [i for i, t in terms.items() if t.kind == SUM and len(t.args) <= FLAT_LIMIT]
        if not sums:
            return constant
        seen = collections.Counter(i for i in terms if i not in sums)
        seen.update(id(t) for i in sums for t in terms[i].args)
        factors = {id(b) for t in terms.values() if t.kind == PRODUCT for b in t.args}
        constants = (constant != 0.0) + sum(terms[i].value != 0.0 for i in sums)
        for i in sums:
            s, c = terms[i], weights[i]
            collected = sum(seen[id(t)] > 1 for t in s.args) + bool(s.value and constants > 1)
            if abs(c) == 1.0 or len(terms) == 1:
                worth = collected > 0 or i not in factors
            else:
                worth = 2 * collected >= len(s.args) + (s.value != 0.0)
            if c == 0.0 or not worth:
                continue
            del terms[i], weights[i]
            exactly = self.textbook  # in fractions: 4/3*5 is 20/3, not 6.666666666666666
            constant = exact_sum(constant, exact_product(c, s.value, exactly), exactly)
            for t, u in _pairs(s):
                terms[id(t)] = t
                held = weights.get(id(t), 0.0)
                weights[id(t)] = exact_sum(held, exact_product(c, u, exactly), exactly)
        return constant

    def multiply(self, coefficient: float, items: list[tuple[Expr, float]]) -> Expr | None:
        """coefficient * product of expression ** exponent, or None if a number overflows."""
        exponents: dict[int, list[float]] = {}
        bases: dict[int, Expr] = {}
        symbolic: dict[int, list[Expr]] = {}  # textbook: base -> its symbolic exponents

        def put(base: Expr, p: float) -> None:
            bases[id(base)] = base
            known = exponents.setdefault(id(base), [])
            for j, q in enumerate(known):
                s = _exponent_sum(q, p, base, self.textbook)
                if s is not None:
                    known[j] = s
                    break
            else:
                known.append(p)

        for e, k in items:
            c, factors = self._factors(e, k)
            coefficient = exact_product(coefficient, c, self.textbook)
            for base, p in factors:
                if self.textbook and base.kind == POWER and p == 1.0:
                    inner = base.args[0]
                    if inner.analytic and inner.kind != NUMBER:
                        bases[id(inner)] = inner
                        exponents.setdefault(id(inner), [])
                        symbolic.setdefault(id(inner), []).append(base.args[1])
                        continue
                put(base, p)
        for i, powers in symbolic.items():
            # x**E * x**F * x**n is x**(E + F + n) for a whole number n
            whole = [q for q in exponents[i] if _integer(q)]
            exponent = self.add(sum(whole), [(x, 1.0) for x in powers])
            together = None if exponent is None else self.power(bases[i], exponent)
            if together is None:
                for x in powers:
                    put(self._make(POWER, None, (bases[i], x)), 1.0)
                continue
            exponents[i] = [q for q in exponents[i] if not _integer(q)]
            c, factors = self._factors(together, 1.0)
            coefficient *= c
            for base, p in factors:
                put(base, p)
        # the roots of numbers (sqrt(2), sqrt(pi)): one alone is taken out of the denominator
        roots = [
            i
            for i, ps in exponents.items()
            if (bases[i].kind == NUMBER or known_number(bases[i]) is not None)
            and not all(map(_integer, ps))
        ]
        for i, ps in exponents.items():
            if self.textbook and len(ps) > 1:  # sqrt(x)**2*sqrt(x) is x**(3/2), nan where they are
                total = functools.reduce(lambda q, p: exact_sum(q, p, True), ps)
                one_sign = all(p > 0 for p in ps) or all(p < 0 for p in ps)
                cancels = bases[i].analytic and bases[i].kind != NUMBER
                if not _integer(total) and _finite(total) and (one_sign or cancels):
                    exponents[i] = [total]
            elif self.textbook and bases[i].kind == NUMBER and len(roots) == 1:
                coefficient = self._root_in(coefficient, bases[i].value, ps)
        if not _finite(coefficient):
            return None
        factors = [(bases[i], p) for i, ps in exponents.items() for p in ps if p != 0.0]
        if coefficient == 0.0 and all(_factor_total(b, p) for b, p in factors):
            return self.const(0.0)
        if not factors:
            return self.const(coefficient)
        if len(factors) == 1 and factors[0][1] == 1.0 and coefficient == 1.0:
            return factors[0][0]
        factors.sort(key=lambda bp: (bp[0].key, bp[1]))
        return self._make(
            PRODUCT,
            None,
            tuple(b for b, _ in factors),
            tuple(p + 0.0 for _, p in factors),
            coefficient + 0.0,
        )

    def _root_of(self, n: Expr, k: float) -> tuple[float, list[tuple[Expr, float]]]:
        """n**k for a number n kept as written, a whole one's square factors taken out where
        2*k is whole: sqrt(12) is 2*sqrt(3), 12**(-1/2) is (1/2)*3**(-1/2)."""
        whole = n.value
        if not (_integer(2 * k) and _integer(whole) and 1.0 < whole <= _LARGEST_ROOTED):
            return 1.0, [(n, k)]
        m = _square_part(int(whole))
        if m == 1:
            return 1.0, [(n, k)]
        return power(float(m), 2 * k), [(self.const(whole / m**2), k)]

    @staticmethod
    def _root_in(coefficient: float, n: float, exponents: list[float]) -> float:
        """The coefficient of a product with n**p, for a whole n and -1 < p < 0, with n**p
        made n**(p + 1)/n (`exponents` [p] made [p + 1]): the root out of the denominator, as
        a textbook writes the derivative of sqrt(3*x), sqrt(3)/(2*sqrt(x)), and of sqrt(6*x),
        sqrt(6)/(2*sqrt(x)), not 3/(sqrt(6)*sqrt(x))."""
        (p,) = exponents
        ratio = as_fraction(coefficient)
        if not (-1.0 < p < 0.0 and _integer(n) and n > 1.0 and ratio is not None):
            return coefficient
        moved = ratio / int(n)
        if moved.denominator > _WHOLE_DENOMINATOR:  # (a fraction a textbook would not write)
            return coefficient
        exponents[0] = exact_sum(p, 1.0, True)
        return float(moved)

    def _factors(self, e: Expr, k: float) -> tuple[float, list[tuple[Expr, float]]]:
        """e**k as a coefficient and (base, exponent) factors."""
        if e.kind == NUMBER:
            value = power(e.value, k)
            # (a textbook derivative keeps sqrt(2) as it is: 2**0.5 is no whole number)
            kept = self.textbook and not _integer(k) and _symbolic((e,), value, self._exact)
            if math.isfinite(value) and not kept:
                return value, []
            return self._root_of(e, k) if kept else (1.0, [(e, k)])
        if e.kind == PRODUCT and len(e.args) <= FLAT_LIMIT:
            c = e.value
            exponents = [  # sqrt(2)**2 is 2, for a positive number; (x**0.5)**2 is not x
                p * k
                if _integer(p * k) and (known_number(b) or 0.0) > 0.0
                else _power_of_power(p, k)
                for b, p in zip(e.args, e.weights, strict=True)
            ]
            # a positive number's root out of a one-factor product; a textbook's only where it
            # is a whole number or one's root, or a simple fraction (sqrt(x/4) is sqrt(x)/2;
            # sqrt(x/2) stays, as the chain rule writes it: 1/(4*sqrt(x/2)))
            scalable = _integer(k) or (
                len(e.args) == 1
                and c > 0.0
                and (not self.textbook or _integer(c) or as_fraction(power(c, k)) is not None)
            )
            if scalable and None not in exponents:
                factors = list(zip(e.args, cast("list[float]", exponents), strict=True))
                if self.textbook and not _integer(k) and _symbolic((self.const(c),), power(c, k)):
                    outside, root = self._root_of(self.const(c), k)  # sqrt(2*pi): sqrt(2)*sqrt(pi)
                    return outside, [*root, *factors]
                return _power(c, k, self.textbook), factors
            if self.textbook and _integer(k) and 1 <= abs(k) <= 4 and _finite(power(c, k)):
                # sqrt(x)**2 as sqrt(x)*sqrt(x), k times (exact, and nan where it is), so that
                # another sqrt(x) adds up with them: x**(3/2)
                sign = 1.0 if k > 0 else -1.0
                copies = [(b, sign * p) for _ in range(int(abs(k))) for b, p in _pairs(e)]
                return _power(c, k, True), copies
            return 1.0, [(e, k)]
        rooted = self.textbook and _integer(2 * k)  # a root of a sum of simple fractions
        if e.kind == SUM and (_integer(k) or rooted) and len(e.args) <= FLAT_LIMIT:
            weights = [*e.weights, e.value] if e.value else list(e.weights)
            content = _content(weights, self.textbook)
            if not _integer(k):  # sqrt(1 - x**2/4) is sqrt(4 - x**2)/2, where the root is p/q
                content = abs(content)
                if _integer(content) or as_fraction(power(content, k)) is None:
                    content = 1.0
            if content != 1.0:
                over = functools.partial(_quotient, content, exactly=self.textbook)
                scaled = self.add(over(e.value), [(t, over(w)) for t, w in _pairs(e)])
                if scaled is not None and math.isfinite(power(content, k)):
                    return _power(content, k, self.textbook), [(scaled, k)]
        return 1.0, [(e, k)]

    def _terms(self, e: Expr) -> list[tuple[Expr | None, float]]:
        """e as (term, weight) pairs, a constant as (None, constant)."""
        if e.kind == SUM and len(e.args) <= FLAT_LIMIT:
            return [(None, e.value), *_pairs(e)]
        if e.kind == PRODUCT and e.value != 1.0:
            if len(e.args) == 1 and e.weights[0] == 1.0:
                return [(e.args[0], e.value)]
            return [(self._make(PRODUCT, None, e.args, e.weights, 1.0), e.value)]
        return [(e, 1.0)]


def _pairs(e: Expr) -> list[tuple[Expr, float]]:
    return list(zip(e.args, e.weights, strict=True))


def _content(weights: list[float], exactly: bool = False) -> float:
    """The number to take out of a sum with these weights (its constant last) so that its
    first weight is positive and, where the weights allow, they are the smallest integers:
    2*x + 4 is 2*(x + 2); `exactly`, also of simple fractions: 48*x/125 + 168/125 is
    24*(2*x + 7)/125."""
    first = weights[0]
    if first == 0.0:
        return 1.0
    if all(_integer(w) for w in weights):
        g = 0
        for w in weights:
            g = math.gcd(g, int(w))
        return math.copysign(g, first)
    if all(_integer(w / first) for w in weights):
        return first
    fractions = [as_fraction(w) for w in weights] if exactly else [None]
    if None not in fractions:
        numerators = math.gcd(*(f.numerator for f in fractions))  # type: ignore[union-attr]
        denominators = math.lcm(*(f.denominator for f in fractions))  # type: ignore[union-attr]
        return math.copysign(numerators / denominators, first)
    return math.copysign(1.0, first)


def _quotient(content: float, w: float, exactly: bool) -> float:
    """w / content; `exactly`, in fractions where both are simple ones."""
    s = in_fractions(operator.truediv, w, content) if exactly else None
    return w / content if s is None else s


def _term_order(term: Expr) -> tuple:
    """Terms of a sum: higher degree first (6*x + 2), then by their factors."""
    if term.kind == PRODUCT:
        factors = tuple((b.key, -p) for b, p in _pairs(term))
    else:
        factors = ((term.key, -1.0),)
    long = term.kind == SUM and len(term.args) > FLAT_LIMIT
    return (not long, -term.degree, factors)  # a long sum kept whole goes first


_RANKS = {NUMBER: 0, PRODUCT: 1, INPUT: 2, NAMED: 2.5, POWER: 3, CALL: 4, SUM: 5}


def _natural(name: str) -> str:
    """A name to sort by, its numbers by value: x2 before x10."""
    return re.sub(r"[0-9]+", lambda digits: digits[0].zfill(20), name)


def _describe(e: Expr) -> None:
    """Fill in what is known of a new node from its arguments: total, analytic, degree, key."""
    kind = e.kind
    if kind == NUMBER:
        e.total = e.analytic = True
        e.degree = 0.0
    elif kind == INPUT:
        e.total = e.analytic = True
        e.degree = 1.0
    elif kind == SUM:
        e.total = all(a.total for a in e.args)
        e.analytic = all(a.analytic for a in e.args)
        e.degree = max(a.degree for a in e.args)
    elif kind == PRODUCT:
        pairs = _pairs(e)
        e.total = all(_factor_total(b, p) for b, p in pairs)
        # a positive base to any power is analytic: sqrt(x**2 + 1) is never nan, nor 0
        e.analytic = all(b.analytic and (_integer(p) or positive(b)) for b, p in pairs)
        e.degree = sum(b.degree * p for b, p in pairs)
    elif kind == POWER:  # a positive number to a power is as exp: 2**x/2**x is 1
        base, exponent = e.args
        of_number = (known_number(base) or 0.0) > 0.0
        e.total = of_number and exponent.total
        e.analytic = of_number and exponent.analytic
        e.degree = 0.0
    elif kind == NAMED:  # filled in by Builder.named
        e.total = e.analytic = True
        e.degree = 1.0
    elif type(e.op) is ArrayOp:  # sums and products of elements
        e.total = all(a.total for a in e.args)
        e.analytic = all(a.analytic for a in e.args)
        e.degree = 0.0
    elif all(a.kind == NUMBER for a in e.args):  # log(2), or log(0) where a number overflows
        e.total = e.analytic = math.isfinite(e.op.forward(*(a.value for a in e.args)))
        e.degree = 0.0
    elif e.op in COMPARISONS:  # 0 or 1, also of nan: (log(x) == 0)*0 is 0
        e.total, e.analytic = True, False
        e.degree = 0.0
    else:
        total, analytic = _op_nature(e.op)
        e.total = total and all(a.total for a in e.args)
        e.analytic = analytic and all(a.analytic for a in e.args)
        e.degree = 0.0
    # factors print in this order: numbers, long products kept whole (first, so they need no
    # parentheses), inputs by name (x2 before x10), the source's names, powers (2**x*log(2),
    # as SymPy),
    # calls by name, sums
    rank = _RANKS[kind]
    name = _natural(e.value) if kind in (INPUT, NAMED) else (e.op.name if kind == CALL else "")
    e.key = (rank, name, e.serial)


def positive(e: Expr) -> bool:
    """Whether e is positive in floats wherever it is a number: a positive number, cosh(...),
    or a positive constant plus squares (x**2 + 1). Not exp(x), which is 0 below -745."""
    number = known_number(e)
    if number is not None:
        return number > 0.0
    if e.kind == CALL:
        return e.op.name == "cosh"
    if e.kind == SUM:
        return e.value > 0.0 and _at_least_0(e)
    return False


def _at_least_0(e: Expr) -> bool:
    """Whether e is 0 or more wherever it is a number: a product of even powers and powers
    that are not whole numbers (x**2, x**2*y**4, sqrt(x), nan for x < 0) with a positive
    coefficient, a sum of such with a constant of 0 or more (x**2 + y**2, sqrt(x) + 1), or
    something positive."""
    if e.kind == PRODUCT:
        return e.value > 0.0 and all(p % 2 == 0.0 or p % 1 != 0.0 for p in e.weights)
    if e.kind == SUM:
        terms = zip(e.args, e.weights, strict=True)
        return e.value >= 0.0 and all(w > 0.0 and _at_least_0(t) for t, w in terms)
    return positive(e)


def reachable(roots: list[Expr]) -> list[Expr]:
    """Every node the roots depend on, arguments before users."""
    seen = {id(r): r for r in roots}
    stack = list(roots)
    while stack:
        for a in stack.pop().args:
            if id(a) not in seen:
                seen[id(a)] = a
                stack.append(a)
    return sorted(seen.values(), key=lambda e: e.serial)


Factor = tuple[Expr, float]  # base, exponent
Term = tuple[float, list[Factor]]  # weight, factors
Piece = tuple[float, list[Factor], "Expr | None"]  # weight, factors, a last factor shown


class Written:
    """Expressions exactly as written, of the kinds a layout has (number, input, call):
    nothing simplified, equal parts shared."""

    def __init__(self) -> None:
        self._interned: dict[tuple, Expr] = {}

    def _node(self, kind: str, op: Op | None = None, args=(), value=None) -> Expr:
        key = (kind, op, tuple(map(id, args)), _exactly(value))
        node = self._interned.get(key)
        if node is None:
            node = Expr(kind, op, args, (), value, len(self._interned))
            _describe(node)
            self._interned[key] = node
        return node

    def number(self, value: float) -> Expr:
        return self._node(NUMBER, value=value)

    def input(self, name: str) -> Expr:
        return self._node(INPUT, value=name)

    def op(self, op: Op, *args: Expr) -> Expr:
        return self._node(CALL, op, args)

    def program(self, program: Program) -> Expr:
        """A program's result as written, its inputs by their names."""
        nodes = program.interpret(input=self.input, const=self.number, apply=self.op)
        return nodes[program.result]


class _Layout(Written):
    """Canonical expressions written with the ops of the language, as a person writes them:
    a leading positive term, subtraction for negative ones, numbers first in a product, a
    denominator for negative exponents, sqrt for the power 1/2. Equal parts are shared."""

    def __init__(self, fractions: bool = False, whole: bool = False):
        super().__init__()
        self.shown: dict[int, Expr] = {}
        self.fractions = fractions
        self.whole = whole

    def number(self, value: float) -> Expr:
        """A number; with `fractions`, one that is p/q to the last bit and has no short
        decimal (q not made of 2s and 5s) is written p/q: 2/3, not 0.6666666666666666; and
        with `whole` (the source's numbers are), any simple fraction: 1/2, not 0.5."""
        ratio = self._fraction(value, UNENDING)
        return super().number(value) if ratio is None else self.ratio(*ratio)

    def _fraction(self, value: float, denominators=DENOMINATORS) -> tuple[int, int] | None:
        """value as p/q, where a textbook form writes fractions (`fractions`): with `whole`,
        any p/q; else one with a q of `denominators`."""
        if not self.fractions:
            return None
        return any_fraction(value) if self.whole else fraction(value, denominators)

    def ratio(self, p: int, q: int) -> Expr:
        return self.op(DIV, super().number(float(p)), super().number(float(q)))

    def show(self, e: Expr) -> Expr:
        """e's layout, given its arguments' (in self.shown)."""
        kind = e.kind
        if kind == NUMBER:
            return self.number(e.value)
        if kind in (INPUT, NAMED):
            return self.input(e.value)
        if kind == CALL:
            return self.op(e.op, *(self.shown[id(a)] for a in e.args))
        if kind == POWER:
            return self.op(POW, *(self.shown[id(a)] for a in e.args))
        if kind == PRODUCT:
            return self.terms([(e.value, _pairs(e))])
        return self.terms(_terms_of(e))

    def terms(self, terms: list[Term]) -> Expr:
        """A sum of weight * product of factors. Terms that share a factor that is more than
        an input have their common factors taken out: sigmoid(x)*(a + b) + c, but
        3*x**2 + 2*x; each time the factor that most terms share, until none is shared."""
        pieces: list[tuple[int, Piece]] = []
        rest = list(enumerate(_spread(terms, self.fractions)))
        while group := _sharing([factors for _, (_, factors) in rest]):
            inner = [rest[i][1] for i in group]
            common = _common_factors(inner)
            weights = [w for w, _ in inner]
            content = abs(_content(weights)) * (-1.0 if max(weights) < 0.0 else 1.0)
            reduced = _spread(
                [(_quotient(content, w, self.fractions), _divide(f, common)) for w, f in inner],
                self.fractions,
            )
            reduced.sort(key=lambda term: not term[1])  # the number last: log(x) + 1
            if len(reduced) == 1:  # what is left merged into one term: -2*exp(x)*sin(x)
                (w, factors), place = reduced[0], rest[group[0]][0]
                rest = [r for i, r in enumerate(rest) if i not in group] + [
                    (place, (content * w, common + factors))
                ]
                continue
            sum_of = self.chain([(w, factors, None) for w, factors in reduced])
            pieces.append((rest[group[0]][0], (content, common, sum_of)))
            rest = [r for i, r in enumerate(rest) if i not in group]
        pieces += [(place, (w, factors, None)) for place, (w, factors) in rest]
        pieces.sort(key=lambda piece: piece[0])
        return self.chain([piece for _, piece in pieces])

    def chain(self, pieces: list[Piece]) -> Expr:
        """The sum of the pieces (weight, factors, a last factor already shown), a positive one
        first, then adding or subtracting each."""
        lead = next((i for i, (w, _, _) in enumerate(pieces) if w > 0.0), 0)
        pieces = [pieces[lead], *pieces[:lead], *pieces[lead + 1 :]]
        shown = self.product(*pieces[0])
        for w, factors, last in pieces[1:]:
            if w < 0.0:
                shown = self.op(SUB, shown, self.product(-w, factors, last))
            else:
                shown = self.op(ADD, shown, self.product(w, factors, last))
        return shown

    def product(self, c: float, factors: list[Factor], last: Expr | None = None) -> Expr:
        """c * product of base**p, times `last` (shown already) if given."""
        if not factors and last is None:
            return self.number(c)
        # a sum of fractions as a sum of whole numbers over their denominator:
        # (2*x + 1)/(2*sqrt(x)), not (x + 1/2)/sqrt(x)
        wholes = {id(b): q for b, p in factors if _integer(p) and (q := self._denominator(b)) > 1}
        for base, p in factors:
            c *= float(wholes.get(id(base), 1)) ** -p
        negative = c < 0.0
        c = abs(c)
        top: list[Expr] = []
        bottom: list[Expr] = []
        if c == 0.0:  # a term kept for its nan: 0*log(x)
            top.append(self.number(c))
        elif c != 1.0:
            inverse = 1.0 / c
            ratio = self._fraction(c)
            if not _integer(c) and math.isfinite(inverse) and _integer(inverse):
                bottom.append(self.number(inverse))  # x/2, not 0.5*x
            elif ratio:  # 3*x/2 and 2/(3*x), in a textbook form
                top += [self.number(float(ratio[0]))] if ratio[0] != 1 else []
                bottom.append(self.number(float(ratio[1])))
            else:
                top.append(self.number(c))
        # -(p - 1)*(p - y) is (1 - p)*(p - y): the sum that takes the sign is, where one can,
        # one with a number in it
        flippable = [
            b
            for b, p in factors
            if abs(p) == 1.0 and b.kind == SUM and _short(b) and _mixed(b) and id(b) not in wholes
        ]
        flipped = max(flippable, key=lambda b: b.value != 0.0, default=None)
        for base, p in factors:
            shown = self.shown[id(base)]
            if id(base) in wholes:
                shown = self.terms(_terms_of(base, wholes[id(base)]))
            if negative and base is flipped:
                # -(x - y)*z is (y - x)*z, and -z/(x - y) is z/(y - x) (only for a short sum,
                # which is not worth sharing): 1/(1 - x) stays 1/(1 - x), whose zero is +0
                shown = self.terms(_terms_of(base, -1.0))
                negative = False
            (top if p > 0.0 else bottom).append(self.power(shown, abs(p)))
        if last is not None:
            top.append(last)
        if not top:
            top.append(self.number(1.0))
        if negative and top[0].kind == NUMBER:  # -2*x, -1/x: the number takes the sign
            top[0] = self.number(-top[0].value)
            negative = False
        shown = self.times(top)
        if bottom:
            shown = self.op(DIV, shown, self.times(bottom))
        return self.op(NEG, shown) if negative else shown

    def _denominator(self, e: Expr) -> int:
        """The least common denominator of the numbers of the sum e where a textbook form
        writes fractions and each is p/q for a small q (1 where e is no such sum)."""
        if not self.fractions or e.kind != SUM:
            return 1
        q = 1
        for w in (*e.weights, *([e.value] if e.value else [])):
            ratio = (int(w), 1) if _integer(w) else self._fraction(w)
            if ratio is None:
                return 1
            q = math.lcm(q, ratio[1])
        return q if q <= DENOMINATORS[-1] else 1

    def power(self, base: Expr, p: float) -> Expr:
        if p == 1.0:
            return base
        if p == 0.5:
            return self.op(SQRT, base)
        ratio = self._fraction(p)  # x**(3/2), in a textbook form
        return self.op(POW, base, self.ratio(*ratio) if ratio else self.number(p))

    def times(self, factors: list[Expr]) -> Expr:
        shown = factors[0]
        for f in factors[1:]:
            for part in _product_parts(f):
                shown = self.op(MUL, shown, part)
        return shown


# The most factors of a product shown that a product it is a factor of takes in as its own.
_PARTS = 8


def _product_parts(e: Expr) -> list[Expr]:
    """The factors of e where it is a short product shown that begins with no number (the
    layout of a sum whose terms share a factor, exp(x)*(a + b)): 2*exp(x)*(a + b), not
    2*(exp(x)*(a + b)); else e alone."""
    parts: list[Expr] = []
    first = e
    while first.kind == CALL and first.op is MUL and len(parts) < _PARTS:
        parts.append(first.args[1])
        first = first.args[0]
    if parts and first.kind != NUMBER and not (first.kind == CALL and first.op in (MUL, NEG)):
        return [first, *reversed(parts)]
    return [e]


def _terms_of(s: Expr, times: float = 1.0, exactly: bool = False) -> list[Term]:
    """The sum s as terms (weight, factors), its constant last (0 too: `_spread` drops it),
    each weight times `times` (`exactly`: in fractions where both are simple ones)."""
    times_ = functools.partial(exact_product, times, exactly=exactly)
    return [(times_(w), _factor_list(t)) for t, w in _pairs(s)] + [(times_(s.value), [])]


def _spread(terms: list[Term], exactly: bool = False) -> list[Term]:
    """The terms with each multiple of a sum that is no factor of another term spread over
    it where that costs no operation (`_spreads`), like terms and the constants merged
    (`exactly`: in fractions where they are simple ones): x + 2*(0.5 - y) is x + 1 - 2*y."""
    elsewhere = {id(b) for _, factors in terms if len(factors) > 1 for b, _ in factors}
    merged: dict[tuple, list] = {}
    for w, factors in terms:
        parts = [(w, factors)]
        if len(factors) == 1 and factors[0][1] == 1.0:
            s = factors[0][0]
            if s.kind == SUM and id(s) not in elsewhere and _spreads(w, s):
                parts = _terms_of(s, w, exactly)
        for v, f in parts:
            key = tuple((id(b), p) for b, p in f)
            if key in merged:
                merged[key][0] = exact_sum(merged[key][0], v, exactly)
            else:
                merged[key] = [v, f]
    kept = [(w, f) for w, f in merged.values() if w or not all(_factor_total(b, p) for b, p in f)]
    return kept or [(0.0, [])]


def _factor_list(e: Expr) -> list[tuple[Expr, float]]:
    """A term's factors, its coefficient left out (the weight of a sum's term has it)."""
    return _pairs(e) if e.kind == PRODUCT else [(e, 1.0)]


def _sharing(terms: list[list[tuple[Expr, float]]]) -> list[int]:
    """The terms (their places) that share the factor most of them have, with exponents of one
    sign, if that is two or more and the factor is more than an input; else none."""
    holders: dict[tuple[int, bool], list[int]] = {}
    for place, factors in enumerate(terms):
        for base, p in factors:
            if base.kind not in (INPUT, NUMBER):
                found = holders.setdefault((id(base), p > 0.0), [])
                if not found or found[-1] != place:
                    found.append(place)
    best = max(holders.values(), key=len, default=[])
    return best if len(best) > 1 else []


def _common_factors(terms: list[tuple[float, list[tuple[Expr, float]]]]) -> list:
    """The factors every term has (the smaller power, where the signs of the exponents
    agree; a base that a term has twice, as sqrt(x)*sqrt(x), counts twice)."""
    others = [list(factors) for _, factors in terms[1:]]
    common = []
    for base, p in terms[0][1]:
        if base.kind == NUMBER:
            continue
        found = []
        for factors in others:
            j = next(
                (j for j, (b, q) in enumerate(factors) if b is base and (q > 0.0) == (p > 0.0)),
                None,
            )
            if j is None:
                break
            found.append(j)
        else:
            powers = [p]
            for factors, j in zip(others, found, strict=True):
                powers.append(factors.pop(j)[1])
            smallest = min(powers, key=abs)
            common.append((base, smallest))
    return common


def _divide(factors: list[tuple[Expr, float]], common: list[tuple[Expr, float]]) -> list:
    """The factors of a term with the common ones taken out (each from the power of its base
    whose exponent has the same sign)."""
    left = list(common)
    reduced = []
    for base, p in factors:
        for j, (b, q) in enumerate(left):
            if b is base and (q > 0.0) == (p > 0.0):
                p -= q
                del left[j]
                break
        if p != 0.0:
            reduced.append((base, p))
    return reduced


def _spreads(c: float, s: Expr) -> bool:
    """Whether c*s written as a sum has no more operations: -(x + y) is -x - y, 2*(0.5 - x)
    is 1 - 2*x, but 2*(x + y) stays."""
    if len(s.args) > FLAT_LIMIT or not _finite(c * s.value, *(c * w for w in s.weights)):
        return False
    return abs(c) == 1.0 or sum(abs(w) == 1.0 for w in s.weights) <= 1


def _short(e: Expr) -> bool:
    return len(e.args) + (e.value != 0.0) <= 2


def _mixed(e: Expr) -> bool:
    """Whether a sum has terms of both signs."""
    signs = {w > 0.0 for w in e.weights if w}
    if e.value:
        signs.add(e.value > 0.0)
    return len(signs) == 2


def layout(roots: list[Expr], fractions: bool = False, whole: bool = False) -> list[Expr]:
    """The roots written with the ops of the language (nodes of kinds number, input, call);
    with `fractions`, numbers that are simple fractions as p/q: in exponents and
    coefficients, and alone where they have no short decimal (2/3) or, `whole`, any (1/2)."""
    lay = _Layout(fractions, whole)
    for e in reachable(roots):
        lay.shown[id(e)] = lay.show(e)
    return [lay.shown[id(r)] for r in roots]
