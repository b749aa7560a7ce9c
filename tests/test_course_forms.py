"""A course's forms: exact fractions in explain and taylor, whole numbers in digits, and the
messages and notation of diff's higher orders, checked against SymPy."""

from __future__ import annotations

import sympy

from nanograd_cli import api
from nanograd_cli.language import parse

from .helpers import in_process, nanograd


def test_taylor_of_whole_numbers_has_the_exact_coefficients_of_sympys_series():
    x = sympy.Symbol("x")
    for source, function in [
        ("exp(x)", sympy.exp(x)),
        ("sin(x)", sympy.sin(x)),
        ("tan(x)", sympy.tan(x)),
        ("sqrt(1 + x)", sympy.sqrt(1 + x)),
        ("log(1 + x)", sympy.log(1 + x)),
    ]:
        result = api.taylor(parse(source), {"x": 0.0}, "x", 12)
        expected = sympy.series(function, x, 0, 13).removeO()
        assert sympy.simplify(sympy.sympify(result.polynomial) - expected) == 0, source
        assert "." not in result.polynomial and "." not in result.latex


def test_taylor_writes_19_factorial_in_digits_and_keeps_decimals_of_a_decimal_source():
    done = nanograd("taylor", "exp(x)", "--x", "0", "--order", "20", "--format", "latex")
    assert done.returncode == 0
    assert done.stdout.endswith(
        r" + \frac{x^{19}}{121645100408832000} + \frac{x^{20}}{2432902008176640000}" "\n"
    )
    decimal = api.taylor(parse("0.5*exp(x)"), {"x": 0.0}, "x", 2)
    assert decimal.polynomial == "0.5 + 0.5*x + 0.25*x**2"


def test_explain_writes_a_local_derivative_of_whole_numbers_as_a_fraction():
    done = in_process("explain", "x**2/2", "--x", "4")
    assert "x**2/2  1.0       x**2      1/2    0.5    0.5" in done.stdout
    latex = in_process("explain", "x**2/2", "--x", "4", "--format", "latex").stdout
    assert r"\left(\frac{x^{2}}{2}\right) &= \frac{1}{2} = 0.5" in latex
    # a source with a decimal keeps its decimals
    done = in_process("explain", "0.5*x**2", "--x", "4")
    assert "0.5*x**2  1.0       x**2      0.5    0.5" in done.stdout


def test_an_order_out_of_range_says_the_range():
    for given in ("0", "21"):
        done = in_process("diff", "x**3", "--order", given)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == f"error: --order must be from 1 to 20, not {given}\n"
