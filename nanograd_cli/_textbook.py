"""A derivative finished as a textbook finishes it, after the builder's simplifications.

Rewrites over every sum and product of the derivative, from the inside out:
 * a term multiplied by 0 goes (the builder keeps `0*log(x)` for its nan where x < 0); where
   the rest of the sum is a number and the term was not, the condition where it was (`x > 0`)
   becomes a note of the derivative;
 * sin(a)**2 + cos(a)**2 is 1, times the factors the two terms share, sin(a)/cos(a) is
   tan(a), and exp(a)*exp(b) is exp(a + b);
 * a sum of quotients is one fraction over the product of their denominators, the numerator
   multiplied out (`3/(5*x - 7) - 5*(3*x + 2)/(5*x - 7)**2` is `-31/(5*x - 7)**2`): its terms
   collect and cancel, and a numerator that is a denominator's base cancels against it
   (`(cos(x) + 1)/(cos(x) + 1)**2`), as does a factor that the numerator and a polynomial of
   the denominator share (`(x**2 - 4*x + 4)/(x - 2)**2` is 1, noted `x - 2 != 0`;
   `(x**3 - 3*x - 2)/(x**2 - 1)` is `(x**2 - x - 2)/(x - 1)`, noted `x + 1 != 0`); the
   factors all its terms share are taken out where that is shorter (`x*(x + 2)/(x + 1)**2`);
 * terms that share a factor are written as one product where that makes a power of it
   (`x**x*(log(x) + 1)**2`, not `x**x*(log(x) + 1)*(log(x) + 1)`);
 * roots of a base that add to a whole power are that power (`sqrt(x)*sqrt(x)` is x), with
   where the base is positive as a note (nan for x < 0, which x is not), unless what is left
   takes a root of it still; the powers of a base that is smooth where it is a number join
   whatever they add to, with where it is a number and not 0 as notes (log(x)**2/log(x)**2
   is 1, noted x > 0 and log(x) != 0), which go where the derivative says them itself.
Each but the first is kept where it makes the derivative no longer as printed (operations
counted as `diff` prints them), first for its part and then for the whole; a fraction one
operation longer than the nested form it replaces is kept, as a textbook writes the quotient
rule: (f'g - fg')/g**2 costs that one more than (f' - fg'/g)/g.

A function with a kink (relu, abs, where, ...) is kept as it is, arguments and all: its
argument is as the engine computes it (see `symbolic`). Each rewrite is exact in real
arithmetic; a cancelled term is the only one that changes where the derivative is nan, and it
says where. Nothing here recurses on the size of an expression.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import cast

from ._algebra import (
    CALL,
    INPUT,
    NAMED,
    NAMED_CONSTANTS,
    NUMBER,
    POWER,
    PRODUCT,
    SUM,
    Builder,
    Expr,
    defined_everywhere,
    exact_product,
    exact_sum,
    known_number,
    layout,
    piecewise,
    positive,
    reachable,
)
from ._formula import Note, write
from ._ops import COMPARISONS, OPS, WHERE
from ._polynomials import (
    COMMON_DEGREE,
    Poly,
    as_power,
    common_factor,
    divided,
    polynomial,
    primitive,
    written,
)
from ._program import Apply

# Where each function with a domain is a number, but at isolated points: its argument `a` in
# an expression that is positive there.
_DOMAINS: dict[str, Callable[[Builder, Expr], Expr]] = {
    **dict.fromkeys(("log", "log2", "log10", "sqrt"), lambda b, a: a),
    "log1p": lambda b, a: _plus(b, a, 1.0),
    "acosh": lambda b, a: _plus(b, a, -1.0),
    **dict.fromkeys(("asin", "acos", "atanh"), lambda b, a: _one_minus_square(b, a)),
}
# A sum is brought over one denominator when it has at most this many terms, and the
# numerator multiplied out when that makes at most this many terms.
_TERMS = 12
_EXPANDED = 48
# The rewrites are tried on a sum or product of at most this many nodes (written out as a
# tree), and on derivatives of at most _LARGE nodes: each try lays its part out once.
_SMALL = 300
_LARGE = 5000
SIN, COS, TAN, COT, EXP = OPS["sin"], OPS["cos"], OPS["tan"], OPS["cot"], OPS["exp"]
SINH, COSH = OPS["sinh"], OPS["cosh"]
SEC, CSC, CBRT = OPS["sec"], OPS["csc"], OPS["cbrt"]
# 1/cos(a) is sec(a), 1/sin(a) csc(a): where a derivative has sec(a) (csc(a)) already
RECIPROCALS = {COS: SEC, SIN: CSC}
# The squares that add up to 1: sin(a)**2 + cos(a)**2, and cosh(a)**2 - sinh(a)**2 (the
# first's partner, and the sign of its weight in the sum)
_SQUARES = {SIN: (COS, 1.0), COSH: (SINH, -1.0)}


def _plus(b: Builder, a: Expr, c: float) -> Expr:
    return b.add(c, [(a, 1.0)]) or a


def _one_minus_square(b: Builder, a: Expr) -> Expr:
    square = b.multiply(1.0, [(a, 2.0)])
    return (square and b.add(1.0, [(square, -1.0)])) or a


def finish(builder: Builder, roots: dict[str, Expr]) -> dict[str, tuple[Expr, list[Note]]]:
    """Each root finished, with the conditions where it is the root's value: with the terms
    multiplied by 0 gone, and the rewrites of fractions where that makes the whole no longer
    than the quotient rule's one operation more (a rewrite that shortens one sum can
    lengthen what it is part of)."""
    cancelled, rewritten = Finisher(builder, False), Finisher(builder, True)
    done = {}
    for name, root in roots.items():
        plain, plain_notes = cancelled(root)
        if len(reachable([root])) > _LARGE:  # (a chain 8,000 deep)
            done[name] = (plain, plain_notes)
            continue
        full, notes = rewritten(root)
        if full is not plain and _kept_zeros(full):  # a rewrite's own cancelled terms
            full, more = cancelled(full)
            notes = _needed(builder, notes + more, full)
        if full is not plain and _joinable(full):  # a rewrite's own sqrt(x)*sqrt(x)
            full, more = rewritten(full)
            notes = _needed(builder, notes + more, full)
        longer = 0 if _kept_zeros(full) else 1  # (the quotient rule's one operation more)
        shorter = full is plain or printed_operations(full) <= printed_operations(plain) + longer
        done[name] = (full, notes) if shorter else (plain, plain_notes)
    return done


def one_fraction(b: Builder, root: Expr, longer: int) -> tuple[Expr, list[Note]]:
    """The finished `root`, a sum of quotients, as one fraction where that is at most
    `longer` operations longer, with where the fraction holds; else root."""
    if not _quotients(root):
        return root, []
    cancelled: list[Note] = []
    together = _together(b, root, cancelled)
    if together is None or operations(together) > operations(root) + longer:
        return root, []
    return together, cancelled


def printed_operations(e: Expr) -> int:
    """The operations of e as `diff` prints it: a large repeated part bound to a name (t1)
    once, none for a part that is a number."""
    from ._language import parse

    program = parse(write({"": layout([e], fractions=True)[0]}))
    varies = program.varying()
    return sum(type(ins) is Apply and varies[i] for i, ins in enumerate(program.code))


class Finisher:
    """Finishes the derivatives of one builder, sharing what they share: with `rewrite`,
    every rewrite; else only the terms multiplied by 0 go."""

    def __init__(self, builder: Builder, rewrite: bool = True):
        self.b = builder
        self.rewrite = rewrite
        self.done: dict[int, Expr] = {}
        self.notes: dict[int, list[Note]] = {}  # per node: the conditions of its cancelled terms
        # per node: the bases of the roots it joined (sqrt(x)*sqrt(x) is x, noted x > 0)
        self.roots: dict[int, list[Expr]] = {}
        self.fractions: dict[int, Expr] = {}  # a sum as one fraction, where that was longer
        self.size: dict[int, int] = {}  # per node: its nodes as a tree, up to _SMALL
        self.reciprocals: set[int] = set()  # the sec(a) and csc(a) of the root, by id

    def __call__(self, root: Expr) -> tuple[Expr, list[Note]]:
        """The root finished, and the conditions where it is the root's value."""
        order = reachable([root])
        self.reciprocals = {id(e) for e in order if e.kind == CALL and e.op in (SEC, CSC)}
        for e in order:
            if id(e) not in self.done:
                self.done[id(e)] = self._finished(e)
        notes = [n for e in order for n in self.notes.get(id(e), [])]
        done = self.done[id(root)]
        roots = {id(base): base for e in order for base in self.roots.get(id(e), [])}
        if roots:  # where the root does not take a root of it still
            said = {id(n.expr) for n in notes if n.relation == ">"}
            for node in reachable([done]):
                if node.kind == PRODUCT:
                    said.update(id(a) for a, p in _pairs(node) if not float(p).is_integer())
            for i, base in roots.items():
                note = _positive(self.b, base)
                if i not in said and id(note.expr) not in said:
                    notes.append(note)
        return done, _needed(self.b, notes, done)

    def _finished(self, e: Expr) -> Expr:
        b, done = self.b, self.done
        self.size[id(e)] = min(_SMALL, 1 + sum(self.size[id(a)] for a in e.args))
        rewrite = self.rewrite and self.size[id(e)] < _SMALL
        if e.kind in (NUMBER, INPUT, NAMED):
            return e
        same = all(done[id(a)] is a for a in e.args)  # (the builder's rebuilds are not idle)
        if e.kind == CALL:
            if same or piecewise(e.op) or e.op is WHERE or e.op in COMPARISONS:
                return e
            return b.apply(e.op, *(done[id(a)] for a in e.args))
        if e.kind == POWER:
            return e if same else b.power(*(done[id(a)] for a in e.args)) or e
        if e.kind == PRODUCT:
            made = e if same else b.multiply(e.value, [(done[id(a)], p) for a, p in _pairs(e)])
            if made is None:
                return e
            if not rewrite:
                return self._without_zeros(e, made)
            made = self._roots_joined(e, _cubes(b, made))
            made, notes = _signs(b, made)
            self._record(e, [], notes)
            made = _tangents(b, made)
            made = _smaller(made, _exponentials(b, made))
            if any(id(a) in self.fractions for a in e.args):  # 1/(x**2*(1/x**2 + 1))
                # one fraction, where it is at most the one operation longer that writing the
                # quotient rule's (f'g - fg')/g**2 costs over (f' - fg'/g)/g
                factors = [(self.fractions.get(id(a), done[id(a)]), p) for a, p in _pairs(e)]
                whole = b.multiply(e.value, factors)
                rule = any(p < 0.0 and not _numbers_only(a) for a, p in _pairs(e))  # (f' - fg'/g)/g
                if whole is not None and not _kept_zeros(whole):
                    # (x/sqrt(x**2 - 1) + 1)/(x + sqrt(x**2 - 1)): the sum over itself
                    whole, roots, notes = self._joined(whole)
                    if operations(whole) <= operations(made) + (1 if rule else -1):
                        made = whole
                        self._record(e, roots, notes)
            if made.kind == PRODUCT and any(a.kind == SUM for a in made.args):
                # (x*log(x) + x)*(log(x) + 1) is x*(log(x) + 1)**2
                factors = [(_factored(b, a, []) or a, p) for a, p in _pairs(made)]
                made = _smaller(made, b.multiply(made.value, factors), ties=False)
            return self._without_zeros(e, self._reciprocals(made))
        made = e if same else b.add(e.value, [(done[id(t)], w) for t, w in _pairs(e)])
        if made is None:
            return e
        made = self._without_zeros(e, made)
        if not rewrite:
            return made
        if made.kind == SUM:
            made = _pythagorean(b, made)
        if made.kind == SUM:  # x**x*log(x)*(log(x) + 1) + x**x*(log(x) + 1): a square
            made = _smaller(made, _grouped(b, made), ties=False)
        if made.kind == SUM:  # x**(sin(x) - 1)*sin(x) beside x**sin(x): x**sin(x)*sin(x)/x
            made = _smaller(made, self._joined_powers(e, made), ties=False)
        if made.kind == SUM:
            cancelled: list[Note] = []
            together = _together(b, made, cancelled)
            # -1/tan(x)**2 - 1 (of cos(x)/sin(x)) is -1/sin(x)**2, where tan(x) is
            # sin(x)/cos(x) again: where that is shorter, as a textbook writes it
            written_out = _sines_and_cosines(b, made)
            if written_out is not None:
                other: list[Note] = []
                # (its terms may be one: cot(x)*sin(x) is cos(x))
                alone = written_out.kind != SUM
                candidate = written_out if alone else _together(b, written_out, other)
                shorter = _smaller(together or made, candidate, ties=False)
                if shorter is not together:
                    together, cancelled = shorter, other
            # a fraction at most the one operation longer that writing the quotient rule's
            # (f'g - fg')/g**2 costs over (f' - fg'/g)/g is the textbook's; a polynomial
            # stays as it is
            chosen = made
            # (a sum of powers of one name stays as a polynomial does: 6*x + 2/x**2 - 2/x**3)
            if together is not None and together is not made and not _powers_of_one_name(made):
                # t/(sqrt(x**2 - 1)*t), t = x + sqrt(x**2 - 1): the sum over itself
                joined, roots, notes = self._joined(together)
                longer = operations(joined) - operations(made)
                quotient_rule = _quotients(made) and not _kept_zeros(joined)
                if longer < 0 or (longer <= 1 and quotient_rule):
                    chosen = joined
                    self._record(e, roots, notes)
            if chosen is made and together is not None:
                self.fractions[id(e)] = together  # for a product it is a factor of
            elif cancelled:  # where the fraction was nan and is not now
                self.notes[id(e)] = [*self.notes.get(id(e), []), *cancelled]
            made = chosen
        return made

    def _reciprocals(self, made: Expr) -> Expr:
        """The product `made` with 1/cos(a)**k as sec(a)**k where the root has sec(a) (and
        1/sin(a)**k as csc(a)**k), as a course writes tan's derivative beside sec's:
        log(sec(x) + tan(x))'s (sec(x)**2 + sec(x)*tan(x))/(sec(x) + tan(x)) is sec(x)."""
        if made.kind != PRODUCT or not self.reciprocals:
            return made
        factors = []
        for base, p in _pairs(made):
            if base.kind == CALL and base.op in RECIPROCALS and p < 0 and float(p).is_integer():
                reciprocal = self.b.apply(RECIPROCALS[base.op], base.args[0])
                if id(reciprocal) in self.reciprocals:
                    base, p = reciprocal, -p
            factors.append((base, p))
        return self.b.multiply(made.value, factors) or made

    def _joined_powers(self, e: Expr, s: Expr) -> Expr | None:
        """The sum s with a**b taken out, where each term has a**b or a**(b - 1), b not a
        number (the power rule beside d/db a**b): a**(b - 1) is a**b/a where a is not 0
        (noted, unless a is positive): x**sin(x)*(cos(x)*log(x) + sin(x)/x), as a course
        writes logarithmic differentiation; None where that is not so."""
        b = self.b
        if s.value:  # (a number added is no multiple of a**b)
            return None
        powers = {id(f): f for t in s.args for f, p in _factors(t) if f.kind == POWER and p == 1}
        found = None
        for power in powers.values():
            a, exponent = power.args
            higher = b.power(a, b.add(1.0, [(exponent, 1.0)]) or exponent)
            if higher is not None and higher is not power and id(higher) in powers:
                found = (power, higher)
        if found is None:
            return None
        lower, higher = found
        a = lower.args[0]
        terms = []
        for t, w in _pairs(s):
            factors = _factors(t)
            if (higher, 1.0) in factors:
                left = [(f, p) for f, p in factors if f is not higher]
            elif (lower, 1.0) in factors:
                left = [(f, p) for f, p in factors if f is not lower] + [(a, -1.0)]
            else:
                return None
            term = b.multiply(_coefficient(t), left)
            if term is None:
                return None
            terms.append((term, w))
        inner = b.add(0.0, terms)
        out = None if inner is None else b.multiply(1.0, [(higher, 1.0), (inner, 1.0)])
        if out is not None and not positive(a):
            self._record(e, [], [Note(a, "!=")])
        return out

    def _roots_joined(self, e: Expr, made: Expr) -> Expr:
        """`made` (e rebuilt) with the powers of a base that comes more than once joined
        (`_joined`), and what that says of where it holds kept for e."""
        out, roots, notes = self._joined(made)
        self._record(e, roots, notes)
        return out

    def _record(self, e: Expr, roots: list[Expr], notes: list[Note]) -> None:
        """The bases whose roots e joined, and the notes of where e holds."""
        if roots:
            self.roots[id(e)] = [*self.roots.get(id(e), []), *roots]
        if notes:
            self.notes[id(e)] = [*self.notes.get(id(e), []), *notes]

    def _joined(self, made: Expr) -> tuple[Expr, list[Expr], list[Note]]:
        """`made` with the powers of a base that comes more than once joined where they add
        to a whole number: sqrt(x)*sqrt(x) is x, which is nan for x < 0 no longer, so the
        note says where the base is positive (`x > 0`, among the bases returned), unless the
        rest says it; and, for a base analytic where it is a number (`_smooth`), whatever
        they add to, noted where it is a number and not 0: log(x)**2/log(x)**2 is 1 for
        x > 0 and log(x) != 0 (the notes returned), notes that the whole may say itself."""
        if made.kind != PRODUCT or not _repeats(_pairs(made)):
            return made, [], []
        total: dict[int, float] = {}
        signs: dict[int, set[bool]] = {}
        whole: dict[int, bool] = {}
        roots: dict[int, Expr] = {}  # the bases joined from powers that are not whole
        for base, p in _pairs(made):
            total[id(base)] = total.get(id(base), 0.0) + p
            signs.setdefault(id(base), set()).add(p > 0.0)
            whole[id(base)] = whole.get(id(base), True) and float(p).is_integer()
            if not float(p).is_integer() and not positive(base) and not _abs(base):
                roots[id(base)] = base
        joined: set[int] = set()
        factors = []
        notes: list[Note] = []
        for base, p in _pairs(made):
            i = id(base)
            # relu(x)/relu(x) stays: nan for every x < 0, and 1 would not say where
            mixed = len(signs[i]) > 1 and i not in roots
            if _abs(base) and math.isfinite(total[i]):
                # abs(x)**(3/2)*abs(x)**(3/2) is abs(x)**3, never nan; sqrt(abs(x))/abs(x)**3
                # is nan at x = 0, where abs(x)**(-5/2) is inf
                if i not in joined and len(signs[i]) > 1:
                    notes.append(Note(base.args[0], "!="))
            elif mixed or not float(total[i]).is_integer():
                if not (math.isfinite(total[i]) and _smooth(self.b, base)):  # (x**1e308 twice)
                    factors.append((base, p))
                    roots.pop(i, None)
                    continue
                if i not in joined:  # log(x)**2/log(x)**2, log(x)**(3/2)/log(x)**3
                    notes += _domain(self.b, base) or []
                    notes.append(Note(base, "!=") if whole[i] else _positive(self.b, base))
                    roots.pop(i, None)
            if i not in joined:
                joined.add(i)
                factors.append((base, total[i]))
        out = self.b.multiply(made.value, [(base, p) for base, p in factors if p != 0.0])
        if out is None or len(factors) == len(made.args):
            return made, [], []
        return out, list(roots.values()), notes

    def _without_zeros(self, e: Expr, made: Expr) -> Expr:
        """`made` (e rebuilt) without its terms multiplied by 0, with a note of where they
        were numbers and the rest is not; as it is where that cannot be said."""
        if made.kind == PRODUCT and made.value == 0.0:  # 0*log(x)
            zeros, rest = [made], self.b.const(0.0)
        elif made.kind == SUM and 0.0 in made.weights:
            zeros = [t for t, w in _pairs(made) if w == 0.0]
            kept = [(t, w) for t, w in _pairs(made) if w != 0.0]
            without = self.b.add(made.value, kept)
            if without is None:
                return made
            rest = without
        else:
            return made
        needed: list[Note] = []
        for zero in zeros:
            found = _domain(self.b, zero)
            if found is None:
                return made
            needed += found
        said = {(id(n.expr), n.relation) for n in _domain(self.b, rest) or []}
        self.notes[id(e)] = [n for n in needed if (id(n.expr), n.relation) not in said]
        return rest


