"""Textbook exercises with the answer key's form: each key and each of `diff`'s derivatives
agrees with SymPy's derivative at points of the exercise's domain, and `diff`'s derivative is
at most the key's size (operations, as tests/oracle.py counts them) on a share of the
exercises that does not fall; `diff --order N` against SymPy's `diff(f, x, N)`."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from nanograd_cli import parse
from nanograd_cli._symbolic import derivatives_text

from .helpers import in_process, nanograd
from .oracle import derivative_at, operations, symbol, to_sympy, value_of

# (source, the answer key's derivative by x, where to sample x)
KEYS = [
    # polynomials and powers
    ("x**5 - 3*x**3 + 2*x - 7", "5*x**4 - 9*x**2 + 2", (-3, 3)),
    ("4*x**3 + 2*x**2 - x", "12*x**2 + 4*x - 1", (-3, 3)),
    ("x**4/4 - x**2/2", "x**3 - x", (-3, 3)),
    ("(2*x + 1)**3", "6*(2*x + 1)**2", (-3, 3)),
    ("1/x + 1/x**2", "-1/x**2 - 2/x**3", (0.2, 3)),
    ("x**(3/2)", "3*sqrt(x)/2", (0.1, 3)),
    ("sqrt(x) + 1/sqrt(x)", "1/(2*sqrt(x)) - 1/(2*x**(3/2))", (0.1, 3)),
    ("(x**2 + 1)**5", "10*x*(x**2 + 1)**4", (-2, 2)),
    # products
    ("x**2*sin(x)", "x**2*cos(x) + 2*x*sin(x)", (-3, 3)),
    ("x*exp(x)", "exp(x)*(x + 1)", (-3, 3)),
    ("x*log(x)", "log(x) + 1", (0.1, 3)),
    ("exp(x)*sin(x)", "exp(x)*(sin(x) + cos(x))", (-3, 3)),
    ("x**3*exp(2*x)", "x**2*exp(2*x)*(2*x + 3)", (-2, 2)),
    ("x*sqrt(x + 1)", "(3*x + 2)/(2*sqrt(x + 1))", (0, 3)),
    ("x**2*log(x)", "x*(2*log(x) + 1)", (0.1, 3)),
    ("(x**2 + 1)*(x - 3)", "3*x**2 - 6*x + 1", (-3, 3)),
    ("x*tan(x)", "tan(x) + x/cos(x)**2", (-1.2, 1.2)),
    ("x*atan(x)", "atan(x) + x/(x**2 + 1)", (-3, 3)),
    # quotients
    ("(3*x+2)/(5*x-7)", "-31/(5*x - 7)**2", (-3, 1)),
    ("(x-1)/(x+1)", "2/(x + 1)**2", (0, 3)),
    ("sin(x)/(1+cos(x))", "1/(cos(x) + 1)", (-2, 2)),
    ("exp(x)/(1+exp(x))", "exp(x)/(exp(x) + 1)**2", (-3, 3)),
    ("x/(x**2+1)", "(1 - x**2)/(x**2 + 1)**2", (-3, 3)),
    ("x**2/(x+1)", "x*(x + 2)/(x + 1)**2", (0, 3)),
    ("sin(x)/x", "(x*cos(x) - sin(x))/x**2", (0.1, 3)),
    ("log(x)/x", "(1 - log(x))/x**2", (0.1, 3)),
    ("exp(x)/x", "exp(x)*(x - 1)/x**2", (0.1, 3)),
    ("1/(x**2 + 1)", "-2*x/(x**2 + 1)**2", (-3, 3)),
    ("(2*x + 1)/(x**2 + 1)", "2*(1 - x - x**2)/(x**2 + 1)**2", (-3, 3)),
    ("x/(1 - x)", "1/(1 - x)**2", (-3, 0.9)),
    ("cos(x)/(1 - sin(x))", "1/(1 - sin(x))", (-1.2, 1.2)),
    ("(x**2 - 1)/(x**2 + 1)", "4*x/(x**2 + 1)**2", (-3, 3)),
    ("(x + 1)/sqrt(x)", "(x - 1)/(2*x**(3/2))", (0.1, 3)),
    # the chain rule
    ("sqrt(x**2 + 1)", "x/sqrt(x**2 + 1)", (-3, 3)),
    ("sin(3*x)", "3*cos(3*x)", (-3, 3)),
    ("exp(x**2)", "2*x*exp(x**2)", (-2, 2)),
    ("log(x**2 + 1)", "2*x/(x**2 + 1)", (-3, 3)),
    ("cos(x**3)", "-3*x**2*sin(x**3)", (-1.5, 1.5)),
    ("sin(x)**3", "3*sin(x)**2*cos(x)", (-3, 3)),
    ("(3*x - 2)**4", "12*(3*x - 2)**3", (-3, 3)),
    ("exp(sin(x))", "cos(x)*exp(sin(x))", (-3, 3)),
    ("log(cos(x))", "-tan(x)", (-1.2, 1.2)),
    ("sqrt(1 - x**2)", "-x/sqrt(1 - x**2)", (-0.9, 0.9)),
    ("1/(1 + exp(-x))", "exp(-x)/(exp(-x) + 1)**2", (-3, 3)),
    ("log(log(x))", "1/(x*log(x))", (1.5, 4)),
    ("sin(cos(x))", "-sin(x)*cos(cos(x))", (-3, 3)),
    # trigonometric
    ("sin(x)**2", "2*sin(x)*cos(x)", (-3, 3)),
    ("tan(x)", "1/cos(x)**2", (-1.2, 1.2)),
    ("sec(x)", "sec(x)*tan(x)", (-1.2, 1.2)),
    ("cot(x)", "-1/sin(x)**2", (0.3, 2.8)),
    ("csc(x)", "-cot(x)*csc(x)", (0.3, 2.8)),
    ("x*cos(x)", "cos(x) - x*sin(x)", (-3, 3)),
    ("sin(x)*cos(x)", "cos(x)**2 - sin(x)**2", (-3, 3)),
    ("cos(x)**2", "-2*sin(x)*cos(x)", (-3, 3)),
    ("tan(x)**2", "2*tan(x)/cos(x)**2", (-1.2, 1.2)),
    ("sin(x)/cos(x)", "1/cos(x)**2", (-1.2, 1.2)),
    # exponentials and logarithms
    ("exp(3*x)", "3*exp(3*x)", (-2, 2)),
    ("2**x", "2**x*log(2)", (-3, 3)),
    ("log(3*x)", "1/x", (0.1, 3)),
    ("x*exp(-x)", "exp(-x)*(1 - x)", (-3, 3)),
    ("log(x)**2", "2*log(x)/x", (0.1, 3)),
    ("log(x, 2)", "1/(x*log(2))", (0.1, 3)),
    ("exp(x)*log(x)", "exp(x)*(log(x) + 1/x)", (0.1, 3)),
    ("x**x", "x**x*(log(x) + 1)", (0.1, 3)),
    ("log((x + 1)/(x - 1))", "-2/(x**2 - 1)", (1.5, 4)),
    ("exp(x)/x**2", "exp(x)*(x - 2)/x**3", (0.1, 3)),
    # inverse trigonometric and hyperbolic
    ("asin(x)", "1/sqrt(1 - x**2)", (-0.9, 0.9)),
    ("acos(x)", "-1/sqrt(1 - x**2)", (-0.9, 0.9)),
    ("atan(x)", "1/(x**2 + 1)", (-3, 3)),
    ("atan(x**2)", "2*x/(x**4 + 1)", (-3, 3)),
    ("asin(2*x)", "2/sqrt(1 - 4*x**2)", (-0.45, 0.45)),
    ("atan(1/x)", "-1/(x**2 + 1)", (0.1, 3)),
    ("asinh(x)", "1/sqrt(x**2 + 1)", (-3, 3)),
    ("atanh(x)", "1/(1 - x**2)", (-0.9, 0.9)),
    ("tanh(x)", "1/cosh(x)**2", (-3, 3)),
    # antiderivatives, checked by differentiating them
    ("x*asin(x) + sqrt(1 - x**2)", "asin(x)", (-0.9, 0.9)),
    ("x*log(x) - x", "log(x)", (0.1, 3)),
    ("x*log(x)**2 - 2*x*log(x) + 2*x", "log(x)**2", (0.1, 3)),
    ("x/2 - sin(2*x)/4", "1/2 - cos(2*x)/2", (-3, 3)),
    ("sqrt(x**2 + 1)*x/2 + asinh(x)/2", "sqrt(x**2 + 1)", (-3, 3)),
    ("exp(x)*(x - 1)", "x*exp(x)", (-3, 3)),
    ("sin(x) - x*cos(x)", "x*sin(x)", (-3, 3)),
    ("x*atan(x) - log(x**2 + 1)/2", "atan(x)", (-3, 3)),
    ("exp(x)*(sin(x) - cos(x))/2", "exp(x)*sin(x)", (-3, 3)),
    ("(x**2 - 2)*sin(x) + 2*x*cos(x)", "x**2*cos(x)", (-3, 3)),
    ("tan(x) - x", "tan(x)**2", (-1.2, 1.2)),
    ("log(x + sqrt(x**2 + 1))", "1/sqrt(x**2 + 1)", (-3, 3)),
    # more of each kind, written after the rest had their forms
    ("(x**2+3*x)/(x-2)", "(x**2 - 4*x - 6)/(x - 2)**2", (2.5, 5)),
    ("(1+x)/(1-x)", "2/(1 - x)**2", (-3, 0.9)),
    ("x/(x+1)", "1/(x + 1)**2", (0, 3)),
    ("(x**2+1)/(x**2-1)", "-4*x/(x**2 - 1)**2", (1.5, 4)),
    ("sqrt(x)/(x+1)", "(1 - x)/(2*sqrt(x)*(x + 1)**2)", (0.1, 3)),
    ("exp(x)/(exp(x)+exp(-x))", "2/(exp(x) + exp(-x))**2", (-2, 2)),
    ("(sin(x)+cos(x))/(sin(x)-cos(x))", "-2/(sin(x) - cos(x))**2", (1, 2)),
    ("x*sin(x)+cos(x)", "x*cos(x)", (-3, 3)),
    ("x**2*exp(x) - 2*x*exp(x) + 2*exp(x)", "x**2*exp(x)", (-3, 3)),
    ("log(sin(x))", "cos(x)/sin(x)", (0.3, 2.8)),
    ("log(sec(x) + tan(x))", "sec(x)", (-1.2, 1.2)),
    ("atan(x) + x/(1+x**2)", "2/(x**2 + 1)**2", (-3, 3)),
    ("(x-1)**2*(x+2)**3", "(x - 1)*(x + 2)**2*(5*x + 1)", (-3, 3)),
    ("x/sqrt(x**2+1)", "1/(x**2 + 1)**(3/2)", (-3, 3)),
    ("log(x)/x**2", "(1 - 2*log(x))/x**3", (0.1, 3)),
    ("exp(-x)*cos(x)", "-exp(-x)*(sin(x) + cos(x))", (-3, 3)),
    ("1/(1+sqrt(x))", "-1/(2*sqrt(x)*(sqrt(x) + 1)**2)", (0.1, 3)),
    ("cos(x)**3", "-3*cos(x)**2*sin(x)", (-3, 3)),
    ("(2*x-1)/(x**2+1)", "2*(1 + x - x**2)/(x**2 + 1)**2", (-3, 3)),
    ("asin(x)/sqrt(1-x**2)", "(x*asin(x)/sqrt(1 - x**2) + 1)/(1 - x**2)", (-0.9, 0.9)),
    ("x**2*atan(x)", "2*x*atan(x) + x**2/(x**2 + 1)", (-3, 3)),
    ("log(x**2 + 2*x + 1)", "2/(x + 1)", (0, 3)),
    ("sqrt((1+x)/(1-x))", "1/((1 - x)*sqrt(1 - x**2))", (-0.9, 0.9)),
    ("x*exp(x)/(x+1)", "exp(x)*(x**2 + x + 1)/(x + 1)**2", (0, 3)),
    ("sin(x)**2 - cos(x)**2", "4*sin(x)*cos(x)", (-3, 3)),
    ("1/(x*(x+1))", "-(2*x + 1)/(x**2*(x + 1)**2)", (0.1, 3)),
    ("exp(2*x)/(1+exp(2*x))", "2*exp(2*x)/(exp(2*x) + 1)**2", (-2, 2)),
    ("(x+1)**2/(x**2+1)", "2*(1 - x**2)/(x**2 + 1)**2", (-3, 3)),
    ("x*acos(x) - sqrt(1-x**2)", "acos(x)", (-0.9, 0.9)),
    ("exp(x)*(x**2 - 2*x + 2)", "x**2*exp(x)", (-3, 3)),
    ("1/tan(x)", "-1/sin(x)**2", (0.2, 1.4)),
    ("1/tan(x)**2", "-2*cos(x)/sin(x)**3", (0.2, 1.4)),
    ("cos(x)/sin(x)", "-1/sin(x)**2", (0.2, 1.4)),
    ("cos(2*x)/sin(2*x)", "-2/sin(2*x)**2", (0.1, 0.7)),
]
# The share of KEYS where diff's derivative is at most the key's size: it stays at least this.
LEVEL = 0.98  # 119 of 121


def diff(source: str, order: int = 1) -> str:
    return derivatives_text(parse(source), ["x"], order=order)


def sympy_at(source: str, order: int, points: list[float], y: float = 0.7) -> list[float]:
    """SymPy's `order`-th derivative by x of the source at the points (and y), to 30 digits."""
    derivative = sympy.diff(to_sympy(parse(source), exact=True), symbol("x"), order)
    at = {symbol("y"): sympy.Float(y, 30)}
    return [
        float(derivative.evalf(30, subs={**at, symbol("x"): sympy.Float(x, 30)})) for x in points
    ]


