"""The ops' JavaScript, written from the ops table: the writer, what an op lacks, and ops.js
and the generated script run in Node (skipped where there is none). test_html.py holds every
op to Python in the browser."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from importlib import resources

import pytest

from nanograd_cli._algebra import Written
from nanograd_cli._formula import javascript
from nanograd_cli._language import parse
from nanograd_cli._ops import OPS, Op
from nanograd_cli.render._ops_js import (
    FORWARD,
    OVERRIDES,
    called,
    defined,
    formula_javascript,
    helpers,
    op_javascript,
    ops_script,
)

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="no Node.js installed (Debian: nodejs)")
FUNCTIONS = {op: FORWARD.get(key, op.name) for key, op in OPS.items()}


def js(source: str) -> str:
    (text,) = javascript([Written().program(parse(source))], FUNCTIONS)
    return text


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("-(-x)", "-(-x)"),  # never --, a decrement
        ("-(-2*x)", "-(-2*x)"),
        ("a*(b/c)", "a*(b/c)"),  # the order of the rounding steps is kept
        ("a/b/c", "a/b/c"),
        ("a - (b - c)", "a - (b - c)"),
        ("x**2 + 2**-x", "power(x, 2) + power(2, -x)"),
        ("pow(x, 3)*log(x, 2)", "power(x, 3)*logBase(x, 2)"),
        ("pi*e*sin(x)", "Math.PI*Math.E*sin(x)"),
        ("x - -1", "x - -1"),
        ("max(x, 1e300)", "max(x, 1e+300)"),
    ],
)
def test_the_writer_keeps_the_formula_as_it_is_written(source, expected):
    assert js(source) == expected


def test_the_writer_writes_nan_and_the_infinities_as_javascript_does():
    written = Written()
    x = written.input("x")
    roots = [written.op(OPS["+"], x, written.number(v)) for v in (math.nan, math.inf, -math.inf)]
    assert javascript(roots, FUNCTIONS) == ["x + NaN", "x + Infinity", "x + -Infinity"]


def test_an_ops_own_value_is_out():
    assert op_javascript("sqrt", OPS["sqrt"]) == ("sqrt(x)", "[1/(2*out)]")
    assert op_javascript("/", OPS["/"]) == ("a/b", "[1/b, -out/b]")


def cube(x: float) -> float:
    return x**3


def test_an_op_without_a_javascript_function_is_named():
    op = Op("cube", 1, cube, ("3*x**2",), "x**3")
    with pytest.raises(KeyError, match=r"'cube' has no JavaScript: .*ops\.js defines no cube"):
        op_javascript("cube", op)


def test_an_op_without_formulas_or_an_override_is_named():
    op = Op("abs", 1, abs, (), "no formulas", derivative=lambda x, y: (1.0,))
    with pytest.raises(KeyError, match="'abs' has no JavaScript derivative: it needs a formula"):
        op_javascript("abs", op)


@needs_node
def test_every_function_the_page_calls_is_defined_in_ops_js(tmp_path):
    """Node's word on each name the ops call, and on each that ops.js is read to define."""
    calls = {key: called("".join(op_javascript(key, op))) for key, op in OPS.items()}
    names = sorted(defined().union(*calls.values()))
    path = tmp_path / "names.js"
    path.write_text(
        helpers()
        + f"const names = {json.dumps(names)};\n"
        + "console.log(JSON.stringify(names.filter((n) => eval(`typeof ${n}`) === 'undefined')));\n"
    )
    done = subprocess.run([NODE, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    undefined = set(json.loads(done.stdout))
    missing = {key: sorted(names & undefined) for key, names in calls.items() if names & undefined}
    assert missing == {}
    assert undefined == set()


@needs_node
def test_ops_js_parses():
    path = resources.files("nanograd_cli.render").joinpath("ops.js")
    done = subprocess.run([NODE, "--check", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def in_node(tmp_path, script: str, points: dict[str, list[list[float]]]) -> dict:
    """Per key of `OPS` (as `script` defines it): [f, *d] at each of its points, from Node."""
    path = tmp_path / "run.js"
    path.write_text(
        script
        + f"const points = {json.dumps(points)};\n"
        + "const out = {};\n"
        + "for (const [key, pts] of Object.entries(points)) out[key] = pts.map((p) => {\n"
        + "  const y = OPS[key].f(...p); return [y, ...OPS[key].d(...p, y)]; });\n"
        + "console.log(JSON.stringify(out));\n"
    )
    done = subprocess.run([NODE, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def python(op: Op, p: list[float]) -> list[float]:
    y = op.forward(*p)
    return [y, *op.derivative(*p, y)]


def off(got: list[float | None], want: list[float], rel: float) -> bool:
    return len(got) != len(want) or any(
        g is None or abs(g - w) > rel * abs(w) for g, w in zip(got, want, strict=True)
    )


@needs_node
def test_the_script_runs_every_op_as_python_does(tmp_path):
    """Every op's f and d in Node, at two points of its domain, to 1e-12 of Python's."""
    points = {}
    for key, op in OPS.items():
        low, high = op.domain
        points[key] = [[low + (high - low) * t] * op.arity for t in (0.3, 0.7)]
    results = in_node(tmp_path, ops_script(list(OPS)), points)
    wrong = [
        (key, p, got)
        for key, op in OPS.items()
        for p, got in zip(points[key], results[key], strict=True)
        if off(got, python(op, p), 1e-12)
    ]
    assert wrong == []


# Where an override does what its formula cannot, for each op that has one.
NEEDED_AT: dict[str, list[float]] = {}  # none now: tanh's formula is sech(x)**2


@needs_node
def test_tanh_keeps_its_tiny_derivative_from_its_formula(tmp_path):
    """sech(x)**2 at 360 is 4*exp(-720), where 1/cosh(x)**2 (the formula it replaced, and an
    override that wrote the engine's 4e/(1 + e)**2 by hand) is 0."""
    points = {"tanh": [[360.0], [-720.0], [0.3]]}
    got = in_node(tmp_path, ops_script(["tanh"]), points)["tanh"]
    for p, row in zip(points["tanh"], got, strict=True):
        assert not off(row, python(OPS["tanh"], p), 1e-12), (p, row)
    assert got[0][1] > 0


@needs_node
def test_every_override_is_needed(tmp_path):
    """An override is kept only where the formula, as written, misses the engine's number."""
    assert set(NEEDED_AT) == set(OVERRIDES)
    points = {key: [[x] * OPS[key].arity for x in xs] for key, xs in NEEDED_AT.items()}
    script = ops_script(list(OVERRIDES))
    overridden = in_node(tmp_path, script, points)
    for key in OVERRIDES:  # the same script with the formula's derivative in each row
        script = script.replace(OVERRIDES[key], formula_javascript(key, OPS[key]))
    from_formula = in_node(tmp_path, script, points)
    for key, pts in points.items():
        for p, by_hand, formula in zip(pts, overridden[key], from_formula[key], strict=True):
            want = python(OPS[key], p)
            assert not off(by_hand, want, 1e-6) and off(formula, want, 1e-6), (key, p)


EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -1.5, 3.0, 0.3, 20.0, -40.0, 400.0, 1e-300]
EDGES += [1e300, math.inf, -math.inf, math.nan]


def agree(got: float | str, want: float, rel: float) -> bool:
    """The same number to `rel`, the same infinity, or both nan (Node's side sends nan and
    the infinities as strings: JSON has none)."""
    if isinstance(got, str):
        got = float(got.replace("Infinity", "inf"))
    if math.isnan(want) or math.isinf(want):
        return got == want or (math.isnan(got) and math.isnan(want))
    return abs(got - want) <= rel * abs(want) or abs(got - want) < 1e-300


@needs_node
def test_every_op_in_javascript_is_the_tables_at_the_edge_points(tmp_path):
    """Each op's forward and derivatives in Node, at every pair (or triple) of edge points:
    zeros of both signs, integers, saturation, huge, tiny, the infinities and nan, to 1e-12 of
    Python's, infinities and nan alike."""
    import itertools

    points = {
        key: [list(p) for p in itertools.product(EDGES, repeat=op.arity)] for key, op in OPS.items()
    }
    path = tmp_path / "edges.js"
    path.write_text(
        ops_script(list(OPS))
        + f"const points = {json.dumps(points)};\n"  # NaN and Infinity, as JavaScript has them
        + "const show = (v) => (Number.isFinite(v) ? v : String(v));\n"
        + "const out = {};\n"
        + "for (const [key, pts] of Object.entries(points)) "
        + "out[key] = pts.map((p) => { const y = OPS[key].f(...p); "
        + "return [y, ...OPS[key].d(...p, y)].map(show); });\n"
        + "console.log(JSON.stringify(out));\n"
    )
    done = subprocess.run([NODE, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    wrong = []
    for key, pts in points.items():
        for p, got in zip(pts, results[key], strict=True):
            want = python(OPS[key], p)
            if not all(agree(g, w, 1e-12) for g, w in zip(got, want, strict=True)):
                wrong.append((key, p, got, want))
    assert wrong == []
