"""`nanograd explain`: the forward and backward passes written out. Its numbers are held to
`grad`'s to the bit, its formulas to the values they claim, and its outputs are checked as a
user meets them: in a pipe, on an 80-column terminal, as Markdown and as LaTeX."""

from __future__ import annotations

import itertools
import json
import math
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nanograd_cli import parse
from nanograd_cli._algebra import Expr
from nanograd_cli._formula import write
from nanograd_cli._ops import OPS
from nanograd_cli._program import Apply
from nanograd_cli._symbolic import textbook_formulas
from nanograd_cli._written_out import _Writer, explain
from nanograd_cli.render._explanation import backward_rows, forward_rows
from nanograd_cli.render._table import least_width, pieces, significant, wrap

from .helpers import (
    POINT,
    WORKED,
    expressions,
    in_process,
    on_terminal,
    overfull,
    pdflatex,
    run,
    visible,
)

EXAMPLE = ["x*y + tanh(x)", "--x", "2", "--y", "3"]


@st.composite
def programs(draw) -> str:
    """Random programs of a few statements over x, y and z, in which bound names are read
    several times, so that nodes feed several others and gradients are sums."""
    first = draw(expressions(3))
    second = draw(expressions(3)).replace("z", "a")
    third = draw(expressions(3)).replace("y", "b").replace("z", "a")
    augmented = draw(st.sampled_from(["+=", "-=", "*="]))
    return f"a = {first}\nb = {second}\na {augmented} {third}\na * b + a"


def point_args(source: str) -> list[str]:
    return [f"--{name}={POINT[name]}" for name in parse(source).inputs]


def same(a, b) -> bool:
    """Equal to the bit, as JSON gives them: floats by repr (so -0.0 is not 0.0), and the
    strings nan, inf, -inf."""
    return repr(a) == repr(b)


def explain_json(source: str) -> dict:
    code, out, err = run("explain", f"--expr={source}", *point_args(source), "--format", "json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.one_of(expressions(), programs()))
def test_every_total_is_what_grad_prints_to_the_bit(source):
    explained = explain_json(source)
    code, out, err = run("grad", f"--expr={source}", *point_args(source), "--format", "json")
    assert code == 0, err
    graded = json.loads(out)
    assert same(explained["value"], graded["value"])
    assert explained["inputs"] == graded["inputs"]
    assert list(explained["gradients"]) == list(graded["gradients"])
    steps = {s["node"]: s for s in explained["backward"] if s["node"] in graded["gradients"]}
    assert set(steps) == set(graded["gradients"])  # every input has its step
    for name, gradient in graded["gradients"].items():
        assert same(explained["gradients"][name], gradient), (source, name)
        assert same(steps[name]["gradient"], gradient), (source, name)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.one_of(expressions(), programs()))
@example("a = (-(x + (z + 2)))**2\nb = (-(x + (a + a)))**2\na += (exp(b))**2\na * b + a")  # inf
def test_every_product_and_sum_written_out_is_exact(source):
    explained = explain_json(source)
    backward = explained["backward"]
    products, contributions = [], []
    for step in backward:
        total = 0.0  # as the engine adds: from 0, in the order written
        for c in step["contributions"]:
            total += float(c)  # JSON writes inf as "inf"
        if step["contributions"]:
            assert same(total, float(step["gradient"])), (source, step)
        for d in step["local_derivatives"]:
            product = float(d["local"]) * float(step["gradient"])  # JSON writes inf as "inf"
            assert same(float(d["product"]), product), (source, step)
            products.append(d["product"])
        contributions += step["contributions"]
    assert sorted(map(repr, products)) == sorted(map(repr, contributions))
    if backward and not backward[0]["contributions"]:
        assert backward[0]["gradient"] == 1.0  # the result's own gradient


@settings(max_examples=150, deadline=None)
@given(expressions())
def test_expressions_and_formulas_say_what_they_compute(source):
    """Each expression shown, parsed back, computes its node's value to the bit; each local
    derivative's formula, parsed back, computes its value (to rounding: the engine computes
    some derivatives another way, as tanh' without cosh)."""
    program = parse(source)
    point = {n: POINT[n] for n in program.inputs}
    result = explain(program, point)

    def computed(text: str) -> float | None:
        shown = parse(text)  # unnamed sub-expressions longer than 24 characters are t1, ...
        if not set(shown.inputs) <= set(POINT):
            return None
        return shown.values({n: POINT[n] for n in shown.inputs})[shown.result]

    for step in result.forward:
        value = computed(step.expression.text)
        assert value is None or same(value, step.value), (source, step)
    checked = named = 0
    for step in result.backward:
        for d in step.local_derivatives:
            value = computed(d.formula.text)
            named += value is None  # reads a name the explanation binds (t1 = ...)
            if value is None or not math.isfinite(d.local):
                continue
            assert math.isclose(value, d.local, rel_tol=1e-9, abs_tol=1e-12), (source, d)
            checked += 1
    assert checked or named or not any(s.local_derivatives for s in result.backward)


