"""`nanograd taylor`: Taylor coefficients from power series carried through every operation,
held to mpmath's `taylor` at 50 digits, the engine's first and second derivatives, and
1/k! exactly; through the command line, the repl and Python alike."""

from __future__ import annotations

import json
import math
import subprocess
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nanograd_cli
from nanograd_cli import _api as api
from nanograd_cli import parse
from nanograd_cli._jets import RULES, polynomial
from nanograd_cli._ops import OPS
from nanograd_cli._session import Session
from nanograd_cli.errors import InputError, MissingInputs, NanogradWarning, NonFiniteResult

from .helpers import NANOGRAD, expressions, in_process, run

mpmath.mp.dps = 50

# The ops as mpmath computes them: the reference the series are held to.
MP = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "**": lambda a, b: a**b,
    "pow": lambda a, b: a**b,
    "neg": lambda a: -a,
    "exp": mpmath.exp,
    "expm1": mpmath.expm1,
    "log": mpmath.log,
    "log/2": lambda a, b: mpmath.log(a) / mpmath.log(b),
    "log1p": mpmath.log1p,
    "log2": lambda a: mpmath.log(a, 2),
    "log10": mpmath.log10,
    "sqrt": mpmath.sqrt,
    "cbrt": lambda a: mpmath.sign(a) * mpmath.cbrt(abs(a)),  # the real root
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "tan": mpmath.tan,
    "sec": mpmath.sec,
    "csc": mpmath.csc,
    "cot": mpmath.cot,
    "sinc": lambda a: mpmath.sincpi(a),
    "dsinc": lambda a: mpmath.diff(mpmath.sincpi, a),
    "asin": mpmath.asin,
    "acos": mpmath.acos,
    "atan": mpmath.atan,
    "atan2": mpmath.atan2,
    "hypot": mpmath.hypot,
    "sinh": mpmath.sinh,
    "cosh": mpmath.cosh,
    "tanh": mpmath.tanh,
    "asinh": mpmath.asinh,
    "acosh": mpmath.acosh,
    "atanh": mpmath.atanh,
    "sech": mpmath.sech,
    "csch": mpmath.csch,
    "coth": mpmath.coth,
    "erf": mpmath.erf,
    "erfc": mpmath.erfc,
    "erfinv": mpmath.erfinv,
    "gamma": mpmath.gamma,
    "lgamma": mpmath.loggamma,
    "digamma": mpmath.digamma,
    "polygamma": lambda n, a: mpmath.polygamma(int(n), a),
    "sigmoid": lambda a: 1 / (1 + mpmath.exp(-a)),
    "softplus": lambda a: mpmath.log(1 + mpmath.exp(a)),
    "logaddexp": lambda a, b: mpmath.log(mpmath.exp(a) + mpmath.exp(b)),
    "powlog": lambda a, b: a**b * mpmath.log(a),
}


def key(op) -> str:
    return next(k for k, o in OPS.items() if o is op)


def reference(source: str, wrt: str, point: dict[str, float], order: int) -> list[float]:
    """The Taylor coefficients by mpmath, the program walked with mpmath's functions."""
    program = parse(source)

    def f(t):
        nodes = program.interpret(
            input=lambda name: t if name == wrt else mpmath.mpf(point[name]),
            const=mpmath.mpf,
            apply=lambda op, *args: MP[key(op)](*args),
        )
        return nodes[program.result]

    return [float(c) for c in mpmath.taylor(f, mpmath.mpf(point[wrt]), order)]


def close(got: list[float], want: list[float], rel: float = 1e-12) -> bool:
    """Each coefficient to `rel` of its own size, or of the largest where it is nearly 0
    (a coefficient that is 0 exactly comes out as rounding of the others)."""
    scale = max(map(abs, want))
    return len(got) == len(want) and all(
        abs(g - w) <= rel * abs(w) + 1e-14 * scale for g, w in zip(got, want, strict=True)
    )


def coefficients(source: str, order: int, wrt: str = "x", **point: float) -> list[float]:
    return api.taylor(parse(source), point, wrt, order).coefficients


