"""`grad --points` (the tape) at the points where the engine keeps digits by a formula for a
few rows: a power and its log-power step (powlog, which `diff --exact` writes) below the
smallest normal float, asin and acos at their domain's edge and at 1e-300, erf past 26.6.
The tape's values and gradients are the engine's (to the bit where they are subnormal, as the
tape computes those rows as the engine does, and to a unit in the last place elsewhere, where
NumPy's log and exp may round apart from C's), and mpmath's (50 digits) to 4 units."""

from __future__ import annotations

import csv
import io
import math

import mpmath
import pytest

import nanograd_cli as nanograd
from nanograd_cli._language import parse

from .helpers import in_process

pytestmark = pytest.mark.filterwarnings("ignore::nanograd_cli.errors.NanogradWarning")
mpmath.mp.dps = 50
_M = mpmath.mpf
TINY = 2.2250738585072014e-308

POWERS = [(1e10, -30.0), (2.0, -1074.0), (1e-8, 40.0), (1e300, -1.05)]
POWERS += [(2.0, -1075.0), (0.5, 1074.0), (10.0, -320.0), (3.0, -700.0), (1e-5, 70.0)]


def _power(a, b):
    """a**b: value, d/da, d/db."""
    return a**b, b * a ** (b - 1), a**b * mpmath.log(a)


def _powlog(a, b):
    """a**b*log(a): value, d/da, d/db."""
    log = mpmath.log(a)
    return a**b * log, a ** (b - 1) * (b * log + 1), a**b * log**2


def _inverse_sine(sign):
    def f(x):
        slope = _M("inf") if abs(x) == 1 else 1 / mpmath.sqrt(1 - x * x)
        return (mpmath.asin(x) if sign > 0 else mpmath.acos(x)), sign * slope

    return f


def _gaussian(x):
    return mpmath.erf(x), 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-x * x)


def _complement(x):
    return mpmath.erfc(x), -2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-x * x)


EDGES = [1.0, -1.0, 1e-300, -1e-300, 0.999999999]
CASES = [
    ("x**y", POWERS, _power),
    ("pow(x, y)", POWERS, _power),
    ("powlog(x, y)", POWERS, _powlog),
    ("asin(x)", [(x,) for x in EDGES], _inverse_sine(1)),
    ("acos(x)", [(x,) for x in EDGES], _inverse_sine(-1)),
    ("erf(x)", [(27.0,), (-27.2,), (26.6,)], _gaussian),
    ("erfc(x)", [(27.0,), (-27.2,), (26.6,)], _complement),
]


def _ulps(got: float, want: float) -> float:
    if got == want:
        return 0.0
    if math.isinf(got) or math.isinf(want) or math.isnan(got) or math.isnan(want):
        return math.inf
    return abs(got - want) / math.ulp(want) if want else abs(got) / math.ulp(0.0)


def _points(source: str, names: tuple[str, ...], rows, tmp_path) -> list[dict[str, float]]:
    """`nanograd grad SOURCE --points` of the rows, read back from its CSV."""
    table = tmp_path / "points.csv"
    table.write_text(",".join(names) + "\n" + "".join(",".join(map(repr, r)) + "\n" for r in rows))
    result = in_process("grad", "-e", source, "--points", str(table))
    assert result.returncode == 0, result.stderr
    return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(io.StringIO(result.stdout))]


def _compare(got: float, engine: float, true) -> None:
    """The tape's number against the engine's and the truth."""
    assert _ulps(engine, float(true)) <= 4, (engine, float(true))
    if abs(engine) < TINY or math.isinf(engine):  # computed as the engine does
        assert got == engine, (got, engine)
    else:
        assert _ulps(got, engine) <= 1, (got, engine)


@pytest.mark.parametrize(("source", "rows", "true"), CASES, ids=[c[0] for c in CASES])
def test_grad_points_is_the_engines_and_mpmaths(source, rows, true, tmp_path):
    names = tuple(parse(source).inputs)
    for row, got in zip(rows, _points(source, names, rows, tmp_path), strict=True):
        point = dict(zip(names, row, strict=True))
        engine = nanograd.grad(source, **point)
        want = true(*(_M(v) for v in row))
        _compare(got["value"], engine.value, want[0])
        for name, slope in zip(names, want[1:], strict=True):
            _compare(got[f"d_{name}"], engine.gradients[name], slope)
            # a zero gradient is +0 on the tape, as in grad (-0.0 in the CSV was 0.0 there)
            assert math.copysign(1, got[f"d_{name}"]) == math.copysign(1, engine.gradients[name])


SECOND = [
    ("x**y", "y", POWERS, lambda a, b: _powlog(a, b)[1:]),
    ("asin(x)", "x", [(1e-300,), (-1e-300,), (0.999999999,)], None),
    ("acos(x)", "x", [(1e-300,), (0.999999999,)], None),
]


def _asin2(x):
    return (x / (1 - x * x) ** _M(1.5),)


@pytest.mark.parametrize(("source", "wrt", "rows", "true"), SECOND, ids=[c[0] for c in SECOND])
def test_grad_points_of_the_exact_derivative_is_the_engines(source, wrt, rows, true, tmp_path):
    """The exact form's steps on the tape (powlog and its own derivatives, where(...) of
    asin's 1 - x**2): the second derivatives, against grad of the same text and mpmath."""
    first = nanograd.diff(source, wrt=[wrt], exact=True)
    names = tuple(parse(source).inputs)
    read = _points(first, names, rows, tmp_path)
    for row, got in zip(rows, read, strict=True):
        point = dict(zip(names, row, strict=True))
        engine = nanograd.grad(first, **point).gradients
        if true is not None:
            want = true(*(_M(v) for v in row))
        else:
            sign = 1 if source == "asin(x)" else -1
            want = tuple(sign * w for w in _asin2(_M(row[0])))
        for name, slope in zip(names, want, strict=True):
            _compare(got[f"d_{name}"], engine[name], slope)
