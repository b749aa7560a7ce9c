"""`check`: diff's output as a formula to check against (its bound names, its condition, an
element's derivative), `--wrt` on a plain check, and kinks the central difference misses."""

from __future__ import annotations

import json
import math

import pytest
import sympy

import nanograd_cli
from nanograd_cli import _api as api
from nanograd_cli._language import parse

from .helpers import in_process, nanograd

BOUND = "p = x*y\nsin(p)**2 + p"


def diff(*args: str) -> str:
    done = in_process("diff", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.rstrip("\n")


def test_diff_output_that_binds_a_name_is_a_formula():
    formula = diff(BOUND, "--wrt", "x")
    assert formula.splitlines()[0] == "p = x*y"  # diff binds p: a line check reads with it
    done = in_process("check", BOUND, "--against", formula, "--wrt", "x", "--x", "1", "--y", "2")
    assert done.returncode == 0, done.stderr
    row = done.stdout.splitlines()[1].split()
    assert row[0] == "x" and row[-1] == "yes"
    assert "p = x*y; y*(2*cos(p)*sin(p) + 1)" in done.stdout
    # a wrong formula with the same binding is caught: d/dx is y*(sin(2p) + 1), not x*(...)
    wrong = formula.replace("y*(", "x*(")
    done = in_process("check", BOUND, "--against", wrong, "--wrt", "x", "--x", "1", "--y", "2")
    assert done.returncode == 1
    assert done.stderr == (
        "error: the formula for d/dx differs from the engine's derivative at 1 of 1 points\n"
    )


def test_diff_output_with_one_input_needs_no_wrt_and_its_numbers_are_sympys():
    source = "q = x**2 + 1\nlog(q)*q"
    formula = diff(source)
    result = nanograd_cli.check(source, against=formula, x="-2:2:9")
    assert result.passed and result.checks["x"].points == 9
    x = sympy.Symbol("x")
    exact = sympy.diff(sympy.log(x**2 + 1) * (x**2 + 1), x)
    bound = parse(formula)
    for at in (-2.0, 0.5, 2.0):
        mine = bound.values({"x": at})[bound.result]
        assert mine == pytest.approx(float(exact.subs(x, at)), rel=1e-12, abs=1e-12)


def test_points_outside_the_condition_a_formula_states_are_skipped_and_counted():
    formula = diff("x**x")
    assert formula == "x**x*(log(x) + 1)\n# x > 0"
    done = in_process("check", "x**x", "--against", formula, "--x", "0:3", "--format", "json")
    assert done.returncode == 0
    assert done.stderr == (
        "note: 1 of 101 points is outside where the formula for d/dx holds (x > 0): not checked\n"
    )
    checked = json.loads(done.stdout)["checks"]["x"]
    assert (checked["points"], checked["outside"], checked["skipped"]) == (101, 1, 0)
    assert checked["pass"] is True
    # without the condition, the formula is nan at 0 where the engine's derivative is not
    done = in_process("check", "x**x", "--against", "x**x*(log(x) + 1)", "--x", "0:3")
    assert done.returncode == 1
    # a comment that is no condition says nothing
    for comment in ("# worked out on paper", "# x", "# x*(x - 1)"):  # no comparison
        result = nanograd_cli.check("x**2", against=f"2*x\n{comment}", x="-1:1:3")
        assert result.passed and result.checks["x"].outside == 0  # x = 0 is checked


def test_a_formula_for_every_point_outside_its_condition_passes_nothing():
    with pytest.warns(nanograd_cli.NanogradWarning, match="3 of 3 points are outside"):
        result = nanograd_cli.check("x**x", against="x**x*(log(x) + 1)\n# x > 0", x="-2:0:3")
    assert (result.checks["x"].outside, result.passed) == (3, False)


def test_an_elements_derivative_from_diff():
    source = "sum(x**2)*x[0]*y"
    by_element = diff(source, "--wrt", "x[1]", "--shape", "x=2")
    assert by_element == "2*x[0]*x[1]*y"
    done = in_process(
        "check", source, "--against", by_element, "--wrt", "x[1]", "--x", "[1, 2]", "--y", "3"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split()[:2] == ["x[1]", "2*x[0]*x[1]*y"]
    # diff's lines for several elements and inputs, d_x[1] = ..., each checked as its own
    every = diff(source, "--wrt", "x[1]", "--wrt", "x[0]", "--wrt", "y", "--shape", "x=2")
    assert every.splitlines()[0] == "d_x[1] = 2*x[0]*x[1]*y"
    result = nanograd_cli.check(source, against=every, x=[1.0, 2.0], y=3.0)
    assert result.passed and list(result.checks) == ["x[1]", "x[0]", "y"]
    # and a wrong one is caught: d/dx[1] at x = [1, 2], y = 3 is 2*1*2*3 = 12
    wrong = nanograd_cli.check(source, against="x[1]=x[0]*x[1]*y", x=[1.0, 2.0], y=3.0)
    assert not wrong.passed and wrong.checks["x[1]"].first[0].engine == 12.0


def test_wrt_limits_a_finite_difference_check():
    done = in_process("check", "x*y + z", "--x", "1", "--y", "2", "--z", "3", "--wrt", "y")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and lines[1].split()[:2] == ["y", "1.0"]  # d/dy = x = 1
    result = nanograd_cli.check("sum(x**2)", x=[1.0, 2.0, 3.0], wrt="x[1]")
    assert list(result.checks) == ["x[1]"] and result.checks["x[1]"].analytic == 4.0
    assert result.checks["x[1]"].numeric == pytest.approx(4.0, rel=1e-9)
    done = in_process("check", "x*y", "--x", "1", "--y", "1", "--wrt", "z")
    assert (done.returncode, done.stderr) == (
        2,
        "error: --wrt z: z is not an input (inputs: x, y)\n",
    )


def test_a_kink_the_central_difference_agrees_with_fails():
    # |x| at 0: analytic 0 and (h - h)/2h = 0 agree, but the slopes are -1 and 1
    done = nanograd("check", "abs(x)", "--x", "0")
    assert done.returncode == 1
    assert done.stdout.splitlines()[1].split() == ["x", "0.0", "0.0", "0.0", "0.0", "NO"]
    assert done.stderr == (
        "error: gradient check failed for x (a kink: the slope is -1 to the left and 1 to the "
        "right)\n"
    )
    result = json.loads(in_process("check", "abs(x)", "--x", "0", "--format", "json").stdout)
    assert result["checks"]["x"]["kink"] == [-1.0, 1.0] and result["pass"] is False


@pytest.mark.parametrize(
    ("source", "x"),
    [("abs(x)", 1.0), ("x**2", 0.0), ("exp(x)", 10.0), ("x**2 + 1e6", 0.0), ("sin(x)", -7.5)],
)
def test_curvature_is_no_kink(source, x):
    result = nanograd_cli.check(source, x=x)
    assert result.passed and result.checks["x"].kink is None


def test_every_door_reaches_the_one_check():
    # the repl's :check takes wrt on a plain check, as the command line and Python do
    from nanograd_cli._session import Session

    session = Session()
    assert session.run("x = 1").status == 0 and session.run("y = 2").status == 0
    reply = session.run(":check x*y + y wrt y")
    assert reply.status == 0 and reply.err == []
    program = parse("x*y + y")
    direct = api.check(program, {"x": 1.0, "y": 2.0}, wrt=["y"])
    assert list(direct.checks) == ["y"] and direct.checks["y"].analytic == 2.0
    assert math.isclose(direct.checks["y"].numeric, 2.0, rel_tol=1e-9)


def test_a_formula_whose_derivative_is_not_said_is_quoted_without_its_condition():
    """diff's output passed with no --wrt where the source has several inputs: the message
    quotes the formula's own line, not its `# x != 0` line as a literal \\n."""
    formula = in_process("diff", "x**n", "--wrt", "x").stdout
    done = in_process("check", "x**n", "--against", formula, "--x", "-1:1", "--n", "0")
    assert (done.returncode, done.stderr) == (
        2,
        "error: say which derivative 'n*x**(n - 1)' is: --wrt NAME, or NAME=FORMULA (the "
        "inputs are x, n)\n",
    )


def test_points_where_the_source_is_nan_are_skipped_though_its_derivative_is_a_number():
    """log(x) at x < 0 is nan while its derivative 1/x is a number there: such points are
    outside the source's domain, skipped; a range wholly outside says so."""
    done = in_process("check", "log(x)", "--against", "1/x", "--x", "-1:1", "--format", "json")
    checked = json.loads(done.stdout)["checks"]["x"]
    assert (done.returncode, checked["points"], checked["skipped"]) == (0, 101, 50)
    done = in_process("check", "log(x)", "--against", "1/x", "--x", "-2:-1")
    assert done.returncode == 1
    assert done.stderr == (
        "error: the source or its derivative by x is nan at every point: the range is outside "
        "its domain\n"
    )


def test_a_formula_not_finite_where_it_differs_is_told_to_say_where_it_holds():
    """x**x*(log(x) + 1) is right for x > 0 and -inf at 0, where the engine's derivative is 0:
    the message says that the formula is not finite there, and how to say where it holds;
    with diff's `# x > 0` under it, it passes."""
    done = in_process("check", "x**x", "--against", "x**x*(log(x)+1)", "--x", "0:3")
    assert (done.returncode, done.stderr) == (
        1,
        "error: the formula for d/dx differs from the engine's derivative at 1 of 101 points: "
        "the formula is not finite where they differ; where it holds only on part of the "
        "range, say so on a line under it, as diff does (# x > 0)\n",
    )
    said = in_process("check", "x**x", "--against", "x**x*(log(x)+1)\n# x > 0", "--x", "0:3")
    assert said.returncode == 0
    wrong = in_process("check", "x**2", "--against", "3*x", "--x", "0:3")
    assert wrong.stderr == (
        "error: the formula for d/dx differs from the engine's derivative at 100 of 101 points\n"
    )


def test_on_a_terminal_each_table_has_its_heading():
    """The table of the points where they differ, and of kinks, said what it is only in a
    pipe: on a terminal it followed the summary with no heading."""
    from .helpers import on_terminal, visible

    lines = visible(on_terminal("check", "x**3", "--against", "3*x", "--x", "0.5:2:4"))
    assert "first points where they differ:" in lines
    lines = visible(on_terminal("check", "abs(x)", "--against", "x/abs(x)", "--x", "-1:1:5"))
    assert "kinks, where the source has no derivative (not compared):" in lines
