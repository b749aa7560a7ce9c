"""`diff --steps` (the derivation, a rule a line) and `diff --implicit` (dy/dx of an equation):
each step's claimed equality and the result against SymPy, implicit derivatives against
sympy.idiff, the three formats, LaTeX through pdflatex, the three doors, and bad input."""

from __future__ import annotations

import random
import re

import pytest

import nanograd_cli
from nanograd_cli._session import Session

from .helpers import in_process, nanograd, overfull, pdflatex

sympy = pytest.importorskip("sympy")

X, Y = sympy.symbols("x y")
# Points where every source below is defined (x > 0 for logs, powers and square roots).
POINTS = [0.37, 0.81, 1.3, 2.2]

SOURCES = [
    "x**2*sin(x)",
    "sin(x**2)",
    "(3*x+2)/(5*x-7)",
    "(x + 1)/(x - 1)",
    "x**x",
    "2**x + e**(2*x)",
    "sqrt(1 + x**2)*exp(-x)",
    "x*x*x",
    "-x**2/2 + 3*x - 1",
    "x**(1/2) - 1/x**2",
    "log(x, 2) + log(cos(x)**2 + 1)",
    "tanh(3*x)*sigmoid(x)",
    "atan(x**2)/(1 + x)",
    "sq(t) = t*t; p = sin(x); sq(p) + p/x",
    "exp(sin(x))**3",
    "pow(x, 3) + tan(2*x)",
    "pi*x**e + x**pi + x**2.5",
    "(x**2 + 1)**(1/3) + x**(2/3)*sin(x)",
    "2**-x + relu(x - 3)",
]


def sym(text: str, name: str = "x"):
    """A line's expression, `d/dx [u]` read as the derivative of u."""
    text = re.sub(rf"d/d{name} \[", "D(", text).replace("]", ")")
    by = sympy.Symbol(name)
    names = {
        "x": X,
        "y": Y,
        "e": sympy.E,
        "pi": sympy.pi,
        "D": lambda u: sympy.diff(u, by),
        "log": lambda a, b=None: sympy.log(a) if b is None else sympy.log(a) / sympy.log(b),
        "sigmoid": lambda a: 1 / (1 + sympy.exp(-a)),
        "pow": lambda a, b: a**b,
        "relu": lambda a: sympy.Max(a, 0),
        "step": sympy.Heaviside,
    }
    return sympy.sympify(text, locals=names)


def program(text: str):
    """The result of a derivative printed as a program (t1 = ... lines, then it)."""
    bound: dict = {}
    result = None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name, equals, rest = line.partition(" = ")
        if equals and re.fullmatch(r"t[0-9]+", name):
            bound[sympy.Symbol(name)] = sym(rest).subs(bound)
        else:
            result = sym(line).subs(bound)
    return result


def close(a, b, at: dict) -> bool:
    u, v = complex(a.subs(at).evalf()), complex(b.subs(at).evalf())
    return abs(u - v) <= 1e-9 * max(1.0, abs(v))


def lines(text: str) -> tuple[list[tuple[str, str, str]], str]:
    """The steps (part, what it gives, rule) and the result of one derivation's text."""
    steps, result = [], None
    for line in text.splitlines():
        if line.startswith("= "):
            result = line[2:]
        elif line.startswith("# "):
            continue
        else:
            said, rule = line.split("    (", 1)
            part, gives = said.rstrip().split(" = ", 1)
            assert part.startswith("d/dx [") and part.endswith("]"), line
            steps.append((part[6:-1], gives, rule[:-1]))
    assert result is not None, text
    return steps, result


@pytest.mark.parametrize("source", SOURCES)
def test_each_step_and_the_result_agree_with_sympy(source):
    text = nanograd_cli.diff(source, "x", steps=True)
    steps, result = lines(text)
    whole = sym(steps[0][0])
    for part, gives, rule in steps:
        claimed, truth = sym(gives), sympy.diff(sym(part), X)
        for x in POINTS:
            assert close(claimed, truth, {X: x}), (source, part, gives, rule, x)
    for x in POINTS:
        assert close(sym(result), sympy.diff(whole, X), {X: x}), (source, result)
    # every derivative still to be taken is the left side of a line of its own
    derived = {part for part, _, _ in steps}
    for _, gives, _ in steps:
        for inner in re.findall(r"d/dx \[([^\]]*)\]", gives):
            assert inner in derived, (source, inner)


