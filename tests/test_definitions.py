"""Functions defined in a source (`f(a, b) = expr`), and the prelude's, through every command."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given, settings

from nanograd_cli._language import parse
from nanograd_cli._prelude import PRELUDE
from nanograd_cli._session import Session
from tests.helpers import POINT, expressions, nanograd, run

SOFTSIGN = "softsign(t) = t/(1 + abs(t)); softsign(x) + softsign(y)"
WRITTEN_OUT = "x/(1 + abs(x)) + y/(1 + abs(y))"


def grad(source: str, *options: str) -> dict:
    code, out, err = run("grad", source, *options, "--format", "json")
    assert (code, err) == (0, ""), err
    return json.loads(out)


def error(source: str, *options: str) -> str:
    """The one-line message of a source that is bad input, without its line and caret."""
    code, out, err = run("grad", source, *options)
    assert (code, out) == (2, ""), out
    first, *rest = err.splitlines()
    assert len(rest) == 2 and rest[1].strip() == "^", err  # the line and a caret
    assert "Traceback" not in err
    return first


def where(source: str) -> tuple[int, int]:
    """The line and column an error in `source` points at."""
    code, _, err = run("grad", source)
    assert code == 2
    line, column = re.match(r"error: line (\d+), column (\d+):", err).groups()
    return int(line), int(column)


# The contract's example, and what a call is


def test_the_contracts_example_has_inputs_x_and_y():
    result = grad(SOFTSIGN, "--x", "2", "--y", "-3")
    assert list(result["inputs"]) == ["x", "y"]
    assert result == grad(WRITTEN_OUT, "--x", "2", "--y", "-3")
    assert result["gradients"] == {"x": 1 / 9, "y": 1 / 16}  # 1/(1 + |t|)**2


def test_a_call_makes_the_bodys_operations_again():
    program = parse("f(t) = t*t + 1; f(x) + f(y)")
    written = parse("x*x + 1 + (y*y + 1)")
    assert [type(i).__name__ for i in program.code] == [type(i).__name__ for i in written.code]
    assert [getattr(i, "op", None) for i in program.code] == [
        getattr(i, "op", None) for i in written.code
    ]
    assert program.inputs == ["x", "y"]


def test_parameters_are_local():
    result = grad("f(x) = x*2; f(y) + x", "--x", "1", "--y", "5")
    assert result == {
        "value": 11.0,
        "inputs": {"y": 5.0, "x": 1.0},
        "gradients": {"y": 2.0, "x": 1.0},
    }
    # a parameter hides a name bound outside, and leaves it as it is
    assert grad("a = 10; f(a) = a + 1; f(x) + a", "--x", "1")["value"] == 12.0


def test_a_body_reads_other_names_where_the_definition_is():
    # bound before: the value there, whatever comes after
    assert grad("k = 2; f(t) = k*t; k = 3; f(x) + k", "--x", "1")["value"] == 5.0
    # not bound yet: an input, first read in the body, so before the call's argument
    result = grad("model(t) = a*exp(-b*t); model(x)", "--a", "2", "--b", "0.5", "--x", "1")
    assert list(result["inputs"]) == ["a", "b", "x"]
    assert result["gradients"]["b"] == pytest.approx(-2 * math.exp(-0.5))
    # an input read before the definition is the same input
    assert grad("x + 0; f(t) = t*x; f(3)", "--x", "2")["gradients"] == {"x": 3.0}


def test_a_function_may_call_the_functions_defined_before_it():
    source = "sq(t) = t*t\ncube(t) = sq(t)*t\nquart(t) = sq(sq(t))\ncube(x) + quart(y)"
    result = grad(source, "--x", "2", "--y", "3")
    assert result["value"] == 8 + 81
    assert result["gradients"] == {"x": 12.0, "y": 108.0}


def test_definitions_over_several_lines():
    source = "# a function of two\nf(a,\n  b) = (a*b +\n  a)\n\nf(x, y)"
    assert grad(source, "--x", "2", "--y", "3")["value"] == 8.0


def test_no_parameters_and_constants_in_a_body():
    assert grad("tau() = 2*pi; tau()*x", "--x", "1")["gradients"] == {"x": 2 * math.pi}
    assert grad("neg(t) = -2*t; neg(x)", "--x", "1")["value"] == -2.0


def test_a_call_inside_a_call_and_an_argument_that_is_an_expression():
    source = "f(a, b) = a - b; f(f(x, y), 2*y)"
    assert grad(source, "--x", "5", "--y", "1")["value"] == 2.0
    assert grad(source, "--x", "5", "--y", "1")["gradients"] == {"x": 1.0, "y": -3.0}


# Every command sees ordinary operations


SOURCE = "f(t, u) = t*exp(-u*t) + sin(u)\ng(s) = f(s, s**2)\ng(x)*y + f(y, x)"
AT = ("--x", "0.7", "--y", "-1.3")


def test_forward_mode_and_reverse_mode_agree():
    reverse = grad(SOURCE, *AT)
    forward = grad(SOURCE, *AT, "--mode", "forward")
    assert forward["value"] == reverse["value"]
    for name in ("x", "y"):
        assert forward["gradients"][name] == pytest.approx(reverse["gradients"][name], rel=1e-14)


def test_gradients_against_finite_differences():
    result = grad(SOURCE, *AT)
    program = parse(SOURCE)
    point = {"x": 0.7, "y": -1.3}
    for name in ("x", "y"):
        h = 1e-6
        up = program.values({**point, name: point[name] + h})[program.result]
        down = program.values({**point, name: point[name] - h})[program.result]
        assert result["gradients"][name] == pytest.approx((up - down) / (2 * h), rel=1e-8)


def test_check_passes():
    code, out, err = run("check", SOURCE, *AT)
    assert (code, err) == (0, ""), out
    assert out.count("yes") == 2


def test_points_use_the_compiled_code_and_the_tape(tmp_path):
    points = tmp_path / "points.csv"
    points.write_text("x,y\n0.7,-1.3\n2,0.5\n")
    code, out, err = run("grad", SOURCE, "--points", str(points), "--format", "csv")
    assert (code, err) == (0, ""), err
    header, first, _ = out.splitlines()
    assert header == "x,y,value,d_x,d_y"
    one = grad(SOURCE, *AT)
    values = [float(v) for v in first.split(",")[2:]]
    assert values[0] == one["value"]
    assert values[1:] == pytest.approx([one["gradients"]["x"], one["gradients"]["y"]], rel=1e-14)


def test_hessian_against_sympy():
    sympy = pytest.importorskip("sympy")
    x, y = sympy.symbols("x y")

    def f(t, u):
        return t * sympy.exp(-u * t) + sympy.sin(u)

    expr = f(x, x**2) * y + f(y, x)
    code, out, err = run("hessian", SOURCE, *AT, "--format", "json")
    assert (code, err) == (0, ""), err
    hessian = json.loads(out)["hessian"]
    at = {x: 0.7, y: -1.3}
    for a in (x, y):
        for b in (x, y):
            expected = float(sympy.diff(expr, a, b).subs(at))
            assert hessian[str(a)][str(b)] == pytest.approx(expected, rel=1e-12)


def test_diff_writes_the_expanded_operations():
    code, out, err = run("diff", "sq(t) = t*t; cube(t) = sq(t)*t; cube(x) + sq(y)")
    assert (code, err) == (0, "")
    assert out == "d_x = 3*x**2\nd_y = 2*y\n"
    code, out, _ = run("diff", SOFTSIGN)
    assert out == run("diff", WRITTEN_OUT)[1]


def test_explain_names_the_nodes_as_the_call_makes_them():
    code, out, err = run("explain", SOFTSIGN, "--x", "2", "--y", "-3")
    assert (code, err) == (0, "")
    assert out == run("explain", WRITTEN_OUT, "--x", "2", "--y", "-3")[1]
    assert "x/(1 + abs(x)) + y/(1 + abs(y))  -0.08333333333333337" in out


def test_draw_groups_a_functions_nodes_under_its_definition():
    source = "f(t) = t/(1 + abs(t))\nf(x) + f(y)"
    code, out, err = run("draw", source, "--x", "2", "--y", "-3")
    assert (code, err) == (0, "")
    assert 'label="f(t) = t/(1 + abs(t))"' in out  # the box of the definition's statement
    assert out.count("[label=abs ") == 2  # one abs per call
    # the prelude's nodes are the calling statement's: its text is not the source's
    code, out, _ = run("draw", "y = 2*x\nsoftsign(x) + y", "--x", "2")
    assert 'label="softsign(x) + y"' in out
    assert "softsign(x) =" not in out


def test_the_live_page(tmp_path):
    page = tmp_path / "graph.html"
    code, _, err = run("draw", SOURCE, *AT, "-o", str(page))
    assert (code, err) == (0, "")
    assert "<html" in page.read_text(encoding="utf-8").lower()


def test_a_nan_in_a_body_is_located_at_its_operation():
    code, _, err = run("grad", "f(t) = log(t)\nf(x) + f(y)", "--x", "1", "--y", "-1")
    assert code == 0
    assert err.startswith("warning: line 1, column 8: log gave nan")


@settings(max_examples=40, deadline=None)
@given(expressions())
def test_a_call_is_the_body_with_the_arguments_in_place(body):
    """f(x, y, z) = BODY called as f(z, x, y) computes what BODY with x, y, z renamed does,
    to the bit, value and gradient."""
    renamed = re.sub(r"\b([xyz])\b", lambda m: {"x": "z", "y": "x", "z": "y"}[m[1]], body)
    called = parse(f"f(x, y, z) = {body}\nf(z, x, y) + 0*(x + y + z)")
    written = parse(f"{renamed} + 0*(x + y + z)")
    a, b = called.grad(POINT), written.grad(POINT)
    assert repr(a.value) == repr(b.value)
    assert {k: repr(v) for k, v in a.gradients.items()} == {
        k: repr(v) for k, v in b.gradients.items()
    }


def test_calls_that_double_at_each_line_are_refused_before_memory_runs_out(monkeypatch):
    from nanograd_cli import _memory as memory

    lines = ["f0(t) = t + 1"] + [f"f{k}(t) = f{k - 1}(f{k - 1}(t))" for k in range(1, 41)]
    source = "\n".join([*lines, "f40(x)"])
    monkeypatch.setattr(memory, "available", lambda meminfo="/proc/meminfo": 100_000_000)
    code, out, err = run("grad", source, "--x", "1")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == (
        "error: line 18, column 10: with this call of f16, the program has 262,146 operations: "
        "its graph would need 0.1 GB of memory, and 0.1 GB is free"
    )


# Bad input: one line with the place, exit 2


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            "f(t) = f(t - 1); f(x)",
            "f calls itself: a function may call only the functions defined before it, so it "
            "cannot be recursive",
        ),
        ("f(t) = t; f(x, y)", "f takes 1 argument, f(t), not 2"),
        ("f(a, b) = a*b; f(x)", "f takes 2 arguments, f(a, b), not 1"),
        (
            "g(x) + 1\ng(t) = t",
            "g is defined after this call: define a function before the first statement that "
            "calls it",
        ),
        (
            "sin(t) = t; sin(x)",
            "sin is a built-in function: a function needs a name of its own, such as sin1",
        ),
        (
            "ln(t) = t; x",
            "ln is a built-in function: a function needs a name of its own, such as ln1",
        ),
        ("pi(t) = t; x", "pi is a constant: a function needs a name of its own, such as pi1"),
        (
            "x = 1; x(t) = t; x",
            "x is already bound: a function needs a name of its own, such as x1",
        ),
        (
            "x + 1; x(t) = t; x",
            "x is already an input of the source: a function needs a name of its own, such as x1",
        ),
        (
            "f(t) = t; f(u) = 2*u; f(x)",
            "f is already a function, f(t): a function needs a name of its own, such as f1",
        ),
        (
            "f(t) = t; f = 2",
            "f is a function and cannot be assigned: choose another name, such as f1",
        ),
        ("f(t) = t; f + 1", "f is a function: call it as f(...)"),
        ("f(t) = t; f += 1", "f is a function: call it as f(...)"),
        ("f(a, a) = a; f(x, x)", "f has two parameters named a"),
        (
            "f(pi) = pi; f(x)",
            "pi is a constant, and cannot be a parameter of f: choose another name, such as pi1",
        ),
        (
            "g(t) = t; f(g) = g; f(x)",
            "g is already a function, g(t), and cannot be a parameter of f: choose another "
            "name, such as g1",
        ),
        (
            "f(f) = f; f(x)",
            "f is the function's own name, and cannot be a parameter of f: choose another "
            "name, such as f1",
        ),
        (
            "f(2) = 3; f(x)",
            "a parameter of f is a name, not '2': define it as f(a, b) = ...; to compare, "
            "write '=='",
        ),
        ("f(t, ) = t; f(x)", "a parameter of f is missing: define it as f(a, b) = ..."),
        (
            "y = f(x) = 2",
            "unexpected 'f(x) =' after '=': a function is defined by a statement of its own, "
            "f(a, b) = expr",
        ),
        (
            "f(t) = t**2",
            "the source ends with the definition of f, which has no value: end it with an "
            "expression that uses it, such as f(t)",
        ),
        (
            "x*2; f(t) = t**2",
            "the source ends with the definition of f, which has no value: end it with an "
            "expression that uses it, such as f(t)",
        ),
        ("f(t) = t; u = x; u, f", "f is a function: call it as f(...)"),
        ("u = x; v = 2*x; u, v\nf(t) = t", "the list of outputs must be the last statement"),
    ],
)
def test_error_messages(source, expected):
    assert error(source) == f"error: line {where(source)[0]}, column {where(source)[1]}: {expected}"


@pytest.mark.parametrize(
    "source, line, column",
    [
        ("f(t) = f(t - 1)", 1, 8),  # the call of itself
        ("f(t) = t\nf(x, y)", 2, 7),  # the closing parenthesis, as for a built-in function
        ("x = 1\nx(t) = t\nx", 2, 1),  # the definition's name
        ("f(a,\n   a) = a; f(x, x)", 2, 4),  # the second parameter
        ("g(x) + 1\ng(t) = t", 1, 1),  # the call
        ("f(t) = t**2", 1, 1),
    ],
)
def test_errors_point_at_the_definition_or_the_call(source, line, column):
    assert where(source) == (line, column)


def test_comparisons_that_look_like_a_definition_stay_comparisons():
    assert grad("f(t) = t; f(x) == 2", "--x", "2")["value"] == 1.0
    assert error("f(x) => 2").endswith("unknown comparison '=>': write '>='")


def test_a_definition_is_bad_input_through_a_subprocess_too():
    done = nanograd("grad", "f(t) = f(t); f(x)", "--x", "1")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("error: line 1, column 8: f calls itself")
    assert "Traceback" not in done.stderr
    done = nanograd(
        "grad", "-", "--x", "2", "--format", "json", stdin="sq(t) = t*t\nsq(x) + sq(3)\n"
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == {"value": 13.0, "inputs": {"x": 2.0}, "gradients": {"x": 4.0}}


# The prelude: functions the language defines in itself


@pytest.mark.parametrize("row", PRELUDE, ids=lambda row: row.name)
def test_prelude_rows_derivative_is_the_one_the_docs_show(row):
    """The documented derivative computes what the composition's parts give."""
    name = row.name
    (parameter,) = re.match(r"\w+\((\w+)\)", row.definition).groups()
    formula = parse(row.formulas[0])
    for x in (-1e300, -50.0, -2.0, -1e-300, 0.0, 1e-300, 0.3, 7.0, 1e300):
        expected = parse(f"{name}(x)").grad({"x": x}).gradients["x"]
        shown = formula.values({parameter: x})[formula.result]
        assert abs(shown - expected) <= 2 * math.ulp(shown), x


