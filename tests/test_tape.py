"""The compiled tape against the engine, and `grad --points`."""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nanograd_cli import _points as points
from nanograd_cli import _tape as tape_module
from nanograd_cli import parse
from nanograd_cli._ops import OPS
from nanograd_cli._tape import Tape, batch_gradients, batch_values

from .helpers import WORKED, expressions, run

np = pytest.importorskip("numpy")


def same(a: float, b: float) -> bool:
    """Equal to 1e-12 relative, or to 1e-13 absolute: a gradient that is a sum of terms of
    order 1 cancelling to about 0 (1 - 1 + 2z**2 at z = 1e-62) comes out as 0 or as the tiny
    term depending on the order of the additions, which differs between engine and tape."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-13)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(expressions(), st.floats(-3, 3), st.floats(-3, 3), st.floats(-3, 3))
@example("-(--z - z / (1 + (z)**2))", 0.0, 0.0, 2.242997694615212e-62)
def test_tape_equals_the_engine_at_random_points(source, x, y, z):
    program = parse(source)
    values = {n: {"x": x, "y": y, "z": z}[n] for n in program.inputs}
    evaluation = program.gradients(values)
    value, gradients = batch_gradients(program, {n: [v] for n, v in values.items()})
    assert same(float(value[0]), evaluation.result.data)
    for name, node in evaluation.inputs.items():
        assert same(float(gradients[name][0]), node.grad), (source, name)


def test_worked_example_on_the_tape():
    program = parse(Path(WORKED).read_text())
    value, gradients = batch_gradients(program, {"x": -4.0, "y": 2.0})
    value, gradients = float(value[0]), {n: float(g[0]) for n, g in gradients.items()}
    assert (round(value, 4), round(gradients["x"], 4), round(gradients["y"], 4)) == (
        4.6945,
        24.7180,
        106.6648,
    )


def test_a_subexpression_written_twice_is_one_step_whose_gradient_is_summed():
    """Hill's x**n twice: computed once, its two uses' adjoints summed, the gradients the
    engine's."""
    program = parse("V*x**n/(K**n + x**n)")
    tape = Tape(program)
    powers = [step for step in tape.steps if step[1] == tape.steps[0][1]]
    assert len(powers) == 1 and len(tape.steps) == 5  # x**n, V*x**n, K**n, +, /
    point = {"V": 1.5, "x": 0.7, "n": 2.5, "K": 2.0}
    value, gradients = batch_gradients(program, point, tape)
    engine = program.grad(point)
    assert same(float(value[0]), engine.value)
    for name in point:
        assert same(float(gradients[name][0]), engine.gradients[name])


def test_a_tape_differentiates_by_the_inputs_asked_for_alone():
    """A fit asks for the parameters' gradients, not the data's: the same numbers, and no
    gradient flows back to the data (0.0 for them)."""
    program = parse("a*exp(-b*x) + c")
    x = np.linspace(0, 4, 7)
    point = {"a": 2.0, "b": 1.3, "c": 0.5, "x": x}
    full = batch_gradients(program, point)[1]
    tape = Tape(program, wrt=["a", "b", "c"])
    (_, gradients), *_ = tape.run(dict(point, a=np.full(7, 2.0)), 7)
    for name in "abc":
        np.testing.assert_array_equal(np.broadcast_to(gradients[name], 7), full[name])
    assert gradients["x"] == 0.0 and full["x"].any()


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(expressions())
def test_vectorized_equals_single_points_on_every_row(source):
    program = parse(source)
    rng = np.random.default_rng(0)
    columns = {n: rng.uniform(-3, 3, 50) for n in program.inputs}
    columns = {n: np.append(c, [0.0, -0.0, 1e300, np.inf, np.nan]) for n, c in columns.items()}
    value, gradients = batch_gradients(program, columns)
    for k in range(len(value)):
        point = {n: float(c[k]) for n, c in columns.items()}
        evaluation = program.gradients(point)
        assert same(float(value[k]), evaluation.result.data), (source, point)
        for name, node in evaluation.inputs.items():
            assert same(float(gradients[name][k]), node.grad), (source, name, point)