CASES = [
    ("exp(x)", [0.0, 1.5, -2.0], 12),
    ("exp(sin(x))", [0.0, 0.7, -1.3], 12),
    ("log(1 + x)", [0.0, 0.5, 2.0], 12),
    ("1/(1 - x)", [0.0, 0.3, -2.0], 12),
    ("atan(x)", [0.0, 0.7, -3.0], 12),
    ("tanh(x)", [0.0, 0.4, 2.5], 12),
    ("x**x", [0.5, 1.0, 2.5], 10),
    ("sqrt(1 + x)", [0.0, 0.5, 3.0], 12),
    ("erf(x)", [0.0, 0.5, -1.2], 12),
    ("erfc(x)", [0.3], 10),
    ("erfinv(x)", [0.0, 0.3, -0.6], 10),
    ("sin(x)*cos(2*x)", [0.0, 1.0], 12),
    ("tan(x)", [0.0, 0.3, -1.2], 12),
    ("sec(x) + csc(x) + cot(x)", [0.7], 10),
    ("sinc(x)", [0.0, 0.2, 1.2, -2.7], 10),
    ("dsinc(x)", [0.0, 0.3, 1.7], 8),
    ("asin(x) + acos(x/2)", [0.0, 0.3, -0.6], 10),
    ("asinh(x) + atanh(x/2)", [0.0, 0.4], 10),
    ("acosh(x)", [1.3, 3.0], 10),
    ("sinh(x)*cosh(x/3)", [0.0, 1.1], 12),
    ("sech(x) + csch(x) + coth(x)", [0.9], 10),
    ("sigmoid(x)", [0.0, 0.3, -4.0], 12),
    ("softplus(x)", [0.0, 0.3, 3.0], 12),
    ("logaddexp(x, 2*x)", [0.3, -1.0], 10),
    ("expm1(x) + log1p(x)", [0.0, 0.2], 12),
    ("log2(x) + log10(x) + log(x, 3)", [0.5, 2.0], 10),
    ("log(3, x)", [2.0], 10),
    ("cbrt(x)", [-0.3, 2.0], 10),
    ("x**2.5 + x**-3 + pow(x, 1/3)", [0.7, 2.0], 10),
    ("2**x + x**(x + 1)", [0.5, 1.5], 10),
    ("powlog(x, 2.5)", [1.5], 8),
    ("atan2(x, 2) + atan2(1, x) + hypot(x, 1)", [0.3, -1.5], 10),
    ("gamma(x)", [2.5, 0.7, -1.5], 10),
    ("lgamma(x) + digamma(x)", [2.5, 0.7], 10),
    ("polygamma(2, x)", [1.3], 8),
    ("exp(-x**2/2)/sqrt(2*pi)", [0.0, 1.0], 14),
    ("1/(1 + exp(-3*sin(x)))", [0.2], 10),
]


@pytest.mark.parametrize(
    ("source", "at", "order"),
    [(source, a, order) for source, points, order in CASES for a in points],
)
def test_coefficients_match_mpmath(source, at, order):
    assert close(coefficients(source, order, x=at), reference(source, "x", {"x": at}, order))


def test_every_operation_has_a_rule():
    assert [k for k, op in OPS.items() if op not in RULES] == []


def test_exp_at_0_to_order_20_is_1_over_k_factorial_within_one_unit_in_the_last_place():
    got = coefficients("exp(x)", 20, x=0.0)
    for k, c in enumerate(got):
        exact = Fraction(1, math.factorial(k))
        assert abs(Fraction(c) - exact) <= Fraction(math.ulp(float(exact))), k
    assert got[:4] == [1.0, 1.0, 0.5, 0.16666666666666666]


def test_polynomials_end_where_they_end():
    # a whole power is a product of series: the terms past its degree are 0 exactly
    assert coefficients("(x - 1)**3 + 2*x", 6, x=2.0) == [5.0, 5.0, 3.0, 1.0, 0.0, 0.0, 0.0]
    assert coefficients("x*y**2", 3, y=2.0, x=3.0) == [12.0, 4.0, 0.0, 0.0]
    assert coefficients("x*y**2", 3, wrt="y", y=2.0, x=3.0) == [12.0, 12.0, 3.0, 0.0]


# Each op's first coefficient is the engine's derivative (forward mode) and twice the second
# is the Hessian's (symbolic reverse mode): three interpretations of the table that share no
# code, over every op in its smooth domain.