def test_softsign_is_its_definition_expanded():
    definition = PRELUDE[0].definition.partition(" = ")[2]
    for x in ("0.5", "2", "-1e8"):
        assert grad("softsign(x)*y", "--x", x, "--y", "3") == grad(
            f"({definition})*y", "--x", x, "--y", "3"
        )
    # abs'(0) = 0: the derivative at 0 is 1, the limit from either side
    assert grad("softsign(x)", "--x", "0")["gradients"] == {"x": 1.0}
    assert grad("softsign(x)", "--x", "1e308")["value"] == 1.0
    assert grad("softsign(x)", "--x", "-1e308")["gradients"] == {"x": 0.0}
    # the derivative has no cancellation where abs(x) > 1: as 1/(1 + abs(x))**2
    assert grad("softsign(x)", "--x", "-1e8")["gradients"]["x"] == pytest.approx(
        1 / (1 + 1e8) ** 2, rel=1e-15
    )


def test_a_source_may_define_its_own_softsign():
    assert grad(SOFTSIGN, "--x", "1", "--y", "1")["value"] == 1.0
    own = "softsign(t) = 2*t; softsign(x)"
    assert grad(own, "--x", "1")["value"] == 2.0
    # but not a parameter, nor a variable, named as the prelude's function
    assert error("f(softsign) = 1; f(x)").endswith(
        "softsign is a built-in function, and cannot be a parameter of f: choose another name, "
        "such as softsign1"
    )