def points_in(domain: tuple[float, float], seed: str) -> list[float]:
    rng = random.Random(seed)
    low, high = domain
    return [rng.uniform(low, high) for _ in range(5)]


def assert_sympys(text: str, source: str, order: int, domain: tuple[float, float], rel: float):
    """The printed derivative `text` is SymPy's `order`-th of the source, to `rel`, at points
    of `domain`."""
    points = points_in(domain, source)
    for x, exact in zip(points, sympy_at(source, order, points), strict=True):
        assert value_of(text, {"x": x}) == pytest.approx(exact, rel=rel), (text, x)


@pytest.mark.parametrize(("source", "key", "domain"), KEYS)
def test_the_key_and_diffs_derivative_are_sympys(source, key, domain):
    points = points_in(domain, source)
    ours = diff(source)
    for x, exact in zip(points, sympy_at(source, 1, points), strict=True):
        for text in (key, ours):
            got = value_of(text, {"x": x})
            assert got == pytest.approx(exact, rel=1e-9, abs=1e-12), (source, text, x)


def test_diff_is_at_most_the_answer_keys_size_on_the_level_reached():
    assert len(KEYS) >= 60
    longer = [(s, diff(s), k) for s, k, _ in KEYS if operations(diff(s)) > operations(k)]
    share = 1 - len(longer) / len(KEYS)
    assert share >= LEVEL, longer


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("(3*x+2)/(5*x-7)", "-31/(5*x - 7)**2"),
        ("(x-1)/(x+1)", "2/(x + 1)**2"),
        ("sin(x)/(1+cos(x))", "1/(cos(x) + 1)"),
        ("exp(x)/(1+exp(x))", "exp(x)/(exp(x) + 1)**2"),
        ("x*asin(x)+sqrt(1-x**2)", "asin(x)"),
        ("1/tan(x)", "-1/sin(x)**2"),
        ("1/tan(3*x)", "-3/sin(3*x)**2"),
        ("cos(x)/sin(x)", "-1/sin(x)**2"),  # not -1/tan(x)**2 - 1
        ("cos(3*x)/sin(3*x)", "-3/sin(3*x)**2"),
        ("x*log(x)**2 - 2*x*log(x) + 2*x", "log(x)**2"),
        ("x/2 - sin(2*x)/4", "1/2 - cos(2*x)/2"),
        ("sqrt(x**2+1)*x/2 + asinh(x)/2", "sqrt(x**2 + 1)"),
        ("0.5*x**2 + 0.25*x", "x + 0.25"),  # the source's decimals stay decimals
        ("x*log(x)*(y - y) + x", "1\n# x > 0"),  # 0*log(x) goes, where it is a number noted
    ],
)
def test_the_textbook_forms(source, text):
    assert diff(source) == text


