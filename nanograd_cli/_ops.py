"""The one table of operations: what each computes and how gradient flows back through it.

Every function here follows IEEE 754 instead of raising: `log(-1)` is nan, `1/0` is inf,
`exp(1000)` is inf.  The engine, the parser, the docs, the live page and the tests all read
`OPS`. How to add an op: CONTRIBUTING.md, "A new operation".
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

from . import _derivatives
from . import _special as special

INF = math.inf
NAN = math.nan


class Op:
    """An operation: its forward function and its local derivatives.

    `formulas` writes the op's derivatives in the language, one per argument, in the op's
    `parameters` (x, or a and b, unless the row names them): the docs show them, symbolic
    differentiation parses them, and the live page's JavaScript and the Python `derivative`
    are written from them. `derivative(*args, y)`, where y = forward(*args), gives one local
    derivative per argument, as a tuple: (dy/dx,) for a unary op, (dy/da, dy/db) for a binary
    one. It is the function _derivatives.py holds for the row (written from its formulas by
    `python -m nanograd_cli._derivatives_writer`), unless the row passes one written by hand
    where the formulas' is less accurate or slower: an override, with its measurement beside it
    (benchmarks/derivatives.py), held to the formulas at edge points by the tests.
    `syntax` is how the language writes the op: "infix" (a + b), "prefix" (-x) or "call"
    (f(x)); a name may be called with different numbers of arguments, one row each. `domain`
    is an interval where the function is smooth, for the tests. `rule` names the rule of
    differentiation the op is, as a course says it (`diff --steps`): the product rule, the
    quotient rule; a function's is its name's (the sin rule).
    """

    __slots__ = (
        "arity",
        "derivative",
        "doc",
        "domain",
        "formulas",
        "forward",
        "name",
        "overridden",
        "parameters",
        "rule",
        "syntax",
    )
    name: str
    arity: int
    forward: Callable[..., float]
    formulas: tuple[str, ...]
    doc: str
    domain: tuple[float, float]
    syntax: str
    rule: str
    parameters: tuple[str, ...]
    overridden: bool
    derivative: Callable[..., tuple[float, ...]]

    def __init__(
        self,
        name: str,
        arity: int,
        forward: Callable[..., float],
        formulas: tuple[str, ...],
        doc: str,
        domain: tuple[float, float] = (-3.0, 3.0),
        syntax: str = "call",
        parameters: tuple[str, ...] | None = None,
        derivative: Callable[..., tuple[float, ...]] | None = None,
        rule: str | None = None,
    ):
        self.name = name
        self.arity = arity
        self.forward = forward
        self.formulas = formulas
        self.doc = doc
        self.domain = domain
        self.syntax = syntax
        self.rule = rule or f"{name} rule"
        # the names its formulas (and the docs) use for its arguments
        self.parameters = parameters or (("x",) if arity == 1 else ("a", "b")[:arity])
        # written by hand (an override), or None until the written one is attached below
        self.overridden = derivative is not None
        self.derivative = derivative or _unwritten(name)

    def __repr__(self) -> str:
        return f"Op({self.name!r})"


def _unwritten(name: str) -> Callable[..., tuple[float, ...]]:
    """The derivative of an op that _derivatives.py has no function for (a new row, or an
    edited formula, before the file is written again)."""

    def derivative(*args: float) -> tuple[float, ...]:
        raise LookupError(
            f"the op {name!r} has no derivative function: write them from the formulas with "
            "python -m nanograd_cli._derivatives_writer"
        )

    return derivative


def divide(a: float, b: float) -> float:
    """a / b with IEEE 754 results for a zero divisor."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0.0:
            return NAN
        return math.copysign(INF, a) * math.copysign(1.0, b)


def power(a: float, b: float) -> float:
    """a ** b on reals with IEEE 754 results: nan for a negative base and a fractional
    exponent, inf on overflow or a zero base with a negative exponent."""
    try:
        y = a**b
    except ZeroDivisionError:  # 0 ** negative
        odd = b.is_integer() and b % 2 == 1
        return math.copysign(INF, a) if odd else INF
    except OverflowError:
        odd = b.is_integer() and b % 2 == 1
        return -INF if (a < 0 and odd) else INF
    return NAN if type(y) is complex else y


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def _log_with(log: Callable[[float], float]) -> Callable[[float], float]:
    def safe_log(x: float) -> float:
        if x > 0.0:
            return log(x)
        return -INF if x == 0.0 else NAN

    return safe_log