def test_the_prelude_is_listed_among_the_functions():
    assert error("sofsign(x)").endswith(
        "unknown function sofsign: did you mean softsign or sign or sin?"
    )


# The repl


def test_repl_defines_a_function_for_later_lines():
    s = Session()
    for line in ["x = 2", "f(t) = t**2", "g(u) = f(u) + k", "k = 1"]:
        reply = s.run(line)
        assert (reply.status, reply.err, reply.out) == (0, [], []), reply.err
    assert (
        s.run("g(x)").text()
        == "        value  gradient\nresult  5.0\nk       1.0    1.0\nx       2.0    4.0"
    )
    assert s.run(":inputs").text() == "x = 2.0\nk = 1.0\nf(t) = t**2\ng(u) = f(u) + k"
    assert s.run(":diff f(x)*3").text() == "6*x"
    # the lines :inputs prints make the session again
    again = Session()
    for line in s.run(":inputs").text().splitlines():
        assert again.run(line).status == 0
    assert again.run("g(x)").text() == s.run("g(x)").text()


def test_repl_a_definition_and_a_call_on_one_line_and_a_new_definition():
    s = Session()
    assert s.run("x = 3").status == 0
    assert s.run("f(t) = t + 1; f(x)*2").text().splitlines()[1].split() == ["result", "8.0"]
    assert s.run("q = f(x)").status == 0
    assert s.run("f(t) = 10*t").status == 0
    assert s.run("f(x)").text().splitlines()[1].split() == ["result", "30.0"]
    assert s.run("q").text().splitlines()[1].split() == ["result", "4.0"]