def _needed(b: Builder, notes: list[Note], root: Expr) -> list[Note]:
    """The notes of where `root` holds, each once, those `!= 0` of a polynomial in one input
    without the factors that a denominator of the root (or of a term of it) still has, where
    it is no number either: x**2 - 2*x != 0 under -1/x**2 is x - 2 != 0, and x**2 + x != 0
    under 1/(x*(x + 1)) says nothing."""
    dividing = [base for term in (root.args if root.kind == SUM else [root])
                for base, p in _factors(term) if p < 0.0]  # fmt: skip
    below = [polynomial(base) for base in dividing]
    # what the root says itself: log(x) != 0 under 1/log(x), x > 0 where it has log(x)
    implied = {(id(base), "!=") for base in dividing}
    implied |= {(id(n.expr), ">") for n in _domain(b, root, every=False) or []}
    needed: list[Note] = []
    for note in notes:
        if (id(note.expr), note.relation) in implied or _never_zero(b, note):
            continue
        kept: Note | None = note
        if note.relation == "!=":  # (and without the factors of those said before it)
            said = [polynomial(n.expr) for n in needed if n.relation == "!="]
            known = [q for q in below + said if q is not None and q[1]]
            kept = _without_factors(b, note, known)
        if kept is not None and all(
            n.expr is not kept.expr or n.relation != kept.relation for n in needed
        ):
            needed.append(kept)
    return needed


