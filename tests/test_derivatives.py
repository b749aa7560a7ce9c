"""The ops' derivative functions written from their formulas
(nanograd_cli/_derivatives_writer.py into _derivatives.py): the stored file is the one the table
makes, every row without an override uses it, and every override is where the written function
misses the true derivative."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from nanograd_cli import _derivatives
from nanograd_cli import _derivatives_writer as derivatives
from nanograd_cli._ops import OPS, Op

mpmath = pytest.importorskip("mpmath")


def test_the_stored_functions_are_the_ones_the_formulas_make():
    stored = Path(derivatives.PATH).read_text(encoding="utf-8")
    assert stored == derivatives.module_source(), "run: python -m nanograd_cli._derivatives_writer"


def test_every_row_without_an_override_uses_the_written_function():
    written = _derivatives.derivatives({key: op.forward for key, op in OPS.items()})
    for key, op in OPS.items():
        if not op.overridden:
            assert op.derivative.__code__ is written[key].__code__, key


def test_a_row_whose_function_is_not_written_yet_says_how_to_write_it():
    op = Op("cube", 1, lambda x: x**3, ("3*x**2",), "x**3")
    with pytest.raises(LookupError, match=r"'cube' .* python -m nanograd_cli\._derivatives_writer"):
        op.derivative(2.0, 8.0)


def test_the_written_code_keeps_the_formula_and_reads_the_ops_own_value_as_out():
    source, called = derivatives.function_source("tan", OPS["tan"])
    assert "return ((1.0 + (out * out)),)" in source and called == set()
    source, called = derivatives.function_source("log/2", OPS["log/2"])
    body = source.split("\n", 1)[1]  # below the line that names the formulas
    assert body.count("log(base)") == 1  # computed once, used twice
    assert called == {"log", "/"}
    source, _ = derivatives.function_source("log2", OPS["log2"])
    assert repr(math.log(2.0)) in source  # a number of numbers alone is computed once


def _ulps(got: float, f, *args: float) -> float:
    """How far `got` is from f(*args), computed by mpmath at 60 digits, in units in the last
    place of the float nearest it."""
    with mpmath.workdps(60):
        exact = f(*[mpmath.mpf(a) for a in args])
        return float(abs(mpmath.mpf(got) - exact) / math.ulp(float(exact)))


# Per override: a point, the argument, and the true derivative there (mpmath, 60 digits),
# where the function written from the formulas misses it by more than the override.
# benchmarks/derivatives.py measures each over its domain.
NEEDED_AT = {
    # the formula cancels near 0.4 (12 units in the last place); the series does not
    "dsinc": ((0.3912385008877166,), 0, lambda x: mpmath.diff(mpmath.sincpi, x, 2)),
    # the formula divides twice (y/abs(x)/hypot(1, y/x)): 1.98 units in the last place
    "hypot": (
        (3.7213531121726096e-19, 2.3265598759612747e-20),
        1,
        lambda x, y: y / mpmath.hypot(x, y),
    ),
    # the worked example of the docs: 0.65 units in the last place by hand, 1.35 from sech**2
    "tanh": ((2.0,), 0, lambda x: mpmath.sech(x) ** 2),
}


# The overrides written for speed alone: the formula's digits, in less time per call.
FASTER = {"**", "pow"}
# b*a**(b - 1) where a**(b - 1) is subnormal or underflows to 0 but the product is a float
# (-2.65e-321 at (2, -1074)), for a negative base too, and at ordinary points
POWER_POINTS = [(2.0, -1074.0), (-2.0, -1074.0), (1e10, -30.0), (1e-8, 40.0), (-3.0, -677.0)]
POWER_POINTS += [(0.5, 1075.0), (1.7, 2.0), (-1.3, 3.0), (2.5, 0.5), (1e300, -1.05)]


@pytest.mark.parametrize("key", sorted(FASTER))
@pytest.mark.parametrize("point", POWER_POINTS)
def test_an_override_for_speed_is_as_near_as_the_formula(key, point):
    written = _derivatives.derivatives({key: op.forward for key, op in OPS.items()})[key]
    op = OPS[key]
    y = op.forward(*point)
    for k, true in enumerate((lambda a, b: b * a ** (b - 1), lambda a, b: a**b * mpmath.log(a))):
        if k == 1 and point[0] < 0:  # d/db of a negative base's power: nan either way
            continue
        by_hand = _ulps(op.derivative(*point, y)[k], true, *point)
        from_formula = _ulps(written(*point, y)[k], true, *point)
        assert by_hand <= 1.0 and from_formula <= 1.0, (key, point, k, by_hand, from_formula)


def test_every_override_is_where_the_written_function_misses():
    assert set(NEEDED_AT) | FASTER == {key for key, op in OPS.items() if op.overridden}
    written = _derivatives.derivatives({key: op.forward for key, op in OPS.items()})
    for key, (args, k, true) in NEEDED_AT.items():
        op = OPS[key]
        y = op.forward(*args)
        by_hand = _ulps(op.derivative(*args, y)[k], true, *args)
        from_formula = _ulps(written[key](*args, y)[k], true, *args)
        assert by_hand <= 1.0 and from_formula > by_hand, (key, by_hand, from_formula)