def test_higher_derivatives_in_textbook_form():
    assert diff("(3*x+2)/(5*x-7)", 2) == "310/(5*x - 7)**3"
    assert diff("x**x", 2) == "x**x*((log(x) + 1)**2 + 1/x)\n# x > 0"
    assert diff("x*exp(x)", 5) == "exp(x)*(x + 5)"
    latex = derivatives_text(parse("x**3*y**2"), [], latex=True, order=2)
    assert (
        latex == "\\begin{aligned}\n\\frac{\\partial^{2} f}{\\partial x^{2}} &= 6 x y^{2} \\\\\n"
        "\\frac{\\partial^{2} f}{\\partial y^{2}} &= 2 x^{3}\n\\end{aligned}"
    )


ORDERS = [
    ("x**5", 3),
    ("sin(x)*exp(x)", 2),
    ("(3*x+2)/(5*x-7)", 2),
    ("x**x", 2),
    ("log(x)", 4),
    ("exp(x)/(1+exp(x))", 3),
    ("atan(x)", 2),
    ("x*y**2 + x**3*y", 2),
    ("sqrt(x**2 + 1)", 5),
]


@pytest.mark.parametrize(("source", "order"), ORDERS)
def test_diff_order_is_sympys(source, order):
    points = points_in((0.2, 2.5), source)
    text = diff(source, order)
    for x, exact in zip(points, sympy_at(source, order, points), strict=True):
        point = {"x": x, "y": 0.7}
        assert value_of(text, point) == pytest.approx(exact, rel=1e-9, abs=1e-12), (text, x)