def _never_zero(b: Builder, note: Note) -> bool:
    """Whether the note says `q != 0` of a quadratic q with no real root (x**2 + x + 1), or
    `s + c*sqrt(r) != 0` where c**2*r - s**2 is a number other than 0, which it always is:
    x + sqrt(x**2 - 1) is 0 only where x**2 - 1 is x**2."""
    e = note.expr
    if note.relation != "!=" or e.kind != SUM:
        return False
    quadratic = polynomial(e)
    if quadratic is not None and len(quadratic[1]) == 3:  # x**2 + x + 1: no real root
        c, b1, a = quadratic[1]
        return b1 * b1 < 4 * a * c
    for k, (root, w) in enumerate(_pairs(e)):
        if root.kind != PRODUCT or root.weights != (0.5,):
            continue
        rest = b.add(e.value, [(t, u) for j, (t, u) in enumerate(_pairs(e)) if j != k])
        square = rest and b.multiply(1.0, [(rest, 2.0)])
        inside = root.value**2 * w**2  # (w*c*sqrt(r))**2 is (w*c)**2 * r
        if square is None:
            continue
        gap = b.add(0.0, [(root.args[0], inside), *((t, -u) for t, u in _expanded(b, square))])
        if gap is not None and known_number(gap) not in (None, 0.0):  # (a number: not 0)
            return True
    return False


