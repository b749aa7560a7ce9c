"""A course's forms: exact fractions in explain and taylor, whole numbers in digits, and the
messages and notation of diff's higher orders, checked against SymPy."""

from __future__ import annotations

import math

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import nanograd_cli
from nanograd_cli import _api as api
from nanograd_cli._language import parse
from nanograd_cli._session import Session
from nanograd_cli.sampling import Range

from .helpers import in_process, nanograd, overfull, pdflatex


def first_line(source: str, *options: str) -> str:
    """The first line diff prints for `source`: the derivative, without its notes."""
    return in_process("diff", source, *options).stdout.splitlines()[0]


def printed_alone(source: str, expected: str) -> None:
    """diff prints `expected` for `source`, and nothing else (no note), SymPy's derivative."""
    assert in_process("diff", source).stdout == expected + "\n", source
    assert sympys(source, expected), source


def sympys(source: str, printed: str, order: int = 1) -> bool:
    """Whether `printed` is SymPy's `order`-th derivative of `source` by x."""
    exact = sympy.diff(sympy.sympify(source), sympy.Symbol("x"), order)
    return sympy.simplify(sympy.sympify(printed) - exact) == 0


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
    # broken over lines, as diff's long LaTeX is
    assert done.stdout.splitlines()[-3:] == [
        r"&\quad {} + \frac{x^{19}}{121645100408832000} \\",
        r"&\quad {} + \frac{x^{20}}{2432902008176640000}",
        r"\end{aligned}",
    ]
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
    for order in ("0", "21"):
        done = in_process("diff", "x**3", "--order", order)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == f"error: --order must be from 1 to 20, not {order}\n"


def test_a_higher_derivative_is_named_as_a_textbook_does_in_latex():
    done = nanograd(
        "diff", "x**12*y", "--wrt", "x", "--wrt", "y", "--order", "10", "--format", "latex"
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "\\begin{aligned}\n\\frac{\\partial^{10} f}{\\partial x^{10}} &= 239500800 x^{2} y \\\\\n"
        "\\frac{\\partial^{10} f}{\\partial y^{10}} &= 0\n\\end{aligned}\n"
    )
    # 12!/2! is 239500800: the hand derivation
    assert 239500800 == math.factorial(12) // math.factorial(2)


LONG = "(x+1)**30 + (x + 2)**20 + sin(x)*cos(x) + x**5*exp(x) + x**3*tanh(x) + sinh(x)/x"


def test_a_long_derivative_in_latex_is_broken_over_lines_that_fit_a_page(tmp_path):
    done = in_process("diff", LONG, "--format", "latex")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0] == "\\begin{aligned}" and lines[-1] == "\\end{aligned}"
    assert [line[:7] for line in lines[2:-3]] == ["&\\quad "] * (len(lines) - 5)
    # and tanh's note under it, on two lines (tests/test_digit_notes.py)
    assert lines[-3].startswith("&\\qquad \\text{loses digits for }")
    assert lines[-2] == "&\\qquad \\text{diff -{}-exact keeps them}"
    # the same terms: the lines joined are the derivative, which SymPy agrees with
    text = in_process("diff", LONG).stdout.split("\n#")[0]
    x = sympy.Symbol("x")
    assert sympy.simplify(sympy.sympify(text) - sympy.diff(sympy.sympify(LONG), x)) == 0
    pdflatex(tmp_path, f"\\[\n{done.stdout}\\]")
    assert overfull(tmp_path) == []


def test_check_against_reports_a_kink_and_does_not_count_it_as_a_difference():
    for formula in ("sign(x)", "x/abs(x)"):  # 0 and nan at the kink: neither is compared
        done = in_process("check", "abs(x)", "--against", formula, "--x", "-1:1")
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.endswith(
            "\nkinks, where the source has no derivative (not compared):\n"
            "d/d  x    left  right\nx    0.0  -1.0  1.0\n"
        )
    # a formula wrong on one side is still wrong there: the 50 points left of the kink
    done = in_process("check", "abs(x)", "--against", "1", "--x", "-1:1")
    assert done.returncode == 1
    assert done.stderr == (
        "error: the formula for d/dx differs from the engine's derivative at 50 of 100 points\n"
    )
    # the slopes, by hand: relu(x)*y has 0 and y either side of x = 0
    result = api.check_against(
        parse("relu(x)*y"),
        ["x=step(x)*y", "y=relu(x)"],
        {},
        {"x": Range(-1.0, 1.0, 5), "y": Range(1.0, 2.0, 2)},
    )
    assert result.passed
    kinks = result.checks["x"].first_kinks
    assert [(k.inputs, k.left, k.right) for k in kinks] == [
        ({"x": 0.0, "y": 1.0}, 0.0, 1.0),
        ({"x": 0.0, "y": 2.0}, 0.0, 2.0),
    ]
    assert result.checks["y"].kinks == 0  # relu(x)*y is linear in y
    # a smooth source's curvature is no kink, at the tight tolerances of --against
    smooth = api.check_against(parse("x**4"), ["4*x**3"], {}, {"x": Range(-2.0, 2.0, 41)})
    assert smooth.passed and smooth.checks["x"].kinks == 0
    # every point a kink: nothing compared, no pass
    done = in_process("check", "abs(x)", "--against", "x/abs(x)", "--x", "0")
    assert (done.returncode, done.stderr) == (
        1,
        "error: the source has a kink in x at every point checked: it has no derivative there "
        "to compare the formula with\n",
    )


