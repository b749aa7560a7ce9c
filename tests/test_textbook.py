"""Derivatives that read like the textbook: exact text and LaTeX for a table of exercises, each
read back against SymPy inside its stated domain; no helper function and no `+ -` in what
`diff` prints; `--exact` and `hessian` against `grad` at points a few ulps from kinks; names
of the source kept; `check --against` through the command line."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nanograd_cli import diff as ng_diff
from nanograd_cli import parse
from nanograd_cli._symbolic import derivatives_text, hessian

from .helpers import in_process, pdflatex
from .oracle import derivative_at, same, value_of

# (source, text, LaTeX, where to sample x: inside the stated domain)
# the notes of digits a textbook form loses (see test_digit_notes.py)
KEEP = "; diff --exact keeps them"
NEAR_1 = "\n# loses digits near |x| = 1 (1 - its square cancels)" + KEEP
# (a note wider than a page's line is broken after its `;`)
LATEX_KEEP = ";" + " \\\\\n" + r"&\qquad \text{diff -{}-exact keeps them}"
LATEX_NEAR_1 = r"\text{loses digits near } \lvert x \rvert \text{ = 1 (1 - its square cancels)}"


def past_355(x: str) -> str:
    return (
        rf"\text{{loses digits for }} \lvert {x} \rvert "
        r"\text{ \textgreater{} 355 (cosh's square overflows)}"
    )


def noted(latex: str, note: str) -> str:
    """A one-line LaTeX derivative with a note under it."""
    lines = [f"\\frac{{df}}{{dx}} &= {latex} \\\\", f"&\\qquad {note}{LATEX_KEEP}"]
    return "\\begin{aligned}\n" + "\n".join(lines) + "\n\\end{aligned}"


EXERCISES = [
    # powers
    ("x**3", "3*x**2", "3 x^{2}", (-3, 3)),
    ("sqrt(x)", "1/(2*sqrt(x))", r"\frac{1}{2 \sqrt{x}}", (0.1, 4)),
    ("1/x**2", "-2/x**3", r"-\frac{2}{x^{3}}", (0.1, 3)),
    (
        "x**n",
        "n*x**(n - 1)\n# x != 0; loses digits where x**(n - 1) is below 2.2e-308 (it rounds "
        "first)" + KEEP,
        "\\begin{aligned}\n\\frac{\\partial f}{\\partial x} &= n x^{n - 1} \\\\\n"
        "&\\qquad \\text{for } x \\neq 0; \\\\\n&\\qquad \\text{loses digits where } x^{n - 1} "
        "\\text{ is below 2.2e-308 (it rounds first)}" + LATEX_KEEP + "\n"
        "\\end{aligned}",
        (0.1, 3),
    ),
    (
        "x**x",
        "x**x*(log(x) + 1)\n# x > 0",
        "\\begin{aligned}\n\\frac{df}{dx} &= x^{x} \\left(\\log(x) + 1\\right) \\\\\n"
        "&\\qquad \\text{for } x > 0\n\\end{aligned}",
        (0.1, 3),
    ),
    # fractional powers: the exponents in fractions, as a textbook has them
    ("x**(2/3)", "2/(3*x**(1/3))", r"\frac{2}{3 x^{\frac{1}{3}}}", (0.1, 3)),
    ("x**(1/3)", "1/(3*x**(2/3))", r"\frac{1}{3 x^{\frac{2}{3}}}", (0.1, 3)),
    ("x**(-1/3)", "-1/(3*x**(4/3))", r"-\frac{1}{3 x^{\frac{4}{3}}}", (0.1, 3)),
    ("x**(1/3)/x", "-2/(3*x**(5/3))", r"-\frac{2}{3 x^{\frac{5}{3}}}", (0.1, 3)),
    ("x**(-1/2)", "-1/(2*x**(3/2))", r"-\frac{1}{2 x^{\frac{3}{2}}}", (0.1, 3)),
    ("x**(7/4)", "7*x**(3/4)/4", r"\frac{7 x^{\frac{3}{4}}}{4}", (0.1, 3)),
    ("x**(3/2)", "3*sqrt(x)/2", r"\frac{3 \sqrt{x}}{2}", (0.1, 3)),
    (
        "(x**2 + 1)**(1/3)",
        "2*x/(3*(x**2 + 1)**(2/3))",
        r"\frac{2 x}{3 {\left(x^{2} + 1\right)}^{\frac{2}{3}}}",
        (-3, 3),
    ),
    ("cbrt(x)", "1/(3*cbrt(x)**2)", r"\frac{1}{3 {\sqrt[3]{x}}^{2}}", (0.1, 3)),
    ("x**0.3", "0.3/x**0.7", r"\frac{0.3}{x^{0.7}}", (0.1, 3)),
    ("1/sqrt(x)", "-1/(2*x**(3/2))", r"-\frac{1}{2 x^{\frac{3}{2}}}", (0.1, 3)),
    (
        "1/sqrt(x**2 + 1)",
        "-x/(x**2 + 1)**(3/2)",
        r"-\frac{x}{{\left(x^{2} + 1\right)}^{\frac{3}{2}}}",
        (-3, 3),
    ),
    ("x**0.7", "0.7/x**0.3", r"\frac{0.7}{x^{0.3}}", (0.1, 3)),
    # powers of functions: no condition where the power rule holds (b is 2)
    ("log(x)**2", "2*log(x)/x", r"\frac{2 \log(x)}{x}", (0.5, 3)),
    (
        "asin(x)**2",
        "2*asin(x)/sqrt(1 - x**2)" + NEAR_1,
        noted(r"\frac{2 \arcsin(x)}{\sqrt{1 - x^{2}}}", LATEX_NEAR_1),
        (-0.9, 0.9),
    ),
    ("log(e**x)", "1", "1", (-3, 3)),
    ("e**(-x**2)", "-2*x*e**(-x**2)", "-2 x e^{-x^{2}}", (-2, 2)),
    # pi and e by name
    ("sin(2*pi*x)", "2*pi*cos(2*pi*x)", r"2 \pi \cos(2 \pi x)", (-1, 1)),
    ("x*pi/4", "pi/4", r"\frac{\pi}{4}", (-1, 1)),
    ("x**pi", "pi*x**(pi - 1)", r"\pi x^{\pi - 1}", (0.1, 3)),
    ("pi**x", "pi**x*log(pi)", r"\pi^{x} \log(\pi)", (-2, 2)),
    ("x*log(e) + x*cos(pi)", "0", "0", (-1, 1)),
    (
        "exp(-x**2/2)/sqrt(2*pi)",
        "-x*exp(-x**2/2)/(sqrt(2)*sqrt(pi))",
        r"-\frac{x e^{-\frac{x^{2}}{2}}}{\sqrt{2} \sqrt{\pi}}",
        (-3, 3),
    ),
    # exponentials, any base
    ("2**x", "2**x*log(2)", r"2^{x} \log(2)", (-3, 3)),
    ("10**x", "10**x*log(10)", r"10^{x} \log(10)", (-2, 2)),
    ("e**x", "e**x", "e^{x}", (-3, 3)),
    ("exp(2*x)", "2*exp(2*x)", "2 e^{2 x}", (-3, 3)),
    ("2**(3*x)", "3*2**(3*x)*log(2)", r"3 \cdot 2^{3 x} \log(2)", (-2, 2)),
    ("x*2**x", "2**x*(x*log(2) + 1)", r"2^{x} \left(x \log(2) + 1\right)", (-3, 3)),
    # logarithms, with bases
    ("log(x)", "1/x", r"\frac{1}{x}", (0.1, 3)),
    ("log(x, 2)", "1/(x*log(2))", r"\frac{1}{x \log(2)}", (0.1, 3)),
    ("log10(x)", "1/(x*log(10))", r"\frac{1}{x \log(10)}", (0.1, 3)),
    ("log2(x)", "1/(x*log(2))", r"\frac{1}{x \log(2)}", (0.1, 3)),
    ("log(x**2 + 1)", "2*x/(x**2 + 1)", r"\frac{2 x}{x^{2} + 1}", (-3, 3)),
    # quotients
    # (no note that x**2 overflows past 1e154 but with --notes all: test_digit_notes.py)
    (
        "sin(x)/x",
        "(x*cos(x) - sin(x))/x**2",
        r"\frac{x \cos(x) - \sin(x)}{x^{2}}",
        (0.1, 3),
    ),
    # chains
    ("sin(x**2)", "2*x*cos(x**2)", r"2 x \cos(x^{2})", (-2, 2)),
    ("exp(sin(x))", "cos(x)*exp(sin(x))", r"\cos(x) e^{\sin(x)}", (-3, 3)),
    ("sqrt(1 + x**2)", "x/sqrt(x**2 + 1)", r"\frac{x}{\sqrt{x^{2} + 1}}", (-3, 3)),
    (
        "cos(3*x + 1)**2",
        "-6*cos(3*x + 1)*sin(3*x + 1)",
        r"-6 \cos(3 x + 1) \sin(3 x + 1)",
        (-2, 2),
    ),
    # inverse trigonometric
    (
        "asin(x)",
        "1/sqrt(1 - x**2)" + NEAR_1,
        noted(r"\frac{1}{\sqrt{1 - x^{2}}}", LATEX_NEAR_1),
        (-0.9, 0.9),
    ),
    (
        "acos(x)",
        "-1/sqrt(1 - x**2)" + NEAR_1,
        noted(r"-\frac{1}{\sqrt{1 - x^{2}}}", LATEX_NEAR_1),
        (-0.9, 0.9),
    ),
    ("atan(x)", "1/(x**2 + 1)", r"\frac{1}{x^{2} + 1}", (-3, 3)),
    ("atan(2*x)", "2/(4*x**2 + 1)", r"\frac{2}{4 x^{2} + 1}", (-3, 3)),
    ("hypot(x, 3)", "x/hypot(x, 3)", r"\frac{x}{\operatorname{hypot}(x, 3)}", (-3, 3)),
    ("atan2(3, x)", "-3/(x**2 + 9)", r"-\frac{3}{x^{2} + 9}", (-3, 3)),
    ("asinh(x)", "1/sqrt(x**2 + 1)", r"\frac{1}{\sqrt{x^{2} + 1}}", (-3, 3)),
    # special functions, and numbers that cancel
    ("erfinv(erf(x))", "exp(erfinv(erf(x))**2 - x**2)", None, (-2, 2)),
    ("x*sqrt(pi)/sqrt(pi)", "1", "1", (-3, 3)),
    ("sqrt(2)**x", "sqrt(2)**x*log(sqrt(2))", r"{\sqrt{2}}^{x} \log(\sqrt{2})", (-3, 3)),
    (
        "lgamma(x)*x",
        "x*digamma(x) + lgamma(x)",
        r"x \psi(x) + \log\left|\Gamma(x)\right|",
        (0.5, 3),
    ),
    ("polygamma(1, x**2)", "2*x*polygamma(2, x**2)", r"2 x \psi^{(2)}(x^{2})", (0.5, 3)),
    (
        "x*erfinv(x)",
        "sqrt(pi)*x*exp(erfinv(x)**2)/2 + erfinv(x)",
        r"\frac{\sqrt{\pi} x e^{{\operatorname{erf}^{-1}(x)}^{2}}}{2} + \operatorname{erf}^{-1}(x)",
        (-0.9, 0.9),
    ),
    # hyperbolic
    ("sinh(x)", "cosh(x)", r"\cosh(x)", (-3, 3)),
    ("cosh(x)", "sinh(x)", r"\sinh(x)", (-3, 3)),
    (
        "tanh(x)",
        "1/cosh(x)**2\n# loses digits for |x| > 355 (cosh's square overflows)" + KEEP,
        noted(r"\frac{1}{{\cosh(x)}^{2}}", past_355("x")),
        (-3, 3),
    ),
    (
        "tanh(x**2)",
        "2*x/cosh(x**2)**2\n# loses digits for |x**2| > 355 (cosh's square overflows)" + KEEP,
        noted(r"\frac{2 x}{{\cosh(x^{2})}^{2}}", past_355("x^{2}")),
        (-2, 2),
    ),
    (
        "sigmoid(x)",
        "sigmoid(x)*(1 - sigmoid(x))\n"
        "# loses digits as x grows, all past 37 (where sigmoid rounds to 1)" + KEEP,
        None,
        (-3, 3),
    ),
    # products of three factors
    (
        "x*sin(x)*exp(x)",
        "exp(x)*(x*cos(x) + x*sin(x) + sin(x))",
        r"e^{x} \left(x \cos(x) + x \sin(x) + \sin(x)\right)",
        (-3, 3),
    ),
    (
        "x**2*log(x)*cos(x)",
        "x*log(x)*(2*cos(x) - x*sin(x)) + x*cos(x)",
        r"x \log(x) \left(2 \cos(x) - x \sin(x)\right) + x \cos(x)",
        (0.1, 3),
    ),
    # programs with names
    (
        "z = w*x + b\np = sigmoid(z)\nloss = (p - y)**2",
        "p = sigmoid(w*x + b)\n2*w*p*(y - p)*(p - 1)\n"
        "# loses digits as w*x + b grows, all past 37 (where sigmoid rounds to 1)" + KEEP,
        "\\begin{aligned}\np &= \\operatorname{sigmoid}(w x + b) \\\\\n"
        "\\frac{\\partial \\mathrm{loss}}{\\partial x} &= "
        "2 w p \\left(y - p\\right) \\left(p - 1\\right) \\\\\n"
        r"&\qquad \text{loses digits as } w x + b \text{ grows, all past 37 (where sigmoid "
        r"rounds to 1)}" + LATEX_KEEP + "\n\\end{aligned}",
        (-3, 3),
    ),
    (
        "z = 2*x + 2 + x\nq = relu(z) + z*x\nh = relu(z*z)\ny = h + q + q*x",
        "z = 2*x + 2 + x\nz*(2*x + 6*step(z*z) + 1) + 3*(x + 1)*(x + step(z)) + relu(z)",
        "\\begin{aligned}\nz &= 2 x + 2 + x \\\\\n"
        "\\frac{dy}{dx} &= z \\left(2 x + 6 \\operatorname{step}(z z) + 1\\right) "
        "+ 3 \\left(x + 1\\right) \\left(x + \\operatorname{step}(z)\\right) \\\\\n"
        "&\\quad {} + \\operatorname{relu}(z)\n\\end{aligned}",
        (-3, 3),
    ),
    (  # a name used once is written out where it is used
        "u = x**2 + 1\nv = log(u)*u\nv",
        "2*x*(log(x**2 + 1) + 1)",
        r"2 x \left(\log(x^{2} + 1) + 1\right)",
        (-3, 3),
    ),
]
OTHERS = {"n": 2.5, "w": 0.7, "b": -0.3, "y": 0.4}
HELPERS = re.compile(r"\b(powlog|step|sign)\(")


def diff(source: str, latex: bool = False, exact: bool = False) -> str:
    return derivatives_text(parse(source), ["x"], latex, exact)


@pytest.mark.parametrize(("source", "text", "latex", "domain"), EXERCISES)
def test_the_textbook_exercises(source, text, latex, domain):
    assert diff(source) == text
    if latex is not None:
        assert diff(source, latex=True) == latex
    kinked = "relu" in source
    assert kinked or not HELPERS.search(text)
    assert "+ -" not in text and "+ -" not in diff(source, latex=True)


@pytest.mark.parametrize(("source", "text", "latex", "domain"), EXERCISES)
def test_the_printed_derivatives_are_sympys_inside_their_domains(source, text, latex, domain):
    """Read back as grad reads a source (the comment is a comment), at points inside the
    stated domain, each printed derivative is SymPy's to 1e-12."""
    program = parse(source)
    low, high = domain
    for k in range(7):
        point = {n: OTHERS.get(n, 0.0) for n in program.inputs}
        point["x"] = low + (high - low) * (k + 0.5) / 7
        if "relu" in source and abs(3 * point["x"] + 2) < 1e-3:
            continue
        exact = derivative_at(program, "x", point)
        ours = value_of(text, point)
        assert ours == pytest.approx(exact, rel=1e-12, abs=1e-12), (source, point, ours, exact)