def _without_factors(b: Builder, note: Note, below: list) -> Note | None:
    """The note `note.expr != 0` without the factors its polynomial shares with those of
    `below` (each (name, polynomial)); None where nothing is left."""
    mine = polynomial(note.expr)
    if mine is None or mine[0] is None:
        return note
    name, left = mine[0], mine[1]
    for other, under in below:
        if other != name or len(under) < 2:
            continue
        while len(left) > 1 and len(shared := common_factor(left, under)) > 1:
            left = divided(left, shared)[0]
    if len(left) < 2:
        return None
    if len(left) == len(mine[1]):
        return note
    shown = written(b, name, primitive(left)[1])
    return None if shown is None else Note(shown, "!=")


def _pairs(e: Expr) -> list[tuple[Expr, float]]:
    return list(zip(e.args, e.weights, strict=True))


def _factors(e: Expr) -> list[tuple[Expr, float]]:
    return _pairs(e) if e.kind == PRODUCT else [(e, 1.0)]


def _repeats(factors: list[tuple[Expr, float]]) -> bool:
    """Whether a base comes twice (sqrt(x)*sqrt(x), kept apart: nan for x < 0, where x is
    not): the rewrites that go by the power of each base leave such a term as it is."""
    return bool(_repeated(factors))


def _repeated(factors: list[tuple[Expr, float]]) -> set[int]:
    """The bases (by id) that come more than once."""
    seen: set[int] = set()
    twice: set[int] = set()
    for base, _ in factors:
        (twice if id(base) in seen else seen).add(id(base))
    return twice


def _coefficient(e: Expr) -> float:
    return e.value if e.kind == PRODUCT else 1.0


def _domain(b: Builder, e: Expr, every: bool = True) -> list[Note] | None:
    """Where e is a number, but at isolated points, as notes (`x > 0`), each side a sum
    (1 - x**2, not -(x**2 - 1)); None if that is more than the functions of _DOMAINS and
    powers say. Without `every`, the notes that they do say (e is nan where one fails)."""
    found = _conditions(b, e, every)
    if found is None:
        return None
    return [_positive(b, n) if relation == ">" else Note(n, relation) for n, relation in found]


def _positive(b: Builder, e: Expr) -> Note:
    """The note `e > 0`, e written as a sum (1 - x**2, not -(x**2 - 1))."""
    return Note(b.add(0.0, [(e, 1.0)]) or e, ">")


def _smooth(b: Builder, e: Expr) -> bool:
    """Whether e is analytic where it is a number, and `_domain` says where that is: log(x),
    sqrt(1 - x**2); not relu(x), which is 0 for every x < 0."""
    return not _piecewise_in(e) and _domain(b, e) is not None


def _piecewise_in(e: Expr) -> bool:
    """Whether e has a kink or a flat piece: a call of relu, abs, where, ... (not asin, whose
    derivative's formula takes a branch for its digits: analytic inside _DOMAINS' bounds)."""
    return any(
        node.kind == CALL
        and node.op.name not in _DOMAINS
        and (piecewise(node.op) or node.op is WHERE)
        for node in reachable([e])
    )


def _conditions(b: Builder, e: Expr, every: bool = True) -> list[tuple[Expr, str]] | None:
    """The expressions that must be positive (">") for e to be a number, and those that must
    not be 0 ("!="), the argument a of 1/abs(a) (see `_domain`)."""
    found = []
    for node in reachable([e]):
        if node.kind == PRODUCT:
            for base, p in _pairs(node):
                if known_number(base) is not None or positive(base):
                    continue
                if not float(p).is_integer():
                    found.append((base, ">"))
                elif p < 0.0 and _abs(base) and not _piecewise_in(base.args[0]):
                    found.append((base.args[0], "!="))  # 1/abs(x): inf at 0 alone
                elif p < 0.0 and not base.analytic and _piecewise_in(base) and every:
                    return None  # 1/relu(x): 0 for every x < 0 (1/log(x): at x = 1 only)
        elif node.kind == POWER:
            base = node.args[0]
            if not positive(base):
                found.append((base, ">"))
        elif node.kind == CALL and node.op.name in _DOMAINS:
            inside = _DOMAINS[node.op.name](b, node.args[0])
            if not positive(inside):
                found.append((inside, ">"))
        elif node.kind == CALL and not defined_everywhere(node.op) and every:
            if node.op is OPS["**"] and _whole(node.args[1]):
                continue  # x**2 as computed, a kinked function's argument
            return None  # lgamma, digamma, ...: where are they nan?
        elif node.kind == NAMED and not node.total and every:
            return None
    return found


def _abs(e: Expr) -> bool:
    """Whether e is abs(a): 0 or more wherever it is a number, so its powers join."""
    return e.kind == CALL and e.op.name == "abs"


def _zero_terms(e: Expr) -> list[Expr]:
    """The terms of e, kept for their nan, where each is multiplied by 0 (0*log(x)), else
    none."""
    if e.kind == PRODUCT and e.value == 0.0:
        return [e]
    if e.kind == SUM and not e.value and not any(e.weights):
        return list(e.args)
    return []


def _whole(e: Expr) -> bool:
    return e.kind == NUMBER and float(e.value).is_integer()


def _pythagorean(b: Builder, s: Expr) -> Expr:
    """s with each w*F*sin(a)**2 + w*F*cos(a)**2 as w*F (and w*F*cosh(a)**2 -
    w*F*sinh(a)**2), and c - c*cos(a)**2 as c*sin(a)**2 (and c - c*sin(a)**2 as
    c*cos(a)**2)."""
    squares: dict[tuple, int] = {}  # (op, a, weight, the other factors) -> the term's place
    terms = _pairs(s)
    for k, (t, w) in enumerate(terms):
        factors = _factors(t)
        for j, (base, p) in enumerate(factors):
            if base.kind == CALL and base.op in (SIN, COS, SINH, COSH) and p == 2.0:
                others = tuple(factors[:j] + factors[j + 1 :])
                squares[(base.op, base.args[0], w * _coefficient(t), others)] = k
    items = list(terms)
    constant = s.value
    for (op, a, w, others), k in squares.items():
        sine = op is SIN
        pair = _SQUARES.get(op)
        partner = squares.get((pair[0], a, pair[1] * w, others)) if pair else None
        if partner is not None and items[k] is terms[k] and items[partner] is terms[partner]:
            both = b.multiply(w, list(others))
            if both is not None:
                items[k], items[partner] = (both, 1.0), (b.const(0.0), 0.0)
        elif (
            op in (SIN, COS) and constant and not others and w == -constant and items[k] is terms[k]
        ):
            other = b.multiply(constant, [(b.apply(COS if sine else SIN, a), 2.0)])
            if other is not None:
                items[k], constant = (other, 1.0), 0.0
    if constant == s.value and all(i is t for i, t in zip(items, terms, strict=True)):
        return s
    return b.add(constant, items) or s