PLAIN = "\n".join(
    [
        "forward pass",
        "node           value",
        "x              2.0",
        "y              3.0",
        "x*y            6.0",
        "tanh(x)        0.9640275800758169",
        "x*y + tanh(x)  6.9640275800758165",
        "",
        "backward pass",
        "node           gradient               argument  local       "
        "  value                product",
        "x*y + tanh(x)  1.0                    x*y       1             1.0                  1.0",
        "                                      tanh(x)   1             1.0                  1.0",
        "x*y            1.0                    x         y             3.0                  3.0",
        "                                      y         x             2.0                  2.0",
        "y              2.0",
        "tanh(x)        1.0                    x         1/cosh(x)**2"
        "  0.07065082485316446  0.07065082485316446",
        "x              3.0",
        "               + 0.07065082485316446",
        "               = 3.0706508248531645",
        "",
    ]
)


def _unshared(e, serial, names=None):
    """A copy of the tree in which no node is used twice, which `write` writes binding no
    part to a name; `names` renames inputs (as LaTeX writes q₁: q_1)."""
    names = names or {}
    args = tuple(_unshared(a, serial, names) for a in e.args)
    value = names.get(e.value, e.value) if e.kind == "input" else e.value
    return Expr(e.kind, e.op, args, e.weights, value, next(serial))


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.one_of(expressions(), programs()))
def test_expressions_written_a_node_at_a_time_read_as_write_writes_them(source):
    """explain writes each node once, its expressions sharing their parts; the text and the
    LaTeX are those `write` gives for the same expression alone."""
    program = parse(source)
    writer = _Writer(program)
    serial = itertools.count()
    text, latex = writer._printers
    for i in range(len(program.code)):
        writer.add(i)
        tree = writer._trees[i]
        assert text(tree) == write({"": _unshared(tree, serial)}), source
        renamed = _unshared(tree, serial, writer._latex_names)
        assert latex(tree) == write({"": renamed}, latex=True), source


def _calls(draw, depth):
    """A random expression of any ops: calls, operators, comparisons; negative numbers,
    negations and bound names among its parts."""
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(["x", "y", "a", "2", "-3", "0.5", "pi", "-x", "-(x*y)"]))
    kind = draw(st.integers(0, 3))
    if kind == 0:
        operator = draw(st.sampled_from(["+", "-", "*", "/", "**", "%", "<", "==", "!="]))
        return f"({_calls(draw, depth - 1)} {operator} {_calls(draw, depth - 1)})"
    if kind == 1:
        return f"-{_calls(draw, depth - 1)}"
    name, op = draw(st.sampled_from([(n, o) for n, o in OPS.items() if o.syntax == "call"]))
    arguments = ", ".join(_calls(draw, depth - 1) for _ in range(op.arity))
    return f"{name.split('/')[0]}({arguments})"


@st.composite
def any_ops(draw) -> str:
    return f"a = {_calls(draw, 2)}\n{_calls(draw, 3)}"


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.one_of(any_ops(), programs()))
@example("a = 2\n-(x*y) % a - -x**a + (x % y)*y")
def test_local_formulas_from_templates_read_as_written_out(source):
    """A local derivative's text is filled in from a template of its formula, made for the
    shapes of its arguments: it is the text of the formula written out on them."""
    program = parse(source)
    writer = _Writer(program)
    text = writer._printers[0]
    for i, ins in enumerate(program.code):
        writer.add(i)
        if not isinstance(ins, Apply):
            continue
        for formula in textbook_formulas(ins.op):
            for program_ in (formula.program, *(side for side, _ in formula.conditions)):
                filled = writer._written(program_, ins.op, ins.args).text
                parts = writer._parts(ins.args)
                assert filled == text(writer._tree(program_, ins.op, parts)), source


def test_worked_example_in_a_pipe():
    done = in_process("explain", *EXAMPLE)
    assert (done.returncode, done.stderr, done.stdout) == (0, "", PLAIN)
    # an explicit --digits applies in a pipe too
    short = in_process("explain", *EXAMPLE, "--digits", "3").stdout
    assert short.splitlines()[0] == PLAIN.splitlines()[0] and "3.0706508248531645" not in short
    assert "= 3.07" in short