def test_points_csv_json_and_fixed_inputs(tmp_path):
    csv = tmp_path / "p.csv"
    csv.write_text("x,y\n2,3\n1,1\n")
    code, out, err = run("grad", "x*y+tanh(x)", "--points", str(csv))
    assert (code, err) == (0, "")
    assert out == (
        "x,y,value,d_x,d_y\n2,3,6.9640275800758165,3.0706508248531645,2.0\n"
        "1,1,1.7615941559557649,1.419974341614026,1.0\n"  # 1 + sech(1)**2
    )
    code, out, _ = run("grad", "x*y+tanh(x)", "--points", str(csv), "--format", "json")
    first = json.loads(out.splitlines()[0])
    single = json.loads(run("grad", "x*y+tanh(x)", "--x", "2", "--y", "3", "--format", "json")[1])
    assert first == single
    code, out, _ = run("grad", "x*y+tanh(x)", "--points", str(csv), "--format", "json", "--flat")
    assert json.loads(out.splitlines()[0]) == {  # the CSV's columns as keys
        **single["inputs"],
        "value": single["value"],
        **{f"d_{n}": g for n, g in single["gradients"].items()},
    }
    code, out, _ = run("grad", "x*y", "--y", "10", "--points", "-", "--wrt", "x", stdin="x\n1\n2\n")
    assert (code, out) == (0, "x,value,d_x\n1,10.0,10.0\n2,20.0,10.0\n")


def test_points_across_chunks(monkeypatch):
    from nanograd_cli._io import chunks, readers

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 16)
    monkeypatch.setattr(readers, "BATCH_ROWS", 7)
    rows = "\n".join(str(i / 10) for i in range(50))
    code, out, _ = run("grad", "sin(x)", "--points", "-", stdin="x\n" + rows + "\n")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 51
    for i, line in enumerate(lines[1:]):
        x, value, slope = map(float, line.split(","))
        assert (x, value, slope) == (i / 10, math.sin(i / 10), math.cos(i / 10))


def test_points_non_finite_rows_are_kept_and_reported():
    code, out, err = run("grad", "log(x)", "--points", "-", stdin="x\n1\n0\n-1\n")
    assert code == 0
    assert out == "x,value,d_x\n1,0.0,1.0\n0,-inf,inf\n-1,NaN,-1.0\n"
    assert err == (
        "warning: 2 rows have a non-finite result; the first: row 2 gives -inf "
        "(log gave -inf at line 1, column 1)\n"
    )
    code, out, err = run("grad", "log(x)", "--points", "-", "--strict", stdin="x\n1\n0\n")
    assert code == 1
    assert err == "error: --points row 2 gives -inf (log gave -inf at line 1, column 1)\n"


MISSING_Y = "error: missing value for input y: give --points a column y or pass --y VALUE"


@pytest.mark.parametrize(
    ("stdin", "extra", "message"),
    [
        ("x,y\n1,2\n3\n", [], "error: --points row 2 has 1 field, the header 2"),
        ("x,y\n1,2\n3,abc\n", [], "error: --points row 2, column y: 'abc' is not a number"),
        ("x,z\n1,2\n", [], MISSING_Y),
        ("x\n1\n", [], MISSING_Y),
        ("x,y\n1,2\n", ["--y", "5"], "error: --points has a column y and --y gives it too"),
        ("", [], "error: --points: the first line must name the columns, e.g. x,y"),
        (
            "x,y\n1,2\n",
            ["--format", "table"],
            "error: --points writes csv or json: give --format csv or --format json",
        ),
        ("x,y\n1,2\n", ["--each-line"], "error: --each-line and --points cannot be used together"),
    ],
)
def test_points_errors(stdin, extra, message):
    code, out, err = run("grad", "x*y", "--points", "-", *extra, stdin=stdin)
    assert (code, out) == (2, "") and err.splitlines()[0] == message


def test_points_file_that_cannot_be_read(tmp_path):
    code, _, err = run("grad", "x", "--points", str(tmp_path / "absent.csv"))
    assert code == 1 and err.startswith("error: cannot read ")


SPECIAL = [0.0, -0.0, 0.3, -0.3, 0.34, 0.36, -1.5, 2.0, 3.0, 20.0, -40.0, 400.0, 1e300]
SPECIAL += [-1e300, 1e-300, np.inf, -np.inf, np.nan]


def _sources_of_every_op() -> list[str]:
    """Each op on x and y, with each argument constant in turn. An op of three arguments gets
    every way to put x and y in its places too (clamp(x, x, y): x at a bound)."""
    constants = ("0", "1", "2", "3", "(-2)", "(-1)", "0.5", "-1.5")
    sources = []
    for op in OPS.values():
        if op.arity == 1:
            sources.append(f"{op.name}(x)" if op.name != "neg" else "-x")
        elif op.arity == 2:
            form = "{} " + op.name + " {}" if op.syntax == "infix" else op.name + "({}, {})"
            sources.append(form.format("x", "y"))
            for c in constants:
                sources += [form.format("x", c), form.format(c, "y")]
        else:
            form = op.name + "({}, {}, {})"
            sources += [form.format(*args) for args in itertools.product("xy", repeat=3)]
            for c, k in itertools.product(constants, range(3)):
                args = ["x", "y"]
                args.insert(k, c)
                sources.append(form.format(*args))
    return sources