def _in_unit_interval(f: Callable[[float], float]) -> Callable[[float], float]:
    def safe(x: float) -> float:
        return f(x) if -1.0 <= x <= 1.0 else NAN

    return safe


def _overflowing(f: Callable[[float], float], odd: bool) -> Callable[[float], float]:
    """Wrap sinh/cosh: on overflow, inf with the sign an odd or even function has."""

    def safe(x: float) -> float:
        try:
            return f(x)
        except OverflowError:
            return math.copysign(INF, x) if odd else INF

    return safe


def _periodic(f: Callable[[float], float]) -> Callable[[float], float]:
    """Wrap sin/cos/tan: nan at ±inf, where Python's math raises."""

    def safe(x: float) -> float:
        return f(x) if x - x == 0.0 else NAN

    return safe


_sin, _cos, _tan = _periodic(math.sin), _periodic(math.cos), _periodic(math.tan)


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0.0 else NAN


def _sigmoid(x: float) -> float:
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def _softplus(x: float) -> float:
    # log(1 + exp(x)) without overflow: x + log1p(exp(-x)) for large x
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


def _relu(x: float) -> float:
    return x if x > 0.0 else 0.0


def _step(x: float) -> float:
    return 1.0 if x > 0.0 else (0.0 if x == x else NAN)  # relu'(0) = 0, as PyTorch


def _sign(x: float) -> float:
    if x > 0.0:
        return 1.0
    return -1.0 if x < 0.0 else (0.0 if x == x else NAN)  # abs'(0) = 0, as PyTorch


# The smallest normal double (sys.float_info.min): below it, a float keeps fewer digits.
SMALLEST_NORMAL = 2.2250738585072014e-308


def _powlog(a: float, b: float) -> float:
    """a**b * log(a), the derivative of a**b by b: 0 at a = 0 for b >= 0 (PyTorch's
    convention, the limit along a = 0), nan for a negative base, where b -> a**b is not
    real-differentiable. Below the smallest normal float, by halves, a**(b/2)*log(a)*a**(b/2),
    which rounds once (at (1e300, -1.05) a**b is subnormal, and a**b*log(a) 212 units in the
    last place off)."""
    if a > 0.0:
        y = power(a, b)
        if y < SMALLEST_NORMAL and a < INF:
            half = power(a, b / 2)
            return half * math.log(a) * half
        return y * math.log(a)
    return 0.0 if a == 0.0 and b >= 0.0 else NAN


def power_slope(a: float, b: float) -> float:
    """d/da a**b = b*a**(b - 1), 0 at a = b = 0 (a**0 is 1 for every a; not 0 * 0**-1, nan).

    Where a**(b - 1) underflows but b*a**(b - 1) is still a float (d/da 2**-1074 is
    -1074*2**-1075 = -2.65e-321, where 2**-1075 rounds to 0), the product is computed in
    decimal, exactly enough to round once."""
    if a == 0.0 and b == 0.0:
        return 0.0
    slope = b * power(a, b - 1.0)
    if abs(slope) < SMALLEST_NORMAL and abs(b) > 1.0 and a != 0.0 and _finite(a * b):
        return _decimal_slope(a, b)
    return slope


def _finite(x: float) -> bool:
    return x - x == 0.0


def _decimal_slope(a: float, b: float) -> float:
    from decimal import Decimal, InvalidOperation, localcontext

    with localcontext() as context:
        context.prec = 40
        try:
            exponent = Decimal(b) - 1
            return float(Decimal(b) * Decimal(a) ** exponent)
        except InvalidOperation:  # a negative base to a fractional power
            return NAN


def _pow_derivative(a: float, b: float, y: float) -> tuple[float, float]:
    db = y * math.log(a) if a > 0.0 and y >= SMALLEST_NORMAL else _powlog(a, b)
    return power_slope(a, b), db


_sinh = _overflowing(math.sinh, odd=True)
_cosh = _overflowing(math.cosh, odd=False)


def _tanh_derivative(x: float, y: float) -> tuple[float]:
    # 4e/(1 + e)**2 with e = exp(-2|x|) <= 1: no cancellation near saturation (as 1 - tanh**2
    # has), no overflow (as cosh has), and tiny values where cosh(x)**2 would overflow
    e = math.exp(-2.0 * abs(x))
    r = 1.0 / (1.0 + e)
    return (4.0 * e * r * r,)