MARKDOWN = """\
**Forward pass**

| node | value |
| --- | ---: |
| `x` | 2.0 |
| `y` | 3.0 |
| `x*y` | 6.0 |
| `tanh(x)` | 0.9640275800758169 |
| `x*y + tanh(x)` | 6.9640275800758165 |

**Backward pass**

| node | gradient | argument | local | value | product |
| --- | ---: | --- | --- | ---: | ---: |
| `x*y + tanh(x)` | 1.0 | `x*y` | `1` | 1.0 | 1.0 |
|  |  | `tanh(x)` | `1` | 1.0 | 1.0 |
| `x*y` | 1.0 | `x` | `y` | 3.0 | 3.0 |
|  |  | `y` | `x` | 2.0 | 2.0 |
| `y` | 2.0 |  |  |  |  |
| `tanh(x)` | 1.0 | `x` | `1/cosh(x)**2` | 0.07065082485316446 | 0.07065082485316446 |
| `x` | 3.0 |  |  |  |  |
|  | + 0.07065082485316446 |  |  |  |  |
|  | = 3.0706508248531645 |  |  |  |  |
"""


def test_worked_example_in_markdown():
    done = in_process("explain", *EXAMPLE, "--format", "markdown")
    assert (done.returncode, done.stderr, done.stdout) == (0, "", MARKDOWN)
    short = in_process("explain", *EXAMPLE, "--format", "markdown", "--digits", "4").stdout
    assert "| `tanh(x)` | 1 | `x` | `1/cosh(x)**2` | 0.07065 | 0.07065 |" in short
    assert "|  | = 3.071 |  |  |  |  |" in short


def test_hand_derived_local_derivatives():
    """x/y at x = 3, y = 2: d/dx = 1/y = 0.5, d/dy = -x/y**2 = -0.75 (as a textbook writes
    the table's -(x/y)/y); x**2 at 3: 2*x = 6."""
    (step,) = explain_json_at("x/y", x=3, y=2)["backward"][:1]
    assert step["local_derivatives"] == [
        {"argument": "x", "formula": "1/y", "local": 0.5, "product": 0.5},
        {"argument": "y", "formula": "-x/y**2", "local": -0.75, "product": -0.75},
    ]
    (square,) = explain_json_at("x**2", x=3)["backward"][0]["local_derivatives"]
    assert (square["formula"], square["local"]) == ("2*x", 6.0)


@pytest.mark.parametrize(
    ("source", "point", "formulas"),
    [
        ("x**y", {"x": 2, "y": 3}, ["y*x**(y - 1)", "x**y*log(x)"]),
        ("2**x + x**3", {"x": 1}, ["2**x*log(2)", "3*x**2"]),
        ("log(x, 2) + log10(x)", {"x": 1}, ["1/(x*log(2))", "1/(x*log(10))"]),
        ("sigmoid(x)", {"x": 1}, ["sigmoid(x)*(1 - sigmoid(x))"]),
        ("erf(x)", {"x": 1}, ["2*exp(-x**2)/sqrt(pi)"]),
        # pi and e by name, fractions as such, no 1* or *1
        ("x**e + x**pi", {"x": 2}, ["e*x**(e - 1)", "pi*x**(pi - 1)"]),
        ("e**x", {"x": 1}, ["e**x"]),
        ("x**-1", {"x": 2}, ["-x**(-2)"]),
        ("x/3 + x/7", {"x": 1}, ["1/3", "1/7"]),
    ],
)
def test_local_formulas_are_the_textbooks(source, point, formulas):
    """The local column has diff's textbook formulas: no helper (powlog, step), and a
    function of numbers kept as written (log(2)) where it is no whole number."""
    explained = explain_json_at(source, **point)
    shown = [d["formula"] for s in explained["backward"] for d in s["local_derivatives"]]
    assert [f for f in shown if f != "1"] == formulas
    assert not any("powlog" in f or "step" in f for f in shown)


def test_a_formula_that_does_not_hold_at_the_point_says_where_it_does():
    """At x = 0 the engine's d/dy x**y is 0 (PyTorch's limit); x**y*log(x) holds for x > 0,
    and the local column says so, in every format. y*x**(y - 1) is the engine's d/dx there
    (0 at y = 2): no note; at y = 0 it is 0*inf, where the engine's is 0."""
    (step,) = explain_json_at("x**y", x=0, y=2)["backward"][:1]
    assert step["local_derivatives"] == [
        {"argument": "x", "formula": "y*x**(y - 1)", "local": 0.0, "product": 0.0},
        {
            "argument": "y",
            "formula": "x**y*log(x)",
            "domain": "x > 0",
            "local": 0.0,
            "product": 0.0,
        },
    ]
    assert "x**y*log(x)  # x > 0" in run("explain", "x**y", "--x", "0", "--y", "2")[1]
    latex = run("explain", "x**y", "--x", "0", "--y", "2", "--format", "latex")[1]
    assert r"&= 0 \quad \left(x^{y} \log(x) \text{ for } x > 0\right)" in latex
    assert "domain" not in json.dumps(explain_json_at("x**y", x=2, y=3))
    (step,) = explain_json_at("x**y", x=0, y=0)["backward"][:1]
    assert step["local_derivatives"][0]["domain"] == "x != 0"
    assert "domain" not in json.dumps(explain_json_at("log(x)**2", x=1))  # 2*log(x) holds