@pytest.mark.parametrize("source", [s for s in SOURCES if ";" not in s])
def test_the_result_is_what_diff_prints(source):
    text = nanograd_cli.diff(source, "x", steps=True)
    plain = str(nanograd_cli.diff(source, "x")).splitlines()
    ending = text.splitlines()[-len(plain) :]
    assert ending == ["= " + plain[0], *plain[1:]]


def test_the_rules_are_named_for_a_student():
    assert nanograd_cli.diff("x**2*sin(x)", "x", steps=True) == (
        "d/dx [x**2*sin(x)] = d/dx [x**2]*sin(x) + x**2*d/dx [sin(x)]    (product rule)\n"
        "d/dx [x**2] = 2*x                                               (power rule)\n"
        "d/dx [sin(x)] = cos(x)                                          (sin rule)\n"
        "= x**2*cos(x) + 2*x*sin(x)"
    )
    rules = {
        "sin(x**2)": "chain rule: d/dx sin(u) = cos(u)*u'",
        "(x+1)/(x-1)": "quotient rule",
        "3*x": "constant factor rule",
        "2**x": "exponential rule",
        "x**x": "general power rule: d/dx u**v = u**v*(v'*log(u) + v*u'/u)",
        "(2*x+1)**3": "chain rule: d/dx u**n = n*u**(n - 1)*u'",
        "x - 1": "difference rule",
        "x + 1": "sum rule",
        "tanh(x)": "tanh rule",
        "x + 2*y": "sum rule",
    }
    for source, rule in rules.items():
        steps, _ = lines(nanograd_cli.diff(source, "x", steps=True))
        assert steps[0][2] == rule, source


def test_a_fractional_exponent_less_one_is_a_fraction_on_every_line():
    """1/3 - 1 in floats is -0.6666666666666667, which no fraction rounds to: the power
    rule's line wrote it so, and only the result as -2/3."""
    assert (
        nanograd_cli.diff("(x**2+1)**(1/3)", "x", steps=True)
        .splitlines()[0]
        .startswith("d/dx [(x**2 + 1)**(1/3)] = 1/3*(x**2 + 1)**(-2/3)*d/dx [x**2 + 1]")
    )
    for source, line in [("x**(1/3)", "1/(3*x**(2/3))"), ("x**(1/7)", "1/(7*x**(6/7))"),
                         ("x**(2/3)", "2/(3*x**(1/3))"), ("x**0.7", "0.7/x**0.3")]:  # fmt: skip
        first = nanograd_cli.diff(source, "x", steps=True).splitlines()[0]
        assert first.split(" = ")[1].split("    ")[0] == line, source


def test_a_function_s_rule_is_its_ops_table_row_s():
    from nanograd_cli._ops import OPS

    assert OPS["*"].rule == "product rule" and OPS["/"].rule == "quotient rule"
    assert OPS["erf"].rule == "erf rule"
    steps, _ = lines(nanograd_cli.diff("erf(x)", "x", steps=True))
    assert steps[0][2] == "erf rule"


def test_one_derivation_per_name():
    text = nanograd_cli.diff("x*y + exp(x*y)", steps=True)
    by_x, by_y = text.split("\n\n")
    assert by_x.startswith("d/dx [x*y + exp(x*y)]") and by_y.startswith("d/dy [x*y + exp(x*y)]")
    for x, y in [(0.3, 1.7), (1.1, -0.4)]:
        at = {X: x, Y: y}
        whole = sympy.sympify("x*y + exp(x*y)", locals={"x": X, "y": Y})
        assert close(sym(by_y.splitlines()[-1][2:]), sympy.diff(whole, Y), at)
        for line in by_y.splitlines()[:-1]:
            said = line.split("    (")[0].rstrip()
            part, gives = said.split(" = ", 1)
            assert close(sym(gives, "y"), sympy.diff(sym(part[6:-1]), Y), at)


def test_markdown_is_a_numbered_list_and_the_result():
    assert nanograd_cli.diff("sin(x**2)", "x", steps=True, format="markdown") == (
        "1. `d/dx [sin(x**2)] = cos(x**2)*d/dx [x**2]` (chain rule: `d/dx sin(u) = cos(u)*u'`)\n"
        "2. `d/dx [x**2] = 2*x` (power rule)\n"
        "\n"
        "Result: `d/dx [sin(x**2)] = 2*x*cos(x**2)`"
    )
    where = nanograd_cli.diff("x**x", "x", steps=True, format="markdown")
    assert where.endswith("Result: `d/dx [x**x] = x**x*(log(x) + 1)`, where `x > 0`")