def _grouped(b: Builder, s: Expr) -> Expr | None:
    """s with the terms that share a factor (a sum, call or power: the one most terms have)
    as one product of the factors they all share and the sum of what is left, where that
    sum is one of those factors (a power), else None."""
    holders: dict[int, list[int]] = {}
    terms = _pairs(s)
    for k, (t, _) in enumerate(terms):
        for base, p in _factors(t):
            if base.kind in (SUM, CALL, POWER) and p > 0.0:
                holders.setdefault(id(base), []).append(k)
    group = max(holders.values(), key=len, default=[])
    if len(group) < 2:
        return None
    sum_of = b.add(0.0, [terms[k] for k in group])
    if sum_of is None:
        return None
    shared = _factored(b, sum_of, [])
    if shared is None or shared.kind != PRODUCT or all(float(p) == 1.0 for p in shared.weights):
        return None
    rest = [t for k, t in enumerate(terms) if k not in group]
    return b.add(s.value, [*rest, (shared, 1.0)])


def _signs(b: Builder, e: Expr) -> tuple[Expr, list[Note]]:
    """The product e with abs(a) and sign(a) of one a written as a course writes them: an
    even power of abs(a) is that power of a, an even one of sign(a) is 1 (noted a != 0),
    sign(a)*abs(a)**n for an odd n is a**n (sign(x)/abs(x) is 1/x, log(abs(x))'s
    derivative; noted a != 0 for n < 0, where it was 0/0), and a*sign(a) is abs(a)
    (x*abs(x)'s derivative is 2*abs(x)); an odd power of sign(a) is sign(a)."""
    if e.kind != PRODUCT:
        return e, []
    powers: dict[tuple[str, int], float] = {}
    inside: dict[int, Expr] = {}
    factors = []  # the others
    for base, p in _pairs(e):
        if base.kind == CALL and base.op.name in ("abs", "sign") and float(p).is_integer():
            a = base.args[0]
            inside[id(a)] = a
            powers[(base.op.name, id(a))] = powers.get((base.op.name, id(a)), 0.0) + p
        else:
            factors.append((base, p))
    if not inside:
        return e, []
    notes: list[Note] = []
    for i, a in inside.items():
        n, m = powers.get(("abs", i), 0.0), powers.get(("sign", i), 0.0)
        # a as the engine computes it (x - 1 a call of subtraction), and as the builder writes
        # it (the sum x - 1), which it meets elsewhere as
        canonical = _canonical(b, a)
        if m % 2 == 1:  # a**k*sign(a) is a**(k - 1)*abs(a), 0 at a = 0 too: x*sign(x) is abs(x)
            alike = (a, canonical)
            k = next((j for j, (base, p) in enumerate(factors) if base in alike and p >= 1), None)
            if k is not None and float(factors[k][1]).is_integer():
                factors[k] = (factors[k][0], factors[k][1] - 1.0)
                n, m = n + 1.0, m - 1.0
        odd_n, odd_m = n % 2 == 1, m % 2 == 1
        if odd_m and odd_n:  # sign(a)*abs(a)**n is a**n; 0/0 at a = 0 where n < 0
            factors.append((canonical, n))
            notes += [Note(canonical, "!=")] if n < 0 else []
            continue
        # an even power of abs(a) is a's; an even one of sign(a) 1, but at a = 0
        factors.append((b.apply(OPS["abs"], a), n) if odd_n else (canonical, n))
        factors.append((b.apply(OPS["sign"], a), 1.0 if odd_m else 0.0))
        notes += [Note(canonical, "!=")] if m and not odd_m else []
    out = b.multiply(e.value, [(base, p) for base, p in factors if p != 0.0])
    return (e, []) if out is None or out is e else (out, notes)  # (the builder's own node)


def _cubes(b: Builder, e: Expr) -> Expr:
    """The product e with each cbrt(a)**(3*k) as a**k, as it is for every real a
    (3*cbrt(x)**3 in the numerator of cbrt(x)**2*(x - 5)'s derivative is 3*x)."""
    if e.kind != PRODUCT:
        return e
    factors = [
        (base.args[0], p / 3)
        if base.kind == CALL and base.op is CBRT and float(p / 3).is_integer()
        else (base, p)
        for base, p in _pairs(e)
    ]
    made = b.multiply(e.value, factors)
    return e if made is None else made


def _canonical(b: Builder, e: Expr) -> Expr:
    """e, the argument of a function with a kink as the engine computes it (x - 1 a call of
    subtraction), as the builder writes it (the sum x - 1)."""
    made: dict[int, Expr] = {}
    for node in reachable([e]):
        args = [made[id(a)] for a in node.args]
        made[id(node)] = b.apply(node.op, *args) if node.kind == CALL else node
    return made[id(e)]


def _tangents(b: Builder, e: Expr) -> Expr:
    """e with each sin(a)**k/cos(a)**k as tan(a)**k, cot(a)**k where k is negative (as a
    course writes the derivative of log(sin(x)), cot(x)), and each cos(a)**k*tan(a)**k as
    sin(a)**k (the derivative of 1/tan(x) is -1/sin(x)**2), k a whole number:
    sqrt(sin(a))/sqrt(cos(a)) is nan where both are negative, sqrt(tan(a)) is not."""
    if e.kind != PRODUCT or _repeats(_pairs(e)):
        return e
    e = _sines(b, e)
    if e.kind != PRODUCT:
        return e
    factors = _pairs(e)
    cosines = {
        id(base.args[0]): (base, p) for base, p in factors if base.kind == CALL and base.op is COS
    }
    changed = []
    for base, p in factors:
        if base.kind == CALL and base.op is SIN:
            cosine = cosines.get(id(base.args[0]))
            if cosine is not None and cosine[1] == -p and float(p).is_integer():
                changed.append(((base, p), cosine, b.apply(TAN, base.args[0])))
    if not changed:
        return e
    gone = {(id(f[0]), f[1]) for sine, cosine, _ in changed for f in (sine, cosine)}
    kept = [(base, p) for base, p in factors if (id(base), p) not in gone]
    for sine, _, tangent in changed:
        p = sine[1]
        kept.append((tangent, p) if p > 0 else (b.apply(COT, tangent.args[0]), -p))
    return b.multiply(e.value, kept) or e


def _sines_and_cosines(b: Builder, s: Expr) -> Expr | None:
    """The sum s with each tan(a)**k of its terms, k a whole number, as sin(a)**k/cos(a)**k
    (and cot(a)**k as cos(a)**k/sin(a)**k; None where it has neither), so that sin(a)**2 +
    cos(a)**2 can be 1 in one fraction of its terms. sqrt(tan(a)) stays:
    sqrt(sin(a))/sqrt(cos(a)) is nan where both are negative."""

    def whole_tan(base: Expr, p: float) -> bool:
        return base.kind == CALL and base.op in (TAN, COT) and float(p).is_integer()

    terms = []
    for t, w in _pairs(s):
        factors = _factors(t)
        if not any(whole_tan(base, p) for base, p in factors):
            terms.append((t, w))
            continue
        written: list[tuple[Expr, float]] = []
        for base, p in factors:
            if whole_tan(base, p):
                k = p if base.op is TAN else -p  # (cot(a)**p is tan(a)**-p)
                written += [(b.apply(SIN, base.args[0]), k), (b.apply(COS, base.args[0]), -k)]
            else:
                written.append((base, p))
        term = b.multiply(_coefficient(t), written)
        if term is None:
            return None
        terms.append((term, w))
    if all(t is u for (t, _), (u, _) in zip(terms, _pairs(s), strict=True)):
        return None
    return b.add(s.value, terms)