_log = _log_with(math.log)
_LN2 = math.log(2.0)


def _log_base(x: float, base: float) -> float:
    return divide(_log(x), _log(base))


def _log1p(x: float) -> float:
    if x > -1.0:
        return math.log1p(x)
    return -INF if x == -1.0 else NAN


def _expm1(x: float) -> float:
    try:
        return math.expm1(x)
    except OverflowError:
        return INF


def _hypot_derivative(x: float, y: float, h: float) -> tuple[float, float]:
    return _unit_part(x, y, h), _unit_part(y, x, h)


def _unit_part(x: float, y: float, h: float) -> float:
    """x/h, h = hypot(x, y); where h is not a normal float, as sign(x)/hypot(1, y/x) (the
    formula), which does not form h: a subnormal h rounds to the subnormal grid (at
    x = y = 5e-324, x/h is 1, not 0.7071), and x/h is nan at an infinite h."""
    if SMALLEST_NORMAL <= h < INF:
        return divide(x, h)
    return divide(_sign(x), math.hypot(1.0, divide(y, x)))


def _maximum(a: float, b: float) -> float:
    return a if a >= b else (b if b > a else NAN)


def _minimum(a: float, b: float) -> float:
    return a if a <= b else (b if b < a else NAN)


def _clamp(x: float, lo: float, hi: float) -> float:
    """min(max(x, lo), hi): hi where lo > hi, nan where any argument is nan (as PyTorch)."""
    if x != x or lo != lo or hi != hi:
        return NAN
    return min(max(x, lo), hi)


def _integer_valued(f: Callable[[float], int]) -> Callable[[float], float]:
    """Wrap floor/ceil/round: a float with the sign of x (floor(-0.5) is -1, ceil(-0.5) is
    -0, as C has them), and inf and nan as they are, where Python's would raise."""

    def safe(x: float) -> float:
        return math.copysign(float(f(x)), x) if x - x == 0.0 else x

    return safe


def _acosh(x: float) -> float:
    return math.acosh(x) if x >= 1.0 else NAN


def _atanh(x: float) -> float:
    if -1.0 < x < 1.0:
        return math.atanh(x)
    return math.copysign(INF, x) if abs(x) == 1.0 else NAN


def _sec(x: float) -> float:
    return divide(1.0, _cos(x))


def _csc(x: float) -> float:
    return divide(1.0, _sin(x))


def _cot(x: float) -> float:
    return divide(1.0, _tan(x))


# Past this |x|, cosh and sinh overflow: sech and csch are 2*exp(-|x|) there.
_HYPERBOLIC_OVERFLOW = 710.0


def _sech(x: float) -> float:
    if abs(x) < _HYPERBOLIC_OVERFLOW:
        return 1.0 / math.cosh(x)
    return 2.0 * math.exp(-abs(x)) if x == x else NAN


def _csch(x: float) -> float:
    if abs(x) < _HYPERBOLIC_OVERFLOW:
        return divide(1.0, math.sinh(x))
    return math.copysign(2.0 * math.exp(-abs(x)), x) if x == x else NAN


def _coth(x: float) -> float:
    return divide(1.0, math.tanh(x))


def _logaddexp(a: float, b: float) -> float:
    """log(exp(a) + exp(b)) without overflow, as NumPy's logaddexp."""
    if a == b:  # the infinities too: logaddexp(-inf, -inf) is -inf
        return a + _LN2
    if a != a or b != b:
        return NAN
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))


_round = _integer_valued(round)


def _mod(a: float, b: float) -> float:
    """a % b as Python (and NumPy's mod) has it: a - b*floor(a/b), with the sign of b (-1 % 3
    is 2, 1 % -3 is -2), a zero of the sign of b, nan for b = 0 or an infinite a."""
    try:
        return a % b
    except ZeroDivisionError:
        return NAN


def _comparison(test: Callable[[float, float], bool]) -> Callable[[float, float], float]:
    def compare(a: float, b: float) -> float:
        return 1.0 if test(a, b) else 0.0

    return compare


def _where(c: float, a: float, b: float) -> float:
    """a where c is not 0 (nan is not 0), else b."""
    return a if c != 0.0 else b


