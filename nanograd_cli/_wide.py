"""Numbers with a double's digits and an exponent without bounds, m * 2**e: what a part of a
formula is where, in doubles, it overflows to inf or underflows to 0 (`x**3` at 1e120 is
1e360 here). Arithmetic, powers, square roots, exp, log, hypot, atan2 and abs are computed on
them; any other function only where its arguments are doubles (nan elsewhere).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ._ops import OPS, Op

Wide = tuple[float, int]  # (m, e): m * 2**e, m in [0.5, 1) unless 0, inf or nan (e 0)

# Below this many halvings apart, the smaller of two terms is lost in the larger's last place.
_APART = 1100
# A whole exponent up to this size is applied by repeated squaring (to a few roundings); a
# larger or fractional one through log2, to about 1e-16 times the power's binary exponent.
_WHOLE_POWER = 2**53


def wide(x: float) -> Wide:
    if x == 0.0 or not math.isfinite(x):
        return (x, 0)
    return math.frexp(x)


def to_float(w: Wide) -> float:
    """The double nearest to w: inf past the largest, 0 or subnormal below the smallest."""
    m, e = w
    try:
        return math.ldexp(m, e)
    except OverflowError:
        return math.copysign(math.inf, m)


def _made(m: float, e: int) -> Wide:
    if m == 0.0 or not math.isfinite(m):
        return (m, 0)
    f, k = math.frexp(m)
    return (f, e + k)


def _finite(*ws: Wide) -> bool:
    return all(math.isfinite(m) and m != 0.0 for m, _ in ws)


def add(a: Wide, b: Wide) -> Wide:
    if not _finite(a, b):
        return wide(to_float(a) + to_float(b)) if _finite(a) or _finite(b) else wide(a[0] + b[0])
    if a[1] < b[1]:
        a, b = b, a
    apart = a[1] - b[1]
    if apart > _APART:
        return a
    return _made(a[0] + math.ldexp(b[0], -apart), a[1])


def neg(a: Wide) -> Wide:
    return (-a[0], a[1])


def sub(a: Wide, b: Wide) -> Wide:
    return add(a, neg(b))


def mul(a: Wide, b: Wide) -> Wide:
    return _made(a[0] * b[0], a[1] + b[1])


def div(a: Wide, b: Wide) -> Wide:
    if b[0] == 0.0:
        if a[0] == 0.0 or math.isnan(a[0]):
            return (math.nan, 0)
        return (math.copysign(math.inf, a[0]) * math.copysign(1.0, b[0]), 0)
    return _made(a[0] / b[0], a[1] - b[1])


def power(a: Wide, b: Wide) -> Wide:
    p = to_float(b)
    if not (_finite(a) and math.isfinite(p)):
        try:
            return wide(math.pow(to_float(a), p))
        except (OverflowError, ValueError, ZeroDivisionError):
            return (math.nan, 0)
    m, e = a
    whole = p == math.floor(p)
    if m < 0.0 and not whole:
        return (math.nan, 0)
    if whole and abs(p) <= _WHOLE_POWER:
        return _whole_power(a, int(p))
    # 2**bits, bits = p*log2(a), split into a whole number of halvings and the rest
    try:
        bits = p * (math.log2(abs(m)) + e)
        k = math.floor(bits)
    except OverflowError:  # past even this exponent's range: as the doubles have it
        return (math.inf, 0) if (p > 0.0) == (e > 0) else (0.0, 0)
    return _made(2.0 ** (bits - k), k)


def _whole_power(a: Wide, n: int) -> Wide:
    """a**n by repeated squaring, each product rounded once."""
    result, base = (0.5, 1), a
    for bit in bin(abs(n))[2:]:
        result = mul(result, result)
        if bit == "1":
            result = mul(result, base)
    return div((0.5, 1), result) if n < 0 else result


def sqrt(a: Wide) -> Wide:
    m, e = a
    if not _finite(a) or m < 0.0:
        return wide(math.sqrt(m) if m >= 0.0 else math.nan)
    if e % 2:
        m, e = m * 2.0, e - 1
    return _made(math.sqrt(m), e // 2)


def exp(a: Wide) -> Wide:
    x = to_float(a)
    if not math.isfinite(x):
        return wide(math.exp(x) if x == -math.inf or x == math.inf else math.nan)
    bits = x / math.log(2.0)
    k = math.floor(bits)
    return _made(2.0 ** (bits - k), k)


def log(a: Wide) -> Wide:
    m, e = a
    if not _finite(a) or m < 0.0:
        return wide(OPS["log"].forward(m))
    return wide(math.log(m) + e * math.log(2.0))


def hypot(a: Wide, b: Wide) -> Wide:
    return sqrt(add(mul(a, a), mul(b, b)))


def atan2(a: Wide, b: Wide) -> Wide:
    if not _finite(a, b):
        return wide(math.atan2(to_float(a), to_float(b)))
    if b[0] > 0.0 and a[1] - b[1] < -60:  # y/x is atan2 to the last place
        return div(a, b)
    top = max(a[1], b[1])
    return wide(math.atan2(math.ldexp(a[0], a[1] - top), math.ldexp(b[0], b[1] - top)))


def absolute(a: Wide) -> Wide:
    return (abs(a[0]), a[1])


_ON_WIDE: dict[Op, Callable[..., Wide]] = {
    OPS[key]: f
    for key, f in (
        ("+", add),
        ("-", sub),
        ("*", mul),
        ("/", div),
        ("neg", neg),
        ("**", power),
        ("pow", power),
        ("sqrt", sqrt),
        ("exp", exp),
        ("log", log),
        ("hypot", hypot),
        ("atan2", atan2),
        ("abs", absolute),
    )
}


def apply(op: Op, *args: Wide) -> Wide:
    """op of wide numbers: computed as above, or in doubles where the arguments are ones."""
    if op in _ON_WIDE:
        return _ON_WIDE[op](*args)
    floats = [to_float(a) for a in args]
    if any(wide(f) != a for a, f in zip(args, floats, strict=True)):
        return (math.nan, 0)  # (an argument past the doubles, or rounded to the subnormals)
    try:
        return wide(op.forward(*floats))
    except (OverflowError, ValueError, ZeroDivisionError):
        return (math.nan, 0)