def test_the_repl_lists_the_kinks_as_the_command_line_does():
    from nanograd_cli._session import Session

    reply = Session().run(":check abs(x) against sign(x) x -1:1")
    assert (reply.status, reply.err) == (0, [])
    done = in_process("check", "abs(x)", "--against", "sign(x)", "--x", "-1:1")
    assert reply.text() + "\n" == done.stdout


def test_a_long_sum_inside_brackets_is_broken_inside_them(tmp_path):
    done = in_process("diff", "sin(x)*exp(x)*x**3", "--order", "3", "--format", "latex")
    lines = done.stdout.splitlines()
    assert lines[1] == r"&2 e^{x} \left(x^{3} \cos(x) - x^{3} \sin(x) + 9 x^{2} \cos(x) \right. \\"
    assert lines[2].startswith(r"&\quad \left. {} + 9 x \cos(x)")
    pdflatex(tmp_path, f"\\[\n{done.stdout}\\]")
    assert overfull(tmp_path) == []
    # the same derivative as SymPy's third
    x = sympy.Symbol("x")
    text = in_process("diff", "sin(x)*exp(x)*x**3", "--order", "3").stdout
    written = dict(line.split(" = ") for line in text.splitlines()[:-1])
    shown = sympy.sympify(text.splitlines()[-1]).subs(
        {sympy.Symbol(n): sympy.sympify(e) for n, e in reversed(list(written.items()))}
    )
    shown = shown.subs({sympy.Symbol(n): sympy.sympify(e) for n, e in written.items()})
    expected = sympy.diff(sympy.sin(x) * sympy.exp(x) * x**3, x, 3)
    assert sympy.simplify(shown - expected) == 0


def test_a_source_of_whole_numbers_has_its_derivatives_numbers_as_exact_fractions():
    x, y = sympy.symbols("x y")
    cases = [
        (["cbrt(x)", "--order", "3"], "10/(27*cbrt(x)**8)", sympy.diff(sympy.cbrt(x), x, 3)),
        (
            ["x**2/4 + y**2/9 == 1", "--implicit", "y", "--wrt", "x", "--order", "3"],
            "-243*x*(9*x**2 + 4*y**2)/(64*y**5)",
            sympy.idiff(x**2 / 4 + y**2 / 9 - 1, y, x, 3),
        ),
        (  # one fraction, as a course writes it (was -81*x**2/(256*y**3) - 9/(16*y))
            ["x**2/16 + y**2/9 == 1", "--implicit", "y", "--wrt", "x", "--order", "2"],
            "-9*(9*x**2 + 16*y**2)/(256*y**3)",
            sympy.idiff(x**2 / 16 + y**2 / 9 - 1, y, x, 2),
        ),
    ]
    for args, expected, truth in cases:
        done = in_process("diff", *args)
        assert done.stdout == expected + "\n"
        ours = sympy.sympify(expected.replace("cbrt", "root_3"), {"root_3": sympy.cbrt})
        assert (
            sympy.simplify(ours - truth) == 0
            or sympy.simplify((ours - truth).subs(y, sympy.sqrt(9 - 9 * x**2 / 4))) == 0
        )
    # a decimal source keeps its decimals: 0.7 is no fraction the source wrote
    assert in_process("diff", "x**0.7").stdout == "0.7/x**0.3\n"


LONG_QUOTIENT = "(x**7*sin(x) + x**6*cos(x) + exp(x)*log(x) + x**5*tan(x) + atan(x)*x**4)/(x**2+1)"