def _sources(op) -> list[str]:
    lo, hi = op.domain
    fixed = f"{lo + 0.37 * (hi - lo)!r}"
    if op.name == "polygamma":
        return ["polygamma(2, x)"]
    if op.syntax == "infix":
        return [f"(x {op.name} {fixed})", f"({fixed} {op.name} x)"]
    if op.syntax == "prefix":
        return ["-x"]
    args = [fixed] * op.arity
    return [
        f"{op.name}({', '.join(['x' if i == j else a for i, a in enumerate(args)])})"
        for j in range(op.arity)
    ]


@pytest.mark.parametrize("name", sorted(OPS))
def test_first_two_coefficients_are_the_engines_derivatives(name):
    op = OPS[name]
    lo, hi = op.domain
    at = lo + 0.61 * (hi - lo)
    for source in _sources(op):
        program = parse(source)
        if "x" not in program.inputs:
            continue
        c = api.taylor(program, {"x": at}, "x", 2).coefficients
        gradient = api.grad(program, {"x": at}).gradients["x"]
        second = api.hessian(program, {"x": at}).hessian["x"]["x"]
        assert c[1] == pytest.approx(gradient, rel=1e-12, abs=1e-14), source
        if math.isfinite(second):
            assert 2 * c[2] == pytest.approx(second, rel=1e-9, abs=1e-12), source


@settings(max_examples=60, deadline=None)
@given(expressions(), st.sampled_from([-0.8, 0.0, 0.3, 1.1]))
def test_random_expressions_match_mpmath(text, at):
    point = {"x": at, "y": -0.7, "z": 1.1}
    program = parse(text)
    if "x" not in program.inputs:
        return
    point = {name: point[name] for name in program.inputs}
    want = reference(text, "x", point, 6)
    got = api.taylor(program, point, "x", 6).coefficients
    assert close(got, want, 1e-9), (text, got, want)


@pytest.mark.parametrize(
    "source", ["exp(sin(x))*y", "x**x", "atan(x)/(1 + x**2)", "sqrt(1 + x*y)", "erf(x)*tanh(y*x)"]
)
def test_coefficients_are_the_derivatives_diff_writes_over_k_factorial(source):
    point = {"x": 0.7, "y": 1.3}
    program = parse(source)
    point = {name: point[name] for name in program.inputs}
    got = api.taylor(program, point, "x", 4).coefficients
    for k in range(1, 5):
        written = parse(str(api.diff(program, ["x"], order=k)))
        at = {name: point[name] for name in written.inputs}
        derivative = written.values(at)[written.result]
        assert got[k] * math.factorial(k) == pytest.approx(derivative, rel=1e-11), k


# Kinks: the piece the point is on, with the engine's derivative at the kink.


def test_kinks_take_the_branch_at_the_point():
    assert coefficients("abs(x)", 2, x=-1.0) == [1.0, -1.0, 0.0]
    assert coefficients("abs(x)", 2, x=0.0) == [0.0, 0.0, 0.0]  # abs'(0) = 0
    assert coefficients("relu(x**3)", 3, x=1.0) == [1.0, 3.0, 3.0, 1.0]
    assert coefficients("max(x, 0)", 1, x=0.0) == [0.0, 0.5]  # a tie: half each
    assert coefficients("where(x > 0, x**2, -x)", 2, x=2.0) == [4.0, 4.0, 1.0]
    assert coefficients("where(x > 0, x**2, -x)", 2, x=-2.0) == [2.0, -1.0, 0.0]
    assert coefficients("floor(x) + x", 1, x=1.5) == [2.5, 1.0]


def test_non_finite_coefficients_warn_naming_the_operation():
    warned = []
    result = api.taylor(parse("1 + sqrt(x)"), {"x": 0.0}, "x", 2, warn=warned.append)
    assert result.coefficients[0] == 1.0 and result.coefficients[1] == math.inf
    assert [str(w).splitlines()[0] for w in warned] == [
        "line 1, column 5: sqrt gave inf in its Taylor series"
    ]
    with pytest.raises(NonFiniteResult):
        api.taylor(parse("log(x)"), {"x": 0.0}, "x", 2, strict=True)


