"""Second derivatives where an argument is 0 or tiny and at the domain edge: the Hessian
against mpmath's (50 digits), and the same through `diff --exact` evaluated again by grad."""

import math

import mpmath
import pytest

import nanograd_cli as nanograd

# (source, point, the true Hessian as {(a, b): value}) -- values from mpmath at 50 digits
mpmath.mp.dps = 50
_M = mpmath.mpf


def _atan2(y, x):
    h2 = x * x + y * y
    return {
        ("y", "y"): -2 * x * y / h2**2,
        ("x", "x"): 2 * x * y / h2**2,
        ("y", "x"): (y * y - x * x) / h2**2,
    }


def _hypot(x, y):
    h = mpmath.hypot(x, y)
    return {("x", "x"): y * y / h**3, ("y", "y"): x * x / h**3, ("x", "y"): -x * y / h**3}


def _asin2(x):
    return x / (1 - x * x) ** mpmath.mpf(1.5)


def _atanh2(x):
    return 2 * x / (1 - x * x) ** 2


CASES = [
    ("hypot(x, y)", {"x": 0.0, "y": 2.0}, _hypot(_M(0), _M(2))),
    ("hypot(x, y)", {"x": 1e-300, "y": 1.0}, _hypot(_M(1e-300), _M(1))),
    ("atan2(y, x)", {"y": 0.0, "x": -1.0}, _atan2(_M(0), _M(-1))),
    ("atan2(y, x)", {"y": 1e-300, "x": 1.0}, _atan2(_M(1e-300), _M(1))),
    ("asin(x)", {"x": 1e-300}, {("x", "x"): _asin2(_M(1e-300))}),
    ("acos(x)", {"x": 1e-300}, {("x", "x"): -_asin2(_M(1e-300))}),
    ("atanh(x)", {"x": 1e-8}, {("x", "x"): _atanh2(_M(1e-8))}),
    ("atanh(x)", {"x": 0.9}, {("x", "x"): _atanh2(_M(0.9))}),
]


def _close(got: float, true) -> bool:
    want = float(true)
    if want == 0.0:
        return got == 0.0
    return abs(got - want) <= 4 * math.ulp(want)


@pytest.mark.parametrize(("source", "point", "true"), CASES)
def test_the_hessian_is_mpmaths_and_symmetric(source, point, true):
    matrix = nanograd.hessian(source, **point).hessian
    for (a, b), value in true.items():
        assert _close(matrix[a][b], value), (a, b, matrix[a][b], float(value))
        assert _close(matrix[b][a], value), (b, a, matrix[b][a], float(value))


@pytest.mark.parametrize(("source", "point", "true"), CASES)
def test_the_exact_derivative_differentiated_again_is_mpmaths(source, point, true):
    for (a, b), value in true.items():
        first = nanograd.diff(source, wrt=[a], exact=True)
        got = nanograd.grad(first, **point).gradients[b]
        assert _close(got, value), (a, b, got, float(value))