def test_a_long_fraction_is_a_product_broken_over_lines(tmp_path):
    """One fraction whose numerator is wider than the page: written 1/(x**2 + 1) times the
    numerator in brackets, which breaks over lines (a line cannot break inside \\frac), and
    the fraction inside it alike; pdflatex sets it with no overfull box."""
    done = nanograd("diff", LONG_QUOTIENT, "--format", "latex")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[1] == r"&\frac{1}{x^{2} + 1} \left(x^{7} \cos(x) + 6 x^{6} \sin(x) \right. \\"
    assert lines[2].startswith(r"&\quad \left. {} - \frac{2 x}{x^{2} + 1} \left(x^{7} \sin(x)")
    assert len(lines) == 8
    explained = in_process("explain", LONG_QUOTIENT, "--x", "0.5", "--format", "latex").stdout
    pdflatex(tmp_path, f"\\[\n{done.stdout}\\]\n{explained}")
    assert overfull(tmp_path) == []


def test_a_sum_of_powers_of_one_name_stays_a_sum_as_a_textbook_keeps_it():
    x = sympy.Symbol("x")
    done = in_process("diff", "5*x**3 - 2/x + 7")
    assert done.stdout == "15*x**2 + 2/x**2\n"
    assert sympy.simplify(sympy.sympify(done.stdout) - sympy.diff(5 * x**3 - 2 / x + 7, x)) == 0
    assert in_process("diff", "5*x**3 - 2/x + 7", "--steps").stdout.endswith("= 15*x**2 + 2/x**2\n")
    # a quotient of other parts is still one fraction, as the quotient rule writes it
    assert in_process("diff", "sin(x)/x").stdout == "(x*cos(x) - sin(x))/x**2\n"


@pytest.mark.parametrize(
    ("source", "order", "printed"),
    [
        ("cot(x)*sin(x)", 2, "-cos(x)"),  # was cos(x) - 1
        ("csc(x)**2*sin(x)", 1, "-cos(x)*csc(x)**2"),  # was cos(x) + 2*csc(x) - 1
        ("log(sec(x) + tan(x))", 1, "sec(x)"),
        ("log(csc(x) - cot(x))", 1, "csc(x)"),
    ],
)
def test_a_sum_whose_sines_and_cosines_make_one_term_is_that_term(source, order, printed):
    """Written with sin and cos, cos(x)*csc(x)**2 - 2*cot(x)*sin(x)*csc(x)**2 is one term,
    -cos(x)*csc(x)**2, which was then read as a sum: its factors as terms, their powers as
    weights (cos(x) + 2*csc(x) - 1, a wrong derivative)."""
    assert first_line(source, "--order", str(order)) == printed
    assert sympys(source, printed, order)


@pytest.mark.parametrize(
    "source",
    [
        "((x - 1)/(x + 1))**4",
        "((3 - x)/(x**2 + x + 1))**5",
        "(x - 1)**4/(2*x + 3)**2",
        "x*(x + 1)**4/(x - 1)**4",
        "sin(x)*(x + 1)**5/(x - 1)**4",
        "(x**2 + 1)**5*(2*x + 3)**2/(3 - x)",
        "x**2*(x + 2)**4/(x**2 - 4)**3",
        "(x + 1)**2*(x**2 - 4)**3",
    ],
)
def test_a_sum_each_term_has_a_power_of_is_taken_out_as_a_course_factors_it(source):
    """The quotient rule's numerator with the power of a sum its terms share taken out before
    the rest is multiplied out: ((x - 1)/(x + 1))**4 gave 4*(x - 1)**3*(1 - (x - 1)/(x + 1))/
    (x + 1)**4 (its (x - 1)**3 was multiplied out, (x - 1)**4 was not, and the two never met),
    now 8*(x - 1)**3/(x + 1)**5; SymPy's derivative at the first two orders, with no quotient
    left inside the numerator."""
    for order in (1, 2):
        printed = first_line(source, "--order", str(order), "--notes", "none")
        assert sympys(source, printed, order), (order, printed)
        numerator = printed.rsplit("/", 1)[0]
        assert "/" not in numerator, printed