# The power rule, b*a**(b - 1): 0 at a = b = 0, where 0 * 0**-1 is nan (a**0 is 1 for every
# a; a where on that one point only keeps the derivatives of d/da on either side of it, at
# b = 0 1/a); and where it is below the smallest normal float (at a finite a other than 0,
# where the halves' own derivatives are inf*0), by halves,
# b*a**k*a**(b - 1 - k), whose factors are normal floats and whose product rounds once (at
# a = 2, b = -1074, -2.65e-321 where a**(b - 1) rounds to 0), and so do its own derivatives
# (at (1e10, -30), where a**(b - 2) is subnormal). k is (b - 1)/2, or for a whole b - 1 the
# whole floor((b - 1)/2), so that a negative base keeps its sign and the powers of a whole b
# stay whole (2*x**0*x**1 is 2*x, as a textbook has it).
_HALF = "where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)"
_TINY = "2.2250738585072014e-308"
POWER_RULE = (
    f"where((a == 0)*(b == 0), 0, where((abs(b*a**(b - 1)) < {_TINY})*(a != 0)*(a - a == 0), "
    f"b*a**{_HALF}*a**(b - 1 - {_HALF}), b*a**(b - 1)))"
)


def gaussian(x: str) -> str:
    """exp(-x**2) in the language, of the expression `x`, keeping the digits x**2 rounds
    away (exp(-x**2) was 435 units in the last place off at 26.12, 12 at 5): h, x to 20
    binary places, has an exact square, and x**2 - h**2 = (x - h)*(x + h), below 2**-15,
    rounds by nothing that shows in its exp. From |x| = 26.5, where exp(-x**2) nears the
    smallest normal float, by halves of exp(-h**2), each a normal float, whose product rounds
    once (and so do the products of its derivative: erf's second derivative at 27 was 13
    units in the last place off); past 26.75, where the rounding of x**2 is below a unit of
    the subnormal grid, by halves of exp(-x**2). No derivative multiplies inf by 0, up to
    x = inf: the halves are of x clamped to 40 (each 0 past it, and its derivative 0 there),
    and x**2/2 is written (x/2)*x (the same float), whose derivative is x where that of x**2
    is 2*x, inf past 8.99e307 (the second derivative there was inf*0, nan, where it is 0);
    h and the first branches are of x clamped to 27 (the same numbers wherever a branch takes
    them), as x*1048576 overflows past 1.7e302, which made a branch not taken inf, and inf*0
    where a derivative of the where is multiplied out (diff --order 2 --exact)."""
    near = f"clamp({x}, -27, 27)"
    h = f"(round({near}*1048576)/1048576)"
    rest = f"exp(-({near} - {h})*({near} + {h}))"
    far = f"clamp({x}, -40, 40)"
    return (
        f"where(abs({x}) < 26.5, exp(-{h}**2)*{rest}, "
        f"where(abs({x}) < 26.75, exp(-{h}**2/2)*{rest}*exp(-{h}**2/2), "
        f"exp(-({far}/2)*{far})*exp(-({far}/2)*{far})))"
    )


_GAUSSIAN = gaussian("x")