def test_repl_errors_in_definitions():
    s = Session()
    assert s.run("f(t) = t").status == 0
    reply = s.run("f(1, 2)")
    assert reply.status == 2
    assert reply.err == [
        "error: line 1, column 7: f takes 1 argument, f(t), not 2\n  1 | f(1, 2)\n            ^"
    ]
    reply = s.run("r(t) = r(t)")
    assert reply.status == 2 and "r calls itself" in reply.err[0]
    reply = s.run("sin(t) = t")
    assert reply.status == 2 and "sin is a built-in function" in reply.err[0]
    assert s.run(":inputs").text() == "f(t) = t"


def test_repl_an_error_on_a_line_that_calls_a_function_names_that_line():
    s = Session()
    for line in ["h(t) = 1", "x = 2"]:
        assert s.run(line).status == 0
    reply = s.run(":grad h(x) +* 2", 3)
    assert reply.status == 2
    assert reply.err == [
        "error: line 3, column 7: expected an expression after '+', found '*'\n"
        "  3 | h(x) +* 2\n"
        "            ^"
    ]
    reply = s.run(":minimize (x-3)**2 +* 2 lr 0.1", 4)
    assert reply.err[0].startswith("error: line 4, column 11: ")


def test_repl_a_function_and_an_input_do_not_share_a_name():
    s = Session()
    assert s.run("x = 2").status == 0
    reply = s.run("x(t) = t")
    assert reply.status == 2
    assert reply.err == [
        "error: line 1, column 1: x is already bound: a function needs a name of its own, "
        "such as x1\n  1 | x(t) = t\n      ^"
    ]
    assert s.run(":inputs").text() == "x = 2.0"
    assert s.run("x").text().splitlines()[1].split() == ["result", "2.0"]
    assert s.run("f(t) = t").status == 0
    reply = s.run("f = 2")
    assert reply.status == 2 and "f is a function and cannot be assigned" in reply.err[0]
    assert s.run(":inputs").text() == "x = 2.0\nf(t) = t"