def test_polynomial_text():
    assert polynomial([1.0, 1.0, 0.5, 1 / 6], "x", 0.0) == (
        "1 + x + 0.5*x**2 + 0.16666666666666666*x**3"
    )
    assert polynomial([0.0, -1.0, 0.0, 2.0], "x", -2.5) == "-(x + 2.5) + 2*(x + 2.5)**3"
    assert polynomial([0.0, 0.0], "x", 1.0) == "0"
    # a source of whole numbers: its exact coefficients as fractions, in LaTeX too
    coefficients = [1.0, 1.0, 0.5, 1 / 6, -5 / 128]
    assert polynomial(coefficients, "x", 0.0, whole=True) == "1 + x + x**2/2 + x**3/6 - 5*x**4/128"
    assert polynomial(coefficients[:3], "x", 0.0, latex=True, whole=True) == (
        r"1 + x + \frac{x^{2}}{2}"
    )
    # e, e, e/2: a fraction of e is written so; a float near none stays the float
    assert polynomial([math.e, math.e, math.e / 2], "x", 1.0, whole=True) == (
        "e + e*(x - 1) + e*(x - 1)**2/2"
    )
    assert polynomial([1.0, math.log(3)], "x", 1.0, whole=True) == (
        "1 + 1.0986122886681098*(x - 1)"
    )
    assert polynomial([1.0, 0.0, 3.0], "x", 1.0, latex=True) == (r"1 + 3 {\left(x - 1\right)}^{2}")


def test_the_polynomial_evaluates_near_the_point_as_the_source_does():
    result = nanograd_cli.taylor("exp(sin(x))", x=0.5, order=12)
    back = parse(result.polynomial)
    near = 0.55
    assert back.values({"x": near})[back.result] == pytest.approx(
        math.exp(math.sin(near)), rel=1e-13
    )


# Bad input.


@pytest.mark.parametrize(
    ("order", "message"),
    [
        (-1, "order must be from 0 to 100, not -1"),
        ("2.5", "invalid value for order: '2.5' is not a valid integer"),
        (101, "order must be from 0 to 100, not 101"),
    ],
)
def test_a_bad_order_is_bad_input(order, message):
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(") + "$"):
        nanograd_cli.taylor("x", x=1, order=order)


def test_an_element_of_an_array_input():
    result = nanograd_cli.taylor("sum(x*x) + x[0]", wrt="x[1]", x=[1.0, 2.0], order=2)
    assert result.coefficients == [6.0, 4.0, 1.0]
    assert result.polynomial == "6 + 4*(x[1] - 2) + (x[1] - 2)**2"


def test_order_0_is_the_value():
    assert nanograd_cli.taylor("exp(x)", x=1, order=0).coefficients == [math.e]


# The command line, through the installed command.


def nanograd(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([NANOGRAD, *args], capture_output=True, text=True, timeout=60)


def test_command_line_table():
    done = nanograd("taylor", "exp(x)", "--wrt", "x", "--x", "0", "--order", "3")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "k  coefficient\n0  1.0\n1  1.0\n2  0.5\n3  0.16666666666666666\n\n"
        "1 + x + x**2/2 + x**3/6\n"
    )


def test_a_centre_of_pi_is_written_so_and_rounding_noise_is_no_term():
    # cos around pi/2 is -(x - pi/2) + (x - pi/2)**3/6 - ...: mpmath's coefficients 0, -1, 0,
    # 1/6, 0, -1/120; ours are 6e-17, 3e-17, 3e-18 where mpmath's are 0
    want = mpmath.taylor(mpmath.cos, mpmath.pi / 2, 5)
    got = nanograd_cli.taylor("cos(x)", x="pi/2", order=5).coefficients
    assert [abs(float(w)) < 1e-30 for w in want] == [True, False, True, False, True, False]
    assert all(abs(g - float(w)) < 1e-15 for g, w in zip(got, want, strict=True))
    done = nanograd("taylor", "cos(x)", "--x", "pi/2", "--order", "5")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[-1] == "-(x - pi/2) + (x - pi/2)**3/6 - (x - pi/2)**5/120"
    assert nanograd_cli.taylor("sin(x)", x="-3*pi/4", order=1).polynomial == (
        "-sqrt(2)/2 - sqrt(2)*(x + 3*pi/4)/2"
    )
    # a source of numbers that are not whole: floats, around pi/6 as anywhere
    assert nanograd_cli.taylor("sin(x)/2.5", x="pi/6", order=1).polynomial == (
        "0.19999999999999998 + 0.34641016151377546*(x - pi/6)"
    )
    # a small true coefficient beside small neighbours is kept (exp's 1/20! after 1/19!)
    assert nanograd_cli.taylor("exp(x)", x=0, order=20).polynomial.endswith(
        "x**20/2432902008176640000"
    )
    # 2.5 is no multiple of pi; 1e-3 among 1s is no noise
    assert polynomial([1.0, 1e-3, 1.0], "x", 2.5) == "1 + 0.001*(x - 2.5) + (x - 2.5)**2"


def test_a_number_is_never_broken_over_lines_in_latex():
    # cos's coefficients around a point beside pi/2: 2.7e-8 = cos(1.5707963) (mpmath)
    assert float(mpmath.cos(mpmath.mpf("1.5707963"))) == pytest.approx(2.6794896585028633e-8)
    done = nanograd("taylor", "cos(x)", "--x", "1.5707963", "--order", "2", "--format", "latex")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "\\begin{aligned}\n&2.6794896585028633 \\cdot 10^{-8} \\\\\n"
        "&\\quad {} - 0.9999999999999997 \\left(x - 1.5707963\\right) \\\\\n"
        "&\\quad {} - 1.3397448292514316 \\cdot 10^{-8} {\\left(x - 1.5707963\\right)}^{2}\n"
        "\\end{aligned}\n"
    )
    # the line broke between 3.061616997868383 and \cdot 10^{-12}
    coefficients = [6.123233995736766e-12, -1.0, -3.061616997868383e-12, 1 / 6, 2.55e-13, -1 / 120]
    lines = polynomial(coefficients, "x", 1.5707963267948, latex=True).splitlines()
    assert lines[2:4] == [
        r"&\quad {} - \left(x - 1.5707963267948\right) \\",
        r"&\quad {} - 3.061616997868383 \cdot 10^{-12} {\left(x - 1.5707963267948\right)}^{2} \\",
    ]
    assert not any(line.startswith(r"&\quad \cdot") for line in lines)


