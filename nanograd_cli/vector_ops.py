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

from .ops import OPS, Op, divide

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
    if exponent == 0.0:  # a**0 is 1 for every a: its derivative is 0, not 0 * a**-1
        return lambda out, a, b: (np.power(a, b, out=out[0]), (None, None))
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
    """d(a**b)/da = b * a**(b - 1), for b != 0, as the ops table computes it."""
    np.subtract(b, 1.0, out=out)
    np.power(a, out, out=out)
    return np.multiply(out, b, out=out)


def _exponential(base: float) -> Step:
    """c ** b: d/db = c**b * log(c); at c = 0, 0 where b >= 0 (PyTorch's convention)."""
    if base == 0.0:

        def step(out, a, b):
            derivative = out[1]
            derivative.fill(math.nan)
            np.copyto(derivative, 0.0, where=b >= 0.0)
            return np.power(a, b, out=out[0]), (None, derivative)

        return step
    log_base = math.log(base) if base > 0.0 else math.nan  # no real log of a negative base
    return lambda out, a, b: (
        y := np.power(a, b, out=out[0]),
        (None, np.multiply(y, log_base, out=out[1])),
    )


def _power_of_both(out, a, b):
    y = np.power(a, b, out=out[0])
    positive = a > 0.0
    db = out[2]
    db.fill(1.0)
    np.copyto(db, a, where=positive)
    np.log(db, out=db)
    np.multiply(db, y, out=db)
    np.copyto(db, np.where((a == 0.0) & (b >= 0.0), 0.0, np.nan), where=~positive)
    da = _power_derivative(out[1], a, b)
    np.copyto(da, 0.0, where=b == 0.0)
    return y, (da, db)


def _powlog_values(a, b):
    """a**b * log(a) where a > 0; 0 where a = 0 and b >= 0; else nan (as ops' powlog)."""
    positive = a > 0.0
    log = np.log(np.where(positive, a, 1.0))
    zero = (a == 0.0) & (b >= 0.0)
    return np.where(positive, np.power(a, b) * log, np.where(zero, 0.0, np.nan))


def _powlog(*constants: float | None) -> Step:
    varies = [c is None for c in constants]

    def step(out, a, b):
        y = _powlog_values(a, b)
        da = b * _powlog_values(a, b - 1.0) + np.power(a, b - 1.0) if varies[0] else None
        db = y * np.log(a) if varies[1] else None
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


def _atan2(*constants: float | None) -> Step:
    """atan2(y, x), and its derivatives x/h/h and -y/h/h with h = hypot(y, x)."""
    varies = [c is None for c in constants]

    def step(out, y, x):
        h = np.hypot(y, x, out=out[3])
        dy = dx = None
        if varies[0]:
            dy = np.divide(x, h, out=out[1])
            np.divide(dy, h, out=dy)
        if varies[1]:
            dx = np.negative(y, out=out[2])
            np.divide(np.divide(dx, h, out=dx), h, out=dx)
        return np.arctan2(y, x, out=out[0]), (dy, dx)

    return step


def _hypot(*constants: float | None) -> Step:
    """hypot(x, y), and its derivatives x/h and y/h."""
    varies = [c is None for c in constants]

    def step(out, x, y):
        h = np.hypot(x, y, out=out[0])
        dx = np.divide(x, h, out=out[1]) if varies[0] else None
        dy = np.divide(y, h, out=out[2]) if varies[1] else None
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


def _unit(derivative, x):  # sqrt(1 - x**2), asin's and acos's denominator
    np.multiply(x, x, out=derivative)
    np.subtract(1.0, derivative, out=derivative)
    return np.sqrt(derivative, out=derivative)


def _negated(f: Callable) -> Callable:
    return lambda derivative, x, y: np.negative(f(derivative, x, y), out=derivative)


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_zero = lambda derivative, x, y: 0.0  # noqa: E731
_TWO_OVER_ROOT_PI = 2.0 / math.sqrt(math.pi)


def _gaussian(derivative, x, y):
    """2/sqrt(pi) * exp(-x**2), erf's derivative."""
    np.multiply(x, x, out=derivative)
    np.negative(derivative, out=derivative)
    np.exp(derivative, out=derivative)
    return np.multiply(derivative, _TWO_OVER_ROOT_PI, out=derivative)


def _each(f: Callable[[float], float]) -> Callable:
    """f applied to each element in Python, for a function NumPy lacks (erf, erfc): about
    70 ns per row, against under 1 for NumPy's exp."""

    def into(y, x):
        y[:] = np.fromiter(map(f, x.tolist()), float, x.size)
        return y

    return into


_UNARY: dict[str, Step] = {
    "neg": lambda out, x: (np.negative(x, out=out[0]), (MINUS_ONE,)),
    "exp": lambda out, x: (y := np.exp(x, out=out[0]), (y,)),
    "log": _unary(_ufunc(np.log), _inverse_of(lambda s, x: x)),
    "log2": _unary(_ufunc(np.log2), _inverse_of(lambda s, x: np.multiply(x, _LN2, out=s))),
    "log10": _unary(_ufunc(np.log10), _inverse_of(lambda s, x: np.multiply(x, _LN10, out=s))),
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
    "erf": _unary(_each(OPS["erf"].forward), _gaussian),
    "erfc": _unary(_each(OPS["erfc"].forward), _negated(_gaussian)),
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
    **{OPS[name]: _fixed(step) for name, step in _UNARY.items()},
}

_missing = [op.name for op in OPS.values() if op not in STEPS]
if _missing:
    raise ImportError(f"vector_ops has no NumPy step for {', '.join(_missing)}: add one to STEPS")
