"""`diff --exact` read back agrees with the engine's gradient to 4 units in the last place
wherever the engine's is finite: every function of the language at ordinary and extreme
points, and the points where the textbook form (or the exact form before) lost the engine's
digits, against mpmath at 50 digits."""

from __future__ import annotations

import itertools
import math

import mpmath
import pytest

import nanograd_cli as nanograd
from nanograd_cli._language import parse
from nanograd_cli._ops import OPS

pytestmark = pytest.mark.filterwarnings("ignore::nanograd_cli.errors.NanogradWarning")
mpmath.mp.dps = 50
_M = mpmath.mpf

ORDINARY = [-2.5, -1.0, -0.5, 0.0, 0.3, 0.5, 1.0, 2.0, 7.0]
EXTREME = [5e-324, -5e-324, 1e-310, -1e-310, 3e-320, -4e-320, 1e-300, -1e-300, 1e-154, 1e-8]
EXTREME += [1e154, 1e300, -1e300, 1.6e308, 1.7e308, -1.7e308, 27.0, 40.0, -40.0, 710.0]
EXTREME += [1 - 2**-53, -(1 - 2**-53), 1 + 2**-52, 1e10, -30.0, -1074.0]
GRID = ORDINARY + EXTREME
# three arguments (clamp, where): fewer, every combination
SMALL = [-2.5, -1.0, 0.0, 0.5, 2.0, 1e-300, 1e300, 1.7e308, -4e-320, 3e-320]


def _sources() -> list[tuple[str, tuple[str, ...]]]:
    """Every op of the table, applied to inputs."""
    found = []
    for op in OPS.values():
        names = ("x", "y", "z")[: op.arity]
        if op.syntax == "infix":
            found.append((f"x {op.name} y", names))
        elif op.syntax == "prefix":
            found.append(("-x", names))
        else:
            found.append((f"{op.name}({', '.join(names)})", names))
    return found


def _ulps(got: float, want: float) -> float:
    """How far apart, in units in the last place of the larger (the subnormal grid's too)."""
    if got == want:
        return 0.0
    if math.isnan(got) or math.isinf(got):
        return math.inf
    return abs(got - want) / math.ulp(max(abs(got), abs(want)))


def _value(text: str, point: dict[str, float]) -> float:
    program = parse(text)
    return program.values({n: point[n] for n in program.inputs})[program.result]


@pytest.mark.parametrize(("source", "names"), _sources(), ids=lambda v: str(v))
def test_the_exact_form_read_back_is_the_engines_to_4_ulps(source, names):
    program = parse(source)
    texts = {n: str(nanograd.diff(source, wrt=[n], exact=True)) for n in names}
    grid = GRID if len(names) < 3 else SMALL
    compared = 0
    for values in itertools.product(grid, repeat=len(names)):
        point = dict(zip(names, values, strict=True))
        engine = program.grad(point).gradients
        for n in names:
            if math.isfinite(engine[n]):
                got = _value(texts[n], point)
                assert _ulps(got, engine[n]) <= 4, (n, point, got, engine[n])
                compared += 1
    assert compared >= len(grid) // 3  # many points have a finite derivative


# The points where diff's text lost the engine's digits (the textbook form, or the exact
# form that merged a/b/c into a/(b*c)): source, point, name, the true derivative (mpmath).
def _sigmoid(x):
    return 1 / (1 + mpmath.exp(-x))


LOST = [
    ("asinh(x)", {"x": 1e300}, "x", lambda x: 1 / mpmath.sqrt(x * x + 1)),
    ("asinh(x)", {"x": -1.7e308}, "x", lambda x: 1 / mpmath.sqrt(x * x + 1)),
    ("acosh(x)", {"x": 1e300}, "x", lambda x: 1 / mpmath.sqrt(x * x - 1)),
    ("acosh(x)", {"x": 1 + 2**-52}, "x", lambda x: 1 / mpmath.sqrt(x * x - 1)),
    ("atanh(x)", {"x": 1 - 2**-53}, "x", lambda x: 1 / (1 - x * x)),
    ("atanh(x)", {"x": -0.999999999}, "x", lambda x: 1 / (1 - x * x)),
    ("asin(x)", {"x": 0.999999999}, "x", lambda x: 1 / mpmath.sqrt(1 - x * x)),
    ("acos(x)", {"x": -(1 - 2**-53)}, "x", lambda x: -1 / mpmath.sqrt(1 - x * x)),
    ("sigmoid(x)", {"x": 40.0}, "x", lambda x: _sigmoid(x) * _sigmoid(-x)),
    ("sigmoid(x)", {"x": 700.0}, "x", lambda x: _sigmoid(x) * _sigmoid(-x)),
    ("hypot(x, y)", {"x": 1.6e308, "y": 1.7e308}, "x", lambda x, y: x / mpmath.hypot(x, y)),
    ("hypot(x, y)", {"x": 3e-320, "y": -4e-320}, "x", lambda x, y: x / mpmath.hypot(x, y)),
    ("hypot(x, y)", {"x": 3e-320, "y": -4e-320}, "y", lambda x, y: y / mpmath.hypot(x, y)),
    ("atan2(y, x)", {"y": 1.6e308, "x": 1.7e308}, "x", lambda y, x: -y / (x * x + y * y)),
    ("atan2(y, x)", {"y": 3e-320, "x": -4e-320}, "y", lambda y, x: x / (x * x + y * y)),
    ("atan2(y, x)", {"y": 1e-300, "x": 1e300}, "y", lambda y, x: x / (x * x + y * y)),
    ("x**y", {"x": 2.0, "y": -1074.0}, "x", lambda x, y: y * x ** (y - 1)),
    ("x**y", {"x": 1e-8, "y": 40.0}, "x", lambda x, y: y * x ** (y - 1)),
    ("x**y", {"x": 1e300, "y": -1.05}, "y", lambda x, y: x**y * mpmath.log(x)),
    ("log10(x)", {"x": 1.7e308}, "x", lambda x: 1 / (x * mpmath.log(10))),
]


@pytest.mark.parametrize(("source", "point", "name", "true"), LOST)
def test_the_exact_form_keeps_the_digits_the_text_lost(source, point, name, true):
    want = float(true(*(_M(v) for v in point.values())))
    engine = nanograd.grad(source, **point).gradients[name]
    got = _value(str(nanograd.diff(source, wrt=[name], exact=True)), point)
    assert _ulps(engine, want) <= 4 and _ulps(got, want) <= 4, (got, engine, want)


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5, 6])
def test_repeated_exact_derivatives_of_sinc_are_mpmaths_at_0(order):
    """dsinc's own derivative is a Taylor polynomial near 0 (not a constant), so that every
    order to the 6th is sinc's at 0: pi**4/5 for the 4th (JAX's test; it was 0, and nan
    through the textbook form)."""
    for x in (0.0, 1e-9):
        text = str(nanograd.diff("sinc(x)", exact=True, order=order))
        got = _value(text, {"x": x})
        want = float(mpmath.diff(mpmath.sincpi, _M(x), order))
        assert abs(got - want) <= 1e-12 * max(1.0, abs(want)), (x, got, want)


def test_count_of_the_cases_of_diffs_text():
    """The issue's cases of diff's text: 20 points where it lost the engine's digits, and the
    3rd and 4th derivatives of sinc at 0."""
    assert len(LOST) == 20