@pytest.mark.slow
def test_the_textbook_latex_compiles(tmp_path):
    body = [rf"\[ {diff(source, latex=True)} \]" for source, *_ in EXERCISES]
    body += [rf"\[ {derivatives_text(parse(source), [], True)} \]" for source, *_ in EXERCISES]
    assert pdflatex(tmp_path, "\n".join(body)).stat().st_size > 0


def test_the_exact_form_keeps_the_helpers_and_the_engines_edge_cases():
    assert diff("x**x", exact=True) == (
        "t1 = where(x - 1 == round(x - 1), floor((x - 1)/2), (x - 1)/2)\n"
        "where((x == 0)*(x == 0), 0, where((abs(x*x**(x - 1)) < 2.2250738585072014e-308)"
        "*(x != 0)*(x - x == 0), x*x**t1*x**(x - 1 - t1), x*x**(x - 1))) + powlog(x, x)"
    )
    for point in ({"x": 0.0, "y": 0.0}, {"x": 0.0, "y": 2.0}, {"x": 2.0, "y": 0.0}):
        grads = parse("x**y").grad(point).gradients
        for name in ("x", "y"):
            text = derivatives_text(parse("x**y"), [name], exact=True)
            assert same(value_of(text, point), grads[name]), (point, name)


# Random sources of smooth functions and powers with variable bases and exponents.
_LEAVES = st.sampled_from(["x", "y", "2", "0.5", "3", "e"])


