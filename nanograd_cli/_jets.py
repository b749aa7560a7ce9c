"""Taylor mode: truncated power series (jets) through each operation of a program.

A jet of order N holds a node's Taylor coefficients in one input t around a point:
c[k] = f⁽ᵏ⁾(A)/k!, k = 0..N. The program's one walker carries a jet per node, as
`_forward.py` carries dual numbers: the input is [A, 1, 0, ...], every other input and number
is constant, [v, 0, ...], and each operation has a rule that makes its output's jet from its
operands' jets: the Cauchy product for a product, a recurrence for a quotient, and for a
function f with f' = g(a)·a' the coefficients of the integral of g(a)·a' (as JAX's `jet`
does). No finite differences, no symbolic derivative: each coefficient is exact to the
rounding of the recurrences (sums are `math.fsum`med).

Where a function has a kink (abs, relu, max, min, clamp, %, floor, the comparisons, where),
the jet is that of the branch taken at the point, with the engine's derivative there (_ops.py:
abs'(0) = 0, relu'(0) = 0, at a tie of max each side gets half): the series of the piece the
point is on.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from . import _special as special
from ._algebra import DENOMINATORS, Expr, Written
from ._formula import write
from ._ops import ADD, DIV, MUL, NEG, OPS, POW, SUB, WHERE, Op, divide, power
from .errors import SourceError

if TYPE_CHECKING:
    from ._program import Program

# A jet: the Taylor coefficients c[0..N] of a node in the input differentiated by.
Jet = list[float]


def _fsum(terms: list[float]) -> float:
    """The sum of `terms` rounded once; inf and -inf together are nan, as in plain sums
    (math.fsum raises), and finite terms whose sum is past the doubles are inf."""
    try:
        return math.fsum(terms)
    except (ValueError, OverflowError):
        return sum(terms)


def series(
    program: Program, wrt: str, point: Mapping[str, float], order: int
) -> tuple[Jet, SourceError | None]:
    """The Taylor coefficients of `program`'s result in the input `wrt` around point[wrt]
    (every other input held at its value in `point`), to `order`; and where the first nan
    or inf came from, if any coefficient or value is one."""
    program.check_inputs(point)
    n = order + 1
    zeros = [0.0] * order

    def input(name: str) -> Jet:
        value = float(point[name])
        if name == wrt:
            return [value, *([1.0, *zeros[1:]] if order else [])]
        return [value, *zeros]

    def const(value: float) -> Jet:
        return [value, *zeros]

    def apply(op: Op, *args: Jet) -> Jet:
        if all(not any(a[1:]) for a in args):  # constants: nothing to propagate
            return [op.forward(*[a[0] for a in args]), *zeros]
        rule = RULES[op]
        return rule(op, n, *args)

    jets = program.interpret(input=input, const=const, apply=apply)
    # Where the first nan or inf came from: a node's first non-finite coefficient stands
    # for it (its value where every one is finite), so that an operation that made one out
    # of finite operands is named.
    firsts = [next((c for c in jet if not math.isfinite(c)), jet[0]) for jet in jets]
    where = program.first_non_finite(firsts)
    if where is not None and not str(where.args[0]).startswith("input "):
        # an operation's, not an input's (`input x is nan`, as _program.py words it): its
        # value may be finite, and a coefficient not (sqrt at 0)
        where = SourceError(f"{where.args[0]} in its Taylor series", where.source, where.offset)
    return [c + 0.0 for c in jets[program.result]], where  # + 0.0: no -0.0 coefficient


# Series arithmetic: each a list of n coefficients.


def _dot(terms) -> float:
    """The sum of the products of `terms` (pairs), each 0 where a factor is 0 (so that 0
    times an inf coefficient adds nothing, as a zero tangent does in forward mode)."""
    return _fsum([x * y for x, y in terms if x and y])


def _mul(a: Jet, b: Jet, n: int) -> Jet:
    """The Cauchy product, truncated to n coefficients."""
    return [_dot((a[j], b[k - j]) for j in range(k + 1)) for k in range(n)]


def _div(a: Jet, b: Jet, n: int, q0: float | None = None) -> Jet:
    """a/b: q_k = (a_k - Σ_{j=1..k} b_j q_{k-j}) / b_0."""
    q = [divide(a[0], b[0]) if q0 is None else q0]
    for k in range(1, n):
        rest = _dot((b[j], q[k - j]) for j in range(1, k + 1))
        q.append(divide(a[k] - rest if rest else a[k], b[0]))
    return q


def _quotient(pair: tuple[Jet, Jet], n: int) -> Jet:
    return _div(pair[0], pair[1], n)


def _scaled(a: Jet, s: float) -> Jet:
    return [s * c if c else 0.0 for c in a]


def _plus(a: Jet, b: Jet) -> Jet:
    return [x + y for x, y in zip(a, b, strict=True)]


def _minus(a: Jet, b: Jet) -> Jet:
    return [x - y for x, y in zip(a, b, strict=True)]


def _const(value: float, n: int) -> Jet:
    return [value] + [0.0] * (n - 1)


def _slope(a: Jet, n: int) -> Jet:
    """The series of da/dt, n coefficients (the last 0: it would need a's next)."""
    return [(k + 1) * a[k + 1] for k in range(n - 1)] + [0.0]


def _integral(y0: float, slope: Jet, n: int) -> Jet:
    """The series whose value is y0 and whose derivative in t is `slope`."""
    return [y0] + [slope[k - 1] / k for k in range(1, n)]


def _chain(y0: float, g: Jet, a: Jet, n: int) -> Jet:
    """f(a) for f(a0) = y0 and f' = g (the series of f'(a)): y_k = (1/k) Σ j a_j g_{k-j}."""
    return [y0] + [_dot((j * a[j], g[k - j]) for j in range(1, k + 1)) / k for k in range(1, n)]


def _exp(a: Jet, n: int, e0: float) -> Jet:
    """exp(a), its value e0 (exp(a0), or another with the same derivative's ratio): e' = e a'."""
    e = [e0]
    for k in range(1, n):
        e.append(_dot((j * a[j], e[k - j]) for j in range(1, k + 1)) / k)
    return e


def _log(a: Jet, n: int, l0: float) -> Jet:
    """log(a), its value l0: a l' = a', so l_k = (a_k - (1/k) Σ_{j<k} j l_j a_{k-j}) / a_0."""
    out = [l0]
    for k in range(1, n):
        rest = _dot((j * out[j], a[k - j]) for j in range(1, k)) / k
        out.append(divide(a[k] - rest, a[0]))
    return out


def _sqrt(a: Jet, n: int, s0: float) -> Jet:
    """sqrt(a), its value s0: s² = a, so s_k = (a_k - Σ_{0<j<k} s_j s_{k-j}) / (2 s_0)."""
    s = [s0]
    for k in range(1, n):
        rest = _dot((s[j], s[k - j]) for j in range(1, k))
        s.append(divide(a[k] - rest, 2.0 * s0))
    return s


def _power_of(a: Jet, p: float, n: int, y0: float) -> Jet:
    """a**p for a constant p, its value y0: a y' = p y a', so
    y_k = Σ_{j=1..k} ((p + 1) j - k) a_j y_{k-j} / (k a_0). A whole p from 0 up is a product
    of a's (exact: the series of x**3 ends at x³), a negative whole p its reciprocal."""
    if p == int(p) and abs(p) <= 64:
        m = abs(int(p))
        result, base = _const(1.0, n), a
        while m:
            if m & 1:
                result = _mul(result, base, n)
            m >>= 1
            if m:
                base = _mul(base, base, n)
        if p < 0:
            result = _div(_const(1.0, n), result, n)
        result[0] = y0
        return result
    if a[0] == 0.0:  # t**p at 0 is no power series: as the engine differentiates it
        return [y0, *(_at_zero(p, k) * a[1] ** k for k in range(1, n))]
    y = [y0]
    for k in range(1, n):
        total = _dot((((p + 1) * j - k) * a[j], y[k - j]) for j in range(1, k + 1))
        y.append(divide(total, k * a[0]) if total else 0.0)
    return y


def _cbrt(a: Jet, n: int, y0: float) -> Jet:
    """The real cube root, odd: at 0 its even derivatives differ in sign from either side
    (nan, as the engine's Hessian has it), its odd ones do not."""
    y = _power_of(a, 1 / 3, n, y0)
    if a[0] == 0.0:
        y = [c if k % 2 or k == 0 else math.nan for k, c in enumerate(y)]
    return y


def _at_zero(p: float, k: int) -> float:
    """The k-th derivative of x**p at 0 over k!, p not whole: p(p-1)...(p-k+1)/k! 0**(p-k),
    0 below the power (x**1.5's first) and infinite above it (its second, as the engine's
    Hessian has it)."""
    falling = math.prod((p - j) / (j + 1) for j in range(k))
    return falling * power(0.0, p - k)


def _sin_cos(a: Jet, n: int) -> tuple[Jet, Jet]:
    """sin(a) and cos(a) together: s' = c a', c' = -s a'."""
    s, c = [OPS["sin"].forward(a[0])], [OPS["cos"].forward(a[0])]
    for k in range(1, n):
        s.append(_dot((j * a[j], c[k - j]) for j in range(1, k + 1)) / k)
        c.append(-_dot((j * a[j], s[k - j]) for j in range(1, k + 1)) / k)
    return s, c


def _sinh_cosh(a: Jet, n: int) -> tuple[Jet, Jet]:
    """sinh(a) and cosh(a) together: s' = c a', c' = s a'."""
    s, c = [OPS["sinh"].forward(a[0])], [OPS["cosh"].forward(a[0])]
    for k in range(1, n):
        s.append(_dot((j * a[j], c[k - j]) for j in range(1, k + 1)) / k)
        c.append(_dot((j * a[j], s[k - j]) for j in range(1, k + 1)) / k)
    return s, c


def _quadratic(a: Jet, n: int, y0: float, u0: float, linear: float, square: float) -> Jet:
    """y(a) where y' = (constant + linear·y + square·y²)·a', given y0 and u0, the factor's
    value (tan: 1 + y², tanh: 1 - y², sigmoid: y - y²)."""
    y, u = [y0], [u0]
    for k in range(1, n):
        y.append(_dot((j * a[j], u[k - j]) for j in range(1, k + 1)) / k)
        u.append(linear * y[k] + square * _dot((y[i], y[k - i]) for i in range(k + 1)))
    return y


def _composed(f: Sequence[float], a: Jet, n: int) -> Jet:
    """f(a), where f holds f's Taylor coefficients at a0 (f⁽ᵏ⁾(a0)/k!): Σ f_k (a - a0)^k
    (Faà di Bruno), for the functions known by their derivatives at a point."""
    d = [0.0, *a[1:]]
    terms: list[list[float]] = [[f[0]]] + [[] for _ in range(n - 1)]
    p = d
    for k in range(1, n):
        for m in range(k, n):  # (a - a0)^k starts at t^k
            if f[k] and p[m]:
                terms[m].append(f[k] * p[m])
        if k + 1 < n:
            p = _mul(p, d, n)
    return [_fsum(t) for t in terms]


# The rules: each makes an operation's jet from its operands' jets, given the op and n.

Rule = Callable[..., Jet]


def _locally_linear(op: Op, n: int, *args: Jet) -> Jet:
    """An op that is linear on the piece of its domain that the point is on (+, -, abs,
    max, %, floor, a comparison, ...): its value, then each coefficient the sum of the
    operands' weighted by the engine's derivative at the point."""
    values = [a[0] for a in args]
    y = op.forward(*values)
    weights = op.derivative(*values, y)
    rest = [_dot((w, a[k]) for w, a in zip(weights, args, strict=True)) for k in range(1, n)]
    return [y, *rest]


def _where(op: Op, n: int, c: Jet, a: Jet, b: Jet) -> Jet:
    return list(a if c[0] != 0.0 else b)


def _times(op: Op, n: int, a: Jet, b: Jet) -> Jet:
    out = _mul(a, b, n)
    out[0] = a[0] * b[0]
    return out


def _over(op: Op, n: int, a: Jet, b: Jet) -> Jet:
    return _div(a, b, n)


def _pow(op: Op, n: int, a: Jet, b: Jet) -> Jet:
    y0 = power(a[0], b[0])
    if not any(b[1:]):
        return _power_of(a, b[0], n, y0)
    # a**b = exp(b log a), its value a**b itself
    return _exp(_mul(b, _log(a, n, OPS["log"].forward(a[0])), n), n, y0)


def _powlog(op: Op, n: int, a: Jet, b: Jet) -> Jet:
    out = _mul(_pow(op, n, a, b), _log(a, n, OPS["log"].forward(a[0])), n)
    out[0] = op.forward(a[0], b[0])
    return out


def _unary(make: Callable[[Op, Jet, int, float], Jet]) -> Rule:
    """A rule of a one-argument op from `make(op, a, n, value)`, the value from the table."""

    def rule(op: Op, n: int, a: Jet) -> Jet:
        return make(op, a, n, op.forward(a[0]))

    return rule


def _of_derivative(factor: Callable[[Jet, int], Jet]) -> Rule:
    """f(a) for f' = factor(a) (atan: 1/(1 + a²)): the integral of factor(a)·a'."""
    return _unary(lambda op, a, n, y0: _chain(y0, factor(a, n), a, n))


def _reciprocal_root(inside: Callable[[Jet, int], Jet]) -> Callable[[Jet, int], Jet]:
    """1/sqrt(inside(a))."""

    def factor(a: Jet, n: int) -> Jet:
        q = inside(a, n)
        s = _sqrt(q, n, OPS["sqrt"].forward(q[0]))
        return _div(_const(1.0, n), s, n)

    return factor


def _one_minus_square(a: Jet, n: int) -> Jet:
    """(1 - a)(1 + a), as _ops.py writes it: no cancellation of 1 - a² near ±1."""
    return _mul(_plus(_const(1.0, n), _scaled(a, -1.0)), _plus(_const(1.0, n), a), n)


def _one_plus_square(a: Jet, n: int) -> Jet:
    return _plus(_const(1.0, n), _mul(a, a, n))


def _gaussian(a: Jet, n: int) -> Jet:
    """2/sqrt(pi)·exp(-a²), erf's derivative: its value as the ops table computes it (without
    the rounding of a0², which exp(-a0²) multiplies by a0²), the rest by exp's recurrence."""
    return _exp(_scaled(_mul(a, a, n), -1.0), n, OPS["erf"].derivative(a[0], math.nan)[0])


def _sigmoid_of(a: Jet, n: int) -> Jet:
    sigmoid = OPS["sigmoid"]
    s0 = sigmoid.forward(a[0])
    return _quadratic(a, n, s0, sigmoid.derivative(a[0], s0)[0], 1.0, -1.0)


def _erfinv(op: Op, n: int, a: Jet) -> Jet:
    """y' = sqrt(pi)/2·exp(y²)·a': the factor u = exp(y²)·sqrt(pi)/2 made along with y."""
    y0 = op.forward(a[0])
    y, u, v = [y0], [op.derivative(a[0], y0)[0]], [y0 * y0]
    for k in range(1, n):
        y.append(_dot((j * a[j], u[k - j]) for j in range(1, k + 1)) / k)
        v.append(_dot((y[i], y[k - i]) for i in range(k + 1)))
        u.append(_dot((i * v[i], u[k - i]) for i in range(1, k + 1)) / k)
    return y


def _polygamma_terms(order: float, x: float, n: int) -> list[float]:
    """The Taylor coefficients at x of polygamma(order, ·): polygamma(order + k, x)/k!."""
    return [special.polygamma(order + k, x) / math.factorial(k) for k in range(n)]


def _lgamma(op: Op, n: int, a: Jet) -> Jet:
    terms = [op.forward(a[0]), *_polygamma_terms(0, a[0], n - 1)]
    return _composed([terms[0]] + [terms[k] / k for k in range(1, n)], a, n)


def _gamma(op: Op, n: int, a: Jet) -> Jet:
    """gamma = ±exp(lgamma): the exponential's recurrence from gamma's own value."""
    return _exp(_lgamma(OPS["lgamma"], n, a), n, op.forward(a[0]))


def _digamma(op: Op, n: int, a: Jet) -> Jet:
    terms = _polygamma_terms(0, a[0], n)
    terms[0] = op.forward(a[0])
    return _composed(terms, a, n)


def _polygamma(op: Op, n: int, m: Jet, a: Jet) -> Jet:
    """polygamma(m, a), m taken at its value (its derivative by m is 0, as in _ops.py)."""
    terms = _polygamma_terms(m[0], a[0], n)
    terms[0] = op.forward(m[0], a[0])
    return _composed(terms, a, n)


# sinc(x) = Σ_m (-π²)^m x^(2m)/(2m + 1)!: summed as a series in a² where |a0| < 1/2 (sin(πa)/(πa)
# cancels there); past it, the quotient.
_SINC_NEAR = 0.5


def _sinc_series(w: Jet, n: int, derivative: bool) -> Jet:
    """Σ_m c_m w^m for sinc's coefficients c_m (with `derivative`, Σ 2(m+1) c_{m+1} w^m,
    which times a is dsinc(a)), by Horner's rule, to where the terms are below rounding."""
    terms = n // 2 + 40
    c = [(-(math.pi**2)) ** m / math.factorial(2 * m + 1) for m in range(terms + 1)]
    if derivative:
        c = [2 * (m + 1) * c[m + 1] for m in range(terms)]
    out = _const(c[-1], n)
    for cm in reversed(c[:-1]):
        out = _mul(out, w, n)
        out[0] += cm
    return out


def _sinc(op: Op, n: int, a: Jet) -> Jet:
    if abs(a[0]) < _SINC_NEAR:
        out = _sinc_series(_mul(a, a, n), n, False)
    else:
        pa = _scaled(a, math.pi)
        out = _div(_sin_cos(pa, n)[0], pa, n)
    out[0] = op.forward(a[0])
    return out


def _dsinc(op: Op, n: int, a: Jet) -> Jet:
    if abs(a[0]) < _SINC_NEAR:
        out = _mul(a, _sinc_series(_mul(a, a, n), n, True), n)
    else:  # (cos(πa) - sinc(a))/a
        cos = _sin_cos(_scaled(a, math.pi), n)[1]
        out = _div(_minus(cos, _sinc(OPS["sinc"], n, a)), a, n)
    out[0] = op.forward(a[0])
    return out


def _atan2(op: Op, n: int, y: Jet, x: Jet) -> Jet:
    """d atan2(y, x) = (x dy - y dx)/(x² + y²)."""
    top = _minus(_mul(x, _slope(y, n), n), _mul(y, _slope(x, n), n))
    bottom = _plus(_mul(x, x, n), _mul(y, y, n))
    return _integral(op.forward(y[0], x[0]), _div(top, bottom, n), n)


def _hypot(op: Op, n: int, x: Jet, y: Jet) -> Jet:
    return _sqrt(_plus(_mul(x, x, n), _mul(y, y, n)), n, op.forward(x[0], y[0]))


def _logaddexp(op: Op, n: int, a: Jet, b: Jet) -> Jet:
    """d logaddexp(a, b) = sigmoid(a - b) da + sigmoid(b - a) db."""
    slope = _plus(
        _mul(_sigmoid_of(_minus(a, b), n), _slope(a, n), n),
        _mul(_sigmoid_of(_minus(b, a), n), _slope(b, n), n),
    )
    return _integral(op.forward(a[0], b[0]), slope, n)


def _log_base(op: Op, n: int, a: Jet, base: Jet) -> Jet:
    log = OPS["log"]
    out = _div(_log(a, n, log.forward(a[0])), _log(base, n, log.forward(base[0])), n)
    out[0] = op.forward(a[0], base[0])
    return out


def _with_value(rule: Rule) -> Rule:
    """`rule`, its value taken from the table (accurate where a quotient of series is not)."""

    def valued(op: Op, n: int, *args: Jet) -> Jet:
        out = rule(op, n, *args)
        out[0] = op.forward(*[a[0] for a in args])
        return out

    return valued


_LOCALLY_LINEAR = (
    "+ - % neg relu abs max min clamp < <= > >= == != step sign floor ceil round".split()
)
RULES: dict[Op, Rule] = {
    **{OPS[name]: _locally_linear for name in _LOCALLY_LINEAR},
    WHERE: _where,
    OPS["*"]: _times,
    OPS["/"]: _over,
    OPS["**"]: _pow,
    OPS["pow"]: _pow,
    OPS["powlog"]: _powlog,
    OPS["exp"]: _unary(lambda op, a, n, y0: _exp(a, n, y0)),
    OPS["expm1"]: _unary(lambda op, a, n, y0: [y0, *_exp(a, n, math.exp(a[0]))[1:]]),
    OPS["log"]: _unary(lambda op, a, n, y0: _log(a, n, y0)),
    OPS["log/2"]: _log_base,
    OPS["log1p"]: _unary(lambda op, a, n, y0: _log(_plus(_const(1.0, n), a), n, y0)),
    OPS["log2"]: _unary(lambda op, a, n, y0: [y0, *_scaled(_log(a, n, y0), 1 / math.log(2))[1:]]),
    OPS["log10"]: _unary(lambda op, a, n, y0: [y0, *_scaled(_log(a, n, y0), 1 / math.log(10))[1:]]),
    OPS["sqrt"]: _unary(lambda op, a, n, y0: _sqrt(a, n, y0)),
    OPS["cbrt"]: _unary(lambda op, a, n, y0: _cbrt(a, n, y0)),
    OPS["sin"]: _unary(lambda op, a, n, y0: _sin_cos(a, n)[0]),
    OPS["cos"]: _unary(lambda op, a, n, y0: _sin_cos(a, n)[1]),
    OPS["tan"]: _unary(lambda op, a, n, y0: _quadratic(a, n, y0, 1.0 + y0 * y0, 0.0, 1.0)),
    OPS["sec"]: _with_value(lambda op, n, a: _div(_const(1.0, n), _sin_cos(a, n)[1], n)),
    OPS["csc"]: _with_value(lambda op, n, a: _div(_const(1.0, n), _sin_cos(a, n)[0], n)),
    OPS["cot"]: _with_value(lambda op, n, a: _quotient(_sin_cos(a, n)[::-1], n)),
    OPS["sinc"]: _sinc,
    OPS["dsinc"]: _dsinc,
    OPS["asin"]: _of_derivative(_reciprocal_root(_one_minus_square)),
    OPS["acos"]: _of_derivative(
        lambda a, n: _scaled(_reciprocal_root(_one_minus_square)(a, n), -1.0)
    ),
    OPS["atan"]: _of_derivative(lambda a, n: _div(_const(1.0, n), _one_plus_square(a, n), n)),
    OPS["atan2"]: _atan2,
    OPS["hypot"]: _hypot,
    OPS["sinh"]: _unary(lambda op, a, n, y0: _sinh_cosh(a, n)[0]),
    OPS["cosh"]: _unary(lambda op, a, n, y0: _sinh_cosh(a, n)[1]),
    OPS["tanh"]: _unary(
        lambda op, a, n, y0: _quadratic(a, n, y0, op.derivative(a[0], y0)[0], 0.0, -1.0)
    ),
    OPS["asinh"]: _of_derivative(_reciprocal_root(_one_plus_square)),
    OPS["acosh"]: _of_derivative(
        _reciprocal_root(lambda a, n: _mul(_minus(a, _const(1.0, n)), _plus(a, _const(1.0, n)), n))
    ),
    OPS["atanh"]: _of_derivative(lambda a, n: _div(_const(1.0, n), _one_minus_square(a, n), n)),
    OPS["sech"]: _with_value(lambda op, n, a: _div(_const(1.0, n), _sinh_cosh(a, n)[1], n)),
    OPS["csch"]: _with_value(lambda op, n, a: _div(_const(1.0, n), _sinh_cosh(a, n)[0], n)),
    OPS["coth"]: _with_value(lambda op, n, a: _quotient(_sinh_cosh(a, n)[::-1], n)),
    OPS["erf"]: _of_derivative(_gaussian),
    OPS["erfc"]: _of_derivative(lambda a, n: _scaled(_gaussian(a, n), -1.0)),
    OPS["erfinv"]: _erfinv,
    OPS["gamma"]: _gamma,
    OPS["lgamma"]: _lgamma,
    OPS["digamma"]: _digamma,
    OPS["polygamma"]: _polygamma,
    OPS["sigmoid"]: lambda op, n, a: _sigmoid_of(a, n),
    OPS["softplus"]: _of_derivative(_sigmoid_of),
    OPS["logaddexp"]: _logaddexp,
}


def polynomial(
    coefficients: Sequence[float],
    wrt: str,
    at: float,
    latex: bool = False,
    whole: bool = False,
    digits: int | None = None,
) -> str:
    """Σ c_k (wrt - at)^k written in the language (or in LaTeX), as `diff` writes
    expressions: its zero terms left out, a coefficient 1 not written, a negative one
    subtracted, one that is 0 within the series' accuracy (`_noise`) left out too; just `wrt`
    around 0, and a centre that is a multiple of pi by a small fraction written so (x - pi/2).
    With `whole` (the source's numbers are whole), a
    coefficient that is a fraction p/q to the last bit is written so: x**2/2, not 0.5*x**2,
    and one that is such a fraction of e, pi, sqrt(2) or sqrt(3) too: e*(x - 1)**2/2,
    sqrt(3)*(x - pi/6)/2. Around a fraction of pi (whose series are of exact numbers only in
    the functions' own kinds), a fraction's denominator is one of those kinds. `digits`:
    the coefficients written as floats, to that many significant digits."""
    w = Written()
    x = w.input(wrt)
    if at == 0.0:
        shift = x
    else:
        shift = w.op(SUB if at > 0 else ADD, x, _centre(w, abs(at)))
    simple = not at.is_integer()  # (pi/6: sin's 1/2, sqrt(3)/2; no 103855/1865641)
    total = None
    for k, c in enumerate(coefficients):
        if c == 0.0 or _noise(coefficients, k):
            continue
        size = abs(c) if c == c else c
        constant, ratio = _fraction_of_constant(size, k, simple) if whole else (None, None)
        if ratio is None and digits is not None:
            size = float(format(size, f".{digits}g"))
        top, bottom = ratio if ratio else (size, 1)
        factor = w.number(float(top))
        if constant is not None:
            named = _written_constant(w, constant)
            factor = named if top == 1 else w.op(MUL, factor, named)
        if k == 0:
            term = factor
        else:
            term = shift if k == 1 else w.op(POW, shift, w.number(float(k)))
            if top != 1.0 or constant is not None:
                term = w.op(MUL, factor, term)
        if bottom != 1:
            term = w.op(DIV, term, w.number(float(bottom)))
        negative = c < 0.0
        if total is None:
            total = w.op(NEG, term) if negative else term
        else:
            total = w.op(SUB if negative else ADD, total, term)
    return write({"result": total if total is not None else w.number(0.0)}, latex)


# The largest denominator of a centre written as a multiple of pi (pi/2, 3*pi/4, 5*pi/12).
PI_DENOMINATORS = 12


def _centre(w: Written, at: float) -> Expr:
    """`at` (positive) as p*pi/q where `pi_fraction` finds it one, else the number."""
    fraction = pi_fraction(at)
    if fraction is None:
        return w.number(at)
    p, q = fraction
    times = w.number(math.pi) if p == 1 else w.op(MUL, w.number(float(p)), w.number(math.pi))
    return times if q == 1 else w.op(DIV, times, w.number(float(q)))


def pi_fraction(at: float) -> tuple[int, int] | None:
    """p, q where `at` (positive) is the float of p*pi/q (q up to PI_DENOMINATORS, p up to 4q)
    within two units in the last place, the value `--x pi/2` gives; else None (nan and inf
    included)."""
    if not 0 < at <= 4 * math.pi * (1 + sys.float_info.epsilon):
        return None
    for q in range(1, PI_DENOMINATORS + 1):
        p = round(at * q / math.pi)
        near = abs(at - p * math.pi / q) <= 2 * math.ulp(at)
        if 0 < p <= 4 * q and math.gcd(p, q) == 1 and near:
            return p, q
    return None


def _noise(coefficients: Sequence[float], k: int) -> bool:
    """Whether the k-th coefficient is 0 within its accuracy: smaller than FRACTION_ULPS*(k + 1)
    units of float precision of its neighbours, the larger of the coefficients before and after
    it (cos around pi/2 has 6e-17 where its series has 0, between 0.5 and -1/6's neighbours)."""
    c = coefficients[k]
    near = [coefficients[j] for j in (k - 1, k + 1) if 0 <= j < len(coefficients)]
    scale = max((abs(v) for v in near if math.isfinite(v)), default=0.0)
    return math.isfinite(c) and abs(c) <= FRACTION_ULPS * (k + 1) * sys.float_info.epsilon * scale


# Taylor mode's k-th coefficient of a series of exact numbers is within about (k + 1) units
# in the last place of the true one (measured against mpmath at 50 digits: x**x at 1 to
# order 20 is 17 ulp off at worst, tan, sec, atan, exp(sin(x)) at 0 about 1): the relative
# tolerance of a fraction is this many times that.
FRACTION_ULPS = 8
# A fraction is recognised only where the chance that a float this far from it lands so near
# some fraction of so small a denominator by accident is below this.
FRACTION_CHANCE = 1e-3


def _exact_ratio(c: float, k: int, simple: bool = False) -> tuple[int, int] | None:
    """c (positive) as p/q (q > 1), the k-th coefficient of a series of exact numbers, within
    its accuracy (FRACTION_ULPS*(k + 1) units in the last place), where a float that far off
    would be that near such a fraction by chance only rarely (FRACTION_CHANCE): a denominator
    of the series' own kinds, k! times one a fraction is written with (1/3628800) or a power
    of 2 up to 2**(2k + 1) (5/128, as in the series of sqrt), else the simplest fraction of a
    denominator small enough (-1/120, -53/5040 of x**x at 1). Else None: the float is shown,
    never a fraction of a huge denominator that only rounding made. `simple`: of the
    series' own kinds of denominator only."""
    if not math.isfinite(c) or c == 0.0:
        return None
    near = FRACTION_ULPS * (k + 1) * math.ulp(c)
    scale = math.factorial(k)
    kinds = [q * scale for q in (1, *DENOMINATORS)] + [2**j for j in range(1, 2 * k + 2)]
    for d in kinds:  # a float is within `near` of a multiple of 1/d with a chance of 2*near*d
        if 2 * near * d * len(kinds) > FRACTION_CHANCE:
            continue
        p = round(c * d)
        if p and abs(c - Fraction(p, d)) <= near:
            return _lowest(Fraction(p, d))
    if simple:
        return None
    # the fractions of denominators up to q are about 1/(0.6*q**2) apart (3/pi**2 of pairs
    # coprime): one is within `near` of a float with a chance of about 0.6*near*q**2
    # (past the doubles where c is tiny: a bound that large bounds nothing)
    largest = int(math.sqrt(min(FRACTION_CHANCE / (0.6 * near), 1e300)))
    ratio = Fraction(c).limit_denominator(max(largest, 1))
    return _lowest(ratio) if abs(c - ratio) <= near else None


# The constants a coefficient may be a fraction of, by how they are written: e and pi, and
# the roots that sin and cos take at multiples of pi/4 and pi/6 (sqrt(3)/2 at pi/6).
SERIES_CONSTANTS = {"e": math.e, "pi": math.pi, "sqrt(2)": math.sqrt(2), "sqrt(3)": math.sqrt(3)}


def _fraction_of_constant(
    c: float, k: int, simple: bool = False
) -> tuple[str | None, tuple[int, int] | None]:
    """(None, p/q) where c is a fraction p/q by `_exact_ratio`, else (a constant of
    SERIES_CONSTANTS, p/q) where c over it is one (e/2 of exp around 1), else (None, None).
    Division by the constant adds a unit in the last place, within the tolerance
    `_exact_ratio` allows (`simple`: as it takes it)."""
    if not math.isfinite(c) or c.is_integer():
        return None, None
    ratio = _exact_ratio(c, k, simple) or _whole(c, k)  # (0.9999999999999999: tan at pi/4)
    if ratio is None:
        for name, constant in SERIES_CONSTANTS.items():
            over = _exact_ratio(c / constant, k, simple) or _whole(c / constant, k)
            if over:
                return name, over
    return None, ratio


def _whole(c: float, k: int) -> tuple[int, int] | None:
    """c (positive) as n/1, a whole number from 1 that it is within the k-th coefficient's
    accuracy of (as `_exact_ratio` takes it), else None."""
    n = round(c)
    return (n, 1) if 1 <= n and abs(c - n) <= FRACTION_ULPS * (k + 1) * math.ulp(c) else None


def _written_constant(w: Written, name: str) -> Expr:
    """A constant of SERIES_CONSTANTS as the language writes it: e, pi, sqrt(2)."""
    if name.startswith("sqrt("):
        return w.op(OPS["sqrt"], w.number(float(name[5:-1])))
    return w.number(SERIES_CONSTANTS[name])


def _lowest(ratio: Fraction) -> tuple[int, int] | None:
    """p/q of a fraction that is not a whole number, else None."""
    return None if ratio.denominator == 1 else (ratio.numerator, ratio.denominator)