@pytest.mark.parametrize("source", _sources_of_every_op())
def test_every_op_on_the_tape_equals_the_engine_at_special_values(source):
    """Each op with each argument varying or constant (x**2 is x*x on the tape, c**y has its
    own derivative), on every pair of zeros, saturating, huge, infinite and nan values."""
    program = parse(source)
    grid = np.array([(a, b) for a in SPECIAL for b in SPECIAL]).T
    columns = {n: grid[k] for k, n in enumerate(["x", "y"]) if n in program.inputs}
    value, gradients = batch_gradients(program, columns)
    for k in range(grid.shape[1]):
        point = {n: float(c[k]) for n, c in columns.items()}
        evaluation = program.gradients(point)
        assert same(float(value[k]), evaluation.result.data), point
        for name, node in evaluation.inputs.items():
            assert same(float(gradients[name][k]), node.grad), (name, point)


@pytest.mark.parametrize("source", _sources_of_every_op())
def test_values_alone_equal_the_engines_values_at_special_values(source):
    """batch_values, the pass forward alone, gives the engine's value on every row, and the
    very numbers batch_gradients gives as its value."""
    program = parse(source)
    grid = np.array([(a, b) for a in SPECIAL for b in SPECIAL]).T
    columns = {n: grid[k] for k, n in enumerate(["x", "y"]) if n in program.inputs}
    values = batch_values(program, columns)
    np.testing.assert_array_equal(values, batch_gradients(program, columns)[0])
    for k in range(grid.shape[1]):
        point = {n: float(c[k]) for n, c in columns.items()}
        assert same(float(values[k]), program.values(point)[program.result]), point


