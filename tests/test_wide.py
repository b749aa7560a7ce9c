"""Numbers with an exponent without bounds (what diff's notes use to tell where a printed
derivative overflows part way): each operation against mpmath, whose exponents are unbounded
too, at 60 digits, where doubles would overflow or underflow."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nanograd_cli import _wide as w
from nanograd_cli._ops import OPS

mpmath.mp.dps = 60

# m * 2**e over far more than the doubles' exponents
numbers = st.tuples(
    st.floats(0.5, 1.0, exclude_max=True) | st.floats(-1.0, -0.5, exclude_min=True),
    st.integers(-5000, 5000),
)


def _mp(x: w.Wide) -> mpmath.mpf:
    return mpmath.ldexp(mpmath.mpf(x[0]), x[1])


def _agrees(got: w.Wide, true: mpmath.mpf, rel: float = 1e-14) -> bool:
    if true == 0:
        return got[0] == 0.0
    return abs((_mp(got) - true) / true) <= rel


@given(numbers, numbers)
def test_arithmetic_past_the_doubles(a, b):
    assert _agrees(w.mul(a, b), _mp(a) * _mp(b))
    assert _agrees(w.div(a, b), _mp(a) / _mp(b))
    total = _mp(a) + _mp(b)
    # a sum is right to the larger term's last place
    assert abs(_mp(w.add(a, b)) - total) <= 1e-15 * max(abs(_mp(a)), abs(_mp(b)))
    assert _agrees(w.hypot(a, b), mpmath.hypot(_mp(a), _mp(b)))


@given(numbers, st.sampled_from([2.0, 3.0, -1.0, -2.0, 0.5, 1.5, 100.0, -7.0]))
def test_powers_and_roots_past_the_doubles(a, p):
    base = (abs(a[0]), a[1])
    # a whole power is right to a few roundings; a fractional one to about 1e-12
    whole = p == math.floor(p)
    assert _agrees(w.power(base, w.wide(p)), _mp(base) ** p, 1e-14 if whole else 1e-11)
    assert _agrees(w.sqrt(base), mpmath.sqrt(_mp(base)))
    if whole:
        assert _agrees(w.power(a, w.wide(p)), _mp(a) ** int(p))


@pytest.mark.parametrize("x", [-800.0, -745.5, -1.0, 0.0, 1.0, 709.0, 720.0, 5000.0])
def test_exp_and_log_past_the_doubles(x):
    assert _agrees(w.exp(w.wide(x)), mpmath.exp(x), 1e-12)
    big = (0.75, 4000)
    assert _agrees(w.log(big), mpmath.log(_mp(big)))


def test_atan2_of_far_apart_arguments():
    assert _agrees(w.atan2((0.5, -1000), (0.5, 200)), mpmath.atan2(_mp((0.5, -1000)), 2**199))
    assert w.to_float(w.atan2(w.wide(1.0), w.wide(-1.0))) == math.atan2(1.0, -1.0)


def test_a_power_of_an_exponent_past_the_doubles():
    """The exponent has no bounds: 1.5**1e308 is m * 2**e with e about 5.8e307; a power of
    that, whose exponent is past a float's range, is as the doubles have it."""
    huge = w.power((0.75, 1), w.wide(1e308))
    assert huge[1] > 10**307 and w.to_float(huge) == math.inf
    assert w.to_float(w.power((0.75, 1), w.wide(-1e308))) == 0.0
    assert w.power(huge, w.wide(1e10 + 0.5)) == (math.inf, 0)
    assert w.power(huge, w.wide(-1e10 - 0.5)) == (0.0, 0)


def test_the_doubles_ends_and_other_functions():
    assert w.to_float((0.5, 2000)) == math.inf and w.to_float((-0.5, 2000)) == -math.inf
    assert w.to_float((0.5, -1070)) == 2.0**-1071  # subnormal
    assert w.to_float((0.5, -2000)) == 0.0
    assert w.apply(OPS["sin"], w.wide(1.0)) == w.wide(math.sin(1.0))
    assert math.isnan(w.apply(OPS["sin"], (0.5, 2000))[0])  # past the doubles: unknown
    assert math.isnan(w.div(w.wide(0.0), w.wide(0.0))[0])
    assert w.div(w.wide(-1.0), w.wide(0.0)) == (-math.inf, 0)