@pytest.mark.slow
@pytest.mark.parametrize(
    "source", ["x**2*sin(x)", "sin(x**2)/x", "x**x", "sqrt(x)*exp(2*x)", "x*y + tanh(y)"]
)
def test_latex_compiles_without_overfull_lines(tmp_path, source):
    done = nanograd("diff", source, "--steps", "--format", "latex")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("\\begin{aligned}\n")
    pdflatex(tmp_path, f"\\[\n{done.stdout}\\]")
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert "Overfull" not in log, log[-2000:]


def test_three_doors_say_the_same():
    cli = in_process("diff", "x**3 + sin(2*x)", "--wrt", "x", "--steps", "--format", "latex")
    assert cli.returncode == 0
    python = nanograd_cli.diff("x**3 + sin(2*x)", "x", steps=True, format="latex")
    reply = Session().run(":diff x**3 + sin(2*x) wrt x steps format latex")
    assert cli.stdout == str(python) + "\n" == reply.text() + "\n"
    implicit = in_process("diff", "x**2 + y**2 == 25", "--implicit", "y", "--wrt", "x")
    assert implicit.stdout == "-x/y\n"
    assert str(nanograd_cli.diff("x**2 + y**2 == 25", "x", implicit="y")) == "-x/y"
    assert Session().run(":diff x**2 + y**2 == 25 implicit y wrt x").text() == "-x/y"


def test_the_installed_command_prints_each_format():
    for fmt, first in [
        ("text", "d/dx [x**2*sin(x)] = "),
        ("markdown", "1. `d/dx [x**2*sin(x)] = "),
        ("latex", "\\begin{aligned}"),
    ]:
        done = nanograd("diff", "x**2*sin(x)", "--steps", "--format", fmt)
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.startswith(first)
    done = nanograd("diff", "x**3 + y**3 == 6*x*y", "--implicit", "y", "--wrt", "x")
    assert (done.returncode, done.stdout, done.stderr) == (0, "(2*y - x**2)/(y**2 - 2*x)\n", "")


