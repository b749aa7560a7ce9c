"""Second derivatives where an argument is 0 or tiny and at the domain edge: the Hessian
against mpmath's (50 digits), and the same through `diff --exact` evaluated again by grad."""

import json
import math

import mpmath
import pytest

import nanograd_cli as nanograd

# inf at the domain edges is the answer here, not a warning
pytestmark = pytest.mark.filterwarnings("ignore::nanograd_cli.errors.NanogradWarning")

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


def _pow(a, b):
    a, b = _M(a), _M(b)
    return {
        ("x", "x"): b * (b - 1) * a ** (b - 2),
        ("x", "y"): a ** (b - 1) * (1 + b * mpmath.log(a)),
        ("y", "y"): a**b * mpmath.log(a) ** 2,
    }


def _of_reciprocal(f):
    """d2/dx2 f(1/x) at x = 1e300 (2e-900 or so: 0 in floats)."""
    return {("x", "x"): mpmath.diff(lambda t: f(1 / t), _M(1e300), 2)}


def _erf2(x):
    return -4 * x * mpmath.exp(-x * x) / mpmath.sqrt(mpmath.pi)


# The cases of the third round: at the domain edge (the limit from inside the domain, where
# the first derivative is the limit too: acosh' is inf at 1, atanh' inf at +-1, as 1/(1 - x**2)
# gives), of a reciprocal at 1e300 (inf*0 in one pass), and subnormal second derivatives.
EDGES = [
    ("acosh(x)", {"x": 1.0}, {("x", "x"): _M("-inf")}),
    ("atanh(x)", {"x": 1.0}, {("x", "x"): _M("inf")}),
    ("atanh(x)", {"x": -1.0}, {("x", "x"): _M("-inf")}),
    ("asin(x)", {"x": 1.0}, {("x", "x"): _M("inf")}),
    ("asin(x)", {"x": -1.0}, {("x", "x"): _M("-inf")}),
    ("acos(x)", {"x": 1.0}, {("x", "x"): _M("-inf")}),
    ("atan(1/x)", {"x": 1e300}, _of_reciprocal(mpmath.atan)),
    ("asin(1/x)", {"x": 1e300}, _of_reciprocal(mpmath.asin)),
    ("acos(1/x)", {"x": 1e300}, _of_reciprocal(mpmath.acos)),
    ("atanh(1/x)", {"x": 1e300}, _of_reciprocal(mpmath.atanh)),
    ("asinh(1/x)", {"x": 1e300}, _of_reciprocal(mpmath.asinh)),
    ("u = 1/x; u*u", {"x": 1e300}, _of_reciprocal(lambda u: u * u)),
]
SUBNORMAL = [
    ("x**y", {"x": 1e10, "y": -30.0}, _pow(1e10, -30.0)),
    ("x**y", {"x": 2.0, "y": -1074.0}, _pow(2.0, -1074.0)),
    ("x**y", {"x": 1e-8, "y": 40.0}, _pow(1e-8, 40.0)),
    ("x**y", {"x": 1e300, "y": -1.05}, _pow(1e300, -1.05)),
    ("erf(x)", {"x": 27.0}, {("x", "x"): _erf2(_M(27))}),
    ("erf(x)", {"x": -27.2}, {("x", "x"): _erf2(_M(-27.2))}),
    ("erfc(x)", {"x": 27.0}, {("x", "x"): -_erf2(_M(27))}),
]
# Far out, where erf's second derivative is -0 (+0 for erfc) and 2*x, the derivative of x**2,
# overflows past 8.99e307: it was inf*0, nan, on every path (and diff --order 2 --exact was
# nan from 1.7e302, where x*1048576 overflows in a branch not taken), and at the infinities.
FAR = [
    ("erf(x)", {"x": 1e308}, {("x", "x"): _erf2(_M(1e308))}),
    ("erf(x)", {"x": -1e308}, {("x", "x"): _erf2(_M(-1e308))}),
    ("erf(x)", {"x": 9e307}, {("x", "x"): _erf2(_M(9e307))}),
    ("erf(x)", {"x": 2e302}, {("x", "x"): _erf2(_M(2e302))}),
    ("erf(x)", {"x": 1.7976931348623157e308}, {("x", "x"): _erf2(_M(1.7976931348623157e308))}),
    ("erfc(x)", {"x": 1e308}, {("x", "x"): -_erf2(_M(1e308))}),
    ("erfc(x)", {"x": -1.7976931348623157e308}, {("x", "x"): -_erf2(_M(-1.7976931348623157e308))}),
    # (the limit at the infinities, where mpmath's -4*x*exp(-x**2) is inf*0)
    ("erf(x)", {"x": math.inf}, {("x", "x"): _M(0)}),
    ("erfc(x)", {"x": -math.inf}, {("x", "x"): _M(0)}),
]
CASES += EDGES + SUBNORMAL + FAR
# Where reverse mode loses digits: the adjoint of exp's argument is exp's value itself,
# subnormal past |x| = 26.6, before it is multiplied by the argument's derivative; forward
# mode (hessian, grad in forward mode) rounds once. Reverse over the exact form (grad of
# diff --exact, diff --order 2) is within this many units in the last place there.
REVERSE_ULPS = {"erf(x)": 16, "erfc(x)": 16}