def test_a_factor_the_numerator_and_denominator_share_cancels_as_a_course_cancels_it():
    """(x**2 - 4)/(x - 2) is x + 2 but at x = 2: its derivative is 1 there, as a course
    writes it, with where it holds (it was (x**2 - 4*x + 4)/(x - 2)**2). A common factor is
    found by Euclid's algorithm on the two polynomials, not only a denominator that divides
    the numerator: (x**3 + 1)/(x**2 - 1) is (x**2 - x + 1)/(x - 1) but at x = -1 (it was
    x*(x**3 - 3*x - 2)/(x**2 - 1)**2); a factor every term shares (exp(x)) is set aside first;
    a numerator that is 0 says where the fraction was nan."""
    for source, expected, note in [
        ("(x**2 - 4)/(x - 2)", "1", "x - 2 != 0"),
        ("(x**2 - 1)/(x + 1)", "1", "x + 1 != 0"),
        ("(x**3 - 1)/(x - 1)", "2*x + 1", "x - 1 != 0"),
        ("(2*x**2 + 3*x - 2)/(2*x - 1)", "1", "2*x - 1 != 0"),
        ("(x**2 - 4)/(2*x - 4)", "1/2", "x - 2 != 0"),
        ("(x**3 + 1)/(x**2 - 1)", "x*(x - 2)/(x - 1)**2", "x + 1 != 0"),
        ("(x**2 + 3*x + 2)/(x**2 - 1)", "-3/(x - 1)**2", "x + 1 != 0"),
        ("exp(x)*(x**2 - 4)/(x - 2)", "exp(x)*(x + 3)", "x - 2 != 0"),
        ("x*exp(x)*(x**2 - 4)/(x - 2)", "exp(x)*(x**2 + 4*x + 2)", "x - 2 != 0"),
        ("(x**2 - 1)/(x - 1)/(x + 1)", "0", "x - 1 != 0 and x + 1 != 0"),
        ("(x**2 - 4)/(x - 2) + (x**2 - 9)/(x - 3)", "2", "x - 2 != 0 and x - 3 != 0"),
    ]:
        assert in_process("diff", source).stdout == f"{expected}\n# {note}\n", source
        assert sympys(source, expected), source
    # another name every term has is set aside as exp(x) is
    for source in ["(x**2*y - y)/(x - 1)", "(x**2 - 1)*y/(x + 1)"]:
        done = in_process("diff", source, "--wrt", "x")
        assert done.stdout.splitlines()[0] == "y", source
    # no note where the fraction left is a number nowhere else: the factor is never 0, or
    # the denominator still has it
    for source, expected in [
        ("(x**4 - 16)/(x**2 + 4)", "2*x"),
        ("(x**2 - 9)/(x**2 + 6*x + 9)", "6/(x + 3)**2"),
        ("(x**2 - 1)**5/(x + 1)**3", "(x**2 - 1)**4*(7*x + 3)/(x + 1)**3"),
    ]:
        assert in_process("diff", source).stdout == f"{expected}\n", source
        assert sympys(source, expected), source
    # what shares nothing stays: the quotient rule's one fraction
    assert in_process("diff", "(3*x + 2)/(5*x - 7)").stdout == "-31/(5*x - 7)**2\n"
    assert in_process("diff", "(x**2 + 1)/(x - 1)").stdout == "(x**2 - 2*x - 1)/(x - 1)**2\n"
    done = in_process("diff", "sin(x)*(x**3 + 1)/(x**2 - 2)")
    assert "# x" not in done.stdout and "/(x**2 - 2)**2" in done.stdout.splitlines()[0]


@given(
    st.lists(st.integers(-3, 3), min_size=1, max_size=3),
    st.lists(st.integers(-3, 3), min_size=1, max_size=3),
    st.integers(1, 3),
)
@settings(max_examples=40, deadline=None)
def test_cancelled_fractions_of_linear_factors_are_sympys_derivative(tops, unders, scale):
    """(scale*x + a)(x + b)... over (x + c)...: what diff prints is SymPy's derivative, and
    every factor it says is not 0 is one the source's denominator had."""
    x = sympy.Symbol("x")
    top = " * ".join(f"({scale}*x + {a})" for a in tops)
    under = " * ".join(f"(x + {c})" for c in unders)
    source = f"({sympy.expand(sympy.sympify(top))})/({sympy.expand(sympy.sympify(under))})"
    done = in_process("diff", source)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    notes = [line for line in lines if line.startswith("# ")]
    named: dict[sympy.Symbol, sympy.Expr] = {}  # t1 = ..., a repeated part
    for line in lines[: len(lines) - len(notes)]:
        name, _, written = line.rpartition(" = ")
        value = sympy.sympify(written).subs(named)
        if name:
            named[sympy.Symbol(name)] = value
    exact = sympy.diff(sympy.sympify(source), x)
    assert sympy.simplify(value - exact) == 0, source
    zeros = {sympy.Integer(-c) for c in unders}
    said = [part for note in notes for part in note.removeprefix("# ").split("; ")]
    for conditions in (part for part in said if part.endswith(" != 0")):
        for condition in conditions.split(" and "):
            factor = sympy.sympify(condition.removesuffix(" != 0"))
            assert set(sympy.solve(factor, x)) <= zeros, (source, condition)