def test_digits_round_the_coefficients_and_the_centre_in_text_and_latex():
    # cos(1.2345678), -sin(...), -cos(...)/2 to 3 digits (mpmath): 0.33, -0.944, -0.165
    a = mpmath.mpf("1.2345678")
    want = [mpmath.cos(a), -mpmath.sin(a), -mpmath.cos(a) / 2]
    assert [float(mpmath.nstr(w, 3)) for w in want] == [0.33, -0.944, -0.165]
    args = ("taylor", "cos(x)", "--x", "1.2345678", "--order", "2", "--digits", "3")
    done = nanograd(*args)
    assert done.stdout.splitlines()[-1] == "0.33 - 0.944*(x - 1.23) - 0.165*(x - 1.23)**2"
    done = nanograd(*args, "--format", "latex")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        r"0.33 - 0.944 \left(x - 1.23\right) - 0.165 {\left(x - 1.23\right)}^{2}" + "\n"
    )
    # a centre written as a fraction of pi stays so, and exact coefficients too
    done = nanograd("taylor", "cos(x)", "--x", "pi/3", "--order", "1", "--digits", "3",
                    "--format", "latex")  # fmt: skip
    assert done.stdout == (
        r"\frac{1}{2} - \frac{\sqrt{3} \left(x - \frac{\pi}{3}\right)}{2}" + "\n"
    )
    done = nanograd("taylor", "cos(x)/3.5", "--x", "pi/3", "--order", "1", "--digits", "3")
    assert done.stdout.splitlines()[-1] == "0.143 - 0.247*(x - pi/3)"


def test_fractions_of_e_and_one_rule_for_fractions_across_the_polynomial():
    # exp around 1: e/k! (mpmath); sqrt around 4: 2, 1/4, -1/64, 1/512
    want = mpmath.taylor(mpmath.exp, 1, 4)
    assert [w / mpmath.e for w in want] == pytest.approx([1, 1, 1 / 2, 1 / 6, 1 / 24], rel=1e-15)
    assert mpmath.taylor(mpmath.sqrt, 4, 3) == pytest.approx([2, 1 / 4, -1 / 64, 1 / 512])
    done = nanograd("taylor", "exp(x)", "--x", "1", "--order", "4")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[-1] == (
        "e + e*(x - 1) + e*(x - 1)**2/2 + e*(x - 1)**3/6 + e*(x - 1)**4/24"
    )
    done = nanograd("taylor", "sqrt(x)", "--x", "4", "--order", "3")
    assert done.stdout.splitlines()[-1] == "2 + (x - 4)/4 - (x - 4)**2/64 + (x - 4)**3/512"