def test_diff_order_through_the_command_line_the_repl_and_python():
    from nanograd_cli import diff as python_diff
    from nanograd_cli._session import Session

    done = in_process("diff", "x**3*y**2", "--order", "2")
    assert (done.returncode, done.stdout) == (0, "d2_x = 6*x*y**2\nd2_y = 2*x**3\n")
    assert python_diff("x**3*y**2", "x", order=2).text == "6*x*y**2"
    reply = Session().run(":diff x**3*y**2 wrt x order 2")
    assert reply.out == ["6*x*y**2"]
    assert in_process("diff", "x**2 + y", "--wrt", "x", "--order", "3").stdout == "0\n"


def test_diff_order_with_arrays_is_by_numbers_and_elements():
    """With array inputs, --order N differentiates by a number or an element (x[0]) of the
    source written out in scalars (by hand: d3/dy3 of sum(x**3)*y**3 is 6*sum(x**3), and
    d2/dx[1]2 of it 6*x[1]*y**3); by a whole array it would be a matrix: refused."""
    from nanograd_cli import diff as python_diff
    from nanograd_cli import grad as python_grad

    done = in_process(
        "diff", "sum(x**3)*y**3", "--wrt", "y", "--wrt", "x[1]", "--order", "3", "--shape", "x=2"
    )
    assert (done.returncode, done.stdout) == (0, "d3_y = 6*(x[0]**3 + x[1]**3)\nd3_x[1] = 6*y**3\n")
    second = python_diff("sum(x**3)*y**3", "x[1]", order=2, shapes={"x": 2}).text
    assert second == "6*x[1]*y**3"
    assert python_grad(second, x=np.array([2.0, 0.5]), y=3.0).value == 6 * 0.5 * 27
    done = in_process(
        "diff", "sum(W@x)", "--wrt", "W[1,0]", "--order", "2", "--shape", "W=2,2", "--shape", "x=2"
    )
    assert done.stdout == "0\n"
    for wrt in (["--wrt", "x"], []):
        done = in_process("diff", "sum(x**3)", *wrt, "--shape", "x=2", "--order", "2")
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            "error: --order of an array input is by one of its elements, such as --wrt x[0] "
            "(x is an array: its second derivative would be a matrix)\n"
        )


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("0", "error: --order must be from 1 to 20, not 0\n"),
        ("1.5", "error: invalid value for --order: '1.5' is not a valid integer\n"),
        ("-1", "error: --order must be from 1 to 20, not -1\n"),
    ],
)
def test_a_bad_order_is_bad_input(given, message):
    done = in_process("diff", "x**3", "--order", given)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)