def test_the_quotient_rule_is_one_fraction_where_it_costs_one_operation_more():
    """(f'g - fg')/g**2 is one operation longer than (f' - fg'/g)/g: a course writes the
    first (sin(x)/(x**2 + 1) gave the second), and at higher orders it keeps each derivative
    one fraction (tan's 8th was a sum of nested fractions with a t1)."""
    x = sympy.Symbol("x")
    for source, expected in [
        ("sin(x)/(x**2 + 1)", "(cos(x)*(x**2 + 1) - 2*x*sin(x))/(x**2 + 1)**2"),
        ("1/(x*(x + 1)*(x + 2))", "-(3*x**2 + 6*x + 2)/(x**2*(x + 1)**2*(x + 2)**2)"),
        ("(x - 1/x)**2", "2*(x**4 - 1)/x**3"),
        ("sin(x)*exp(x)*x**3", "x**2*exp(x)*(x*cos(x) + sin(x)*(x + 3))"),
    ]:
        assert first_line(source) == expected, source
        assert sympys(source, expected), source
    eighth = in_process("diff", "tan(x)", "--order", "8").stdout
    assert eighth == (
        "128*sin(x)*(62*cos(x)**6 + 378*cos(x)**4*sin(x)**2 + 630*cos(x)**2*sin(x)**4 "
        "+ 315*sin(x)**6)/cos(x)**9\n"
    )
    exact = sympy.diff(sympy.tan(x), x, 8)
    assert sympy.simplify(sympy.sympify(eighth) - exact) == 0


def test_a_sum_of_fractions_in_a_product_is_written_in_whole_numbers_over_their_denominator():
    """(x + 1/2)/(sqrt(x)*sqrt(x + 1)) is written (2*x + 1)/(2*sqrt(x)*sqrt(x + 1)), as a
    course writes it."""
    for source, expected in [
        ("sqrt(x)*sqrt(x + 1)", "(2*x + 1)/(2*sqrt(x)*sqrt(x + 1))"),
        ("x**2*sqrt(x + 1)", "x*(5*x + 4)/(2*sqrt(x + 1))"),
        ("(x**2 - 1)/sqrt(x - 1)", "(3*x - 1)/(2*sqrt(x - 1))"),
        ("x**(1/3)*(x + 1)", "(4*x + 1)/(3*x**(2/3))"),
    ]:
        assert first_line(source) == expected, source
        assert sympys(source, expected), source
    # a sum alone keeps its fractions: x**2 + 1/2, not (2*x**2 + 1)/2
    assert in_process("diff", "x**3/3 + x/2").stdout == "x**2 + 1/2\n"


def test_a_root_of_tan_stays_one_where_its_sine_and_cosine_are_negative():
    """sqrt(tan(x)) was written sqrt(sin(x))/sqrt(cos(x)), nan where both are negative (x = 4),
    where the derivative is a number: grad's there."""
    from nanograd_cli import parse

    from .oracle import value_of

    for source in ["(2*x + 5)*sqrt(tan(x))", "sqrt(tan(x))*sin(x)", "sqrt(sin(x))/sqrt(cos(x))"]:
        printed = in_process("diff", source).stdout.splitlines()[0]
        for x in (0.5, 4.0):
            engine = parse(source).grad({"x": x}).gradients["x"]
            ours = value_of(printed, {"x": x})
            if math.isnan(engine):
                assert math.isnan(ours), (source, x)  # nan where the source is
            else:
                assert math.isclose(ours, engine, rel_tol=1e-12), (source, x)


def test_each_cancelled_factor_is_noted_once_and_only_where_the_result_is_a_number():
    """x + 2 != 0 was noted twice, with x**2 + 2*x != 0 between, under 2*(x**2 + 9)/x**2."""
    for source, expected in [
        ("(2*x**3 + 4*x**2 - 18*x - 36)/(x**2 + 2*x)", "2*(x**2 + 9)/x**2\n# x + 2 != 0\n"),
        ("(x**2 - 4)/(x**3 - x**2 - 2*x)", "-(x**2 + 4*x + 2)/(x**2*(x + 1)**2)\n# x - 2 != 0\n"),
        ("(x + 1)/(x**2 + x)", "-1/x**2\n# x + 1 != 0\n"),
        ("(x**3 - x)/(x**2 - x)", "1\n# x - 1 != 0 and x != 0\n"),
    ]:
        assert in_process("diff", source).stdout == expected, source


def test_a_large_number_is_no_fraction_that_others_round_to_as_well():
    """sqrt(x)'s 16th derivative printed -586667631674073/(6211*...): that fraction is the
    float to the last bit, and so is the true -6190283353629375/65536."""
    printed = in_process("diff", "sqrt(x)", "--order", "16").stdout
    assert printed == "-94456227930.13573/x**(31/2)\n"
    assert -6190283353629375 / 65536 == -94456227930.13573
    assert in_process("diff", "sqrt(x)", "--order", "6").stdout == "-945/(64*x**(11/2))\n"