@pytest.mark.parametrize(
    "args, message",
    [
        (["x**2", "--steps", "--order", "2"], "--steps writes the first derivative"),
        (["x**2", "--steps", "--exact"], "--steps writes the textbook form"),
        (["sum(x**2)", "--steps", "--shape", "x=2"], "--steps is for numbers"),
        (["sum([x, x**2])", "--steps"], "--steps is for numbers: the source has arrays"),
        (["where(x > 0, x, -x)", "--steps"], "where(...) has no rule"),
        (["x**2", "--format", "markdown"], "--format markdown is for --steps"),
        (["x**2", "--steps", "--wrt", "y"], "y"),
        (["x**2 + y**2 == 25", "--implicit", "y"], "--implicit y needs --wrt NAME"),
        (["x**2 + y**2 == 25", "--implicit", "z", "--wrt", "x"], "no input z"),
        (["x**2 + y**2 == 25", "--implicit", "y", "--wrt", "y"], "name the same input"),
        (["x**2 + 0*y == 25", "--implicit", "y", "--wrt", "x"], "does not change with y"),
        (["x**2 + y**2 < 25", "--implicit", "y", "--wrt", "x"], "not a comparison with <"),
        (["x + y + z", "--implicit", "y", "--wrt", "x", "--wrt", "z"], "takes one --wrt"),
        (["x**2 + y**2 - 1", "--implicit", "y", "--wrt", "x", "--steps"], "give one of them"),
        (["x**2 + y**2 - 1", "--implicit", "y", "--wrt", "x", "--x", "1"], "no input values"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    done = in_process("diff", *args)
    assert done.returncode == 2 and done.stdout == ""
    first = done.stderr.splitlines()[0]
    assert first.startswith("error: ") and message in first, done.stderr
    assert "Traceback" not in done.stderr


def test_bad_input_through_the_installed_command():
    done = nanograd("diff", "x**2 + y**2 == 25", "--implicit", "y")
    assert done.returncode == 2
    assert done.stderr == "error: --implicit y needs --wrt NAME, the variable y depends on\n"


EQUATIONS = [
    "x**2 + y**2 == 25",
    "x**3 + y**3 == 6*x*y",
    "x**2 + y**2 - 25",
    "sin(x*y) == x",
    "exp(y) + y == x**2",
    "x*y == 1",
    "sqrt(x) + sqrt(y) == 4",
    "y**2 == x**3 - x + 1",
    "log(x*y) + x/y == 3",
    "atan(y/x) == log(sqrt(x**2 + y**2))",
]


@pytest.mark.parametrize("equation", EQUATIONS)
@pytest.mark.parametrize("order", [1, 2, 3])
def test_implicit_against_sympy_idiff(equation, order):
    lhs, _, rhs = equation.partition("==")
    names = {"x": X, "y": Y, "e": sympy.E}
    f = sympy.sympify(lhs, locals=names) - sympy.sympify(rhs or "0", locals=names)
    truth = sympy.idiff(f, Y, X, order)
    ours = program(nanograd_cli.diff(equation, "x", implicit="y", order=order).text)
    rng = random.Random(order)
    checked = 0
    for _ in range(20):
        at = {X: rng.uniform(0.2, 2.5), Y: rng.uniform(0.2, 2.5)}
        if abs(complex(sympy.diff(f, Y).subs(at).evalf())) < 1e-3:
            continue
        assert close(ours, truth, at), (equation, order, at)
        checked += 1
    assert checked >= 10


def test_implicit_is_as_short_as_a_course_writes_it():
    assert nanograd_cli.diff("x**2 + y**2 == 25", "x", implicit="y").text == "-x/y"
    assert nanograd_cli.diff("x**3 + y**3 == 6*x*y", "x", implicit="y").text == (
        "(2*y - x**2)/(y**2 - 2*x)"
    )
    assert nanograd_cli.diff("x**2 + y**2 == 25", "x", implicit="y", order=2).text == (
        "-(x**2 + y**2)/y**3"
    )
    latex = nanograd_cli.diff("x**2 + y**2 == 25", "x", implicit="y", format="latex")
    assert str(latex) == "-\\frac{x}{y}"


def test_an_implicit_derivative_after_bound_parts_is_labelled_as_a_course_writes_it():
    equation = ["exp(x*y) == x + y", "--implicit", "y", "--wrt", "x", "--order", "3"]
    lines = in_process("diff", *equation, "--format", "latex").stdout.splitlines()
    assert lines[1] == "t_{1} &= y e^{x y} - 1 \\\\"
    labelled = [line for line in lines if "&= " in line and not line.startswith("t_")]
    assert len(labelled) == 1 and labelled[0].startswith("\\frac{d^{3}y}{dx^{3}} &= ")
    # the text keeps the derivative unnamed, as every single derivative is
    text = in_process("diff", *equation).stdout.splitlines()
    assert text[0] == "t1 = y*exp(x*y) - 1" and " = " not in text[-1]


@pytest.mark.parametrize(
    "source",
    [
        "x**2*exp(x)*sin(x)",
        "cos(sin(tan(x)))",
        "(x**2+1)**3*(2*x-1)**2",
        "sqrt(1+x**2)/(x+1)",
        "exp(x*y)*sin(x+y)",
    ],
)
def test_the_steps_in_latex_fit_the_page(tmp_path, source):
    """Homework whose steps ran 48 to 140 pt past an article's text width: each right side
    too wide is broken over lines (or each step stacked), and pdflatex reports no line too
    wide (a display of many steps may still be taller than a page: one aligned block)."""
    done = in_process("diff", source, "--steps", "--format", "latex")
    assert done.returncode == 0
    pdflatex(tmp_path, f"\\[\n{done.stdout}\\]\n")
    assert [line for line in overfull(tmp_path) if "hbox" in line] == []


def test_where_the_result_loses_digits_is_a_sentence_in_markdown_and_left_out_in_latex():
    """A loss of digits is no condition of the derivation: not `where ...` nor `for ...`; in
    Markdown its formulas are code (`x**2 + y**2` rendered bold), its words not."""
    markdown = nanograd_cli.diff("x*y + tanh(y)", "y", steps=True, format="markdown")
    assert markdown.endswith(
        "Result: `d/dy [x*y + tanh(y)] = x + 1/cosh(y)**2`\n\nAs written, it loses digits for "
        "`|y|` > 355 (cosh's square overflows); `diff --exact` keeps them."
    )
    latex = nanograd_cli.diff("x*y + tanh(y)", "y", steps=True, format="latex")
    assert "loses" not in latex and r"\text{for }" not in latex


def test_latex_steps_by_one_of_several_inputs_are_partial_derivatives():
    done = in_process("diff", "x**2*y", "--wrt", "x", "--steps", "--format", "latex")
    rows = done.stdout.splitlines()
    assert rows[1].startswith(
        r"\frac{\partial}{\partial x}\left[x^{2} y\right] &= \frac{\partial}{\partial x}"
    )
    assert rows[-2] == r"\frac{\partial}{\partial x}\left[x^{2} y\right] &= 2 x y"
    alone = in_process("diff", "x**2", "--steps", "--format", "latex").stdout.splitlines()
    assert alone[-2] == r"\frac{d}{dx}\left[x^{2}\right] &= 2 x"