def test_a_higher_derivative_that_grows_too_long_is_refused_in_time():
    source = " + ".join(f"sin({k}*x + {k})" for k in range(1, 2001))
    done = in_process("diff", source, "--wrt", "x", "--order", "3")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(
        "error: the 3rd derivative by x is too long to work out: the 1st, the highest written "
        "out, has "
    ), done.stderr
    assert done.stderr.endswith(
        " characters (at most 30,000 are differentiated again); ask for at most the 1st, or for"
        " the value of a higher one at a point: nanograd taylor gives f^(n)(A)/n! to high"
        " orders\n"
    )


def test_an_implicit_derivative_that_grows_too_long_says_the_highest_order_written_out():
    source = " + ".join(f"sin({k}*x + y)" for k in range(1, 1001)) + " == 0"
    done = in_process("diff", source, "--implicit", "y", "--wrt", "x", "--order", "2")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(
        "error: the 2nd derivative of y by x is too long to work out: the 1st, the highest "
        "written out, has "
    ), done.stderr
    assert done.stderr.endswith(
        " characters (at most 30,000 are differentiated again); ask for at most the 1st\n"
    )


@pytest.mark.slow
def test_a_refused_order_says_the_highest_reached_and_it_is_given():
    """x**x's 20th derivative: the 9th is the highest written out (39,615 characters); taylor
    gives the 20th's value at a point. tan's 20th, one fraction of sines and cosines at each
    order, is written out (it stopped at the 13th when a fraction one operation longer than
    its nested form was not taken), and is P_20(tan(x)) of the recurrence."""
    done = in_process("diff", "x**x", "--order", "20")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: the 20th derivative by x is too long to work out: the 9th, the highest written "
        "out, has 39,615 characters (at most 30,000 are differentiated again); ask for at most "
        "the 9th, or for the value of a higher one at a point: nanograd taylor gives "
        "f^(n)(A)/n! to high orders\n"
    )
    done = in_process("diff", "tan(x)", "--order", "20")
    assert done.returncode == 0
    *named, last = done.stdout.splitlines()
    x = sympy.Symbol("x")
    bound: dict[sympy.Symbol, sympy.Expr] = {}
    for line in named:
        name, written = line.split(" = ")
        bound[sympy.Symbol(name)] = sympy.sympify(written).subs(bound)
    printed = sympy.sympify(last).subs(bound)
    # tan's n-th derivative is P_n(tan(x)), P_0(t) = t and P_n+1(t) = P_n'(t)*(1 + t**2)
    # (SymPy's diff takes a minute and a half to the 20th)
    t = sympy.Symbol("t")
    p = sympy.Poly(t, t)
    for _ in range(20):
        p = p.diff(t) * sympy.Poly(1 + t**2, t)
    for point in (0.3, -0.7, 1.2):
        exact = p.eval(sympy.tan(sympy.Float(point, 30)))
        assert math.isclose(printed.subs(x, point), exact, rel_tol=1e-12)