def _sines(b: Builder, e: Expr) -> Expr:
    """e with cos(a)**p*tan(a)**q, p and q whole numbers of one sign, as sin(a)**k times
    what is left of the larger (k the smaller in size): cos(x)**2*tan(x)**2 is sin(x)**2.
    Where cos(a) is 0, tan(a) is not defined, and the two sides differ; a float a never makes
    cos(a) 0 (cos(pi/2) is 6.1e-17), and there the two agree to rounding, so no condition is
    noted."""
    factors = _pairs(e)
    tangents = {
        id(base.args[0]): (base, p) for base, p in factors if base.kind == CALL and base.op is TAN
    }
    changed = []
    for base, p in factors:
        tangent = tangents.get(id(base.args[0])) if base.kind == CALL and base.op is COS else None
        if tangent is None or not (float(p).is_integer() and float(tangent[1]).is_integer()):
            continue
        q = tangent[1]
        if p * q > 0.0:
            k = min(abs(p), abs(q)) * (1.0 if p > 0.0 else -1.0)
            changed.append(((base, p), tangent, b.apply(SIN, base.args[0]), k))
    if not changed:
        return e
    gone = {(id(f[0]), f[1]) for cosine, tangent, _, _ in changed for f in (cosine, tangent)}
    kept = [(base, p) for base, p in factors if (id(base), p) not in gone]
    for (cos_base, p), (tan_base, q), sine, k in changed:
        kept += [(sine, k), (cos_base, p - k), (tan_base, q - k)]
    return b.multiply(e.value, [(base, p) for base, p in kept if p != 0.0]) or e


def _exponentials(b: Builder, e: Expr) -> Expr:
    """e with its powers of exp as one: exp(x)*exp(-x) is 1, exp(x)**2*exp(y) exp(2*x + y),
    exp(x)**2 exp(2*x)."""
    if e.kind != PRODUCT or _repeats(_pairs(e)):
        return e
    powers = [(base, p) for base, p in _pairs(e) if base.kind == CALL and base.op is EXP]
    if not powers or powers == [(powers[0][0], 1.0)]:
        return e
    if not all(float(p).is_integer() for _, p in powers):
        return e
    exponent = b.add(0.0, [(base.args[0], p) for base, p in powers])
    if exponent is None:
        return e
    others = [(base, p) for base, p in _pairs(e) if not (base.kind == CALL and base.op is EXP)]
    return b.multiply(e.value, [*others, (b.apply(EXP, exponent), 1.0)]) or e


def _together(b: Builder, s: Expr, cancelled: list[Note] | None = None) -> Expr | None:
    """s as one fraction: its terms times the product of its denominators, multiplied out,
    over that product (with no denominator, s multiplied out). A polynomial of the
    denominator that divides the numerator cancels (`_divided`), and `cancelled` gets the
    note of where the fraction was nan and the result is not (`x - 2 != 0`)."""
    if s.kind != SUM:
        return None
    terms = [(w, _negated_sums(b, _factors(t)), _coefficient(t)) for t, w in _pairs(s)]
    if len(terms) > _TERMS:
        return None
    if s.value:
        terms.append((s.value, [], 1.0))
    common: dict[int, tuple[Expr, float]] = {}  # per base, its power in the denominator
    for _, factors, _ in terms:
        under: dict[int, tuple[Expr, float]] = {}
        for base, p in factors:
            if p < 0.0 and not _numbers_only(base):
                # (sqrt(x) + 1 is never 0: multiplied by itself over itself, the same)
                integer = float(p).is_integer()
                if not (base.analytic or not integer or positive(base) or _smooth(b, base)):
                    return None
                under[id(base)] = (base, exact_sum(under.get(id(base), (base, 0.0))[1], -p))
        for i, (base, d) in under.items():
            common[i] = (base, max(common.get(i, (base, 0.0))[1], d))
    # The whole fraction is nan where a base of the denominator with a fractional power is
    # negative: there, in the numerator, sqrt(b)*sqrt(b) may be b, and 1/(sqrt(b)*sqrt(b))
    # may be 1/b; elsewhere such a pair (nan for b < 0, where b is not) stays apart.
    for _, factors, _ in terms:
        for i in _repeated(factors):
            if (
                i in common
                and common[i][1].is_integer()
                and any(p < 0.0 for base, p in factors if id(base) == i)
            ):
                return None
    over: list[tuple[float, list[tuple[Expr, float]]]] = []  # each term over the denominator
    for w, factors, c in terms:
        merged: dict[int, float] = {}
        for base, p in factors:
            if id(base) in common and (p < 0.0 or not common[id(base)][1].is_integer()):
                merged[id(base)] = exact_sum(merged.get(id(base), 0.0), p)
        kept = [(base, p) for base, p in factors if id(base) not in merged]
        kept += [(base, exact_sum(d, merged.get(i, 0.0))) for i, (base, d) in common.items()]
        over.append((exact_product(w, c), [(base, p) for base, p in kept if p != 0.0]))
    # a sum every term has a power of taken out first, as a course factors it out, where
    # that is no longer: 4*(x - 1)**3*(x + 1) - 4*(x - 1)**4 is 4*(x - 1)**3*(x + 1 - (x - 1)),
    # 8*(x - 1)**3 (multiplied out, (x - 1)**4 stayed apart), but 2*(x + 1)*(x**2 + 1) -
    # 2*x*(x + 1)**2 is 2*(1 - x**2)
    notes: list[Note] = []
    whole = _one_fraction(b, over, common, {}, notes)
    shared = _shared_sums(over)
    if shared:
        taken_notes: list[Note] = []
        taken = _one_fraction(b, over, common, shared, taken_notes)
        if whole is None or _smaller(whole, taken) is taken:
            whole, notes = taken, taken_notes
    if cancelled is not None:
        cancelled += notes
    return whole