def test_repl_a_line_that_needs_two_versions_of_a_function_says_which_and_what_to_do():
    s = Session()
    for line in ["x = 2", "f(t) = t**2", "g(t) = f(t) + 1", "f(t) = t**3"]:
        assert s.run(line).status == 0
    reply = s.run("g(x) + f(x)", 5)
    assert reply.status == 2
    assert reply.err == [
        "error: line 5: g(t) was defined with the f(t) before f was redefined, and a line "
        "cannot use both: define g again, or :reset"
    ]
    assert s.run("g(t) = f(t) + 1").status == 0  # g again: it calls the new f
    assert s.run("g(x) + f(x)").text().splitlines()[1].split() == ["result", "17.0"]


def test_repl_an_unknown_function_is_listed_with_the_sessions_own():
    s = Session()
    assert s.run("myfunction(t) = t**2").status == 0
    assert s.run("x = 1").status == 0
    for line in ["qqqqq(1)", ":grad qqqqq(x)", "y = qqqqq(x)"]:
        reply = s.run(line)
        assert reply.status == 2
        listed = reply.err[0].split("functions are ")[1].split("\n")[0]
        assert listed.endswith(", softsign, myfunction"), reply.err
    reply = s.run("myfunctio(x)")
    assert "unknown function myfunctio: did you mean myfunction?" in reply.err[0]