# Random sources of quotients, powers (fractional ones too) and functions with domains: what
# the rewrites into one fraction work on.
_FRACTIONS = st.recursive(
    st.sampled_from(["x", "x", "y", "1", "2", "3"]),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from("+-*/"), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(
            st.sampled_from(["sin", "cos", "exp", "log", "sqrt", "asin", "atan", "tan"]), inner
        ).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(inner, st.sampled_from(["2", "3", "-1", "(1/2)", "(3/2)", "(-1/2)"])).map(
            lambda t: f"({t[0]})**{t[1]}"
        ),
    ),
    max_leaves=7,
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_FRACTIONS, st.floats(0.05, 0.95), st.floats(0.05, 0.95))
def test_the_textbook_form_is_sympys_where_the_engines_is(source, x, y):
    """Where the source and SymPy's derivative are numbers and the engine's derivative is
    SymPy's, diff's printed derivative is too (to 1e-7: both round terms that cancel)."""
    program = parse(source)
    if "x" not in program.inputs:
        return
    point = {n: {"x": x, "y": y}[n] for n in program.inputs}
    if not math.isfinite(program.values(point)[program.result]):
        return
    exact = derivative_at(program, "x", point)
    engine = program.grad(point).gradients["x"]
    if not abs(engine - exact) <= 1e-7 * max(1.0, abs(exact)):  # (nan: not compared)
        return
    ours = value_of(diff(source), point)
    assert abs(ours - exact) <= 1e-7 * max(1.0, abs(exact)), (source, point, diff(source))


def test_a_quotient_of_trig_functions_through_the_installed_command():
    done = nanograd("diff", "cos(x)/sin(x)")
    assert (done.returncode, done.stdout, done.stderr) == (0, "-1/sin(x)**2\n", "")


# A base over itself cancels where it is a number and not 0, as a course cancels it; where
# the source is a number at more points than the result says, a note says where they agree
# (and none where the derivative says it itself: log(x)**3 in a denominator); a base with
# a kink (relu) stays, as 1 would not say where it is 0.
CANCELLED = [
    ("log(x + sqrt(x**2 + 1))", "x", 1, "1/sqrt(x**2 + 1)"),
    (
        "log(x + sqrt(x**2 + 1))",
        "x",
        3,
        "(2*x**2 - 1)/(x**2 + 1)**(5/2)",
    ),
    ("log(log(x))", "x", 3, "(log(x)*(2*log(x) + 3) + 2)/(x**3*log(x)**3)"),
    ("sqrt(log(x))", "x", 3, "(2*log(x)*(4*log(x) + 3) + 3)/(8*x**3*log(x)**(5/2))"),
    ("log(x)**2/log(x)**2*y", "y", 1, "1\n# x > 0 and log(x) != 0"),
    ("log(x)**2/log(x)**2*y", "x", 1, "0\n# x > 0 and log(x) != 0"),
    ("asin(x)**2/asin(x)*y", "x", 2, "x*y/(1 - x**2)**(3/2)\n# asin(x) != 0"),
    ("relu(x)/relu(x)*y", "y", 1, "relu(x)/relu(x)"),
]


@pytest.mark.parametrize(("source", "wrt", "order", "text"), CANCELLED)
def test_a_base_over_itself_cancels_with_a_note_of_where(source, wrt, order, text):
    assert derivatives_text(parse(source), [wrt], order=order) == text


@pytest.mark.parametrize(("source", "order"), [(s, n) for s, _, n, _ in CANCELLED[:4]])
def test_the_cancelled_forms_are_sympys(source, order):
    assert_sympys(diff(source, order), source, order, (1.2, 3.0), rel=1e-9)