def _one_fraction(
    b: Builder,
    over: list[tuple[float, list[tuple[Expr, float]]]],
    common: dict[int, tuple[Expr, float]],
    shared: dict[int, tuple[Expr, float]],
    cancelled: list[Note],
) -> Expr | None:
    """The terms `over` (each a number and its factors) over the `common` denominator as one
    fraction, with the `shared` powers of sums taken out of each; `cancelled` gets where
    the fraction was nan and the result is not."""
    items: list[tuple[Expr, float]] = []
    for c, kept in over:
        left = [(base, exact_sum(p, -shared.get(id(base), (base, 0.0))[1])) for base, p in kept]
        term = b.multiply(c, [(base, p) for base, p in left if p != 0.0])
        if term is None:
            return None
        # x*sign(x) - abs(x) is 0 (of abs(x)/x), for x != 0, and so is (x - 1)*sign(x - 1)
        # - abs(x - 1) before (x - 1) is multiplied out
        term, notes = _signs(b, term)
        cancelled += notes
        for t, w in _expanded(b, term):
            signed, notes = _signs(b, _cubes(b, t))
            items.append((_exponentials(b, signed), w))
            cancelled += notes
    numerator = b.add(0.0, items)
    if numerator is None:
        return None
    if numerator.kind == SUM:
        numerator = _pythagorean(b, numerator)
    if numerator.kind == SUM and 0.0 in numerator.weights:
        # 0*sqrt(x), kept for its nan where x < 0, goes where the denominator takes the root
        # of x too: the fraction is nan there all the same
        roots = {i for i, (_, d) in common.items() if not float(d).is_integer()}
        kept = [
            (t, w)
            for t, w in _pairs(numerator)
            if w != 0.0 or not all(id(base) in roots for base, _ in _factors(t))
        ]
        if len(kept) < len(numerator.args):
            numerator = b.add(numerator.value, kept) or numerator
    zeros = _zero_terms(numerator)
    domains = [_domain(b, t) for t in zeros]
    if zeros and None not in domains:  # 0*x*abs(x**2 - 1): 0 where its terms are numbers
        numerator = b.const(0.0)
        cancelled += [n for found in domains for n in found or []]
    if known_number(numerator) == 0.0:  # 0 where it was nan
        cancelled += [
            Note(base, "!=" if float(d).is_integer() else ">")
            for base, d in common.values()
            if not positive(base)
        ]
    below: list[tuple[Expr, float]] = []
    gone: list[Expr] = []
    for base, d in common.values():  # (x**2 - 4*x + 4)/(x - 2)**2 is 1, for x != 2
        found = _cancelled(b, numerator, base, d) if base.kind == SUM else None
        if found is None:
            below.append((base, -d))
            continue
        numerator, left, divisors = found
        below += left
        gone += divisors
    # the sums taken out multiplied in again: one the denominator has too cancels there
    # (x**2*(x + 2)**4/(x**2 - 4)**3's derivative has no x + 2: it was nan at -2)
    powers: dict[int, tuple[Expr, float]] = {}
    for base, p in [*below, *shared.values()]:
        powers[id(base)] = (base, exact_sum(powers.get(id(base), (base, 0.0))[1], p))
    under = {id(base) for base, p in below if p < 0.0}
    gone += [base for i, (base, p) in powers.items() if i in shared and i in under and p >= 0.0]
    below = [(base, p) for base, p in powers.values() if p != 0.0]
    # where the fraction left is a number, but was not
    known = [q for base, p in below if p < 0.0 and (q := polynomial(base)) is not None and q[1]]
    for factor in gone:
        note = None if positive(factor) else _without_factors(b, Note(factor, "!="), known)
        if note is not None:
            cancelled.append(note)
    whole = b.multiply(1.0, [(numerator, 1.0), *below])
    # (1 - cos(x)**2)/cos(x)**2 is tan(x)**2; 2*exp(x)*exp(-x) is 2
    whole = whole and _tangents(b, _exponentials(b, whole))
    sums = [(base, d) for base, d in below if base.kind == SUM and d == -1.0]
    if whole is not None and len(sums) > 1:  # 2/((x + 1)*(1 - x)) is -2/(x**2 - 1)
        product = b.multiply(1.0, [(base, 1.0) for base, _ in sums])
        multiplied = product and b.add(0.0, _expanded(b, product))
        rest = [(base, d) for base, d in below if (base, d) not in sums]
        if multiplied is not None:
            out = b.multiply(1.0, [(numerator, 1.0), (multiplied, -1.0), *rest])
            whole = _smaller(whole, out, ties=False)
    if whole is None or numerator.kind != SUM or not below:  # a polynomial stays expanded
        return whole
    whole = _smaller(whole, _powered(b, numerator, below))
    return _smaller(whole, _factored(b, numerator, below))


def _shared_sums(
    terms: list[tuple[float, list[tuple[Expr, float]]]],
) -> dict[int, tuple[Expr, float]]:
    """The sums (not of numbers alone) of which each of two terms or more has a whole
    positive power, each with the least of those powers, by id."""
    if len(terms) < 2:
        return {}
    shared = _least_powers([factors for _, factors in terms])
    return {
        i: (base, p)
        for i, (base, p) in shared.items()
        if base.kind == SUM and float(p).is_integer() and not _numbers_only(base)
    }


def _powered(b: Builder, numerator: Expr, below: list[tuple[Expr, float]]) -> Expr | None:
    """The numerator, a polynomial in one name that is a power, written as one, over
    `below`: -6*(x**2 + 2*x + 1)/(x - 1)**4 is -6*(x + 1)**2/(x - 1)**4."""
    found = polynomial(numerator)
    if found is None or found[0] is None:
        return None
    powered = as_power(found[1])
    if powered is None:
        return None
    c, root, k = powered
    base = written(b, found[0], root)
    return None if base is None else b.multiply(float(c), [(base, float(k)), *below])


def _negated_sums(b: Builder, factors: list[tuple[Expr, float]]) -> list[tuple[Expr, float]]:
    """The factors with a base -(x**2 - 1) written as the sum it is, 1 - x**2 (exact: the
    same number negated), so that it meets the same sum elsewhere: the chain rule's
    (-(x**2 - 1))**(-1/2) and sqrt(1 - x**2) share a denominator."""
    return [
        (b.add(0.0, [(base, 1.0)]) or base, p)
        if base.kind == PRODUCT and base.value == -1.0 and base.weights == (1.0,)
        and base.args[0].kind == SUM
        else (base, p)
        for base, p in factors
    ]  # fmt: skip


def _cancelled(
    b: Builder, numerator: Expr, base: Expr, power: float
) -> tuple[Expr, list[tuple[Expr, float]], list[Expr]] | None:
    """numerator / base**power with what the two share cancelled, where both are polynomials
    in one input (`polynomial`): the numerator left, the factors left of base**power (each with
    its power, negative) and the factors cancelled (where the fraction was nan); None where
    they share nothing. A base with a power that is not whole cancels only whole: its factors
    need not be positive where it is."""
    under = polynomial(base)
    if under is None or under[0] is None or len(under[1]) < 2:
        return None
    name = under[0]
    # exp(x)*(x**3 - x**2 - 8*x + 12), y*(x**2 - 1): exp(x) and y, set aside
    outside: list[tuple[Expr, float]] = []
    if numerator.kind == SUM and not numerator.value:
        if not any(_repeats(_factors(t)) for t in numerator.args):
            powers = _shared_powers(numerator).items()
            aside = {i: (e, p) for i, (e, p) in powers if e.kind != INPUT or e.value != name}
            inner = _taken_out(b, numerator, aside) if aside else None
            if inner is not None:
                numerator, outside = inner, list(aside.values())
    top = polynomial(numerator)
    if top is None or not top[1] or top[0] not in (name, None):
        return None
    numbers, whole = top[1], float(power).is_integer()
    # the denominator's polynomials: each, its power, and its expression where it is base
    below: list[tuple[Poly, float, Expr | None]] = [(under[1], power, base)]
    gone: dict[tuple[Fraction, ...], Expr | None] = {}
    while True:
        for k, (f, p, shown) in enumerate(below):
            if p < 1:
                continue
            quotient, rest = divided(numbers, f)
            if not rest:  # (x**2 - 4*x + 4)/(x - 2)**2 is 1
                numbers, below[k] = quotient, (f, p - 1, shown)
                gone.setdefault(tuple(f), shown)
                break
            if not whole or max(len(numbers), len(f)) > COMMON_DEGREE + 1:
                continue
            shared = common_factor(numbers, f)
            if len(shared) < 2:
                continue
            # (x**3 - 3*x - 2)/(x**2 - 1) is (x**2 - x - 2)/(x - 1): x + 1 is shared
            c, other = primitive(divided(f, shared)[0])
            numbers = [n / c ** int(p) for n in divided(numbers, shared)[0]]
            below[k : k + 1] = [(shared, p - 1, None), (other, p, None)]
            gone.setdefault(tuple(shared), None)
            break
        else:
            break
    if not gone:
        return None
    left = []
    for f, p, shown in below:
        powered = as_power(f) if p and float(p).is_integer() else None
        if powered is not None:  # (x**2 + 2*x + 1)**p as (x + 1)**(2*p)
            c, root, k = powered
            numbers = [n / c ** int(p) for n in numbers]
            left.append((written(b, name, root), -p * k))
        elif p:
            left.append((shown or written(b, name, f), -p))
    made = written(b, name, numbers)
    made = made and b.multiply(1.0, [*outside, (made, 1.0)])
    notes = [shown or written(b, name, list(f)) for f, shown in gone.items()]
    if made is None or None in (e for e, _ in left) or None in notes:
        return None
    return made, cast(list[tuple[Expr, float]], left), cast(list[Expr], notes)


