"""`diff --order N --mixed`: every mixed partial derivative of order N too (f_xy, f_xxy, ...),
as a course writes them, alike from the command line, the repl and Python."""

from __future__ import annotations

import itertools
import re

import pytest

import nanograd_cli as ng

from .helpers import in_process
from .test_repl import error, out, session

sympy = pytest.importorskip("sympy")


def sympys(source: str, by: tuple[str, ...], printed: sympy.Expr) -> bool:
    """Whether `printed` is SymPy's derivative of `source` by the names `by` in turn."""
    f = sympy.sympify(source)
    exact = sympy.diff(f, *(sympy.Symbol(n) for n in by))
    return sympy.simplify(printed - exact) == 0


def derivatives(stdout: str) -> dict[str, sympy.Expr]:
    """diff's lines by name, each with the parts bound to a name (t1 = ...) put back."""
    bound: dict[sympy.Symbol, sympy.Expr] = {}
    found = {}
    for line in stdout.splitlines():
        label, formula = line.split(" = ")
        expression = sympy.sympify(formula).subs(bound)
        if re.fullmatch(r"t[0-9]+", label):
            bound[sympy.Symbol(label)] = expression
        else:
            found[label] = expression
    return found


@pytest.mark.parametrize(
    ("source", "names", "order"),
    [
        ("x**2*y**3 + sin(x*y)", "xy", 2),
        ("exp(x*y)*log(x + y)", "xy", 2),
        ("x/(x**2 + y**2)", "xy", 2),
        ("atan(y/x)", "yx", 2),  # (the inputs in the order the source reads them)
        ("x**2*y**3 + sin(x*y)", "xy", 3),
        ("x*y*z + exp(x - z)*y**2", "xyz", 2),
    ],
)
def test_each_mixed_partial_is_sympys_derivative_by_its_names_in_turn(source, names, order):
    printed = in_process("diff", source, "--order", str(order), "--mixed", "--notes", "none")
    assert (printed.returncode, printed.stderr) == (0, "")
    found = derivatives(printed.stdout)
    combinations = list(itertools.combinations_with_replacement(names, order))
    labels = [f"d{order}_" + (by[0] if len(set(by)) == 1 else "_".join(by)) for by in combinations]
    assert list(found) == labels
    for label, by in zip(labels, combinations, strict=True):
        assert sympys(source, by, found[label]), label


def test_the_course_example_prints_f_xx_f_xy_f_yy():
    done = in_process("diff", "x**2*y**3 + sin(x*y)", "--order", "2", "--mixed")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "d2_x = 2*y**3 - y**2*sin(x*y)\n"
        "d2_x_y = 6*x*y**2 - x*y*sin(x*y) + cos(x*y)\n"
        "d2_y = 6*x**2*y - x**2*sin(x*y)\n"
    )
    # the order of --wrt is the order of differentiation: by y, then by x
    done = in_process("diff", "x**2*y**3", "--order", "2", "--mixed", "--wrt", "y", "--wrt", "x")
    assert done.stdout == "d2_y = 6*x**2*y\nd2_y_x = 6*x*y**2\nd2_x = 2*y**3\n"


def test_a_name_given_twice_is_one():
    once = in_process("diff", "x**2*y**3", "--order", "2", "--mixed", "--wrt", "x", "--wrt", "y")
    twice = in_process(
        "diff", "x**2*y**3", "--order", "2", "--mixed", "--wrt", "x", "--wrt", "y", "--wrt", "x"
    )
    assert twice.stdout == once.stdout == "d2_x = 2*y**3\nd2_x_y = 6*x*y**2\nd2_y = 6*x**2*y\n"
    pure = in_process("diff", "x**2*y**3", "--order", "2", "--wrt", "x", "--wrt", "y", "--wrt", "x")
    assert pure.stdout == "d2_x = 2*y**3\nd2_y = 6*x**2*y\n"


def test_latex_names_each_as_a_course_does():
    done = in_process("diff", "x**2*y**3", "--order", "3", "--mixed", "--format", "latex")
    assert done.stdout == (
        "\\begin{aligned}\n"
        "\\frac{\\partial^{3} f}{\\partial x^{3}} &= 0 \\\\\n"
        "\\frac{\\partial^{3} f}{\\partial y \\partial x^{2}} &= 6 y^{2} \\\\\n"
        "\\frac{\\partial^{3} f}{\\partial y^{2} \\partial x} &= 12 x y \\\\\n"
        "\\frac{\\partial^{3} f}{\\partial y^{3}} &= 6 x^{2}\n"
        "\\end{aligned}\n"
    )


def test_python_and_the_repl_take_mixed_as_the_command_line_does():
    expected = in_process("diff", "x*y*log(x)", "--order", "2", "--mixed").stdout
    assert str(ng.diff("x*y*log(x)", order=2, mixed=True)) + "\n" == expected
    s = session("x = 2", "y = 3")
    assert out(s, ":diff x*y*log(x) order 2 mixed") + "\n" == expected
    assert error(s, ":diff x*y mixed") == (
        "error: mixed is for order 2 or more: a first derivative is by one name"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--mixed"], "--mixed is for --order 2 or more: a first derivative is by one name"),
        (["--order", "2", "--mixed", "--implicit", "y", "--wrt", "x"],
         "--mixed and --implicit: give one of them"),
        (["--order", "2", "--mixed", "--steps"],
         "--steps writes the first derivative: leave out --order"),
    ],
)  # fmt: skip
def test_mixed_without_a_higher_order_or_with_implicit_is_bad_input(options, message):
    done = in_process("diff", "x*y", *options)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")


def test_more_than_a_hundred_derivatives_is_bad_input_naming_how_many():
    source = "+".join(f"x{i}**4" for i in range(10))
    done = in_process("diff", source, "--order", "3", "--mixed")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: --mixed: 220 derivatives of order 3 by 10 inputs; at most 100 are written "
        "(name fewer with --wrt)\n"
    )