# A fractional power times a polynomial, as curve-sketching exercises have them: the numbers
# are fractions in arithmetic (2/3*5 is 10/3, never 3.333333333333333 from floats), the
# exponents add in fractions (never x**0.9999999999999999), and a numerator's fractions come
# out as one number (24*(2*x + 7)/125, not 48*x/125 + 168/125).
SKETCHED = [
    ("x**(2/3)*(x - 5)", 1, "5*(x - 2)/(3*x**(1/3))"),
    ("x**(2/3)*(x - 5)", 2, "10*(x + 1)/(9*x**(4/3))"),
    ("x**(2/3)*(x - 5)", 3, "-10*(x + 4)/(27*x**(7/3))"),
    ("x**(3/5)*(4 - x)", 2, "-24*(x + 1)/(25*x**(7/5))"),
    ("x**(3/5)*(4 - x)", 3, "24*(2*x + 7)/(125*x**(12/5))"),
    ("x**(4/3)*(x - 7)", 2, "28*(x - 1)/(9*x**(2/3))"),
    ("x**(4/5)*(x - 3)**2", 2, "18*(7*x**2 - 12*x - 2)/(25*x**(6/5))"),
    # (a sum written out as a layout spreads it: 4/3*5 is 20/3, not 6.666666666666666)
    ("x**(4/3)*(x - 5)", 3, "4*(7*x + 10)/(27*x**(5/3))"),
    ("x**(7/3)*(4 - x)", 1, "28*x**(4/3)/3 - 10*x**(7/3)/3"),
    ("x**(5/3)*(x - 3)**2", 1, "x**(2/3)*(x - 3)*(11*x/3 - 5)"),
]


@pytest.mark.parametrize(("source", "order", "text"), SKETCHED)
def test_a_fractional_power_times_a_polynomial_has_exact_fractions(source, order, text):
    assert derivatives_text(parse(source), ["x"], order=order, notes="domain") == text
    assert_sympys(text, source, order, (0.3, 4.0), rel=1e-12)


# A product with the root of c - x**2 (or c - x) is one fraction, as with x**2 + c: the chain
# rule's -(x**2 - 4) under the root is the sum 4 - x**2 the root has.
ROOTS = [
    ("x*sqrt(1 - x**2)", "(1 - 2*x**2)/sqrt(1 - x**2)", (-0.9, 0.9)),
    ("x**2*sqrt(4 - x**2)", "x*(8 - 3*x**2)/sqrt(4 - x**2)", (-1.9, 1.9)),
    ("x*sqrt(1 - x)", "(2 - 3*x)/(2*sqrt(1 - x))", (-2.0, 0.9)),
    ("(x**2 + 1)*sqrt(4 - x**2)", "x*(7 - 3*x**2)/sqrt(4 - x**2)", (-1.9, 1.9)),
]


@pytest.mark.parametrize(("source", "text", "domain"), ROOTS)
def test_a_product_with_the_root_of_a_difference_is_one_fraction(source, text, domain):
    assert derivatives_text(parse(source), ["x"], notes="domain") == text
    assert_sympys(text, source, 1, domain, rel=1e-12)