def test_what_a_shared_factor_leaves_as_one_term_joins_the_product_its_number_first():
    """exp(x)*(-2*sin(x)) was printed where a course writes -2*exp(x)*sin(x)."""
    x = sympy.Symbol("x")
    e, sin, cos = sympy.exp(x), sympy.sin(x), sympy.cos(x)
    for arguments, expected, function in [
        (["exp(x)*(cos(x) - sin(x))"], "-2*exp(x)*sin(x)", e * (cos - sin)),
        (["exp(x)*cos(x)", "--order", "2"], "-2*exp(x)*sin(x)", sympy.diff(e * cos, x)),
    ]:  # fmt: skip
        assert in_process("diff", *arguments).stdout == f"{expected}\n", arguments
        assert sympy.simplify(sympy.sympify(expected) - sympy.diff(function, x)) == 0, arguments


def test_a_square_root_of_what_is_never_negative_times_itself_is_what_it_is_of():
    """sqrt(u)*sqrt(u) is u where u is never negative (x**2 + y**2): the textbook answer of
    an implicit derivative of a course (it was (x/t1 + y/t1)/t1/((x/t1 - y/t1)/t1)); where u
    may be negative, sqrt(x)*sqrt(x) is nan there, and x is not: they join, with the note
    `x > 0` (log(sqrt(x)) gave 1/(2*sqrt(x)*sqrt(x)), where a course writes 1/(2*x))."""
    done = in_process("diff", "log(sqrt(x**2 + y**2))", "--wrt", "x")
    assert done.stdout == "x/(x**2 + y**2)\n"
    implicit = ["atan(y/x) == log(sqrt(x**2 + y**2))", "--implicit", "y", "--wrt", "x"]
    assert in_process("diff", *implicit).stdout == "(x + y)/(x - y)\n"
    # where u may be negative, the two join with a note of where they are numbers
    for source, expected in [
        ("log(sqrt(x))", "1/(2*x)\n# x > 0\n"),
        ("sqrt(x)*sqrt(x)", "1\n# x > 0\n"),
        ("log(sqrt(x)) + log(sqrt(1 - x))", "(2*x - 1)/(2*x*(x - 1))\n# 1 - x > 0 and x > 0\n"),
        ("sqrt(relu(x))*sqrt(relu(x))", "step(x)\n# relu(x) > 0\n"),
    ]:
        assert in_process("diff", source).stdout == expected, source
    # a sum of roots and a positive number is never 0: a fraction over it is one fraction
    for source, expected in [
        ("sqrt(x)/(1 + sqrt(x))", "1/(2*sqrt(x)*(sqrt(x) + 1)**2)"),
        ("sqrt(x)/(2 + sqrt(x))**2", "(2 - sqrt(x))/(2*sqrt(x)*(sqrt(x) + 2)**3)"),
    ]:
        assert first_line(source) == expected, source
        assert sympys(source, expected), source
    # where what is left takes the root still, it says so itself: no note
    assert in_process("diff", "atan(sqrt(x))").stdout == "1/(2*sqrt(x)*(x + 1))\n"
    # relu(x)/relu(x) stays: it is nan for every x < 0, and a 1 would not say where
    assert "relu(x)/relu(x)" in in_process("diff", "relu(x)/relu(x)").stdout


def test_numbers_of_a_derivative_are_added_in_fractions_of_any_small_denominator():
    """4/5 - 24/25 in floats is -0.15999999999999992, which no fraction rounds to: the second
    derivative of (x**2 + 1)**(2/5) printed it so; in fractions it is -4/25."""
    for source, expected in [
        ("(x**2 + 1)**(2/5)", "4*(5 - x**2)/(25*(x**2 + 1)**(8/5))"),
        ("(x**3 + 1)**(2/5)", "6*x*(x**3 + 10)/(25*(x**3 + 1)**(8/5))"),
    ]:
        assert first_line(source, "--order", "2") == expected, source
        assert sympys(source, expected, 2), source


def test_a_whole_power_of_a_fraction_of_x_has_exact_fractions_and_no_note():
    for source, expected in [
        ("(x/5)**3", "3*x**2/125"),
        ("(x/3)**4", "4*x**3/81"),
        ("(x/5 + 1)**3", "3*(x + 5)**2/125"),
        ("(x/3)**-2", "-18/x**3"),
    ]:
        printed_alone(source, expected)  # no `# x/5 != 0`: 3*x**2 is x**3's