def test_latex_has_no_plus_minus_and_no_fraction_inside_a_fraction():
    source = "q = x/y; q += 1 + q + (-x); q - (-y)/x"
    latex = run("explain", source, "--x", "2", "--y", "3", "--format", "latex")[1]
    assert "+ -" not in latex and "- -" not in latex
    assert r"\frac{-\frac" not in latex and r"\frac{\frac" not in latex
    assert r"-\frac{x}{y^{2}}" in latex
    (step,) = explain_json_at("(-x)/y", x=1, y=2)["backward"][:1]  # -(-x)/y**2 is x/y**2
    assert [d["formula"] for d in step["local_derivatives"]] == ["1/y", "x/y**2"]
    latex = run("explain", "(-x)/y", "--x", "1", "--y", "2", "--format", "latex")[1]
    assert r"\frac{x}{y^{2}} = 0.25" in latex and r"\frac{-x}" not in latex


def explain_json_at(source: str, **point: float) -> dict:
    args = [f"--{name}={value}" for name, value in point.items()]
    code, out, err = run("explain", "-e", source, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_a_negated_negative_is_written_as_the_source_has_it():
    """-(-x) and x - (-y) keep both signs: each node is written as its own sub-expression,
    not as another one of equal value (-(-x) as x, the input)."""
    explained = explain_json_at("y*-(-x) + (x - -y)", x=2, y=3)
    assert [s["node"] for s in explained["forward"]] == [
        "y",
        "x",
        "-x",
        "-(-x)",
        "y*(-(-x))",
        "-y",
        "x - (-y)",
        "y*(-(-x)) + (x - (-y))",
    ]
    arguments = {
        s["node"]: [d["argument"] for d in s["local_derivatives"]] for s in explained["backward"]
    }
    assert arguments["y*(-(-x))"] == ["y", "-(-x)"] and arguments["-(-x)"] == ["-x"]


def test_versions_of_a_name_in_latex_are_not_another_name():
    """x bound twice is x_1 and x_2 in LaTeX, unless the source has a name x_1 too: then its
    versions are x_(1) and x_(2)."""
    done = in_process("explain", "x = x + x_1; x*2", "--x", "1", "--x_1", "5", "--format", "latex")
    forward = done.stdout.split(r"\end{align*}")[0].splitlines()[2:]
    assert forward == [
        r"x_{(1)} &= 1 \\",
        r"x_{1} &= 5 \\",
        r"x_{(2)} = x_{(1)} + x_{1} &= 6 \\",
        r"f = x_{(2)} \cdot 2 &= 12",
    ]
    plain = in_process(
        "explain", "q = x*y; q += x; q**2", "--x", "2", "--y", "3", "--format", "latex"
    )
    assert r"q_{2} = q_{1} + x" in plain.stdout


def test_names_versions_and_inputs_the_result_does_not_read():
    explained = explain_json_at("q = x + y; q += q*x; unused = 2*z; q", x=2, y=3, z=1)
    shown = [(s["node"], s["expression"]) for s in explained["forward"]]
    assert shown == [
        ("x", "x"),
        ("y", "y"),
        ("q₁", "x + y"),
        ("q₁*x", "q₁*x"),
        ("q₂", "q₁ + q₁*x"),
        ("z", "z"),
        ("unused", "2*z"),
    ]
    nodes = [s["node"] for s in explained["backward"]]
    assert nodes[0] == "q₂" and nodes[-1] == "z" and "unused" not in nodes
    assert explained["backward"][-1]["gradient"] == 0.0 == explained["gradients"]["z"]
    q1 = next(s for s in explained["backward"] if s["node"] == "q₁")
    assert q1["contributions"] == [1.0, 2.0] and q1["gradient"] == 3.0  # q₂ = q₁ + q₁*x


def test_latex_structure():
    done = in_process("explain", *EXAMPLE, "--format", "latex")
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[:2] == ["% Forward pass", r"\begin{align*}"]
    assert lines[6:10] == [
        r"f = x y + \tanh(x) &= 6.9640275800758165",
        r"\end{align*}",
        "% Backward pass: the gradient of f with respect to each node",
        r"\begin{align*}",
    ]
    body = lines[10:]
    assert body[0] == r"\frac{\partial f}{\partial f} &= 1 \\"
    # the result's own local derivatives are of its operation; its gradients are of f
    result_local = r"\frac{\partial \left(x y + \tanh(x)\right)}{\partial \tanh(x)} &= 1, "
    assert result_local + r"\qquad 1 \cdot 1 = 1" in body
    assert r"\frac{\partial \left(x y\right)}{\partial x} &= y = 3, \qquad 3 \cdot 1 = 3 \\" in body
    # the last sum, at full precision too wide for one line, is broken before its total
    assert body[-5:] == [
        r"\begin{aligned}",
        r"\frac{\partial f}{\partial x} &= 3 + 0.07065082485316446 \\",
        r"&\quad {} = 3.0706508248531645",
        r"\end{aligned}",
        r"\end{gather*}",
    ]
    text = done.stdout
    assert text.count("{") == text.count("}") and text.count(r"\left(") == text.count(r"\right)")


def latex_of(*args: str) -> str:
    done = in_process("explain", *args, "--format", "latex")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_latex_partials_of_a_power_by_base_and_exponent():
    # d(x**x)/dx = x*x**(x-1) + x**x*log(x) = 4 + 4 log 2 at x = 2: the two terms by a and b
    text = latex_of("x**x", "--x", "2", "--digits", "3")
    by_base = r"\left.\frac{\partial \left(a^{b}\right)}{\partial a}\right|_{a = x,\ b = x}"
    by_exponent = by_base.replace(r"\partial a}", r"\partial b}")
    lines = text.splitlines()
    assert f"{by_base} = x x^{{x - 1}} = 4, \\qquad 4 \\cdot 1 = 4 \\\\" in lines
    k = lines.index(f"{by_exponent} &= x^{{x}} \\log(x) = 2.77, \\\\")  # broken to fit
    assert lines[k + 1] == r"&\quad 2.77 \cdot 1 = 2.77"
    assert r"\frac{\partial f}{\partial x} &= 4 + 2.77 = 6.77" in text  # 4 + 4 log 2 = 6.7726


def test_comparisons_are_iverson_brackets_and_where_reads_as_one():
    text = latex_of("where(x > 0, x**2, -x)", "--x", "2")
    assert r"[x > 0] &= 1" in text and r"\ne" not in text
    assert r"= [x > 0] = 1, \qquad 1 \cdot 1 = 1" in text
    assert r"= 1 - [x > 0] = 0, \qquad 0 \cdot 1 = 0" in text
    assert r"\frac{\partial [x > 0]}{\partial x} &= 0" in text  # a bracket needs no ( )
    plain = in_process("explain", "where(x > 0, x**2, -x)", "--x", "2").stdout
    rows = [line.split() for line in plain.splitlines()]
    assert ["x**2", "x", ">", "0", "1.0", "1.0"] in rows  # (x > 0) != 0 is x > 0
    assert ["-x", "1", "-", "(x", ">", "0)", "0.0", "0.0"] in rows  # (x > 0) == 0 is 1 - (x > 0)


@pytest.mark.parametrize("fmt", ["latex", "markdown", "table"])
def test_no_negative_zero(fmt):
    # d(x*0)/dx = 0, times the gradient -1 of x*0 in 1 - x*0: the product is -0.0
    done = in_process("explain", "1 - x*0", "--x", "2", "--format", fmt, "--digits", "3")
    assert done.returncode == 0
    assert not re.search(r"(?<![\w.])-0(?![\w.])", done.stdout), done.stdout


def test_a_note_where_rounded_terms_do_not_add_up():
    # x + x + x at x = 1/3, 3 digits: 0.333 + 0.333 + 0.333 = 0.999, but the total is 1 (3
    # times 1 exactly); at full precision the terms add up and there is no note
    args = ("x*1.004 + x*1.004", "--x", "1")
    rounded = latex_of(*args, "--digits", "3")
    assert r"\frac{\partial f}{\partial x} &= 1 + 1 = 2.01" in rounded
    assert rounded.splitlines()[-1] == (
        r"\noindent Rounded, the terms of $\frac{\partial f}{\partial x}$ do not add up to "
        "the total shown: the total is the sum of the unrounded terms."
    )
    plain = in_process("explain", *args, "--digits", "3").stdout
    assert plain.splitlines()[-1] == (
        "note: rounded, the terms of the gradient of x do not add up to the total shown: "
        "the total is the sum of the unrounded terms"
    )
    assert "note" not in latex_of(*args) and "note" not in in_process("explain", *args).stdout
    screen = visible(on_terminal("explain", *args, "--digits", "3", columns=200))
    assert screen[-1] == plain.splitlines()[-1]  # the installed command, on a terminal


LATEX_CASES = [
    EXAMPLE,
    ["-f", WORKED, "--x", "-4", "--y", "2", "--digits", "4"],
    ["alpha_1 = x*1e-3; loss = sqrt(alpha_1) / (2**x); loss += abs(loss); loss", "--x", "3"],
    ["log(x) + x**0.5 - (-2)**x", "--x", "-1"],
    ["x**x*sin(x)**2/(1+exp(-x))", "--x", "2"],
    [
        "sigmoid(w1*x1 + w2*x2 + b)*log(softplus(w1*x1)) + tanh(w2*x2)*exp(-b**2)",
        *("--x1", "1.5", "--x2", "-2", "--w1", "0.3", "--w2", "-0.7", "--b", "0.1"),
    ],
    ["where(x > 0, x**2, -x) * (y != 1) * atan2(y, x) * lgamma(x*y)", "--x", "1.3", "--y", "0.7"],
    ["x*x*x*x*x*x*x*x*x*x*x*x*x*x + x", "--x", "1.234567"],
    ["x*1.004 + x*1.004", "--x", "1", "--digits", "3"],
]


@pytest.mark.slow
@pytest.mark.parametrize("args", LATEX_CASES)
def test_latex_compiles_within_the_page(args, tmp_path):
    done = in_process("explain", *args, "--format", "latex")
    assert done.returncode == 0, done.stderr
    assert pdflatex(tmp_path, done.stdout).stat().st_size > 1000
    assert overfull(tmp_path) == []


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(expressions(), st.sampled_from([[], ["--digits", "3"]]))
def test_latex_of_random_expressions_fits_the_page(source, digits):
    point = [
        a
        for name, v in POINT.items()
        if re.search(rf"\b{name}\b", source)
        for a in (f"--{name}", str(v))
    ]
    done = in_process("explain", *point, "--format", "latex", *digits, "--", source)
    assert done.returncode == 0, done.stderr
    with tempfile.TemporaryDirectory() as folder:
        pdflatex(Path(folder), done.stdout)
        assert overfull(Path(folder)) == [], source


def table_rows(screen: list[str]) -> list[list[str]]:
    """The body rows of the Rich tables on a screen, cells stripped."""
    return [[c.strip() for c in line.split("│")[1:-1]] for line in screen if line.count("│") > 2]


def test_worked_example_on_an_80_column_terminal():
    screen = visible(on_terminal("explain", *EXAMPLE, columns=80))
    assert all(len(line) <= 80 for line in screen) and not any("…" in line for line in screen)
    assert screen[0].strip() == "forward pass"
    assert any(line.strip() == "backward pass" for line in screen)
    result = explain(parse(EXAMPLE[0]), {"x": 2.0, "y": 3.0})
    forward, backward = forward_rows(result), backward_rows(result, significant(6))
    assert table_rows(screen) == forward[1:] + backward[1:]


# What explain shows at 60, 70 and 80 columns: at 80 in fewer digits; at 70 in 4 digits
# with a node wrapped after its operator; at 60 the backward pass, which no wrapping can fit
# without breaking a word or a number, as a block per node.
EXPLAIN = {
    60: """\
            forward pass
┏━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃node          ┃              value┃
┡━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│x             │                2.0│
│y             │                3.0│
│x*y           │                6.0│
│tanh(x)       │ 0.9640275800758169│
│x*y + tanh(x) │ 6.9640275800758165│
└──────────────┴───────────────────┘
          backward pass
┌─────────┬──────────────────────┐
│node     │ x*y + tanh(x)        │
│gradient │ 1.0                  │
│argument │ x*y                  │
│local    │ 1                    │
│value    │ 1.0                  │
│product  │ 1.0                  │
│argument │ tanh(x)              │
│local    │ 1                    │
│value    │ 1.0                  │
│product  │ 1.0                  │
├─────────┼──────────────────────┤
│node     │ x*y                  │
│gradient │ 1.0                  │
│argument │ x                    │
│local    │ y                    │
│value    │ 3.0                  │
│product  │ 3.0                  │
│argument │ y                    │
│local    │ x                    │
│value    │ 2.0                  │
│product  │ 2.0                  │
├─────────┼──────────────────────┤
│node     │ y                    │
│gradient │ 2.0                  │
├─────────┼──────────────────────┤
│node     │ tanh(x)              │
│gradient │ 1.0                  │
│argument │ x                    │
│local    │ 1/cosh(x)**2         │
│value    │ 0.07065082485316446  │
│product  │ 0.07065082485316446  │
├─────────┼──────────────────────┤
│node     │ x                    │
│gradient │ 3.0                  │
│         │ + 0.07065082485316446│
│         │ = 3.0706508248531645 │
└─────────┴──────────────────────┘
""",
    70: """\
            forward pass
┏━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃node          ┃              value┃
┡━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│x             │                2.0│
│y             │                3.0│
│x*y           │                6.0│
│tanh(x)       │ 0.9640275800758169│
│x*y + tanh(x) │ 6.9640275800758165│
└──────────────┴───────────────────┘
                            backward pass
┏━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━┓
┃node       ┃  gradient ┃ argument ┃ local        ┃   value ┃ product┃
┡━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━┩
│x*y +      │         1 │ x*y      │ 1            │       1 │       1│
│tanh(x)    │           │          │              │         │        │
│           │           │ tanh(x)  │ 1            │       1 │       1│
│x*y        │         1 │ x        │ y            │       3 │       3│
│           │           │ y        │ x            │       2 │       2│
│y          │         2 │          │              │         │        │
│tanh(x)    │         1 │ x        │ 1/cosh(x)**2 │ 0.07065 │ 0.07065│
│x          │         3 │          │              │         │        │
│           │ + 0.07065 │          │              │         │        │
│           │   = 3.071 │          │              │         │        │
└───────────┴───────────┴──────────┴──────────────┴─────────┴────────┘
""",
    80: """\
            forward pass
┏━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃node          ┃              value┃
┡━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│x             │                2.0│
│y             │                3.0│
│x*y           │                6.0│
│tanh(x)       │ 0.9640275800758169│
│x*y + tanh(x) │ 6.9640275800758165│
└──────────────┴───────────────────┘
                                 backward pass
┏━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━┓
┃node          ┃    gradient ┃ argument ┃ local        ┃     value ┃   product┃
┡━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━┩
│x*y + tanh(x) │           1 │ x*y      │ 1            │         1 │         1│
│              │             │ tanh(x)  │ 1            │         1 │         1│
│x*y           │           1 │ x        │ y            │         3 │         3│
│              │             │ y        │ x            │         2 │         2│
│y             │           2 │          │              │           │          │
│tanh(x)       │           1 │ x        │ 1/cosh(x)**2 │ 0.0706508 │ 0.0706508│
│x             │           3 │          │              │           │          │
│              │ + 0.0706508 │          │              │           │          │
│              │   = 3.07065 │          │              │           │          │
└──────────────┴─────────────┴──────────┴──────────────┴───────────┴──────────┘
""",
}


@pytest.mark.parametrize("columns", [60, 70, 80])
def test_explain_fits_the_terminal_without_breaking_a_word_or_a_number(columns):
    screen = visible(on_terminal("explain", *EXAMPLE, columns=columns))
    assert [line.rstrip() for line in screen] == EXPLAIN[columns].splitlines()


def test_a_long_program_on_an_80_column_terminal_keeps_every_label_and_digit():
    """The spec's worked example does not fit 80 columns: its cells wrap, but no character of
    a label or of a number shown is lost, and a table's numbers all have the same digits."""
    screen = visible(on_terminal("explain", "-f", WORKED, "--x", "-4", "--y", "2", columns=80))
    assert all(len(line) <= 80 for line in screen) and not any("…" in line for line in screen)
    title = next(k for k, line in enumerate(screen) if line.strip() == "backward pass")
    result = explain(parse(Path(WORKED).read_text()), {"x": -4.0, "y": 2.0})
    for rows, make_rows in [
        (table_rows(screen[:title]), lambda number: forward_rows(result, number)),
        (table_rows(screen[title:]), lambda number: backward_rows(result, number)),
    ]:
        assert rows, screen
        shown = columns(rows)
        assert any(
            columns(make_rows(number)[1:]) == shown
            for number in (repr, *map(significant, (12, 10, 8, 6, 4)))
        ), shown


def test_records_show_numbers_in_full_beside_a_name_too_long_for_the_line():
    """At 40 columns a name of 28 characters fits no line, in any number of digits: the
    records still show the numbers in full, as they fit."""
    name = "very_long_variable_name_here"
    screen = visible(
        on_terminal(
            "explain",
            f"{name}*y + 1234567.891011*x",
            f"--{name}",
            "1.5",
            "--y",
            "2",
            "--x",
            "3",
            columns=40,
        )
    )
    assert all(len(line) <= 40 for line in screen)
    assert any("3703703.673033" in line for line in screen), screen  # not 3.704e+06
    assert any("1234567.891011" in line for line in screen)


def columns(rows: list[list[str]]) -> list[str]:
    """Each column's text read top to bottom, without spaces: what wrapping cannot change."""
    return ["".join(row[j] for row in rows).replace(" ", "") for j in range(len(rows[0]))]


@pytest.mark.parametrize(
    "args",
    [
        ["x*y", "--x", "1"],  # missing input
        ["x*", "--x", "1"],  # syntax error, with a caret
        ["x", "--x", "1", "--y", "2"],  # unknown input
        ["2x", "--x", "1"],  # a hint
        ["nosuch.txt", "--x", "1"],  # no such file
        ["x", "--x", "1e999"],  # overflow
    ],
)
def test_bad_input_as_grad_reports_it(args):
    explained, graded = in_process("explain", *args), in_process("grad", *args)
    assert explained.returncode == graded.returncode != 0
    assert explained.stderr == graded.stderr and explained.stdout == ""
    assert explained.stderr.startswith("error: ") and "Traceback" not in explained.stderr


def test_bad_options_and_non_finite_values():
    bad = in_process("explain", "x", "--x", "1", "--format", "csv")
    assert bad.returncode == 2 and "'csv' is not one of" in bad.stderr
    digits = in_process("explain", "x", "--x", "1", "--digits", "0")
    assert digits.returncode == 2 and "neither a number of digits" in digits.stderr
    explained = in_process("explain", "log(x)", "--x", "-1", "--format", "json")
    graded = in_process("grad", "log(x)", "--x", "-1", "--format", "json")
    assert explained.returncode == 0 and explained.stderr == graded.stderr
    assert explained.stderr.startswith("warning: line 1, column 1: log gave nan")
    data = json.loads(explained.stdout)
    assert data["value"] == "nan" and data["forward"][-1]["value"] == "nan"


def test_help_has_examples():
    done = in_process("explain", "--help")
    assert done.returncode == 0 and "Examples:" in done.stdout
    assert re.search(r"--format \[table\|markdown\|latex\|json\]", done.stdout)


def test_a_source_without_inputs_says_there_is_nothing_to_differentiate():
    note = "the source reads no input: there is nothing to differentiate"
    plain = in_process("explain", "2*3 + 1")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.endswith(f"backward pass\n{note}\n")
    assert in_process("explain", "2*3 + 1", "--format", "markdown").stdout.endswith(
        f"**Backward pass**\n\n{note}\n"
    )
    assert in_process("explain", "2*3 + 1", "--format", "latex").stdout.endswith(
        f"% Backward pass: {note}\n"
    )
    assert visible(on_terminal("explain", "2*3 + 1"))[-1] == f"backward pass: {note}"


@given(expressions())
def test_a_cell_wraps_only_between_names_numbers_and_operators(text):
    """Wrapping at any width it can keep: every character but the spaces at line ends is
    kept, and no line ends inside a name or a number."""
    assert "".join(pieces(text)) == text
    solid = text.replace(" ", "")
    inside = {
        k for word in re.finditer(r"[\w.]+", solid) for k in range(word.start() + 1, word.end())
    }
    for width in range(least_width(text), len(text) + 1):
        lines = wrap(text, width).splitlines()
        assert all(len(line) <= width for line in lines)
        assert "".join(lines).replace(" ", "") == solid
        ends = {
            sum(len(line.replace(" ", "")) for line in lines[: k + 1]) for k in range(len(lines))
        }
        assert not ends & inside, (text, width, lines)


def test_a_local_formula_is_written_by_its_own_sources_fractions():
    """explain of a source of decimals, then of whole numbers, with the same part (x/5): its
    local derivative is 0.2 in the first and 1/5 in the second, each as its source writes
    numbers (a template made for the first was reused for the second)."""
    from nanograd_cli import _api as api
    from nanograd_cli import parse
    from nanograd_cli.render._explanation import written

    def local(source: str) -> str:
        table = written(api.explain(parse(source), {"x": 1.0}), "table")
        backward = table.split("backward pass")[1].splitlines()
        row = next(line for line in backward if line.split()[:1] == ["x/5"] and "+" not in line)
        return row.split()[3]  # node, gradient, argument, local

    assert local("y = 0.5\nx/5 + y") == "0.2"
    assert local("x/5") == "1/5"


@pytest.mark.parametrize(
    "source", ["(x + y)*(x + y)", "sin(x)*sin(x) + x", "x*1.004 + x*1.004", "exp(x*y)*exp(x*y)"]
)
def test_no_two_nodes_read_alike(source):
    """Two nodes of the same text (the source wrote it twice: two nodes, each with its own
    gradient) are told apart: the second is named, t1 = ..., and read by that name."""
    program = parse(source)
    explained = explain(program, {name: 1.5 for name in program.inputs})
    texts = [step.node.text for step in explained.forward]
    assert len(set(texts)) == len(texts), texts
    assert len({step.node.text for step in explained.backward}) == len(explained.backward)


def test_the_second_of_two_alike_nodes_is_named_where_it_is_used():
    explained = explain(parse("(x + y)*(x + y)"), {"x": 1.0, "y": 2.0})
    rows = [(s.node.text, s.expression.text, s.value) for s in explained.forward]
    assert rows[2:] == [
        ("x + y", "x + y", 3.0),
        ("t1", "x + y", 3.0),
        ("(x + y)*t1", "(x + y)*t1", 9.0),
    ]
    assert [(s.node.text, s.gradient) for s in explained.backward[:3]] == [
        ("(x + y)*t1", 1.0),
        ("x + y", 3.0),
        ("t1", 3.0),
    ]