def test_command_line_json_and_latex():
    done = nanograd("taylor", "x*y + log(x)", "--wrt", "x", "--x", "1", "--y", "2", "--order", "2",
                    "--format", "json")  # fmt: skip
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "source": "x*y + log(x)",
        "wrt": "x",
        "at": 1.0,
        "order": 2,
        "inputs": {"x": 1.0, "y": 2.0},
        "coefficients": [2.0, 3.0, -0.5],
        "polynomial": "2 + 3*(x - 1) - (x - 1)**2/2",
    }
    done = nanograd("taylor", "exp(x)", "--x", "0", "--order", "2", "--format", "latex")
    assert (done.returncode, done.stdout) == (0, "1 + x + \\frac{x^{2}}{2}\n")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--x", "1", "--order", "-1"], 2, "--order must be from 0 to 100, not -1"),
        (["--x", "1", "--order", "two"], 2, "invalid value for --order: 'two' is not a valid"),
        (["--order", "2"], 2, "missing value for input x"),
        (["--x", "1", "--wrt", "z"], 2, "--wrt z: z is not an input"),
        (["--x", "1", "--format", "csv"], 2, "Invalid value for '--format'"),
        (["--x", "0", "--strict"], 1, "sqrt gave inf in its Taylor series"),
    ],
)
def test_command_line_bad_input(args, code, message):
    done = nanograd("taylor", "sqrt(x)", *args)
    assert done.returncode == code
    assert done.stdout == ""
    first, *rest = done.stderr.splitlines()
    assert first.startswith("error: ") and message in first
    if code == 2:  # bad input: one line (click's own adds where to find help, as everywhere)
        assert all(line.startswith("Try 'nanograd taylor --help'") for line in rest)
    assert "Traceback" not in done.stderr


def test_command_line_warns_of_an_infinite_coefficient():
    done = nanograd("taylor", "sqrt(x)", "--x", "0", "--order", "1", "--format", "json")
    assert done.returncode == 0
    assert done.stderr.startswith("warning: line 1, column 1: sqrt gave inf in its Taylor series")
    assert json.loads(done.stdout)["coefficients"] == [0.0, "inf"]


def test_digits_round_the_table_and_the_polynomials_floats_not_its_exact_numbers():
    code, out, err = run("taylor", "exp(x)", "--x", "1", "--order", "2", "--digits", "4")
    assert (code, err) == (0, "")
    assert out == "k  coefficient\n0  2.718\n1  2.718\n2  1.359\n\ne + e*(x - 1) + e*(x - 1)**2/2\n"
    code, out, err = run("taylor", "log(x)", "--x", "2", "--order", "2", "--digits", "4")
    assert out.splitlines()[-1] == "0.6931 + (x - 2)/2 - (x - 2)**2/8"


def test_help_shows_the_examples():
    done = nanograd("taylor", "--help")
    assert done.returncode == 0
    assert 'nanograd taylor "exp(x)" --wrt x --x 0 --order 3' in done.stdout
    assert "Taylor mode" in done.stdout


# The repl and Python.


def test_repl_taylor_around_the_sessions_value():
    s = Session()
    assert s.run("x = 1").status == 0
    reply = s.run(":taylor log(x) wrt x order 3")
    assert (reply.status, reply.err) == (0, [])
    assert reply.text().splitlines()[-1] == ("x - 1 - (x - 1)**2/2 + (x - 1)**3/3")
    reply = s.run(":taylor exp(x - 1) order 2 format json")
    assert json.loads(reply.text())["coefficients"] == [1.0, 1.0, 0.5]
    reply = s.run(":taylor exp(x) order -1")
    assert reply.status == 2 and "order must be from 0 to 100, not -1" in reply.err[0]