def test_a_root_of_a_fraction_of_x_is_written_as_the_chain_rule_gives_it():
    for source, expected in [
        ("sqrt(x/2)", "1/(4*sqrt(x/2))"),
        ("sqrt(x/3)", "1/(6*sqrt(x/3))"),
        ("(x/2)**(3/2)", "3*sqrt(x/2)/4"),
        ("1/sqrt(x/2)", "-1/(4*(x/2)**(3/2))"),
        ("sqrt(x/4)", "1/(4*sqrt(x))"),  # a fraction's root that is a fraction: taken out
        ("sqrt(9*x/4)", "3/(4*sqrt(x))"),
        ("sqrt(2*x)", "sqrt(2)/(2*sqrt(x))"),  # a whole number's: sqrt(2) by name, on top
        ("sqrt(3*x)", "sqrt(3)/(2*sqrt(x))"),  # not 3/(2*sqrt(3)*sqrt(x))
        ("sqrt(6*x)", "sqrt(6)/(2*sqrt(x))"),  # not 3/(sqrt(6)*sqrt(x))
        ("sqrt(12*x)", "sqrt(3)/sqrt(x)"),  # sqrt(12) is 2*sqrt(3): not 6/(sqrt(12)*sqrt(x))
        ("sqrt(50)*x**2", "10*sqrt(2)*x"),
        ("x/sqrt(3)", "sqrt(3)/3"),
        ("exp(-x**2/2)/sqrt(2*pi)", "-x*exp(-x**2/2)/(sqrt(2)*sqrt(pi))"),  # two roots: kept
    ]:
        printed_alone(source, expected)


def test_a_denominator_that_is_a_power_is_written_as_one_after_cancelling():
    for source, expected in [
        ("(x+1)/(x**2 + 2*x + 1)", "-1/(x + 1)**2"),
        ("(x**2-1)/(x**4 - 2*x**2 + 1)", "-2*x/(x**2 - 1)**2"),
        ("(x+1)/(2*x**2 - 4*x + 2)", "-(x + 3)/(2*(x - 1)**3)"),
        ("(x+2)/(x**2+4*x+4)**2", "-3/(x + 2)**4"),
    ]:
        printed_alone(source, expected)
    assert first_line("x/(x**2 - 4)") == "-(x**2 + 4)/(x**2 - 4)**2"  # no power: as it is


def test_a_function_of_a_simple_fraction_stays_as_written_where_the_source_is_whole():
    for source, expected in [
        ("(1/2)**x", "(1/2)**x*log(1/2)"),  # was -0.6931471805599453*(1/2)**x
        ("(3/2)**x", "(3/2)**x*log(3/2)"),
        ("log(1/2)*x", "log(1/2)"),
    ]:
        assert first_line(source) == expected, source
        assert sympys(source, expected)
    # a float in the source is worked out, as SymPy works out a function of a float
    assert first_line("0.5**x") == "-0.6931471805599453*0.5**x"


def test_a_whole_number_past_2_to_the_53_is_written_as_the_float_it_is():
    """7**20 is 79792266297612001, which no float is: the 20th derivative of sin(7*x) wrote
    the float's 79792266297612000 in digits, as if it were exact."""
    printed = first_line("sin(7*x)", "--order", "20")
    assert printed == "7.9792266297612e+16*sin(7*x)"
    assert float(printed.split("*")[0]) == float(7**20)  # the nearest float to 7**20
    assert first_line("x**30", "--order", "20") == "7.309657732919728e+25*x**10"
    assert first_line("x**20", "--order", "5") == "1860480*x**15"  # below 2**53: digits
    # taylor's coefficients are exact fractions: 1/19! in digits
    assert (
        "x**19/121645100408832000"
        in in_process("taylor", "exp(x)", "--wrt", "x", "--x", "0", "--order", "19").stdout
    )


def test_notes_chooses_which_notes_are_printed_at_every_door():
    """An answer key wants where a derivative holds, not where it loses digits the engine
    keeps: --notes domain; --notes none prints none; --notes all also where it loses digits
    only for inputs past 1e30 in size, which the default (usual) leaves out."""
    holds, loses = "# x != 0", "# x != 0; loses digits where x**(n - 1) is below 2.2e-308"
    assert in_process("diff", "x**n", "--wrt", "x").stdout.startswith(f"n*x**(n - 1)\n{loses}")
    for notes, printed in [("domain", f"n*x**(n - 1)\n{holds}\n"), ("NONE", "n*x**(n - 1)\n")]:
        assert in_process("diff", "x**n", "--wrt", "x", "--notes", notes).stdout == printed
    latex = in_process("diff", "sin(x)/x", "--format", "latex", "--notes", "domain").stdout
    assert latex == "\\frac{x \\cos(x) - \\sin(x)}{x^{2}}\n"  # no "loses digits" row
    overflows = "# loses digits where x**2 overflows; diff --exact keeps them"
    quotient = "(x*cos(x) - sin(x))/x**2\n"
    for notes, printed in [("usual", quotient), ("all", f"{quotient}{overflows}\n")]:
        assert in_process("diff", "sin(x)/x", "--notes", notes).stdout == printed
        assert str(nanograd_cli.diff("sin(x)/x", notes=notes)) + "\n" == printed
        assert Session().run(f":diff sin(x)/x notes {notes}").out == [printed.rstrip("\n")]
    steps = in_process("diff", "x**n", "--wrt", "x", "--steps", "--notes", "domain").stdout
    assert steps.endswith(f"= n*x**(n - 1)\n{holds}\n")
    order = in_process("diff", "x**x", "--order", "2", "--notes", "none").stdout
    assert "#" not in order
    assert str(nanograd_cli.diff("x**n", "x", notes="domain")) == f"n*x**(n - 1)\n{holds}"
    reply = Session().run(":diff x**n wrt x notes none")
    assert (reply.status, reply.out) == (0, ["n*x**(n - 1)"])
    bad = in_process("diff", "x", "--notes", "some")
    assert (
        bad.returncode == 2
        and "'some' is not one of 'usual', 'all', 'domain', 'none'" in bad.stderr
    )