def _extend(inner):
    return st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(st.sampled_from(["sin", "exp", "log", "tanh", "sigmoid", "sqrt"]), inner).map(
            lambda t: f"{t[0]}({t[1]})"
        ),
        inner.map(lambda e: f"-{e}"),
    )


SMOOTH = st.recursive(_LEAVES, _extend, max_leaves=8)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(SMOOTH)
@example("-((e - 3) ** x)")  # a base <= 0 that is an expression: powlog(e - 3, x)
@example("((x - x) ** x)")  # a base that is 0 wherever x is finite: powlog(x - x, x)
def test_no_helper_and_no_plus_minus_in_what_diff_prints(source):
    """But for a power of a number <= 0 by a variable exponent (`0**x`), which no textbook
    form equals anywhere: that keeps the exact form (its base is a number, or an expression
    whose value is <= 0, such as x - x)."""
    program = parse(source)
    for latex in (False, True):
        text = derivatives_text(program, [], latex)
        assert "+ -" not in text and "- -" not in text, text
        if latex:
            continue
        helpers = re.findall(r"(?:powlog|step|sign)\((.*?)[,)]", text)
        exact_only = re.findall(r"powlog\((.*?),", text)
        assert all(
            value_of(base, dict.fromkeys(parse(base).inputs, 1.3)) <= 0 for base in exact_only
        ), text
        assert len(helpers) <= 2 * len(exact_only), text