def _close(got: float, true, ulps: float = 4) -> bool:
    """Within `ulps` units in the last place (of the subnormal grid too), the same infinity,
    or 0 where the true value rounds to 0."""
    want = float(true)
    if want == 0.0 or math.isinf(want):
        return got == want
    return abs(got - want) <= ulps * math.ulp(want)


@pytest.mark.parametrize(("source", "point", "true"), CASES)
def test_the_hessian_is_mpmaths_and_symmetric(source, point, true):
    matrix = nanograd.hessian(source, **point).hessian
    for (a, b), value in true.items():
        assert _close(matrix[a][b], value), (a, b, matrix[a][b], float(value))
        assert _close(matrix[b][a], value), (b, a, matrix[b][a], float(value))


@pytest.mark.parametrize(("source", "point", "true"), CASES)
def test_the_exact_derivative_differentiated_again_is_mpmaths(source, point, true):
    for (a, b), value in true.items():
        first = str(nanograd.diff(source, wrt=[a], exact=True))
        got = nanograd.grad(first, **point).gradients[b]
        assert _close(got, value, REVERSE_ULPS.get(source, 4)), (a, b, got, float(value))


@pytest.mark.parametrize(("source", "point", "true"), CASES)
def test_the_second_derivative_is_mpmaths_on_every_path(source, point, true):
    """diff --order 2 --exact read back, and diff --exact read back through grad in both
    modes and through compiled code."""
    from nanograd_cli._compiled import gradients_at
    from nanograd_cli._language import parse

    reverse = REVERSE_ULPS.get(source, 4)
    for (a, b), value in true.items():
        if a == b:
            second = parse(str(nanograd.diff(source, wrt=[a], exact=True, order=2)))
            got = second.values({n: point[n] for n in second.inputs})[second.result]
            assert _close(got, value, reverse), ("order 2", a, got, float(value))
        first = parse(str(nanograd.diff(source, wrt=[a], exact=True)))
        at = {n: point[n] for n in first.inputs}
        for mode, ulps in (("reverse", reverse), ("forward", 4)):
            got = first.grad(at, mode).gradients.get(b, 0.0)
            assert _close(got, value, ulps), (mode, a, b, got, float(value))
        if b in at:
            got = gradients_at(first, at)[1][b]
            assert _close(got, value, reverse), ("compiled", a, b, got, float(value))


@pytest.mark.parametrize(
    ("source", "point"),
    [
        ("atan2(y, x)", {"y": 2.0, "x": 3.0}),
        ("hypot(x, y)*exp(x*y)", {"x": 0.3, "y": -1.7}),
        ("x**y*sin(x - y)", {"x": 1.3, "y": 2.9}),
        ("u = x*y*z; sigmoid(u)/(1 + z**2)", {"x": 0.7, "y": -2.0, "z": 1.5}),
    ],
)
def test_the_hessian_is_symmetric_bit_for_bit(source, point):
    """Each mixed pair is the mean of its two orders (which round apart), so H[a][b] is
    H[b][a] to the last bit; and it is within rounding of each order."""
    matrix = nanograd.hessian(source, **point).hessian

    def one_order(a: str, b: str) -> float:  # d/db of d/da, forward over the exact form
        first = str(nanograd.diff(source, wrt=[a], exact=True))
        return nanograd.grad(first, mode="forward", **point).gradients[b]

    for a in matrix:
        for b in matrix:
            assert matrix[a][b] == matrix[b][a], (a, b)
            orders = sorted((one_order(a, b), one_order(b, a)))
            assert orders[0] <= matrix[a][b] <= orders[1], (a, b, orders)


def test_count_of_the_cases_of_the_third_round():
    """The cases of the issue this round: 12 at the domain edge or of 1/x at 1e300, 7
    subnormal second derivatives (13 quantities)."""
    assert len(EDGES) == 12 and len(SUBNORMAL) == 7
    assert sum(len(true) for _, _, true in EDGES + SUBNORMAL) == 12 + 4 * 3 + 3


@pytest.mark.parametrize(("source", "point", "true"), FAR)
def test_far_out_the_second_derivative_of_erf_is_0_on_the_tape_too(source, point, true):
    """On the NumPy tape: diff --exact's derivative differentiated again over rows (as `grad
    --points` of it does), and the Hessian over rows of data (minimize --data's Newton)."""
    import numpy as np

    from nanograd_cli._language import parse
    from nanograd_cli._symbolic import hessian_over_rows
    from nanograd_cli._tape import batch_gradients

    ((_, value),) = true.items()
    assert float(value) == 0.0  # (below the smallest subnormal)
    x = point["x"]
    first = parse(str(nanograd.diff(source, exact=True)))
    rows = batch_gradients(first, {"x": np.array([x, 27.0])})[1]["x"]
    assert rows[0] == 0.0, rows
    assert _close(float(rows[1]), -_erf2(_M(27)) if "erfc" in source else _erf2(_M(27)), 16)
    # d2/dw2 erf(x + w) over rows x, at w = 0, is erf''(x)
    over_rows = hessian_over_rows(nanograd.parse(source.replace("x", "x + w")), {"x": [x]})
    assert over_rows({"w": 0.0}) == {"w": {"w": 0.0}}


def test_hessian_of_erf_at_1e308_on_the_command_line():
    from tests.helpers import run

    code, out, err = run("hessian", "erf(x)", "--x", "1e308", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["hessian"] == {"x": {"x": 0.0}}, out  # (it was NaN)
