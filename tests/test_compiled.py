"""The compiled program against the engine, bit for bit: random expressions, random graphs of
every op with shared nodes, every op at its edge points; and no text of a source in the code."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nanograd_cli import _forward as forward
from nanograd_cli import parse
from nanograd_cli._compiled import (
    Compiled,
    compiled,
    forward_source,
    gradient_source,
    gradients_at,
    literal,
    value_at,
    value_source,
)
from nanograd_cli._forward import duals
from nanograd_cli._ops import OPS
from nanograd_cli._program import Apply, Const, Input, Program

from .helpers import WORKED, expressions

# The numbers where ops change their behaviour: zeros of both signs, infinities, nan, kinks
# (0, where arguments tie), the ends of domains (±1, -1 for log1p), where exp and cosh
# overflow (710), where squares overflow and underflow, subnormals.
EDGES = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.5,
    3.0,
    1e-8,
    -1e-300,
    5e-324,
    1e-310,
    1e154,
    -1e200,
    710.0,
    -710.0,
    1e308,
    -1.7976931348623157e308,
    math.inf,
    -math.inf,
    math.nan,
]


def bits(x: float) -> str:
    """A float's bits as text: -0.0 and 0.0 differ; every nan is `nan`."""
    return float(x).hex()


def engine(program: Program, point: dict[str, float]) -> list[str]:
    evaluation = program.gradients(point)
    return [bits(evaluation.result.data)] + [bits(n.grad) for n in evaluation.inputs.values()]


def compiled_bits(program: Program, point: dict[str, float]) -> list[str]:
    value, gradients = gradients_at(program, point)
    return [bits(value)] + [bits(gradients[n]) for n in program.inputs]


def assert_same(program: Program, point: dict[str, float]) -> None:
    """The compiled gradient and value give the engine's bits at `point`: the fast versions
    and the exact ones they fall back on."""
    expected = engine(program, point)
    assert compiled_bits(program, point) == expected, (gradient_source(program), point)
    exact = compiled(program)._function("exact gradient")
    values = [point[n] for n in program.inputs]
    assert [bits(v) for v in exact(*values)] == expected, (gradient_source(program, True), point)
    value = bits(program.values(point)[program.result])
    assert bits(value_at(program, point)) == value, (value_source(program), point)
    assert bits(compiled(program)._function("exact value")(*values)) == value


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    expressions(),
    st.one_of(st.floats(-3, 3), st.sampled_from(EDGES)),
    st.one_of(st.floats(-3, 3), st.sampled_from(EDGES)),
    st.one_of(st.floats(-3, 3), st.sampled_from(EDGES)),
)
@example("-(--z - z / (1 + (z)**2))", 0.0, 0.0, 2.242997694615212e-62)
def test_random_expressions_give_the_engines_bits(source, x, y, z):
    program = parse(source)
    assert_same(program, {n: {"x": x, "y": y, "z": z}[n] for n in program.inputs})


KEYS = sorted(OPS)


@st.composite
def graphs(draw) -> tuple[Program, dict[str, float]]:
    """A random graph of every op: each instruction reads earlier ones at random, so nodes are
    shared and gradients are sums of several paths; constants and inputs at edge points."""
    number = st.one_of(st.sampled_from(EDGES), st.floats(-4, 4))
    code: list = [Input("x", 0), Input("y", 0), Input("z", 0)]
    for _ in range(draw(st.integers(1, 25))):
        if draw(st.integers(0, 5)) == 0:
            code.append(Const(draw(number), 0))
            continue
        op = OPS[draw(st.sampled_from(KEYS))]
        args = tuple(draw(st.integers(0, len(code) - 1)) for _ in range(op.arity))
        code.append(Apply(op, args, 0))
    point = {n: draw(number) for n in ("x", "y", "z")}
    return Program("", code, ["x", "y", "z"], len(code) - 1, {}), point


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(graphs())
def test_random_graphs_of_every_op_give_the_engines_bits(graph):
    program, point = graph
    assert_same(program, point)


CONTEXTS = ("alone", "times w", "negated", "twice")