# Sources with kinks whose argument a simplification could round differently: the kink of
# relu(p*x + q + r*x) is at x = -q/(p + r).
KINKED = [
    "z = {p}*x + {q} + {r}*x\nrelu(z) + z*x + relu(z*z)*x",
    "abs({p}*x + {q} + {r}*x)*x",
    "max({p}*x + {q}, -{r}*x)*x + floor({p}*x + {q} + {r}*x)",
    "z = {p}*x + {q} + {r}*x\nq = relu(z) + z*x\nh = relu(z*z)\ny = h + q + q*x",
    "step({p}*x + {q} + {r}*x)*x**2 + sign(x*{p} + {q} + {r}*x)*x",
]
COEFFICIENTS = st.sampled_from([1, 2, 3, 0.1, 0.3, 0.7, 1.1, 5, 7, 0.2])


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(st.sampled_from(KINKED), COEFFICIENTS, COEFFICIENTS, COEFFICIENTS, st.integers(-4, 4))
def test_exact_round_trip_and_hessian_are_grads_next_to_kinks(template, p, q, r, ulps):
    """Within a few ulps of a kink, the `--exact` derivative read back is grad's (the point
    falls on the side of the kink it falls on in the engine), the textbook one too, and
    hessian's row is the derivative of the printed derivative. (To 1e-9, relative or
    absolute: a point on the wrong side of a kink is off by a step, not by rounding.)"""
    source = template.format(p=p, q=q, r=r)
    program = parse(source)
    x = -q / (p + r)
    for _ in range(abs(ulps)):
        x = math.nextafter(x, math.copysign(math.inf, ulps))
    point = {"x": x}
    expected = program.grad(point).gradients["x"]
    for exact in (True, False):
        text = derivatives_text(program, ["x"], exact=exact)
        assert close(value_of(text, point), expected), (source, x, text, exact)
    text = derivatives_text(program, ["x"], exact=True)
    second = parse(text).grad(point).gradients["x"]
    assert close(hessian(program, point).hessian["x"]["x"], second), (source, x)


