"""Polynomials in one input with exact coefficients: read from a derivative, divided, and
their common factors found, so that a fraction of two cancels what they share.

A polynomial is a list of Fractions from the constant up, with no trailing zero (0 is the
empty list).
"""

from __future__ import annotations

import math
from fractions import Fraction

from ._algebra import INPUT, NUMBER, PRODUCT, SUM, Builder, Expr, as_fraction

Poly = list[Fraction]

# The highest power of a polynomial read, and the highest degree whose common factors are
# looked for (Euclid's algorithm in fractions grows its numbers with the degree).
DEGREE = 64
COMMON_DEGREE = 24


def polynomial(e: Expr) -> tuple[str | None, Poly] | None:
    """e as a polynomial in one input whose coefficients are whole numbers or fractions to
    the last bit (its name, None for a number, and the coefficients), or None."""
    if e.kind == PRODUCT and tuple(e.weights) == (1.0,) and e.args[0].kind == SUM:  # 2*(x - 1)
        inner, times = polynomial(e.args[0]), as_fraction(e.value)
        if inner is None or times is None:
            return None
        return inner[0], [c * times for c in inner[1]]
    name: str | None = None
    coefficients: dict[int, Fraction] = {}

    def term(c: float, k: int) -> bool:
        exact = as_fraction(c)
        if exact is not None:
            coefficients[k] = coefficients.get(k, Fraction(0)) + exact
        return exact is not None

    terms = list(zip(e.args, e.weights, strict=True)) if e.kind == SUM else [(e, 1.0)]
    if e.kind == SUM and not term(e.value, 0):
        return None
    for t, w in terms:
        if t.kind == NUMBER:
            if not term(w * t.value, 0):
                return None
            continue
        if t.kind == PRODUCT:
            if len(t.args) != 1:
                return None
            (x,), (p,), c = t.args, t.weights, w * t.value
        else:
            x, p, c = t, 1.0, w
        if x.kind != INPUT or name not in (None, x.value) or not 0 < p <= DEGREE:
            return None
        if not float(p).is_integer():
            return None
        name = x.value
        if not term(c, int(p)):
            return None
    return name, _trimmed([coefficients.get(k, Fraction(0)) for k in range(DEGREE + 1)])


def written(b: Builder, name: str, poly: Poly) -> Expr | None:
    """The polynomial as an expression in the input `name`."""
    x, terms = b.var(name), []
    for k, c in enumerate(poly):
        term = b.multiply(float(c), [(x, float(k))]) if k and c else None
        if term is not None:
            terms.append((term, 1.0))
    return b.add(float(poly[0]) if poly else 0.0, terms)


def divided(top: Poly, under: Poly) -> tuple[Poly, Poly]:
    """The quotient and remainder of top / under (under not 0)."""
    top, lead = list(top), under[-1]
    if len(top) < len(under):
        return [], _trimmed(top)
    quotient = [Fraction(0)] * (len(top) - len(under) + 1)
    for k in range(len(quotient) - 1, -1, -1):
        c = quotient[k] = top[k + len(under) - 1] / lead
        for j, u in enumerate(under):
            top[k + j] -= c * u
    return _trimmed(quotient), _trimmed(top[: len(under) - 1])


def common_factor(a: Poly, b: Poly) -> Poly:
    """The greatest common divisor of a and b (not both 0), with whole coefficients that
    share no factor and a positive leading one: 2*x - 1, not x - 1/2."""
    while b:
        a, b = b, divided(a, b)[1]
    return primitive(a)[1]


def primitive(poly: Poly) -> tuple[Fraction, Poly]:
    """poly as c times a polynomial with whole coefficients that share no factor and a
    positive leading one, and c."""
    denominators = math.lcm(*(c.denominator for c in poly))
    whole = [int(c * denominators) for c in poly]
    divisor = math.gcd(*whole)
    content = Fraction(divisor if whole[-1] > 0 else -divisor, denominators)
    return content, [c / content for c in poly]


def as_power(poly: Poly) -> tuple[Fraction, Poly, int] | None:
    """poly as c*root**k with k at least 2 and root's coefficients whole, sharing no factor
    (x**2 + 2*x + 1 is (x + 1)**2, 2*x**2 - 4*x + 2 is 2*(x - 1)**2); None where it is none."""
    slope = [k * c for k, c in enumerate(poly)][1:]
    if len(slope) < 2:
        return None
    repeated = common_factor(poly, slope)  # 1 where no factor repeats
    root = primitive(divided(poly, repeated)[0])[1] if len(repeated) > 1 else poly
    k, rest = divmod(len(poly) - 1, len(root) - 1)
    if rest or k < 2:
        return None
    power = [Fraction(1)]
    for _ in range(k):
        power = _times(power, root)
    c = poly[-1] / power[-1]
    return (c, root, k) if [c * p for p in power] == poly else None


def _times(a: Poly, b: Poly) -> Poly:
    product = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, p in enumerate(a):
        for j, q in enumerate(b):
            product[i + j] += p * q
    return product


def _trimmed(poly: Poly) -> Poly:
    end = len(poly)
    while end and not poly[end - 1]:
        end -= 1
    return poly[:end]