def build(op, mask: int, constants: list[float], context: str) -> Program:
    """`op` with argument k an input where bit k of `mask` is set, else the constant
    `constants[k]`; its result alone, times an input w, negated and subtracted, or added to
    itself and multiplied by itself, so that the gradient reaching it is not just 1."""
    code: list = []
    inputs = []
    args = []
    for k in range(op.arity):
        if mask >> k & 1:
            name = "xyz"[k]
            inputs.append(name)
            code.append(Input(name, 0))
        else:
            code.append(Const(constants[k], 0))
        args.append(len(code) - 1)
    code.append(Apply(op, tuple(args), 0))
    y = len(code) - 1
    if context == "times w":
        inputs.append("w")
        code += [Input("w", 0), Apply(OPS["*"], (y, y + 1), 0)]
    elif context == "negated":
        code += [Apply(OPS["neg"], (y,), 0), Apply(OPS["-"], (y + 1, y), 0)]
    elif context == "twice":
        code += [Apply(OPS["+"], (y, y), 0), Apply(OPS["*"], (y + 1, y), 0)]
    return Program("", code, inputs, len(code) - 1, {})


def at_edge_points(op):
    """Programs of `op` in every context, each argument varying or constant (not all
    constant), with a point at every tuple of edge values: every tuple of edge values as
    constants, and each program (compiled once) at every tuple of them as its inputs."""
    edges = EDGES if op.arity < 3 else [0.0, -0.0, 1.0, -1.0, 2.0, math.inf, -math.inf, math.nan]
    for mask in range(1, 2**op.arity):
        varying = [k for k in range(op.arity) if mask >> k & 1]
        constant = [k for k in range(op.arity) if k not in varying]
        for context in CONTEXTS:
            for fixed in itertools.product(edges, repeat=len(constant)):
                values = [0.0] * op.arity
                for k, v in zip(constant, fixed, strict=True):
                    values[k] = v
                program = build(op, mask, values, context)
                points = []
                for taken in itertools.product(edges, repeat=len(varying)):
                    point = {"xyz"[k]: v for k, v in zip(varying, taken, strict=True)}
                    points.append({n: (point | {"w": -0.75})[n] for n in program.inputs})
                yield program, points


@pytest.mark.slow
@pytest.mark.parametrize("key", KEYS)
def test_every_op_at_its_edge_points_gives_the_engines_bits(key):
    for program, points in at_edge_points(OPS[key]):
        for point in points:
            assert_same(program, point)


def test_worked_example_and_the_gradient_of_an_input_or_a_constant():
    program = parse(Path(WORKED).read_text())
    assert compiled_bits(program, {"x": -4.0, "y": 2.0}) == engine(program, {"x": -4.0, "y": 2.0})
    for source in ("x", "x; 2", "2", "x*0 + y", "pi*x - x"):
        program = parse(source)
        point = {n: 1.5 for n in program.inputs}
        assert compiled_bits(program, point) == engine(program, point), source


def test_a_source_that_lists_outputs_compiles_its_result():
    program = parse("u = x*y\nv = x + y\nu, v")
    assert gradients_at(program, {"x": 2.0, "y": 3.0}) == (6.0, {"x": 3.0, "y": 2.0})


WHERES = [
    "where(x > 0, log(x), 0)",  # the branch not taken is nan: it adds nothing
    "where(x > 0, sqrt(x)*y, y*y) + where(y < 1, log(x), x*y)",  # shared inputs, both sides
    "u = sqrt(x)\nv = where(x >= 0, u, -x)\nwhere(y != 0, v*u, v/y)",  # a node below two wheres
    "where(where(x > y, x - y, 0), log(x - y), where(y > 0, log(y), x))",  # nested, as a condition
    "t = where(x > 0, x, y)\nwhere(t > 1, t*t, t) + where(2 > 1, x, log(-y))",  # constant condition
    "(x + 3)**2 + where(y, where(x > 5, 1, sqrt(x)), 0)",  # nested below a branch not taken
]


@pytest.mark.parametrize("source", WHERES)
@pytest.mark.parametrize(
    ("x", "y"), [(2.0, 0.5), (-1.0, 3.0), (0.0, -0.0), (3.0, 2.0), (math.nan, 1.0), (-2.0, -1.0)]
)
def test_a_where_passes_gradient_only_to_the_branch_taken_as_the_engine(source, x, y):
    program = parse(source)
    assert_same(program, {n: {"x": x, "y": y}[n] for n in program.inputs})