_TABLE = [
    Op("+", 2, operator.add, ("1", "1"), "addition", syntax="infix", rule="sum rule"),
    Op(
        "-",
        2,
        operator.sub,
        ("1", "-1"),
        "subtraction",
        syntax="infix",
        rule="difference rule",
    ),
    Op("*", 2, operator.mul, ("b", "a"), "multiplication", syntax="infix", rule="product rule"),
    Op(
        "/",
        2,
        divide,
        ("1/b", "-(a/b)/b"),  # not -a/b**2: b**2 underflows where b and a/b do not
        "division",
        syntax="infix",
        rule="quotient rule",
    ),
    Op(
        "**",
        2,
        power,
        (POWER_RULE, "powlog(a, b)"),
        "power (also written ^); d/db is taken for a > 0, and is 0 at a = 0, b >= 0",
        (0.2, 3.0),
        syntax="infix",
        # Written by hand for speed: the formula's (a where by halves below the smallest
        # normal float) takes 2.7x the time per call, for the same digits (b*a**(b - 1) in
        # decimal there, as near as the halves' to a unit in the last place).
        # `python benchmarks/derivatives.py '**' pow`
        derivative=_pow_derivative,
        rule="power rule",
    ),
    Op(
        "%",
        2,
        _mod,
        # d/db is -floor(a/b), the quotient Python's // gives: the integer (a - a % b)/b,
        # rounded (floor(1/0.1) is 10, where 1 // 0.1 is 9 and 1 % 0.1 is 0.0999...)
        ("1", "-round((a - a % b)/b)"),
        "remainder of floor division, with the sign of b as in Python and NumPy's mod "
        "(-1 % 3 is 2); nan for b = 0",
        (0.2, 3.0),
        syntax="infix",
        rule="remainder rule",
    ),
    Op(
        "neg",
        1,
        operator.neg,
        ("-1",),
        "negation (unary -)",
        syntax="prefix",
        rule="constant factor rule",
    ),
    Op("exp", 1, _exp, ("exp(x)",), "e to the power x"),
    Op(
        "expm1",
        1,
        _expm1,
        ("exp(x)",),
        "exp(x) - 1, accurate near x = 0",
    ),
    Op(
        "log",
        1,
        _log,
        ("1/x",),
        "natural logarithm",
        (0.1, 5.0),
    ),
    Op(
        "log",
        2,
        _log_base,
        ("1/(x*log(base))", "-log(x, base)/(base*log(base))"),
        "logarithm to the given base: log(x)/log(base)",
        (1.5, 5.0),
        parameters=("x", "base"),
    ),
    Op(
        "log1p",
        1,
        _log1p,
        ("1/(1 + x)",),
        "log(1 + x), accurate near x = 0",
        (-0.9, 5.0),
    ),
    Op(
        "log2",
        1,
        _log_with(math.log2),
        ("1/(x*log(2))",),
        "base-2 logarithm",
        (0.1, 5.0),
    ),
    Op(
        "log10",
        1,
        _log_with(math.log10),
        # not 1/(x*log(10)): x*log(10) overflows past 7.8e307, where the derivative is 2.6e-309
        ("1/log(10)/x",),
        "base-10 logarithm",
        (0.1, 5.0),
    ),
    Op(
        "sqrt",
        1,
        _sqrt,
        ("1/(2*sqrt(x))",),
        "square root",
        (0.1, 5.0),
    ),
    Op(
        "cbrt",
        1,
        math.cbrt,
        ("1/(3*cbrt(x)**2)",),
        "cube root, real for x < 0 too (cbrt(-8) is -2, where (-8)**(1/3) is nan)",
        (0.1, 3.0),
    ),
    Op(
        "pow",
        2,
        power,
        (POWER_RULE, "powlog(a, b)"),
        "a**b, as a function",
        (0.2, 3.0),
        # Written by hand for speed: the formula's (a where by halves below the smallest
        # normal float) takes 2.7x the time per call, for the same digits (b*a**(b - 1) in
        # decimal there, as near as the halves' to a unit in the last place).
        # `python benchmarks/derivatives.py '**' pow`
        derivative=_pow_derivative,
        rule="power rule",
    ),
    Op("sin", 1, _sin, ("cos(x)",), "sine (radians)"),
    Op("cos", 1, _cos, ("-sin(x)",), "cosine (radians)"),
    Op(
        "tan",
        1,
        _tan,
        ("1 + tan(x)**2",),
        "tangent (radians)",
        (-1.4, 1.4),
    ),
    Op(
        "sec",
        1,
        _sec,
        ("sec(x)*tan(x)",),
        "secant, 1/cos(x)",
        (-1.4, 1.4),
    ),
    Op(
        "csc",
        1,
        _csc,
        ("-csc(x)*cot(x)",),
        "cosecant, 1/sin(x)",
        (0.2, 3.0),
    ),
    Op(
        "cot",
        1,
        _cot,
        ("-csc(x)**2",),
        "cotangent, 1/tan(x)",
        (0.2, 3.0),
    ),
    Op(
        "sinc",
        1,
        special.sinc,
        ("dsinc(x)",),
        "sin(pi*x)/(pi*x), 1 at 0 (normalized, as NumPy's); 0 at every other integer",
    ),
    Op(
        "dsinc",
        1,
        special.dsinc,
        # near 0 its Taylor polynomial, whose own derivatives are sinc's at 0 up to the 8th
        # (a constant there made sinc's 4th derivative 0 at 0, where it is pi**4/5)
        (
            "where(abs(x) < 1e-8, -pi**2/3 + pi**4*x**2/10 - pi**6*x**4/168 + pi**8*x**6/6480, "
            "-pi**2*sinc(x) - 2*dsinc(x)/x)",
        ),
        "the derivative of sinc, (cos(pi*x) - sinc(x))/x, without its cancellation near 0",
        # Written by hand: the formula cancels for 1e-8 < |x| < 1/2, 12 units in the last
        # place at most against 2.6 for the series (mpmath); it is 3x faster, but dsinc is
        # sinc's derivative only. `python benchmarks/derivatives.py dsinc`
        derivative=lambda x, y: (special.d2sinc(x),),
    ),
    Op(
        "asin",
        1,
        _in_unit_interval(math.asin),
        # not 1 - x**2 near 1, where it cancels; (1 - x)*(1 + x) near 0 has its own derivative
        # cancel, (1 + x) - (1 - x) (0 at x = 1e-300, where the second derivative is 1e-300),
        # and at +-1 (where 1 - x**2 is exact) its own derivative is 0*inf, nan, not inf
        ("1/sqrt(where((abs(x) < 0.5) + (abs(x) >= 1), 1 - x**2, (1 - x)*(1 + x)))",),
        "inverse sine",
        (-0.9, 0.9),
    ),
    Op(
        "acos",
        1,
        _in_unit_interval(math.acos),
        ("-1/sqrt(where((abs(x) < 0.5) + (abs(x) >= 1), 1 - x**2, (1 - x)*(1 + x)))",),
        "inverse cosine",
        (-0.9, 0.9),
    ),
    Op(
        "atan",
        1,
        math.atan,
        ("1/(1 + x**2)",),
        "inverse tangent",
    ),
    Op(
        "atan2",
        2,
        math.atan2,
        (
            # x/(x**2 + y**2) and -y/(x**2 + y**2), divided by the larger argument only, with
            # no square and no hypot(y, x) of the arguments, which overflow or underflow where
            # the derivative does not (at (1.6e308, 1.7e308) h is inf, d/dx -2.9e-309); a tie
            # takes 1/(1 + (y/x)**2)/x and -1/(1 + (x/y)**2)/y, whose mixed derivatives cancel
            # exactly
            "where(abs(x) < abs(y), x/y/(1 + (x/y)**2)/y, 1/(1 + (y/x)**2)/x)",
            "where(abs(y) < abs(x), -(y/x/(1 + (y/x)**2))/x, -(1/(1 + (x/y)**2))/y)",
        ),
        "the angle of the point (x, y), from -pi to pi; nan derivatives at the origin",
        (0.2, 3.0),
        parameters=("y", "x"),
    ),
    Op(
        "hypot",
        2,
        math.hypot,
        # dividing by the larger argument only: sign(x)/hypot(1, y/x) alone has x/0 in its
        # own derivative at x = 0 (nan where the second derivative is 1/abs(y))
        (
            "where(abs(x) < abs(y), sign(y)*(x/y)/hypot(1, x/y), sign(x)/hypot(1, y/x))",
            "where(abs(y) < abs(x), sign(x)*(y/x)/hypot(1, y/x), sign(y)/hypot(1, x/y))",
        ),
        "sqrt(x**2 + y**2), without overflow; nan derivatives at the origin",
        (0.2, 3.0),
        parameters=("x", "y"),
        # Written by hand: one division, x/h, where the formula has two (1.98 units in the
        # last place at (3.7e-19, 2.3e-20) against 0.02 by hand; mpmath), and less time per
        # call. `python benchmarks/derivatives.py hypot`
        derivative=_hypot_derivative,
    ),
    Op("sinh", 1, _sinh, ("cosh(x)",), "hyperbolic sine"),
    Op("cosh", 1, _cosh, ("sinh(x)",), "hyperbolic cosine"),
    Op(
        "tanh",
        1,
        math.tanh,
        ("sech(x)**2",),  # not 1/cosh(x)**2: cosh overflows past 710, where sech is tiny
        "hyperbolic tangent",
        # Written by hand: the formula's sech(x)*sech(x) is no nearer the true value (mpmath):
        # 3.26 units in the last place at most against 3.44, 0.98 against 0.96 on average
        # where they differ (779 of 2,018 points), 1.35 against 0.65 at x = 2, the worked
        # example that the docs and tests/test_explain.py print to the last digit; the time
        # per call is the same, and _compiled.py writes this one inline.
        # `python benchmarks/derivatives.py tanh`
        derivative=_tanh_derivative,
    ),
    Op(
        "asinh",
        1,
        math.asinh,
        ("1/hypot(1, x)",),
        "inverse hyperbolic sine",
    ),
    Op(
        "acosh",
        1,
        _acosh,
        # not 1/sqrt(x**2 - 1): that cancels near 1 and overflows past 1e154; but at 1, where
        # it is exact, the product's own derivative is 0*inf, nan, not -inf
        ("where(x == 1, 1/sqrt(x**2 - 1), 1/(sqrt(x - 1)*sqrt(x + 1)))",),
        "inverse hyperbolic cosine, for x >= 1",
        (1.1, 5.0),
    ),
    Op(
        "atanh",
        1,
        _atanh,
        # not 1 - x**2 near +-1, where it cancels; as asin's (inf at +-1, of the sign of
        # 1/(1 - x**2) inside; its derivative there inf at 1 and -inf at -1)
        ("1/where((abs(x) < 0.5) + (abs(x) >= 1), 1 - x**2, (1 - x)*(1 + x))",),
        "inverse hyperbolic tangent, for -1 <= x <= 1",
        (-0.9, 0.9),
    ),
    Op(
        "sech",
        1,
        _sech,
        ("-sech(x)*tanh(x)",),
        "hyperbolic secant, 1/cosh(x), without overflow",
    ),
    Op(
        "csch",
        1,
        _csch,
        ("-csch(x)*coth(x)",),
        "hyperbolic cosecant, 1/sinh(x), without overflow",
        (0.2, 3.0),
    ),
    Op(
        "coth",
        1,
        _coth,
        ("-csch(x)**2",),
        "hyperbolic cotangent, 1/tanh(x)",
        (0.2, 3.0),
    ),
    Op(
        "erf",
        1,
        math.erf,
        (f"2/sqrt(pi)*{_GAUSSIAN}",),
        "error function",
    ),
    Op(
        "erfc",
        1,
        math.erfc,
        (f"-(2/sqrt(pi)*{_GAUSSIAN})",),
        "1 - erf(x), accurate where erf(x) is near 1",
    ),
    Op(
        "erfinv",
        1,
        special.erfinv,
        ("sqrt(pi)/2*exp(erfinv(x)**2)",),
        "inverse error function, for -1 <= x <= 1",
        (-0.9, 0.9),
    ),
    Op(
        "gamma",
        1,
        special.gamma,
        ("gamma(x)*digamma(x)",),
        "gamma function, (x - 1)! at the integers",
        (0.2, 5.0),
    ),
    Op(
        "lgamma",
        1,
        special.lgamma,
        ("digamma(x)",),
        "log(abs(gamma(x))), without overflow, accurate near its zeros at 1 and 2",
        (0.2, 5.0),
    ),
    Op(
        "digamma",
        1,
        special.digamma,
        ("polygamma(1, x)",),
        "d/dx lgamma(x), also called psi",
        (0.2, 5.0),
    ),
    Op(
        "polygamma",
        2,
        special.polygamma,
        ("0", "where(n < 0, polygamma(n, x), polygamma(n + 1, x))"),
        "the n-th derivative of digamma, for n = 0, 1, 2, ... (nan for any other n)",
        (0.0, 10.0),  # 3 and 7 are in it: the tests that take points in it get integer n
        parameters=("n", "x"),
    ),
    Op(
        "sigmoid",
        1,
        _sigmoid,
        ("sigmoid(x)*sigmoid(-x)",),
        "logistic function 1/(1 + exp(-x))",
    ),
    Op(
        "softplus",
        1,
        _softplus,
        ("sigmoid(x)",),
        "log(1 + exp(x)), computed without overflow",
    ),
    Op(
        "logaddexp",
        2,
        _logaddexp,
        ("sigmoid(a - b)", "sigmoid(b - a)"),
        "log(exp(a) + exp(b)), computed without overflow",
    ),
    Op("relu", 1, _relu, ("step(x)",), "max(x, 0); relu'(0) = 0"),
    Op("abs", 1, abs, ("sign(x)",), "absolute value; abs'(0) = 0"),
    Op(
        "max",
        2,
        _maximum,
        ("(1 + sign(a - b))/2", "(1 - sign(a - b))/2"),
        "the larger of a and b; at a = b each gets half the derivative",
    ),
    Op(
        "min",
        2,
        _minimum,
        ("(1 - sign(a - b))/2", "(1 + sign(a - b))/2"),
        "the smaller of a and b; at a = b each gets half the derivative",
    ),
    Op(
        "clamp",
        3,
        _clamp,
        # PyTorch's rule: x gets the gradient where lo <= x <= hi, lo where x < lo < hi, hi
        # where x > hi or hi < lo (so none gets it where x < lo = hi)
        (
            "(1 - step(lo - x))*(1 - step(x - hi))",
            "step(lo - x)*step(hi - lo)",
            "sign(step(x - hi) + step(lo - hi))",
        ),
        "min(max(x, lo), hi); at x = lo or x = hi the derivative goes to x",
        parameters=("x", "lo", "hi"),
    ),
    *(
        Op(
            name,
            2,
            _comparison(test),
            ("0", "0"),
            f"1 if a {name} b, else 0",
            syntax="infix",
        )
        for name, test in (
            ("<", operator.lt),
            ("<=", operator.le),
            (">", operator.gt),
            (">=", operator.ge),
            ("==", operator.eq),
            ("!=", operator.ne),
        )
    ),
    Op(
        "where",
        3,
        _where,
        ("0", "c != 0", "c == 0"),
        "a where c is not 0 (nan is not 0), else b; the gradient goes to the branch taken "
        "only, none to c or to the other branch",
        parameters=("c", "a", "b"),
    ),
    Op("step", 1, _step, ("0",), "1 for x > 0, else 0 (the derivative of relu)"),
    Op("sign", 1, _sign, ("0",), "1, 0 or -1 as x is positive, 0 or negative"),
    Op(
        "floor",
        1,
        _integer_valued(math.floor),
        ("0",),
        "the largest integer <= x; derivative 0",
        (0.1, 0.9),
    ),
    Op(
        "ceil",
        1,
        _integer_valued(math.ceil),
        ("0",),
        "the smallest integer >= x; derivative 0",
        (0.1, 0.9),
    ),
    Op(
        "round",
        1,
        _round,
        ("0",),
        "the nearest integer, halves to even (round(2.5) is 2); derivative 0",
        (-0.4, 0.4),
    ),
    Op(
        "powlog",
        2,
        _powlog,
        # d/db is a**b*log(a)**2, 0 at a = 0 for b >= 0 as powlog is (not 0*log(0), nan);
        # below the smallest normal float, by halves, which round once (as for the power rule)
        (
            f"where((abs(a**(b - 1)) < {_TINY})*(a != 0)*(a - a == 0), "
            f"b*powlog(a, {_HALF})*a**(b - 1 - {_HALF}) + a**{_HALF}*a**(b - 1 - {_HALF}), "
            "b*powlog(a, b - 1) + a**(b - 1))",
            f"where((abs(powlog(a, b)) < {_TINY})*(a != 0)*(a - a == 0), "
            "powlog(a, b/2)*powlog(a, b/2), powlog(a, b)*powlog(a, 0))",
        ),
        "a**b * log(a), the derivative of a**b by b; 0 at a = 0 for b >= 0",
        (0.2, 3.0),
    ),
]