def test_python_result():
    result = nanograd_cli.taylor("exp(x)", wrt="x", order=3, x=0)
    assert result.coefficients == [1.0, 1.0, 0.5, 0.16666666666666666]
    assert (result.order, result.at, result.wrt) == (3, 0.0, "x")
    assert str(result) == "1 + x + x**2/2 + x**3/6"
    assert result.latex == r"1 + x + \frac{x^{2}}{2} + \frac{x^{3}}{6}"
    assert "<td>0.5</td>" in result._repr_html_()
    with pytest.warns(NanogradWarning, match="log gave -inf in its Taylor series"):
        nanograd_cli.taylor("log(x)", x=0, order=1)
    with pytest.raises(InputError, match="give the input to expand in"):
        nanograd_cli.taylor("x*y", x=1, y=2)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x**0.5", [0.0, math.inf, -math.inf]),
        ("x**(1/3)", [0.0, math.inf, -math.inf]),
        ("cbrt(x)", [0.0, math.inf, math.nan]),  # (odd: -inf on the right, inf on the left)
        ("x**1.5", [0.0, 0.0, math.inf]),
        ("(2*x)**2.5", [0.0, 0.0, 0.0, math.inf]),
    ],
)
def test_a_fractional_power_at_zero_has_no_power_series(source, expected):
    """x**p at 0, p not whole, is no power series: its coefficients are 0 below the power and
    infinite above it, as the engine's derivatives there are (they were all 0, silently),
    with the warning of the numeric domain."""
    with pytest.warns(nanograd_cli.NanogradWarning, match="in its Taylor series"):
        result = nanograd_cli.taylor(source, wrt="x", order=len(expected) - 1, x=0.0)
    assert [str(c) for c in result.coefficients] == [str(c) for c in expected]  # (nan)
    second = nanograd_cli.hessian(source, x=0.0).hessian["x"]["x"]  # the engine's f''(0)
    assert str(result.coefficients[2]) == str(second / 2)


def _terms(polynomial_text: str) -> dict[int, str]:
    """The coefficient of each power of the shift as the polynomial writes it (around 0:
    `x`; around 1: `(x - 1)`), sign included: `3*(x - 1)**6/40` is 6: '3/40'."""
    import re

    text = polynomial_text.replace("(x - 1)", "h").replace("x", "h").replace(" - ", " + -")
    found = {}
    for term in text.split(" + "):
        sign = "-" if term.startswith("-") else ""
        term = term.lstrip("-")
        match = re.fullmatch(r"(?:([0-9.e+-]+)\*)?h(?:\*\*([0-9]+))?(?:/([0-9]+))?|([0-9.]+)", term)
        assert match, term
        if match[4]:
            found[0] = sign + match[4]
            continue
        top, power, bottom = match[1] or "1", int(match[2] or 1), match[3]
        found[power] = sign + top + (f"/{bottom}" if bottom else "")
    return found


@pytest.mark.parametrize(
    ("source", "at", "order", "fractions"),
    [
        ("x**x", 1, 20, range(15)),  # 1711379/259459200 at 14; past it the floats are shown
        ("tan(x)", 0, 20, range(14)),
        ("exp(sin(x))", 0, 20, range(18)),
        ("1/(1 - x)", 0, 20, range(21)),
        ("sqrt(1 + x)", 0, 20, range(20)),
        ("1/cos(x)", 0, 20, range(15)),
        ("exp(x)", 0, 20, range(21)),
    ],
)
def test_coefficients_are_fractions_only_where_they_are_the_true_ones(source, at, order, fractions):
    """The true coefficients (mpmath at 60 digits; those of these sources are rationals) are
    written as fractions up to the orders where their denominators are small for the float's
    accuracy, each exactly the true one, and past it as the float, within 32*(k+1) ulp; never
    a fraction that differs from the truth."""
    with mpmath.workdps(60):
        truth = mpmath.taylor(EXACT_SERIES[source], at, order)
        written = _terms(nanograd_cli.taylor(source, wrt="x", order=order, x=at).polynomial)
        for k, true in enumerate(truth):
            if abs(true) < mpmath.mpf(10) ** -40:
                assert k not in written
                continue
            shown = written[k]
            if "." in shown or "e-" in shown:
                assert k not in fractions, (k, shown)
                assert abs(float(shown) - true) <= 32 * (k + 1) * math.ulp(float(true))
            else:
                exact = Fraction(shown)
                assert (
                    abs(mpmath.mpf(exact.numerator) / exact.denominator - true)
                    < abs(true) * mpmath.mpf(10) ** -45
                ), (k, shown)
                assert k in fractions or exact.denominator == 1, (k, shown)