# Sources of nested wheres over comparisons, with functions at the edges of their domains in
# the branches: where a branch not taken is nan or inf, and a where lies below another's.
_LEAVES = st.sampled_from(["x", "y", "z", "0", "1", "-2"])
_EDGY = st.tuples(st.sampled_from(["sqrt", "log", "asin", "acosh", "atanh", "1/"]), _LEAVES).map(
    lambda t: f"{t[0]}({t[1]})"
)
_BRANCHY = st.recursive(
    st.one_of(_LEAVES, _EDGY),
    lambda inner: st.one_of(
        st.tuples(inner, inner, inner).map(lambda t: f"where({t[0]}, {t[1]}, {t[2]})"),
        st.tuples(inner, st.sampled_from(["<", ">=", "==", "!="]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(st.sampled_from(["sqrt", "log", "exp"]), inner).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(inner, st.sampled_from(["+", "*", "/", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
    ),
    max_leaves=10,
)
_BRANCH_POINTS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.0, -3.0, 1e300, math.inf, math.nan])


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(_BRANCHY, _BRANCHY, _BRANCHY, _BRANCH_POINTS, _BRANCH_POINTS, _BRANCH_POINTS)
def test_random_nested_wheres_give_the_engines_bits(outer, inner, other, x, y, z):
    """The compiled gradient of nested wheres, comparisons and functions at their domains'
    edges, bit for bit the engine's: a where below a branch not taken passes nothing on."""
    source = f"where({outer}, where({inner}, {other}, sqrt(x)*log(y)), 1/z) + x*y*z"
    program = parse(source)  # every input read
    assert_same(program, {"x": x, "y": y, "z": z})


@pytest.mark.parametrize(
    "x", [0.0, -0.0, 1.5, -2.25, 1e300, -5e-324, 0.1, 1 / 3, math.inf, -math.inf, math.nan]
)
def test_literals_round_trip(x):
    assert bits(eval(literal(x), {"INF": math.inf, "NAN": math.nan})) == bits(x)


HOSTILE = """
__import__ = os * system + tanh(os)   # ');__import__('os').system('rm -rf /')#
__class__ = __import__ / exec ** 2  # \\n\\x00 \"\"\" '''
__builtins__ = __class__ - eval
__builtins__
"""
PLAIN = """
a = b * c + tanh(b)
d = a / h ** 2
f = d - k
f
"""


def test_names_and_comments_never_reach_the_generated_code():
    hostile, plain = parse(HOSTILE), parse(PLAIN)
    assert gradient_source(hostile) == gradient_source(plain)
    assert value_source(hostile) == value_source(plain)
    assert forward_source(hostile) == forward_source(plain)
    for word in ("import", "os", "system", "exec", "eval", "class", "rm", "builtins"):
        assert word not in gradient_source(hostile)
    function = Compiled(hostile).gradient
    assert function.__globals__["__builtins__"] == {}
    point = {"os": 0.5, "system": 2.0, "exec": 3.0, "eval": -1.0}
    assert compiled_bits(hostile, point) == engine(hostile, point)


def test_compiled_once_per_program():
    program = parse("x*y")
    assert compiled(program) is compiled(program)
    assert compiled(program).gradient is compiled(program).gradient
    assert compiled(parse("x*y")) is not compiled(program)


def test_inputs_are_checked_as_the_engine_checks_them():
    from nanograd_cli.errors import MissingInputs, UnknownInputs

    program = parse("x*y")
    with pytest.raises(MissingInputs):
        gradients_at(program, {"x": 1.0})
    with pytest.raises(UnknownInputs):
        value_at(program, {"x": 1.0, "y": 2.0, "q": 3.0})
    assert gradients_at(program, {"x": 2, "y": 3}) == (6.0, {"x": 3.0, "y": 2.0})


@pytest.mark.slow
def test_a_long_chain_compiles():
    program = parse("q = x\n" + "q = tanh(q*0.9 + 0.1)\n" * 5_000 + "q")
    assert compiled_bits(program, {"x": 0.3}) == engine(program, {"x": 0.3})


@pytest.mark.parametrize(
    "source",
    [
        " + ".join(f"tanh(x{i} * x{(i + 1) % 12}) / (1 + x{i}**2)" for i in range(12)),
        "log(x) + sqrt(y) + 1/z",  # numeric derivatives that step past 0
    ],
)
def test_check_compiled_gives_the_engines_result(source, monkeypatch):
    from nanograd_cli import _gradcheck as gradcheck

    program = parse(source)
    point = {n: 0.1 * k - 0.4 for k, n in enumerate(program.inputs)} | {"x": 1e-7}
    point = {n: point[n] for n in program.inputs}
    assert gradcheck.worth_compiling(program, 2 * len(program.inputs)) == (len(program.inputs) > 3)
    monkeypatch.setattr(gradcheck, "worth_compiling", lambda program, evaluations: True)
    ours = gradcheck.gradient_check(program, point)
    monkeypatch.setattr(gradcheck, "worth_compiling", lambda program, evaluations: False)
    assert repr(ours) == repr(gradcheck.gradient_check(program, point))


# Forward mode compiled (forward_source) against forward mode's dual numbers (forward.duals).


def duals_bits(program: Program, point: dict[str, float]) -> list[str]:
    """Each output's value, then its derivatives by the inputs, as forward mode makes them."""
    nodes = duals(program, point)
    slots = list(program.results.values())
    tangents = [nodes[s][1] or {} for s in slots]
    inputs = range(len(program.inputs))
    return [bits(nodes[s][0]) for s in slots] + [
        bits(t.get(k, 0.0)) for t in tangents for k in inputs
    ]


def assert_same_forward(program: Program, point: dict[str, float]) -> None:
    """The compiled forward pass gives the dual numbers' bits, the fast version and the exact
    one it falls back on; its first number is finite only where every value is."""
    values = [float(point[n]) for n in program.inputs]
    expected = duals_bits(program, point)
    for function in (compiled(program).forward, compiled(program)._function("exact forward")):
        out = function(*values)
        assert [bits(v) for v in out[1:]] == expected, (forward_source(program), point)
        if math.isfinite(out[0]):
            assert all(math.isfinite(node[0]) for node in duals(program, point))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(expressions(), min_size=1, max_size=3),
    st.one_of(st.floats(-3, 3), st.sampled_from(EDGES)),
    st.one_of(st.floats(-3, 3), st.sampled_from(EDGES)),
    st.one_of(st.floats(-3, 3), st.sampled_from(EDGES)),
)
def test_forward_mode_compiled_gives_the_duals_bits(sources, x, y, z):
    """Random programs of one to three outputs, sharing the inputs."""
    lines = [f"u{k} = {s}" for k, s in enumerate(sources)]
    program = parse("\n".join([*lines, ", ".join(f"u{k}" for k in range(len(sources)))]))
    assert_same_forward(program, {n: {"x": x, "y": y, "z": z}[n] for n in program.inputs})


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(graphs())
def test_forward_mode_compiled_on_random_graphs_of_every_op(graph):
    program, point = graph
    assert_same_forward(program, point)


@pytest.mark.slow
@pytest.mark.parametrize("key", KEYS)
def test_forward_mode_compiled_on_every_op_at_its_edge_points(key):
    for program, points in at_edge_points(OPS[key]):
        for point in points:
            assert_same_forward(program, point)


def test_forward_mode_is_compiled_after_enough_evaluations_and_gives_the_same_results():
    program = parse("u = x*y + tanh(x); v = log(x) - y/x; w = relu(y)**2; u, v, w")
    fresh = parse(program.source)
    for k in range(forward.COMPILE_FROM + 5):
        point = {"x": 0.5 + k / 10, "y": -1.0 + k / 7}
        assert repr(program.jacobian(point, "forward")) == repr(fresh.jacobian(point, "reverse"))
    assert "forward" in compiled(program)._functions
    bad = {"x": -1.0, "y": 2.0}  # log(-1): the duals say where the nan came from
    result = program.jacobian(bad, "forward")
    assert str(result.non_finite) == str(parse(program.source).jacobian(bad).non_finite)
    assert result.non_finite is not None
    single = parse("x*y + tanh(x)")
    for _ in range(forward.COMPILE_FROM + 1):
        assert single.grad({"x": 2.0, "y": 3.0}, "forward") == single.grad({"x": 2.0, "y": 3.0})
