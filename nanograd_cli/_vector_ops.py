"""Each operation on NumPy arrays, for the tape: its value and its local derivatives at once,
written into arrays that the tape preallocates, so that a run allocates no large temporaries.

A step function takes `out` (the step's own arrays: out[0], out[1], ... are made on first use
and reused run after run) and the arguments' values (arrays, or floats for constants), and
returns (value, local derivatives): one local derivative per argument, None for an argument
that does not vary. A step writes its value into out[0], or leaves out[0] alone and returns
an array of its own: the tape may hand it the caller's output array as out[0]. The results
agree with the ops table to the last bits or so; the tests hold them to the engine at 1e-12
relative, inf and nan included.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from . import _special as scalar
from ._ops import OPS, SMALLEST_NORMAL, Op, divide, power_slope

# The [fit] extra's SciPy, for erf, erfc, gamma, digamma and erfinv in C instead of row by
# row: imported when a tape first runs one of them (importing it takes longer than NumPy), and
# None where it is not installed.
_NOT_YET = object()
special = _NOT_YET


def scipy_special():
    """scipy.special, or None where SciPy is not installed."""
    global special
    if special is _NOT_YET:
        try:
            from scipy import special as imported
        except ImportError:
            imported = None
        special = imported
    return special


# Local derivatives of exactly 1 and -1: backward passes the adjoint on (or negates it)
# instead of multiplying when it meets these very objects.
ONE, MINUS_ONE = 1.0, -1.0

Step = Callable[..., tuple[object, tuple[object, ...]]]


class Arrays(dict):
    """Arrays of one length, each made on first use and then reused: `arrays[key]`."""

    def __init__(self, length: int):
        super().__init__()
        self.length = length

    def __missing__(self, key: object) -> np.ndarray:
        array = self[key] = np.empty(self.length)
        return array


def step_function(op: Op, constants: tuple[float | None, ...]) -> Step:
    """`op` as a step; `constants` holds the value of each argument that does not vary (None
    for those that do), for the specialisations that a constant allows (x**2 as x*x)."""
    return STEPS[op](*constants)


def _with_varying(binary: Callable) -> Callable[..., Step]:
    """A binary step that is told which of its arguments vary."""

    def make(*constants: float | None) -> Step:
        varies = tuple(c is None for c in constants)
        return lambda out, a, b: binary(out, a, b, varies)

    return make


def _add(out, a, b, varies):
    return np.add(a, b, out=out[0]), (ONE if varies[0] else None, ONE if varies[1] else None)


def _subtract(out, a, b, varies):
    y = np.subtract(a, b, out=out[0])
    return y, (ONE if varies[0] else None, MINUS_ONE if varies[1] else None)


def _multiply(out, a, b, varies):
    return np.multiply(a, b, out=out[0]), (b if varies[0] else None, a if varies[1] else None)


def _divide(numerator: float | None, denominator: float | None) -> Step:
    if denominator is not None:  # a / c: d/da = 1/c, a constant
        reciprocal = divide(1.0, denominator)
        return lambda out, a, b: (np.divide(a, b, out=out[0]), (reciprocal, None))

    def step(out, a, b):
        y = np.divide(a, b, out=out[0])
        da = None if numerator is not None else np.divide(1.0, b, out=out[1])
        db = np.divide(y, b, out=out[2])
        return y, (da, np.negative(db, out=db))

    return step


def _power(base: float | None, exponent: float | None) -> Step:
    """a ** b, specialised for a constant exponent (x**2 as x*x) or a constant base."""
    if exponent == 0.0:
        return _power_of_zero
    if exponent == 2.0:
        return lambda out, a, b: (np.multiply(a, a, out=out[0]), (np.add(a, a, out=out[1]), None))
    if exponent == 3.0:
        return _cube
    if exponent == 0.5:
        return lambda out, a, b: (_square_root(out[0], a), (_power_derivative(out[1], a, b), None))
    if exponent is not None:
        return lambda out, a, b: (
            np.power(a, b, out=out[0]),
            (_power_derivative(out[1], a, b), None),
        )
    if base is not None:
        return _exponential(base)
    return _power_of_both


def _power_of_zero(out, a, b):
    """a**0 is 1 for every a: d/da is the ops table's 0 * a**-1, 0 at a = 0 (nan where a is
    nan, or so small that a**-1 overflows)."""
    slope = np.power(a, -1.0, out=out[1])
    np.multiply(slope, 0.0, out=slope)
    np.copyto(slope, 0.0, where=a == 0.0)
    return np.power(a, b, out=out[0]), (slope, None)


def _cube(out, a, b):
    square = np.multiply(a, a, out=out[1])
    y = np.multiply(square, a, out=out[0])
    return y, (np.multiply(square, 3.0, out=square), None)


def _square_root(y, a):
    """a ** 0.5 as C's pow has it: NumPy's power(a, 0.5) is sqrt, which differs at -0 and -inf
    (pow gives +0 and +inf)."""
    np.sqrt(a, out=y)
    np.add(y, 0.0, out=y)  # -0 + 0 is +0
    np.copyto(y, math.inf, where=a == -math.inf)
    return y


def _power_derivative(out, a, b):
    """d(a**b)/da = b * a**(b - 1), for b != 0, as the ops table computes it: where that
    underflows to 0 or a subnormal, its rows are computed again as the table does (exactly)."""
    np.subtract(b, 1.0, out=out)
    np.power(a, out, out=out)
    np.multiply(out, b, out=out)
    small = np.flatnonzero(np.abs(out) < SMALLEST_NORMAL)
    if small.size:
        at = np.broadcast_to(a, out.shape)[small].tolist()
        by = np.broadcast_to(b, out.shape)[small].tolist()
        out[small] = [power_slope(x, y) for x, y in zip(at, by, strict=True)]
    return out


def _exponential(base: float) -> Step:
    """c ** b: d/db = c**b * log(c); at c = 0, 0 where b >= 0 (PyTorch's convention)."""
    if base == 0.0:
        return _zero_base
    log_base = math.log(base) if base > 0.0 else math.nan  # no real log of a negative base

    def step(out, a, b):
        y = np.power(a, b, out=out[0])
        db = np.multiply(y, log_base, out=out[1])
        if 0.0 < base < math.inf:
            _by_halves(db, np.flatnonzero(y < SMALLEST_NORMAL), base, b)
        return y, (None, db)

    return step


def _zero_base(out, a, b):
    derivative = out[1]
    derivative.fill(math.nan)
    np.copyto(derivative, 0.0, where=b >= 0.0)
    return np.power(a, b, out=out[0]), (None, derivative)


def _by_halves(out, rows, a, b) -> None:
    """out = a**b * log(a) in `rows`, row by row as the ops table's powlog computes it: by
    halves where a**b is below the smallest normal float (y*log(a) rounds twice there, 212
    units in the last place off at (1e300, -1.05))."""
    if rows.size:
        at = np.broadcast_to(a, out.shape)[rows].tolist()
        by = np.broadcast_to(b, out.shape)[rows].tolist()
        powlog = OPS["powlog"].forward
        out[rows] = [powlog(x, y) for x, y in zip(at, by, strict=True)]


def _power_of_both(out, a, b):
    """a ** b and its derivatives: b * a**(b - 1), and log(a) * a**b, which is 0 where a = 0
    and b >= 0 and nan where a < 0. A base positive on every row (data, most often) takes
    the same arithmetic without the masks for those cases."""
    y = np.power(a, b, out=out[0])
    positive = a > 0.0
    db = out[2]
    if np.all(positive):
        np.multiply(np.log(a, out=db), y, out=db)
        _by_halves(db, np.flatnonzero((a < math.inf) & (y < SMALLEST_NORMAL)), a, b)
        return y, (_power_derivative(out[1], a, b), db)
    db.fill(1.0)
    np.copyto(db, a, where=positive)
    np.log(db, out=db)
    np.multiply(db, y, out=db)
    np.copyto(db, np.where((a == 0.0) & (b >= 0.0), 0.0, np.nan), where=~positive)
    _by_halves(db, np.flatnonzero(positive & (a < math.inf) & (y < SMALLEST_NORMAL)), a, b)
    da = _power_derivative(out[1], a, b)
    np.copyto(da, 0.0, where=(a == 0.0) & (b == 0.0))  # 0, not 0 * 0**-1
    return y, (da, db)


def _powlog_values(a, b):
    """a**b * log(a) where a > 0; 0 where a = 0 and b >= 0; else nan (as ops' powlog, but
    for its halves below the smallest normal float)."""
    positive = a > 0.0
    log = np.log(np.where(positive, a, 1.0))
    zero = (a == 0.0) & (b >= 0.0)
    return np.where(positive, np.power(a, b) * log, np.where(zero, 0.0, np.nan))


def _powlog(*constants: float | None) -> Step:
    """powlog(a, b), the derivative of a**b by b, and its own derivatives: b*powlog(a, b - 1)
    + a**(b - 1) and powlog(a, b)*log(a). Where a is a positive float and a**(b - 1) or a**b
    is below the smallest normal float (or b is not finite), its rows are computed again
    as the ops table computes them, by halves, which round once (at (1e300, -1.05) the
    value was 212 units in the last place off, d/db 146,542; at (2, -1074) d/da was 0, it
    is -1.84e-321)."""
    varies = [c is None for c in constants]
    table = OPS["powlog"]

    def step(out, a, b):
        y = _powlog_values(a, b)
        below = np.power(a, b - 1.0)
        da = b * _powlog_values(a, b - 1.0) + below if varies[0] else None
        db = y * _powlog_values(a, 0.0) if varies[1] else None  # 0 at a = 0, as powlog
        tiny = (np.abs(below) < SMALLEST_NORMAL) | (np.abs(y) < SMALLEST_NORMAL)
        rows = np.flatnonzero((a > 0.0) & (a < math.inf) & (tiny | ~np.isfinite(b)))
        if rows.size:
            y = np.broadcast_to(y, np.shape(tiny)).copy()
            at = np.broadcast_to(a, y.shape)[rows].tolist()
            by = np.broadcast_to(b, y.shape)[rows].tolist()
            for k, x, z in zip(rows.tolist(), at, by, strict=True):
                y[k] = value = table.forward(x, z)
                slopes = table.derivative(x, z, value)
                if da is not None:
                    da[k] = slopes[0]
                if db is not None:
                    db[k] = slopes[1]
        return y, (da, db)

    return step


def _log_base(*constants: float | None) -> Step:
    """log(x)/log(base), and its derivatives 1/(x*log(base)) and -y/(base*log(base))."""
    varies = [c is None for c in constants]

    def step(out, x, base):
        log_base = np.log(base, out=out[3])
        y = np.divide(np.log(x, out=out[0]), log_base, out=out[0])
        dx = dbase = None
        if varies[0]:
            dx = np.divide(1.0, np.multiply(x, log_base, out=out[1]), out=out[1])
        if varies[1]:
            dbase = np.negative(y, out=out[2])
            np.divide(dbase, np.multiply(base, log_base, out=out[4]), out=dbase)
        return y, (dx, dbase)

    return step


def _abnormal(h):
    """The rows where h is not a normal float (0, subnormal, inf or nan)."""
    return np.flatnonzero(~((h >= SMALLEST_NORMAL) & (h < math.inf)))


def _atan2(*constants: float | None) -> Step:
    """atan2(y, x), and its derivatives x/(x**2 + y**2) and -y/(x**2 + y**2) as the ops table
    computes them: divided by the larger argument only, with no square and no hypot(y, x)
    (which overflow or underflow where the derivatives do not); a tie divides d/dy by x and
    d/dx by y."""
    varies = [c is None for c in constants]

    def step(out, y, x):
        dy = dx = None
        r, s = y / x, x / y
        if varies[0]:
            dy = np.where(np.abs(x) < np.abs(y), s / (1.0 + s * s) / y, 1.0 / (1.0 + r * r) / x)
        if varies[1]:
            dx = np.where(
                np.abs(y) < np.abs(x), -(r / (1.0 + r * r)) / x, -(1.0 / (1.0 + s * s)) / y
            )
        return np.arctan2(y, x, out=out[0]), (dy, dx)

    return step


def _unit_part(out, x, y, h):
    """x/h, but sign(x)/hypot(1, y/x) where h is not a normal float, as the ops table has it."""
    np.divide(x, h, out=out)
    rows = _abnormal(h)
    if rows.size:
        xs, ys = np.broadcast_to(x, h.shape)[rows], np.broadcast_to(y, h.shape)[rows]
        out[rows] = np.sign(xs) / np.hypot(1.0, ys / xs)
    return out


def _hypot(*constants: float | None) -> Step:
    """hypot(x, y), and its derivatives x/h and y/h, as the ops table computes them."""
    varies = [c is None for c in constants]

    def step(out, x, y):
        h = np.hypot(x, y, out=out[0])
        dx = _unit_part(out[1], x, y, h) if varies[0] else None
        dy = _unit_part(out[2], y, x, h) if varies[1] else None
        return h, (dx, dy)

    return step


def _extremum(larger: bool) -> Callable[..., Step]:
    """max or min: with s = sign(a - b), max has the local derivatives (1 + s)/2 and
    (1 - s)/2, min the other way round, so that at a = b each argument gets half."""
    pick = np.maximum if larger else np.minimum

    def make(*constants: float | None) -> Step:
        varies = [c is None for c in constants]

        def step(out, a, b):
            s = np.sign(np.subtract(a, b, out=out[3]), out=out[3])
            plus = np.divide(np.add(1.0, s, out=out[1]), 2.0, out=out[1])
            minus = np.divide(np.subtract(1.0, s, out=out[2]), 2.0, out=out[2])
            local = (plus, minus) if larger else (minus, plus)
            return pick(a, b, out=out[0]), tuple(
                d if v else None for d, v in zip(local, varies, strict=True)
            )

        return step

    return make


def _clamp(*constants: float | None) -> Step:
    """min(max(x, lo), hi), and the ops table's derivatives: with below = step(lo - x) and
    above = step(x - hi), x has (1 - below)*(1 - above), lo below*step(hi - lo) and hi
    sign(above + step(lo - hi))."""
    varies = [c is None for c in constants]

    def step(out, x, lo, hi):
        y = np.minimum(np.maximum(x, lo, out=out[0]), hi, out=out[0])
        below = _step_into(out[2], np.subtract(lo, x, out=out[2]))
        above = _step_into(out[3], np.subtract(x, hi, out=out[3]))
        scratch = out[4]
        dx = dlo = dhi = None
        if varies[0]:
            dx = np.subtract(1.0, below, out=out[1])
            np.multiply(dx, np.subtract(1.0, above, out=scratch), out=dx)
        if varies[2]:  # before lo's: it overwrites above
            inverted = _step_into(scratch, np.subtract(lo, hi, out=scratch))
            dhi = np.sign(np.add(above, inverted, out=above), out=above)
        if varies[1]:
            ordered = _step_into(scratch, np.subtract(hi, lo, out=scratch))
            dlo = np.multiply(below, ordered, out=below)
        return y, (dx, dlo, dhi)

    return step


def _mod(*constants: float | None) -> Step:
    """a % b as Python has it (NumPy's remainder), and its derivatives 1 and -(a // b), the
    quotient computed as the ops table does: round((a - a % b)/b)."""
    varies = [c is None for c in constants]

    def step(out, a, b):
        y = np.remainder(a, b, out=out[0])
        db = None
        if varies[1]:
            db = np.subtract(a, y, out=out[2])
            np.divide(db, b, out=db)
            np.rint(db, out=db)
            np.negative(db, out=db)
        return y, (ONE if varies[0] else None, db)

    return step


def _comparison(test: np.ufunc) -> Callable[..., Step]:
    """1 where the test holds, else 0; the derivatives are 0 (not None: 0 times a nan or an
    infinite gradient is nan, as in the engine)."""

    def make(*constants: float | None) -> Step:
        varies = [c is None for c in constants]
        local = tuple(0.0 if v else None for v in varies)
        return lambda out, a, b: (test(a, b, out=out[0]), local)

    return make


def _where(*constants: float | None) -> Step:
    """a where c != 0, else b. Its local derivatives are 1 for the argument taken and 0 for the
    other, per row; the condition gets none. The tape passes the gradient on to the rows taken
    only (`Tape.selecting`), so that a branch not taken, nan as it may be there, adds nothing."""
    varies = [c is None for c in constants]

    def step(out, c, a, b):
        taken = np.not_equal(c, 0.0)
        y = out[0]
        np.copyto(y, b)
        np.copyto(y, a, where=taken)
        if np.ndim(taken) == 0:  # a constant condition
            da, db = (1.0, 0.0) if taken else (0.0, 1.0)
        else:
            da, db = out[1], out[2]
            np.copyto(da, taken)
            np.subtract(1.0, da, out=db)
        return y, (None, da if varies[1] else None, db if varies[2] else None)

    return step


def _tanh(out, x):
    """NumPy's tanh, and its derivative sech(x)**2 as 2/(1 + cosh(2x)): within 2 ulps of the
    true value (the ops table's 4e/(1 + e)**2, e = exp(-2|x|), within 4), with no cancellation
    near saturation (as 1 - tanh**2 has), in four passes. Past |x| = 355, where cosh(2x)
    overflows and sech(x)**2 is subnormal, it is 4*exp(-2|x|), as the ops table has it."""
    y, derivative = out[0], out[1]
    np.tanh(x, out=y)
    np.multiply(x, 2.0, out=derivative)
    np.cosh(derivative, out=derivative)
    np.add(derivative, 1.0, out=derivative)
    np.divide(2.0, derivative, out=derivative)
    if np.fmin.reduce(derivative, initial=1.0) == 0.0:  # only where cosh(2x) overflowed
        far = derivative == 0.0
        derivative[far] = np.exp(np.abs(x[far]) * -2.0) * 4.0
    return y, (derivative,)


def _exp_parts(z, r, y, x):
    """z = exp(-|x|), r = 1/(1 + z) and sigmoid(x) = max(z, x >= 0) * r: r for x >= 0, z*r
    below (nan stays nan), into z, r and y; computed without a branch per element, which is
    slow in NumPy."""
    np.abs(x, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    np.add(z, 1.0, out=r)
    np.divide(1.0, r, out=r)
    np.greater_equal(x, 0.0, out=y)
    np.maximum(y, z, out=y)
    return z, r, np.multiply(y, r, out=y)


def _sigmoid(out, x):
    z, r, y = _exp_parts(out[1], out[2], out[0], x)
    derivative = np.multiply(z, r, out=z)
    return y, (np.multiply(derivative, r, out=derivative),)  # sigmoid(x)*sigmoid(-x) = z/(1 + z)**2


def _softplus(out, x):
    """max(x, 0) + log1p(exp(-|x|)); its derivative is sigmoid(x)."""
    z, _, sigmoid = _exp_parts(out[1], out[2], out[3], x)
    y = np.maximum(x, 0.0, out=out[0])
    return np.add(y, np.log1p(z, out=z), out=y), (sigmoid,)


def _step_into(y, x):
    """1 for x > 0, nan for nan, else 0 (relu's derivative), into y."""
    np.maximum(x, 0.0, out=y)  # nan stays nan
    np.sign(y, out=y)
    return np.add(y, 0.0, out=y)  # -0 + 0 is +0


def _relu_into(y, x):
    """x for x > 0, else 0 (nan included, as the ops table has it), into y."""
    np.fmax(x, 0.0, out=y)  # fmax drops nan
    return np.add(y, 0.0, out=y)


def _unary(forward: Callable, derivative: Callable) -> Step:
    """A step from forward(y_out, x) and derivative(derivative_out, x, y), each writing its out."""

    def step(out, x):
        y = forward(out[0], x)
        return y, (derivative(out[1], x, y),)

    return step


def _ufunc(f: np.ufunc) -> Callable:
    return lambda y, x: f(x, out=y)


def _inverse_of(f: Callable) -> Callable:
    """derivative = 1/f(x), f computed into derivative."""
    return lambda derivative, x, y: np.divide(1.0, f(derivative, x), out=derivative)


def _unit(derivative, x):  # sqrt((1 - x)*(1 + x)), asin's and acos's denominator
    np.subtract(1.0, x, out=derivative)
    np.multiply(derivative, np.add(1.0, x), out=derivative)
    return np.sqrt(derivative, out=derivative)


def _negated(f: Callable) -> Callable:
    return lambda derivative, x, y: np.negative(f(derivative, x, y), out=derivative)


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_zero = lambda derivative, x, y: 0.0  # noqa: E731
_TWO_OVER_ROOT_PI = 2.0 / math.sqrt(math.pi)
_HALF_ROOT_PI = math.sqrt(math.pi) / 2.0


def _gaussian(derivative, x, y):
    """2/sqrt(pi) * exp(-x**2), erf's derivative, as the ops table computes it
    (ops.gaussian): h = x to 20 binary places, exp(-h**2)*exp(-(x - h)*(x + h)), which
    keeps the digits x**2 rounds away. Where |x| >= 26.5 (by halves below the smallest
    normal float) and at nan, row by row as the table does."""
    h = np.multiply(x, 1048576.0, out=derivative)
    np.rint(h, out=h)
    np.divide(h, 1048576.0, out=h)
    rest = np.subtract(x, h)
    np.multiply(rest, np.add(x, h), out=rest)
    np.negative(rest, out=rest)
    np.exp(rest, out=rest)
    np.multiply(h, h, out=h)
    np.negative(h, out=h)
    np.exp(h, out=h)
    np.multiply(h, rest, out=h)
    np.multiply(h, _TWO_OVER_ROOT_PI, out=h)
    far = np.flatnonzero(~(np.abs(x) < 26.5))
    if far.size:
        erf = OPS["erf"].derivative
        h[far] = [erf(t, math.nan)[0] for t in x[far].tolist()]
    return h


def _each(f: Callable[[float], float]) -> Callable:
    """f applied to each element in Python, for a function NumPy lacks (lgamma, polygamma, and
    erf, gamma, ... where SciPy is not installed): about 70 ns per row or more, against under 1
    for NumPy's exp."""

    def into(y, x):
        y[:] = np.fromiter(map(f, x.tolist()), float, x.size)
        return y

    return into


def _scipy_or_each(
    name: str | Callable, f: Callable[[float], float], own: Callable | None = None
) -> Callable:
    """SciPy's ufunc `name` (or name(special, x, y), computing into y) where SciPy is
    installed (looked up at each run, so that a test can take it away), else f on each
    element; with `own`, f also on the rows it picks (where SciPy's loses digits f keeps)."""
    each = _each(f)
    compute = name if callable(name) else lambda scipy, x, y: getattr(scipy, name)(x, out=y)

    def into(y, x):
        scipy = scipy_special()
        if scipy is None:
            return each(y, x)
        mine = own(x) if own is not None else None
        if mine is None or not mine.any():
            return compute(scipy, x, y)
        # SciPy only on the other rows: on f's it may also be slow (zeta(2, x) takes time
        # linear in |x| below 0: 2 s at -1e8)
        others = ~mine
        theirs = np.empty(int(others.sum()))
        compute(scipy, x[others], theirs)
        y[others] = theirs
        y[mine] = [f(t) for t in x[mine].tolist()]
        return y

    return into


def _sinpi(y, x):
    """sin(pi*x) with x reduced exactly, as special.sinpi: 0 at every integer."""
    r = np.fmod(x, 2.0)
    sign = np.sign(r)
    np.abs(r, out=r)
    above = r > 1.0  # sin(pi*r) = -sin(pi*(r - 1))
    np.subtract(r, 1.0, out=r, where=above)
    np.negative(sign, out=sign, where=above)
    np.subtract(1.0, r, out=r, where=r > 0.5)
    low = r <= 0.25
    np.copyto(y, np.where(low, np.sin(np.pi * r), np.cos(np.pi * (0.5 - r))))
    sign[sign == 0.0] = 1.0
    return np.multiply(y, sign, out=y)


def _sinc(y, x):
    _sinpi(y, x)
    np.divide(y, np.multiply(np.pi, x), out=y)
    y[x == 0.0] = 1.0
    y[np.isinf(x)] = 0.0
    return y


def _polynomial(coefficients, x):
    total = np.zeros_like(x)
    for c in reversed(coefficients):
        total *= x
        total += c
    return total


def _dsinc(s, x, y=None):
    """sinc's derivative, as special.dsinc: a series for |x| < 1/2, else (cos(pi*x) - sinc(x))/x."""
    z = np.pi * x
    series = np.pi * z * _polynomial(scalar._SINC1, z * z)
    cospi = _sinpi(np.empty_like(x), 0.5 - np.fmod(np.abs(x), 2.0))
    formula = (cospi - _sinc(np.empty_like(x), x)) / x
    np.copyto(s, np.where(np.abs(x) < scalar.SERIES_BELOW, series, formula))
    s[np.isinf(x)] = 0.0
    return s


def _d2sinc(s, x, y):
    z = np.pi * x
    series = np.pi * np.pi * _polynomial(scalar._SINC2, z * z)
    formula = -np.pi * np.pi * _sinc(np.empty_like(x), x) - 2.0 * y / x
    np.copyto(s, np.where(np.abs(x) < scalar.SERIES_BELOW, series, formula))
    s[np.isinf(x)] = 0.0
    return s


HYPERBOLIC_OVERFLOW = 710.0  # past which cosh and sinh overflow: sech, csch = 2*exp(-|x|)


def _sech(y, x):
    np.divide(1.0, np.cosh(x, out=y), out=y)
    far = np.abs(x) >= HYPERBOLIC_OVERFLOW
    y[far] = 2.0 * np.exp(-np.abs(x[far]))
    return y


def _csch(y, x):
    np.divide(1.0, np.sinh(x, out=y), out=y)
    far = np.abs(x) >= HYPERBOLIC_OVERFLOW
    y[far] = np.copysign(2.0 * np.exp(-np.abs(x[far])), x[far])
    return y


def _logaddexp(*constants: float | None) -> Step:
    """NumPy's logaddexp (as the ops table computes it), and the derivatives sigmoid(a - b)
    and sigmoid(b - a), from one exp as _exp_parts has them."""
    varies = [c is None for c in constants]

    def step(out, a, b):
        y = np.logaddexp(a, b, out=out[0])
        d = np.subtract(a, b, out=out[3])
        z, r = out[4], out[5]
        np.abs(d, out=z)
        np.negative(z, out=z)
        np.exp(z, out=z)
        np.add(z, 1.0, out=r)
        np.divide(1.0, r, out=r)
        da = db = None
        if varies[0]:  # sigmoid(d): r for d >= 0, z*r below
            da = np.greater_equal(d, 0.0, out=out[1])
            np.maximum(da, z, out=da)
            np.multiply(da, r, out=da)
        if varies[1]:  # sigmoid(-d)
            db = np.less_equal(d, 0.0, out=out[2])
            np.maximum(db, z, out=db)
            np.multiply(db, r, out=db)
        return y, (da, db)

    return step


def _polygamma(*constants: float | None) -> Step:
    """polygamma(n, x), row by row (the ops table's conventions at the poles), and its
    derivative polygamma(n + 1, x) by x (nan for n < 0, as the function); by n, 0."""
    varies = [c is None for c in constants]
    f = np.frompyfunc(scalar.polygamma, 2, 1)

    def step(out, n, x):
        y = out[0]
        y[:] = f(n, x)
        dx = None
        if varies[1]:
            dx = out[1]
            dx[:] = f(np.where(np.less(n, 0.0), n, np.add(n, 1.0)), x)  # nan where y is
        return y, (0.0 if varies[0] else None, dx)

    return step


# SciPy's erfc is off by up to 8 units in the last place at 0.5 to 3, and 110 in the tail:
# those rows are computed as the ops table does (within 2.1).
_ERFC = _scipy_or_each("erfc", OPS["erfc"].forward, lambda x: x >= 0.5)

# SciPy's digamma reflects below 0 with a cot(pi*x) that loses the digits near the poles
# (at -0.99999999999, 1.5e-6 relatively): those rows are computed as the ops table does.
_DIGAMMA = _scipy_or_each("digamma", OPS["digamma"].forward, lambda x: x < 0.0)
# trigamma, polygamma(1, x), is SciPy's Hurwitz zeta(2, x) for x > 0
_TRIGAMMA = _scipy_or_each(
    lambda scipy, x, y: scipy.zeta(2.0, x, out=y),
    lambda x: scalar.polygamma(1.0, x),
    lambda x: ~(x > 0.0),
)

# SciPy's gammaln loses digits about lgamma's zeros at 1 and 2 (5,000 units in the last place
# at 1 + 1e-3), below 0 and below the normal floats (inf there): there, and at the poles and
# infinities, lgamma is computed as the ops table does; elsewhere (2.2e-308 <= x < 1/2 and
# x >= 5/2) gammaln is within 2 units.
_LGAMMA = _scipy_or_each(
    "gammaln",
    OPS["lgamma"].forward,
    lambda x: ~(((x >= SMALLEST_NORMAL) & (x < 0.5)) | ((x >= 2.5) & (x < math.inf))),
)

_UNARY: dict[str, Step] = {
    "neg": lambda out, x: (np.negative(x, out=out[0]), (MINUS_ONE,)),
    "exp": lambda out, x: (y := np.exp(x, out=out[0]), (y,)),
    "log": _unary(_ufunc(np.log), _inverse_of(lambda s, x: x)),
    "log2": _unary(_ufunc(np.log2), _inverse_of(lambda s, x: np.multiply(x, _LN2, out=s))),
    # 1/log(10)/x, as the ops table: x*log(10) overflows past 7.8e307
    "log10": _unary(_ufunc(np.log10), lambda s, x, y: np.divide(1.0 / _LN10, x, out=s)),
    "sqrt": _unary(_ufunc(np.sqrt), lambda s, x, y: np.divide(0.5, y, out=s)),
    "sin": _unary(_ufunc(np.sin), lambda s, x, y: np.cos(x, out=s)),
    "cos": _unary(_ufunc(np.cos), _negated(lambda s, x, y: np.sin(x, out=s))),
    "tan": _unary(_ufunc(np.tan), lambda s, x, y: np.add(np.multiply(y, y, out=s), 1.0, out=s)),
    "asin": _unary(_ufunc(np.arcsin), _inverse_of(_unit)),
    "acos": _unary(_ufunc(np.arccos), _negated(_inverse_of(_unit))),
    "atan": _unary(
        _ufunc(np.arctan),
        _inverse_of(lambda s, x: np.add(np.multiply(x, x, out=s), 1.0, out=s)),
    ),
    "sinh": _unary(_ufunc(np.sinh), lambda s, x, y: np.cosh(x, out=s)),
    "cosh": _unary(_ufunc(np.cosh), lambda s, x, y: np.sinh(x, out=s)),
    "tanh": _tanh,
    "sigmoid": _sigmoid,
    "softplus": _softplus,
    "relu": _unary(_relu_into, lambda s, x, y: _step_into(s, x)),
    "abs": _unary(_ufunc(np.abs), lambda s, x, y: np.sign(x, out=s)),
    "step": _unary(_step_into, _zero),
    "sign": _unary(_ufunc(np.sign), _zero),
    "expm1": _unary(_ufunc(np.expm1), lambda s, x, y: np.exp(x, out=s)),
    "log1p": _unary(_ufunc(np.log1p), _inverse_of(lambda s, x: np.add(x, 1.0, out=s))),
    "erf": _unary(_scipy_or_each("erf", OPS["erf"].forward), _gaussian),
    "erfc": _unary(_ERFC, _negated(_gaussian)),
    "erfinv": _unary(
        _scipy_or_each("erfinv", OPS["erfinv"].forward),
        lambda s, x, y: np.multiply(np.exp(np.multiply(y, y, out=s), out=s), _HALF_ROOT_PI, out=s),
    ),
    "gamma": _unary(
        # the poles as the ops table has them (older SciPy: gamma(-0.0) is inf, gamma(-1) inf)
        _scipy_or_each("gamma", OPS["gamma"].forward, lambda x: (x <= 0.0) & (x == np.floor(x))),
        lambda s, x, y: np.multiply(_DIGAMMA(s, x), y, out=s),
    ),
    "lgamma": _unary(_LGAMMA, lambda s, x, y: _DIGAMMA(s, x)),
    "digamma": _unary(
        _DIGAMMA,
        lambda s, x, y: _TRIGAMMA(s, x),
    ),
    "asinh": _unary(_ufunc(np.arcsinh), _inverse_of(lambda s, x: np.hypot(1.0, x, out=s))),
    "acosh": _unary(
        _ufunc(np.arccosh),
        _inverse_of(
            lambda s, x: np.multiply(
                np.sqrt(np.subtract(x, 1.0, out=s), out=s), np.sqrt(x + 1.0), out=s
            )
        ),
    ),
    "atanh": _unary(
        _ufunc(np.arctanh),
        _inverse_of(lambda s, x: np.multiply(np.subtract(1.0, x, out=s), np.add(1.0, x), out=s)),
    ),
    "sec": _unary(
        lambda y, x: np.divide(1.0, np.cos(x, out=y), out=y),
        lambda s, x, y: np.multiply(y, np.tan(x, out=s), out=s),
    ),
    "csc": _unary(
        lambda y, x: np.divide(1.0, np.sin(x, out=y), out=y),
        lambda s, x, y: np.multiply(np.divide(-1.0, np.tan(x, out=s), out=s), y, out=s),
    ),
    "cot": _unary(
        lambda y, x: np.divide(1.0, np.tan(x, out=y), out=y),
        lambda s, x, y: np.negative(
            np.square(np.divide(1.0, np.sin(x, out=s), out=s), out=s), out=s
        ),
    ),
    "sech": _unary(_sech, lambda s, x, y: np.multiply(np.negative(y), np.tanh(x), out=s)),
    "csch": _unary(
        _csch,
        lambda s, x, y: np.multiply(np.negative(y), np.divide(1.0, np.tanh(x)), out=s),
    ),
    "coth": _unary(
        lambda y, x: np.divide(1.0, np.tanh(x, out=y), out=y),
        lambda s, x, y: np.negative(np.square(_csch(s, x), out=s), out=s),
    ),
    "cbrt": _unary(
        _ufunc(np.cbrt),
        lambda s, x, y: np.divide(1.0, np.multiply(np.multiply(y, y, out=s), 3.0, out=s), out=s),
    ),
    "sinc": _unary(_sinc, _dsinc),
    "dsinc": _unary(lambda y, x: _dsinc(y, x), _d2sinc),
    "floor": _unary(_ufunc(np.floor), _zero),
    "ceil": _unary(_ufunc(np.ceil), _zero),
    "round": _unary(_ufunc(np.rint), _zero),  # halves to even, as Python's round
}


def _fixed(step: Step) -> Callable[..., Step]:
    """A factory for a step that no constant argument changes."""
    return lambda *constants: step


# Every op of the table, keyed by the Op itself: a factory that takes the constant arguments
# (None for an argument that varies) and returns the step.
STEPS: dict[Op, Callable[..., Step]] = {
    OPS["+"]: _with_varying(_add),
    OPS["-"]: _with_varying(_subtract),
    OPS["*"]: _with_varying(_multiply),
    OPS["/"]: _divide,
    OPS["**"]: _power,
    OPS["powlog"]: _powlog,
    OPS["pow"]: _power,
    OPS["log/2"]: _log_base,
    OPS["atan2"]: _atan2,
    OPS["hypot"]: _hypot,
    OPS["max"]: _extremum(larger=True),
    OPS["min"]: _extremum(larger=False),
    OPS["clamp"]: _clamp,
    OPS["%"]: _mod,
    OPS["where"]: _where,
    OPS["logaddexp"]: _logaddexp,
    OPS["polygamma"]: _polygamma,
    OPS["<"]: _comparison(np.less),
    OPS["<="]: _comparison(np.less_equal),
    OPS[">"]: _comparison(np.greater),
    OPS[">="]: _comparison(np.greater_equal),
    OPS["=="]: _comparison(np.equal),
    OPS["!="]: _comparison(np.not_equal),
    **{OPS[name]: _fixed(step) for name, step in _UNARY.items()},
}

_missing = [op.name for op in OPS.values() if op not in STEPS]
if _missing:
    raise ImportError(f"vector_ops has no NumPy step for {', '.join(_missing)}: add one to STEPS")