# More forms as a key writes them, each group with the rule it holds.
@pytest.mark.parametrize(
    ("source", "order", "text"),
    [
        # log(x + sqrt(x**2 + c)), the log form of acosh and asinh: the sum over itself
        # cancels, and needs no note: s + sqrt(r) is never 0 where r - s**2 is a number
        # other than 0
        ("log(x + sqrt(x**2 - 1))", 1, "1/sqrt(x**2 - 1)"),
        ("log(x + sqrt(x**2 - 1))", 2, "-x/(x**2 - 1)**(3/2)"),
        ("log(x - sqrt(x**2 - 1))", 1, "-1/sqrt(x**2 - 1)"),
        ("log(2*x + sqrt(4*x**2 - 1))", 1, "2/sqrt(4*x**2 - 1)"),
        ("log(x + 1 + sqrt(x**2 + 2*x + 3))", 1, "1/sqrt(x**2 + 2*x + 3)"),
        ("log(x + sqrt(x**2))", 1, "1/sqrt(x**2)\n# sqrt(x**2) + x != 0"),  # 0 for x < 0
        # the root of a sum of fractions whose root is a fraction: sqrt(1 - x**2/4) is
        # sqrt(4 - x**2)/2
        ("asin(x/2)", 1, "1/sqrt(4 - x**2)"),
        ("asin(x/2)", 2, "x/(4 - x**2)**(3/2)"),
        ("acos(x/3)", 1, "-1/sqrt(9 - x**2)"),
        ("sqrt(x/4 + 1)", 1, "1/(4*sqrt(x + 4))"),
        ("sqrt(x/2 + 1)", 1, "1/(4*sqrt(x/2 + 1))"),  # (sqrt(1/2) is no fraction)
        # a power of a quotient: the cube multiplied out, and a numerator that is a power
        # written as one
        ("((x + 1)/(x - 1))**3", 1, "-6*(x + 1)**2/(x - 1)**4"),
        ("((2*x + 1)/(x - 3))**3", 1, "-21*(2*x + 1)**2/(x - 3)**4"),
        # a sum each term has a power of taken out first, as a course factors it out (the
        # fourth power stayed apart from the cube multiplied out)
        ("((x - 1)/(x + 1))**4", 1, "8*(x - 1)**3/(x + 1)**5"),
        ("((x - 1)/(x + 1))**4", 2, "16*(x - 1)**2*(4 - x)/(x + 1)**6"),
        ("(x - 1)**2/(x + 1)", 1, "(x - 1)*(x + 3)/(x + 1)**2"),
        ("(x + 2)**4/(x + 1)", 1, "(x + 2)**3*(3*x + 2)/(x + 1)**2"),
        ("(x + 1)**2/(x**2 + 1)", 1, "2*(1 - x**2)/(x**2 + 1)**2"),  # (shorter multiplied out)
        # where what was taken out cancels against the denominator, where it was nan is said
        ("x**2*(x + 2)**4/(x**2 - 4)**3", 1, "-8*(x**2 + x)/(x - 2)**4\n# x + 2 != 0"),
        # abs and sign of one argument, as a course writes them
        ("log(abs(x))", 1, "1/x"),
        ("log(abs(x))", 2, "-1/x**2"),
        ("abs(x)**2", 1, "2*x"),
        ("sign(x)*abs(x)", 1, "1\n# x != 0"),  # (the engine's is 0 at 0: sign(0) is 0)
        ("x*abs(x)", 1, "2*abs(x)"),  # x*sign(x) is abs(x), at 0 too
        ("x**2*abs(x)", 1, "3*x*abs(x)"),
        ("abs(x)*sign(x)**2", 1, "sign(x)"),
        # and where the quotient rule puts them over one denominator, a*sign(a) before a is
        # multiplied out, a kink's argument as it is computed or not
        ("abs(x)/x", 1, "0\n# x != 0"),
        ("x/abs(x)", 1, "0\n# x != 0"),  # (was 0/abs(x): 1/abs(x) is nan at x = 0 alone)
        ("(x - 1)/abs(x - 1)", 1, "0\n# x - 1 != 0"),
        ("abs(x - 1)/(x - 1)", 1, "0\n# x - 1 != 0"),
        ("abs(x**2 - 1)/(x**2 - 1)", 1, "0\n# x**2 - 1 != 0"),
        ("(x - 1)**2*abs(x - 1)", 1, "3*abs(x - 1)*(x - 1)"),
        # powers of abs(a) join, as it is never negative (where one divides, not at a = 0)
        ("sqrt(abs(x))", 3, "3*sign(x)/(8*abs(x)**(5/2))\n# x != 0"),
        ("sqrt(abs(x))", 4, "-15/(16*abs(x)**(7/2))\n# x != 0"),
        # 1/cos(a)**2 as sec(a)**2 where the derivative has sec(a), as a course writes tan's
        # derivative beside sec's (tan's alone stays 1/cos(x)**2)
        ("log(sec(x) + tan(x))", 1, "sec(x)"),
        ("log(abs(sec(x) + tan(x)))", 1, "sec(x)\n# sec(x) + tan(x) != 0"),
        ("sec(x) + tan(x)", 1, "sec(x)*(sec(x) + tan(x))"),
        ("sec(x)*tan(x)", 1, "sec(x)*(sec(x)**2 + tan(x)**2)"),
        ("tan(x)", 1, "1/cos(x)**2"),
        # powers of one name stay term by term, as the power rule writes them, but roots are
        # brought over one denominator, as a course does to find where the derivative is 0
        ("3*x**2 - 2/x + 1/x**2", 1, "6*x + 2/x**2 - 2/x**3"),
        ("x**(4/3) - 4*x**(1/3)", 1, "4*(x - 1)/(3*x**(2/3))"),
        ("x**(4/3) - 4*x**(1/3)", 2, "4*(x + 2)/(9*x**(5/3))"),
        # logarithmic differentiation: a**b taken out of a**(b - 1) beside it
        ("x**sin(x)", 1, "x**sin(x)*(cos(x)*log(x) + sin(x)/x)\n# x > 0"),
        ("(x**2 + 1)**x", 1, "(x**2 + 1)**x*(2*x**2/(x**2 + 1) + log(x**2 + 1))"),
        ("x**x", 2, "x**x*((log(x) + 1)**2 + 1/x)\n# x > 0"),
        # cbrt(a)**3 is a, for every real a
        ("cbrt(x)**2*(x - 5)", 1, "5*(x - 2)/(3*cbrt(x))"),
        ("cbrt(x)**2*(x - 5)", 2, "10*(x + 1)/(9*cbrt(x)**4)"),
        ("x**4 + 1/x**2", 2, "12*x**2 + 6/x**4"),
        # a quadratic with no real root is never 0 either
        ("(x**3 - 1)/(x**2 + x + 1)", 1, "1"),
        ("(x**3 - 1)/(x - 1)", 1, "2*x + 1\n# x - 1 != 0"),
    ],
)
def test_more_derivatives_are_written_as_a_key_writes_them(source, order, text):
    assert derivatives_text(parse(source), ["x"], order=order, notes="domain") == text