# The sources as mpmath computes them.
EXACT_SERIES = {
    "x**x": lambda t: t**t,
    "tan(x)": mpmath.tan,
    "exp(sin(x))": lambda t: mpmath.exp(mpmath.sin(t)),
    "1/(1 - x)": lambda t: 1 / (1 - t),
    "sqrt(1 + x)": lambda t: mpmath.sqrt(1 + t),
    "1/cos(x)": lambda t: 1 / mpmath.cos(t),
    "exp(x)": mpmath.exp,
}


def test_x_to_the_x_at_1_through_the_command_line():
    done = nanograd("taylor", "x**x", "--x", "1", "--order", "8", "--format", "json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["polynomial"] == (
        "1 + (x - 1) + (x - 1)**2 + (x - 1)**3/2 + (x - 1)**4/3 + (x - 1)**5/12 "
        "+ 3*(x - 1)**6/40 - (x - 1)**7/120 + 59*(x - 1)**8/2520"
    )


@pytest.mark.parametrize("at", ["1e307", "nan", "inf"])
def test_a_centre_too_large_or_not_finite_is_no_multiple_of_pi_and_no_crash(at):
    """The centre is looked up among the fractions of pi only where one can be (it raised
    OverflowError past 1e306)."""
    done = in_process("taylor", "exp(x)", "--x", at, "--order", "1")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert done.stdout.splitlines()[-1].startswith(("inf + inf*(x", "nan + nan*(x"))


@pytest.mark.parametrize("centre", [math.nan, math.inf])
def test_a_centre_of_nan_or_inf_is_a_polynomial_of_it_with_a_warning(centre):
    """From Python as on the command line: the coefficients at nan or inf are what exp gives
    there, with the warning that names the input; no ValueError from writing the centre."""
    with pytest.warns(nanograd_cli.NanogradWarning, match="input x is"):
        series = nanograd_cli.taylor("exp(x)", x=centre, order=2)
    assert [math.isnan(c) if math.isnan(centre) else c for c in series.coefficients] == (
        [True] * 3 if math.isnan(centre) else [math.inf] * 3
    )


def test_a_coefficient_that_sums_inf_and_minus_inf_is_nan_not_a_crash():
    """math.fsum refuses inf - inf; a coefficient whose terms are both is nan (a plain sum's
    answer), and the command says where the first non-finite coefficient came from."""
    done = in_process(
        "taylor", "atan2(y, x)", "--wrt", "x", "--x", "-1e-270", "--y", "1e-190", "--order", "2"
    )
    assert done.returncode == 0
    assert done.stderr.startswith("warning: line 1, column 1: atan2 gave ")
    assert "internal error" not in done.stderr


@pytest.mark.parametrize("y", ["5e-324", "1e-300"])
def test_a_tiny_coefficient_is_shown_as_a_float_not_a_crash(y):
    """The fraction search's denominator bound grows past the doubles for a coefficient this
    small (int(inf) crashed): it is a float, shown as it is."""
    done = in_process("taylor", "x*y", "--wrt", "x", "--x", "1", "--y", y, "--order", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"{y} + {y}*(x - 1)"


def test_an_array_to_expand_in_is_bad_input_that_names_an_element():
    done = nanograd("taylor", "sum(x**3)", "--x", "[1, 2]", "--wrt", "x")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: --wrt x: x is an array of shape (2,); a Taylor polynomial is in one number: "
        "give one of its elements, such as --wrt x[0]\n"
    )
    element = nanograd_cli.taylor("sum(x**3)", x=[1, 2], wrt="x[0]", order=3)
    assert element.polynomial == "9 + 3*(x[0] - 1) + 3*(x[0] - 1)**2 + (x[0] - 1)**3"


def test_a_missing_point_says_it_is_the_point_to_expand_around():
    done = in_process("taylor", "sin(x)*y", "--y", "1", "--wrt", "x")
    assert (done.returncode, done.stderr) == (
        2,
        "error: missing value for input x, the point to expand around: pass --x VALUE\n",
    )
    assert in_process("taylor", "sin(x)*y", "--x", "0").stderr == (
        "error: missing value for input y: pass --y VALUE\n"
    )
    with pytest.raises(MissingInputs, match="x, the point to expand around: give x=VALUE"):
        nanograd_cli.taylor("sin(x)")