def close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-9)


def test_micrograds_sanity_check_at_the_kink():
    source = "z = 2*x + 2 + x\nq = relu(z) + z*x\nh = relu(z*z)\ny = h + q + q*x"
    point = {"x": -0.6666666666666666}
    program = parse(source)
    assert program.grad(point).gradients["x"] == pytest.approx(1 / 3)
    for exact in (True, False):
        text = derivatives_text(program, ["x"], exact=exact)
        assert value_of(text, point) == pytest.approx(1 / 3)
    assert hessian(program, point).hessian["x"]["x"] == 22.0


SIGMOID_NOTE = (
    "# loses digits as w*x + b grows, all past 37 (where sigmoid rounds to 1)" + KEEP + "\n"
)


def test_names_of_the_source_are_kept_and_only_unnamed_repeats_are_named_anew():
    text = derivatives_text(parse("z = w*x + b\np = sigmoid(z)\nloss = (p - y)**2"), [])
    assert text == (
        "p = sigmoid(w*x + b)\n"
        "d_w = 2*x*p*(y - p)*(p - 1)\n"
        + SIGMOID_NOTE
        + "d_x = 2*w*p*(y - p)*(p - 1)\n"
        + SIGMOID_NOTE
        + "d_b = 2*p*(y - p)*(p - 1)\n"
        + SIGMOID_NOTE
        + "d_y = 2*(y - p)"
    )
    formulas = [line for line in text.splitlines() if not line.startswith("#")]
    assert "t1" not in text and "\n".join(formulas).count("sigmoid") == 1
    # a name used once is written out; a name bound twice is not restated
    assert derivatives_text(parse("u = x*y; exp(u)"), ["x"]) == "y*exp(x*y)"
    assert not derivatives_text(parse("q = x + y; q += 1; q*q*q"), ["x"]).startswith("q")