def test_cosh_squared_less_sinh_squared_is_1_as_sin_and_cos_squared_add_up_to_1():
    for source, expected in [
        ("sinh(x)/cosh(x)", "1/cosh(x)**2"),  # was 1 - sinh(x)**2/cosh(x)**2, tanh(x)'s form
        ("x*cosh(x)**2 - x*sinh(x)**2", "1"),
        ("cosh(x)**2 - sinh(x)**2", "0"),
    ]:
        assert first_line(source) == expected, source
        assert sympys(source, expected)


def test_a_term_that_cancels_inside_a_rewritten_fraction_goes_as_any_cancelled_term_does():
    """(e^x log(x) cos(x))'' left 0*x**2*log(x) in its numerator, where log(x) is elsewhere;
    the third derivative of e^sqrt(x) left sqrt(x)*sqrt(x), where x**(5/2) says x > 0."""
    for source, order, expected in [
        ("exp(sqrt(x))", 3, "exp(sqrt(x))*(x - 3*sqrt(x) + 3)/(8*x**(5/2))"),
        ("exp(x)*log(x)*cos(x)", 2, "-exp(x)*(2*x*sin(x)*(x*log(x) + 1) + cos(x)*(1 - 2*x))/x**2"),
        ("exp(x)*log(x)*sin(x)", 3,
         "exp(x)*(x*cos(x)*(2*x**2*log(x) + 6*x - 3) + sin(x)*(2 - 2*x**3*log(x) - 3*x))/x**3"),
    ]:  # fmt: skip
        printed = first_line(source, "--order", str(order), "--notes", "domain")
        assert printed == expected
        assert sympys(source, printed, order)


def test_taylor_around_a_fraction_of_pi_has_sympys_exact_coefficients():
    """sin around pi/6 is 1/2 + sqrt(3)*(x - pi/6)/2 - ..., as a course writes it; tan's
    whole coefficients around pi/4 (floats 0.9999999999999999, ...) are whole numbers."""
    x = sympy.Symbol("x")
    for source, centre in [
        ("sin(x)", "pi/6"),
        ("cos(x)", "pi/3"),
        ("sin(x) + cos(x)", "pi/4"),
        ("tan(x)", "pi/4"),
        ("sin(2*x)", "pi/8"),
        ("cos(x)", "-3*pi/4"),
        ("exp(x)", "1"),
    ]:
        result = nanograd_cli.taylor(source, x=centre, order=6)
        a = sympy.sympify(centre)
        expected = sympy.series(sympy.sympify(source), x, a, 7).removeO()
        printed = sympy.sympify(result.polynomial, locals={"e": sympy.E})
        assert sympy.simplify(printed - expected) == 0, source
        assert "." not in result.polynomial, result.polynomial
    # around a fraction of pi a coefficient is no fraction of a large denominator that only
    # rounding made: 1/(1 + x**2)'s are rational functions of pi (SymPy), floats here
    series = nanograd_cli.taylor("1/(1 + x**2)", x="-3*pi/4", order=2).polynomial
    assert series == (
        "0.15263324843958118 + 0.10978409503012128*(x + 3*pi/4) + "
        "0.05566719427799887*(x + 3*pi/4)**2"
    )


def test_cos_over_sin_is_written_cot_as_a_course_writes_it():
    """log(sin(x))' is cot(x), not 1/tan(x); its derivative -csc(x)**2, cot's own rule."""
    for source, order, expected in [
        ("log(sin(x))", 1, "cot(x)"),
        ("log(sin(x))", 2, "-csc(x)**2"),
        ("log(sin(2*x))", 1, "2*cot(2*x)"),
        ("cos(x)/sin(x)", 1, "-1/sin(x)**2"),  # one fraction, where it is the shorter
    ]:
        assert first_line(source, "--order", str(order), "--notes", "none") == expected
        assert sympys(source, expected, order), source