def _by_key(table: list[Op]) -> dict[str, Op]:
    """Each op by its name; a second row of a name by name/arity ("log/2")."""
    ops: dict[str, Op] = {}
    for op in table:
        ops[f"{op.name}/{op.arity}" if op.name in ops else op.name] = op
    return ops


OPS: dict[str, Op] = _by_key(_TABLE)
# The functions by name (log is the one-argument log), and by name and number of arguments.
FUNCTIONS: dict[str, Op] = {
    name: op for name, op in OPS.items() if op.syntax == "call" and name == op.name
}
CALLS: dict[tuple[str, int], Op] = {(op.name, op.arity): op for op in _TABLE if op.syntax == "call"}


def _attach_written() -> None:
    """Each row without an override gets its function from _derivatives.py, where that was
    written from the formulas the row has now."""
    written = _derivatives.derivatives({key: op.forward for key, op in OPS.items()})
    for key, op in OPS.items():
        if not op.overridden and _derivatives.FORMULAS.get(key) == op.formulas:
            op.derivative = written[key]


_attach_written()

ADD, SUB, MUL, DIV, POW, NEG, MOD = (OPS[k] for k in ("+", "-", "*", "/", "**", "neg", "%"))
# where(c, a, b) passes its gradient on to the argument it takes, and to nothing else: every
# interpretation that differentiates looks for it.
WHERE = OPS["where"]
# The comparisons: 0 or 1, also of nan, with derivative 0.
COMPARISONS = frozenset(OPS[k] for k in ("<", "<=", ">", ">=", "==", "!="))

# Marks a leaf that holds a number of the source (a literal, pi, e): never an input, and
# never differentiated with respect to.
CONST = Op("const", 0, float, (), "a number", syntax="number", derivative=lambda y: ())

CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}