def test_values_alone_across_blocks_with_an_input_as_the_result_and_a_fixed_input():
    x = np.linspace(-2.0, 2.0, 1001)
    tape = Tape(parse("x*y + sin(x)"))
    tape.block = 64  # 16 runs, the last of 41 rows
    values = batch_values(tape.program, {"x": x, "y": 3.0}, tape)
    np.testing.assert_allclose(values, 3.0 * x + np.sin(x), rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(batch_values(parse("x"), {"x": x}), x)
    np.testing.assert_array_equal(batch_values(parse("2 + x - x*0"), {"x": [1.0, 5.0]}), [3, 7])


def test_tanh_derivative_on_the_tape_is_within_two_ulps_of_sech_squared():
    """sech(x)**2 to 60 digits: near 0, where it is 1 - tanh**2 without cancelling; as it
    saturates, where 1 - tanh**2 is 0; and past |x| = 355, where it is subnormal and cosh(2x)
    overflows."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-3, 3, 400), rng.uniform(-40, 40, 200)])
    x = np.concatenate([x, rng.uniform(354, 380, 100), [1.0, 2.0, 5.0, 20.0, 300.0, 356.0]])
    _, gradients = batch_gradients(parse("tanh(x)"), {"x": x})
    for a, d in zip(x.tolist(), gradients["x"].tolist(), strict=True):
        exact = mpmath.sech(a) ** 2
        spacing = math.ulp(float(exact)) if exact > 2.2250738585072014e-308 else 5e-324
        assert abs(d - exact) <= 2 * spacing, a


@pytest.mark.parametrize("source", _sources_of_every_op())
def test_every_step_writes_its_value_into_its_first_array_or_leaves_it_alone(source):
    """The tape hands a step the caller's output array as out[0], so a step may keep nothing
    but its value there."""
    tape = Tape(parse(source))
    column = np.array(SPECIAL)
    data = dict(tape.constants) | {tape.input_slots[n]: column for n in tape.program.inputs}
    for i, args, step in tape.steps:
        out = tape_module.Arrays(column.size)
        marker = out[0]
        marker.fill(12345.0)
        with np.errstate(all="ignore"):
            data[i], _ = step(out, *(data[a] for a in args))
        assert data[i] is marker or (marker == 12345.0).all(), source


def test_points_counts_rows_and_bytes_for_the_progress_display(monkeypatch):
    from nanograd_cli._io import chunks, readers

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 8)
    text = "x\n" + "".join(f"{i}\n" for i in range(10))
    reader = readers.CsvReader(io.BytesIO(text.encode()), len(text))
    run = points.PointsRun(parse("2*x"), reader, {}, [])
    counts = [(reader.rows_read, reader.bytes_read) for _ in run]
    assert counts == [(7, 16), (10, 22)]  # a piece ends where a row does
    assert len(text) == 22


def test_the_progress_display_shows_a_bar_for_a_file_and_a_spinner_for_a_pipe(monkeypatch):
    from nanograd_cli.render._progress import RowsProgress, regular_file_size

    monkeypatch.setenv("FORCE_COLOR", "1")  # Rich draws as on a terminal
    monkeypatch.setattr(RowsProgress, "DELAY", 0.0)
    for total, shown in ((400, "50%"), (None, "7 rows, ")):
        screen = io.StringIO()
        monkeypatch.setattr(sys, "stderr", screen)  # the display goes there, not to stdout
        progress = RowsProgress(total)
        progress.update(7, 200)
        progress.stop()
        assert shown in screen.getvalue() and "7 rows" in screen.getvalue()
    with open(WORKED, encoding="utf-8") as f:
        assert regular_file_size(f) == Path(WORKED).stat().st_size
    read, write = os.pipe()
    with os.fdopen(read) as pipe, os.fdopen(write, "w"):
        assert regular_file_size(pipe) is None


@pytest.mark.slow
def test_a_long_source_runs_fewer_rows_at_a_time_within_the_memory_budget():
    short, long = (parse("a = x\n" + "a = tanh(a * 0.9) + a\n" * n + "a\n") for n in (1, 2500))
    assert Tape(short).block == tape_module.BLOCK
    tape = Tape(long)
    arrays = tape_module.ARRAYS_PER_STEP * len(tape.steps)
    assert tape.block < tape_module.BLOCK
    assert 8 * arrays * tape.block <= tape_module.WORKSPACE_BYTES
    value, gradients = batch_gradients(long, {"x": np.linspace(-1, 1, 3 * tape.block + 5)})
    for k in (0, tape.block, -1):  # across blocks, and the last, shorter one
        x = float(np.linspace(-1, 1, 3 * tape.block + 5)[k])
        evaluation = long.gradients({"x": x})
        assert same(float(value[k]), evaluation.result.data)
        assert same(float(gradients["x"][k]), evaluation.inputs["x"].grad)


SCIPY_FUNCTIONS = ["erf", "erfc", "gamma", "digamma", "erfinv", "lgamma"]


def test_erfc_and_lgamma_on_the_tape_keep_their_digits_where_scipys_do_not():
    """erfc past 1/2 (SciPy's is off by up to 110 units in the last place in the tail) and
    lgamma just below 0 (down to the subnormals) are within 2 units of the truth."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    cases = {
        "erfc": (np.linspace(0.5, 26.0, 400), mpmath.erfc),
        "lgamma": (
            -np.array([5e-324, 1e-310, 1e-300, 1e-20, 1e-8, 0.01, 0.3, 0.49]),
            lambda t: mpmath.log(abs(mpmath.gamma(t))),
        ),
    }
    for name, (x, truth) in cases.items():
        value, _ = batch_gradients(parse(f"{name}(x)"), {"x": x})
        for k in range(x.size):
            exact = truth(mpmath.mpf(float(x[k])))
            ulps = abs(mpmath.mpf(float(value[k])) - exact) / math.ulp(float(exact))
            assert ulps <= 2.1, (name, x[k], float(ulps))


@pytest.mark.parametrize("name", SCIPY_FUNCTIONS)
@pytest.mark.parametrize("with_scipy", [True, False], ids=["scipy", "per-element"])
def test_functions_from_scipy_and_without_it_equal_the_engine(name, with_scipy, monkeypatch):
    """erf, erfc, gamma, digamma, erfinv and lgamma (where gammaln keeps its digits) run on
    SciPy's ufuncs where SciPy is installed and row by row in Python where it is not: both
    equal the engine, edges included."""
    from nanograd_cli import _vector_ops as vector_ops

    if with_scipy:
        pytest.importorskip("scipy")
        assert vector_ops.scipy_special() is not None
    else:
        monkeypatch.setattr(vector_ops, "special", None)
    program = parse(f"{name}(x) + {name}(0.5*x)")
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-6, 6, 300), rng.uniform(-1, 1, 100), SPECIAL])
    x = np.concatenate([x, [0.9999999, -0.99999999999, 1.0, -1.0, 171.7, -2.5, 1.4616321449683622]])
    x = np.concatenate([x, rng.uniform(0.0, 0.5, 50), rng.uniform(2.5, 1e6, 50), [0.5, 2.5, 2.0]])
    value, gradients = batch_gradients(program, {"x": x})
    for k in range(x.size):
        evaluation = program.gradients({"x": float(x[k])})
        assert same(float(value[k]), evaluation.result.data), x[k]
        assert same(float(gradients["x"][k]), evaluation.inputs["x"].grad), x[k]