def test_check_against_a_formula_through_the_command_line():
    done = in_process("check", "x**x", "--against", "x**x*(log(x) + 1)", "--x", "0.1:3")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.splitlines()[1].split()[:5] == ["x", "x**x*(log(x)", "+", "1)", "101"]
    done = in_process("check", "x**x", "--against", "x**x*log(x)", "--x", "0.5:2:4")
    assert done.returncode == 1
    assert done.stderr == (
        "error: the formula for d/dx differs from the engine's derivative at 4 of 4 points\n"
    )
    assert "first points where they differ" in done.stdout and "0.5" in done.stdout
    two = ["x*y + sin(x)", "--against", "x=y + cos(x)", "--against", "y=x", "--x", "1"]
    done = in_process("check", *two, "--y", "-2:2:5", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert '"pass": true' in done.stdout and '"points": 5' in done.stdout
    done = in_process("check", "x*y", "--against", "d_x = y", "--x", "1", "--y", "2")
    assert done.returncode == 0, done.stderr  # diff's d_x = ... is the derivative by x
    done = in_process("check", "x*y", "--against", "x", "--x", "1", "--y", "2", "--wrt", "x")
    assert done.returncode == 1  # d/dx is y, not x
    for bad in (["--against", "y"], ["--against", "x=z"], ["--against", "x=y", "--against", "x=1"]):
        done = in_process("check", "x*y", *bad, "--x", "1", "--y", "2")
        assert done.returncode == 2 and done.stderr.startswith("error:"), (bad, done.stderr)


def test_a_formula_that_is_nan_where_the_engine_is_not_makes_the_largest_error_nan():
    args = ["check", "x**2", "--against", "2*x + 0*log(x)", "--x", "-1:1:5"]
    done = in_process(*args, "--format", "json")
    assert done.returncode == 1
    check = json.loads(done.stdout)["checks"]["x"]
    assert (check["differ"], check["max_abs_error"]) == (3, "nan")  # -1, -0.5 and 0
    assert check["first"][0] == {
        "inputs": {"x": -1.0},
        "engine": -2.0,
        "formula": "nan",
        "abs_error": "nan",
    }
    done = in_process(*args, "--format", "csv")
    assert done.stdout.splitlines()[1] == "x,2*x + 0*log(x),5,0,3,NaN,false"
    done = in_process("check", "exp(x)", "--against", "exp(x)", "--x", "700:720:3")
    assert done.returncode == 0  # inf where both are inf: no error
    assert done.stdout.splitlines()[1].split()[-2:] == ["0.0", "yes"]


def test_dy_over_dx_in_a_source_gets_a_note_that_says_what_diff_does():
    done = in_process("diff", "y = x**2; dy/dx")
    assert done.returncode == 0 and done.stdout.startswith("d_x = 0\n")
    assert done.stderr == (
        "note: dy and dx are inputs here; the derivative of y by x is what nanograd diff "
        "prints with --wrt x\n"
    )
    assert in_process("diff", "x**2 + dx", "--wrt", "x").stderr == ""  # one such name: no note
    alone = in_process("diff", "dy/dx")
    assert (alone.returncode, alone.stdout) == (
        0,
        "d_dy = 1/dx\nd_dx = -dy/dx**2\n",
    )
    assert alone.stderr == (
        "note: dy and dx are inputs here; for the derivative of y by x, give y itself and --wrt x\n"
    )


@pytest.mark.parametrize(
    ("source", "printed", "note"),
    [
        ("sinx", "1\n", "sinx is an input here, a name of its own; for sin of x, write sin(x)"),
        ("x*sinx", "d_x = sinx\nd_sinx = x\n", "for sin of x, write sin(x)"),
        ("lnx + x**2", "d_lnx = 1\nd_x = 2*x\n", "for log of x, write log(x)"),
        ("sqrty*y", "d_sqrty = y\nd_y = sqrty\n", "for sqrt of y, write sqrt(y)"),
        ("sinx*cosx", "d_sinx = cosx\nd_cosx = sinx\n", "for sin of x, write sin(x)"),
        ("sin2x", "1\n", "for sin of 2*x, write sin(2*x)"),
        ("stepz**2", "2*stepz\n", None),  # (step is no function of a course)
        ("x*cos(x)", "cos(x) - x*sin(x)\n", None),
        ("tanh2*x", "d_tanh2 = x\nd_x = tanh2\n", None),  # (2 is no name)
    ],
)
def test_a_function_glued_to_its_argument_is_an_input_and_diff_says_so(source, printed, note):
    """A student's `x*sinx` is the product of the inputs x and sinx, whose derivative by x is
    sinx: right, and not what was meant, so a note says how to write sin of x."""
    done = in_process("diff", source)
    assert (done.returncode, done.stdout) == (0, printed)
    if note is None:
        assert done.stderr == ""
    else:
        assert done.stderr.startswith("note: ") and done.stderr.rstrip("\n").endswith(note)
        with pytest.warns(Warning, match=re.escape(note)):
            ng_diff(source)


def test_check_against_reads_diffs_output_says_nothing_of_no_mismatch_and_is_strict_over_ranges():
    formula = in_process("diff", "x**x", "--wrt", "x").stdout  # with its `# x > 0` line
    done = in_process("check", "x**x", "--against", formula, "--x", "0.5:2")
    assert done.returncode == 0
    assert done.stdout.splitlines()[1].split()[:5] == ["x", "x**x*(log(x)", "+", "1)", "101"]
    done = in_process("check", "sqrt(x)", "--against", "1/(2*sqrt(x))", "--x", "-2:-1")
    assert (done.returncode, len(done.stdout.splitlines())) == (1, 2)  # no empty table
    assert done.stderr == (
        "error: the source or its derivative by x is nan at every point: the range is outside "
        "its domain\n"
    )
    args = ["check", "log(x)", "--against", "1/x", "--x", "-1:1:5"]
    assert in_process(*args).returncode == 0  # the nan points are left out
    done = in_process(*args, "--strict")
    assert (done.returncode, done.stderr.splitlines()[0]) == (
        1,
        "error: line 1, column 1: log gave nan at x = -1.0",  # the point of the range
    )


@pytest.mark.parametrize(
    ("against", "message"),
    [
        ("X=2*x", "error: 'X=2*x': X names no input of the source (x)"),
        ("", "error: --against '': the formula is empty"),
        ("# x > 0", "error: --against '# x > 0': the formula is empty"),
        (
            "2x",
            "error: --against '2x': line 1, column 2: missing operator between '2' and 'x': "
            "write 2*x",
        ),
    ],
)
def test_a_formula_for_no_input_or_that_does_not_parse_is_bad_input(against, message):
    done = in_process("check", "x**2", "--against", against, "--x", "1")
    assert (done.returncode, done.stdout, done.stderr.splitlines()[0]) == (2, "", message)


@pytest.mark.parametrize(
    ("source", "printed"),
    [
        ("hypot(x, y)", "d_x = x/hypot(x, y)\n{}d_y = y/hypot(x, y)\n{}"),
        ("hypot(y, x)", "d_y = y/hypot(y, x)\n{}d_x = x/hypot(y, x)\n{}"),
        ("hypot(3, x)", "x/hypot(3, x)\n"),  # (never subnormal: no note)
        (  # (2*x**3 overflows where hypot(x**2, y) does not)
            "hypot(x**2, y)",
            "d_x = 2*x**3/hypot(x**2, y)\n# loses digits where hypot(x**2, y) overflows or is "
            "subnormal and where x**3 overflows or underflows"
            + KEEP
            + "\nd_y = y/hypot(x**2, y)\n{}",
        ),
    ],
)
def test_hypots_derivative_is_written_with_the_sources_hypot(source, printed):
    """Each derivative of hypot divides by the function as the source wrote it, its
    arguments in their order (d/dy of hypot(x, y) was y/hypot(y, x)), in --steps, explain's
    local column and LaTeX too; read back it is grad's, and --exact is the engine's form."""
    note = f"# loses digits where {source} overflows or is subnormal" + KEEP + "\n"
    result = in_process("diff", source, "--notes", "all")
    assert (result.returncode, result.stdout) == (0, printed.format(note, note)), result.stderr
    calls = re.compile(r"hypot\((?:[^()]|\([^()]*\))*\)")
    for form in ("--steps", "--order=1"):
        shown = in_process("diff", source, form).stdout
        # (and the chain rule's hypot(u, v) in general)
        assert set(calls.findall(shown)) - {"hypot(u, v)"} == {source}, (form, shown)
    latex = in_process("diff", source, "--format", "latex").stdout
    swapped = ", ".join(reversed(source[len("hypot(") : -1].split(", ")))
    assert rf"\operatorname{{hypot}}({swapped})" not in latex, latex
    program = parse(source)
    point = {n: v for n, v in {"x": 0.3, "y": -1.7}.items() if n in program.inputs}
    for name in program.inputs:
        engine = program.grad(point).gradients[name]
        text = derivatives_text(program, [name])
        assert value_of(text, point) == pytest.approx(engine, rel=1e-15)
        exact = derivatives_text(program, [name], exact=True)
        assert "where(" in exact and same(value_of(exact, point), engine)


def test_explain_writes_hypots_local_derivatives_with_its_hypot():
    explained = in_process("explain", "hypot(x, y)", "--x", "3", "--y", "4").stdout
    assert "x/hypot(x, y)  0.6" in explained and "y/hypot(x, y)  0.8" in explained, explained
    assert "hypot(y, x)" not in explained


def test_a_power_of_a_nan_number_is_written_as_a_textbook_writes_it():
    """log(-2) is nan: both forms are nan everywhere, so the textbook one, not a helper."""
    assert diff("(-log(-2) ** x)") == "-log(-2)**x*log(log(-2))"


# Products, quotients and powers of the trigonometric functions, whose textbook forms are
# rewritten most (tan(a) as sin(a)/cos(a) and back, 1/cos(a)**2 as sec(a)**2, sin**2 + cos**2).
_TRIG = st.sampled_from(["sin", "cos", "tan", "sec", "csc", "cot"])
_ANGLE = st.sampled_from(["x", "2*x", "x + 1"])
_TRIG_TERM = st.tuples(_TRIG, _ANGLE, st.sampled_from(["", "**2", "**3", "**-1"])).map(
    lambda t: f"{t[0]}({t[1]}){t[2]}"
)
TRIG = st.tuples(_TRIG_TERM, st.sampled_from(["*", "/", " + ", " - "]), _TRIG_TERM).map(
    lambda t: f"{t[0]}{t[1]}{t[2]}"
) | st.tuples(_TRIG_TERM, _TRIG_TERM, _TRIG_TERM).map(lambda t: f"log(abs({t[0]} + {t[1]}))*{t[2]}")


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(TRIG, st.sampled_from([1, 2]))
@example("cot(x)*sin(x)", 2)  # (read as a sum of its factors: cos(x) - 1)
@example("csc(x)**2*sin(x)", 1)
def test_trigonometric_textbook_forms_are_the_engines_derivative(source, order):
    """The textbook form against the engine's (`--exact`), read back at points where that
    is a number: the rewrites of sines, cosines and their reciprocals change no value."""
    assert_textbook_is_exact(source, order, (0.3, 0.7, 1.1, -0.4, 2.0, -2.5), rel=1e-7)


def assert_textbook_is_exact(source: str, order: int, at: tuple[float, ...], rel: float):
    """The textbook form of the `order`-th derivative by x is the engine's (`--exact`), read
    back, to `rel`, at each x of `at` where that is an ordinary number."""
    program = parse(source)
    textbook = derivatives_text(program, ["x"], order=order, notes="none")
    exact = derivatives_text(program, ["x"], order=order, exact=True)
    for x in at:
        engine = value_of(exact, {"x": x})
        if math.isfinite(engine) and abs(engine) < 1e12:
            assert value_of(textbook, {"x": x}) == pytest.approx(engine, rel=rel, abs=1e-9), x


def test_a_source_with_a_number_glued_to_a_name_after_a_division_is_no_file_name():
    """1/2x reads as a path (a / in it), but is an expression with 2x in it: the message says
    how to write it, not that there is no such file."""
    done = in_process("diff", "1/2x")
    assert (done.returncode, done.stderr.splitlines()[0]) == (
        2,
        "error: line 1, column 4: missing operator between '2' and 'x': write (2*x): after /, "
        "2*x divides by 2 alone",
    )
    assert in_process("diff", "model/2.txt").stderr == "error: no such file: model/2.txt\n"


# Sums with powers whose bases and exponents both vary, which logarithmic differentiation
# writes with a**b taken out of the power rule's a**(b - 1) beside it.
_BASE = st.sampled_from(["x", "sin(x)", "(x**2 + 1)", "log(x)", "(x + 1)", "sqrt(x)", "exp(x)"])
_EXPONENT = st.sampled_from(["x", "sin(x)", "1/x", "x**2", "(x - 1)", "log(x)"])
_POWER = st.tuples(_BASE, _EXPONENT).map(lambda t: f"{t[0]}**{t[1]}")
POWERS = st.tuples(_POWER, st.sampled_from(["", " + ", "*", " - 1/"]), _BASE).map(
    lambda t: t[0] + (f"{t[1]}{t[2]}" if t[1] else "")
)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(POWERS, st.sampled_from([1, 2]))
@example("(x**2 + 1)**(x - 1) + (x + 1)/x", 2)  # (a number in the sum was taken out too)
def test_powers_with_varying_exponents_are_the_engines_derivative(source, order):
    assert_textbook_is_exact(source, order, (0.3, 0.7, 1.3, 2.2), rel=1e-8)