def _factored(b: Builder, s: Expr, below: list[tuple[Expr, float]]) -> Expr | None:
    """The sum s with the powers all its terms share taken out, times `below`:
    x*(x + 2)/(x + 1)**2, where x**2 + 2*x has one operation more."""
    if s.kind != SUM or s.value or any(_repeats(_factors(t)) for t in s.args):
        return None
    shared = _shared_powers(s)
    inner = _taken_out(b, s, shared) if shared else None
    if inner is None:
        return None
    return b.multiply(1.0, [*shared.values(), (inner, 1.0), *below])


def _shared_powers(s: Expr) -> dict[int, tuple[Expr, float]]:
    """The bases (by id) of which every term of the sum s has a positive power, each with
    the least of those powers."""
    return _least_powers([_factors(t) for t in s.args])


def _least_powers(terms: list[list[tuple[Expr, float]]]) -> dict[int, tuple[Expr, float]]:
    """The bases (by id) of which each term's factors have a positive power, each with the
    least of those powers."""
    shared: dict[int, tuple[Expr, float]] | None = None
    for factors in terms:
        powers = {id(base): (base, p) for base, p in factors if p > 0.0}
        if shared is None:
            shared = powers
        else:
            shared = {
                i: (base, min(p, powers[i][1])) for i, (base, p) in shared.items() if i in powers
            }
    return shared or {}


def _taken_out(b: Builder, s: Expr, shared: dict[int, tuple[Expr, float]]) -> Expr | None:
    """The sum s (with no number added) with the powers `shared` taken out of each term."""
    items = []
    for t, w in _pairs(s):
        left = [(base, p - shared.get(id(base), (base, 0.0))[1]) for base, p in _factors(t)]
        weight = exact_product(w, _coefficient(t))
        term = b.multiply(weight, [(base, p) for base, p in left if p != 0.0])
        if term is None:
            return None
        items.append((term, 1.0))
    return b.add(0.0, items)


def _quotients(s: Expr) -> bool:
    """Whether two terms or more of the sum s are divided by more than a number, as the
    quotient rule's are (cos(x)/(x**2 + 1) - 2*x*sin(x)/(x**2 + 1)**2; not log(y) - y/x)."""
    if s.kind != SUM:
        return False
    divided = (any(p < 0.0 and not _numbers_only(b) for b, p in _factors(t)) for t in s.args)
    return sum(divided) >= 2


def _joinable(e: Expr) -> bool:
    """Whether a product of e has a base twice (sqrt(x)*sqrt(x)), which the rewrites join."""
    return any(node.kind == PRODUCT and _repeats(_pairs(node)) for node in reachable([e]))


def _kept_zeros(e: Expr) -> bool:
    """Whether e has a term multiplied by 0, kept for its nan (0*log(y))."""
    return any(
        (node.kind == SUM and 0.0 in node.weights) or (node.kind == PRODUCT and node.value == 0)
        for node in reachable([e])
    )


def _powers_of_one_name(s: Expr) -> bool:
    """Whether the sum s is of whole powers of one name and numbers only, which stays as a
    polynomial does, term by term (15*x**2 + 2/x**2); not of roots, which a course brings
    over one denominator to find where the derivative is 0 (4*(x - 1)/(3*x**(2/3)))."""
    factors = [(base, p) for t in s.args for base, p in _factors(t)]
    names = {base.value for base, _ in factors if base.kind == INPUT}
    return len(names) == 1 and all(
        (base.kind == INPUT and float(p).is_integer()) or _numbers_only(base) for base, p in factors
    )


def _numbers_only(e: Expr) -> bool:
    """Whether e is made of numbers alone (pi and e by name): a denominator that stays."""
    names = (n.value for n in reachable([e]) if n.kind in (INPUT, NAMED))
    return all(name in NAMED_CONSTANTS.values() for name in names)


def _expanded(b: Builder, term: Expr) -> list[tuple[Expr, float]]:
    """A product with sums among its factors (to whole powers up to 2) multiplied out, as
    (term, weight) pairs: 3*(5*x - 7) is 15*x - 21."""
    if term.kind == SUM:
        return [(term, 1.0)]
    sums, others = [], []
    for base, p in _factors(term):
        small = base.kind == SUM and len(base.args) < _TERMS
        if small and p in (1.0, 2.0, 3.0) and not _numbers_only(base):  # (pi + 1)**2 stays
            parts = [*_pairs(base), (b.const(1.0), base.value)] if base.value else _pairs(base)
            sums += [parts] * int(p)
        else:
            others.append((base, p))
    count = 1
    for parts in sums:
        count *= len(parts)
    if not sums or count > _EXPANDED:
        return [(term, 1.0)]
    expanded = []
    for choice in itertools.product(*sums):
        weight = _coefficient(term)
        factors = list(others)
        for t, w in choice:
            weight = exact_product(weight, w)
            factors.append((t, 1.0))
        made = b.multiply(weight, factors)
        if made is None:
            return [(term, 1.0)]
        expanded.append((made, 1.0))
    return expanded


def _smaller(e: Expr, other: Expr | None, ties: bool = True) -> Expr:
    """`other` if it is printed in fewer operations than e, or as many (`ties`); else e."""
    if other is None or other is e:
        return e
    mine, theirs = operations(e), operations(other)
    return other if theirs < mine or (ties and theirs == mine) else e


def operations(e: Expr) -> int:
    """The operators and calls of e as printed (in fractions), none for a part that is a
    number (`1/2`, `sqrt(2)`, `pi`)."""
    (shown,) = layout([e], fractions=True)
    count: dict[int, int] = {}
    constant: dict[int, bool] = {}
    for node in reachable([shown]):
        if node.kind == NUMBER:
            constant[id(node)], count[id(node)] = True, 0
        elif node.kind == INPUT:
            constant[id(node)], count[id(node)] = node.value in NAMED_CONSTANTS.values(), 0
        else:
            constant[id(node)] = all(constant[id(a)] for a in node.args)
            inner = sum(count[id(a)] for a in node.args)
            count[id(node)] = 0 if constant[id(node)] else 1 + inner
    return count[id(shown)]
