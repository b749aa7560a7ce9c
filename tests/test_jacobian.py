"""Several outputs: a source that ends by listing names (`u, v`) and `grad`'s Jacobian of them,
checked against SymPy and finite differences, in both modes and every format."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nanograd_cli import jacobian, parse
from nanograd_cli._program import Program
from nanograd_cli.errors import InputError, SourceError

from .helpers import POINT, expressions, in_process, on_terminal, visible
from .oracle import derivative_at

SOURCE = "u = x*y + tanh(x)\nv = x + y**2\nw = sin(x)\nu, v, w"


def output(program: Program, name: str) -> Program:
    """The program with one of its outputs as its result (for the references)."""
    slot = program.outputs[name]
    return Program(program.source, program.code, program.inputs, slot, program.labels)


# the language


def test_the_last_statement_lists_the_outputs():
    program = parse(SOURCE)
    assert list(program.outputs) == ["u", "v", "w"]
    assert program.inputs == ["x", "y"]
    assert program.result == program.outputs["u"]


def test_an_output_may_be_an_input_or_a_constant():
    result = jacobian("y = 2*x; x, y, pi", x=1.5)
    assert result.values == {"x": 1.5, "y": 3.0, "pi": math.pi}
    assert result.jacobian == {"x": {"x": 1.0}, "y": {"x": 2.0}, "pi": {"x": 0.0}}


@pytest.mark.parametrize(
    ("source", "message", "column"),
    [
        ("u = x; u, u", "u is listed twice", 11),
        ("u = x; u, x\nv = u", "the list of outputs must be the last statement", 8),
        (
            "x*y, x+y",
            "unexpected ',' after 'y': several outputs are listed by name, as the "
            "last statement (u = ...; v = ...; u, v)",
            4,
        ),
        ("u = x; u, 2", "expected a name after ',', found '2'", 11),
        (
            "u = x; u, u+1",
            "unexpected '+' in a list of outputs: list names only, and bind an "
            "expression to a name first (w = ...; u, w)",
            12,
        ),
        ("u = x; u,", "expected a name after ','", 10),
    ],
)
def test_a_bad_list_of_outputs_points_at_the_problem(source, message, column):
    with pytest.raises(SourceError) as raised:
        parse(source)
    assert raised.value.message == message
    assert raised.value.column == column


def test_blank_lines_and_comments_may_follow_the_list():
    assert list(parse("u = x\nv = -x\nu, v  # the outputs\n\n;").outputs) == ["u", "v"]


# the numbers


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_every_derivative_matches_sympy(mode):
    program = parse(SOURCE)
    point = {"x": 0.3, "y": -0.7}
    result = program.jacobian(point, mode)
    for name in program.outputs:
        for wrt in program.inputs:
            expected = derivative_at(output(program, name), wrt, point)
            assert result.jacobian[name][wrt] == pytest.approx(expected, rel=1e-14, abs=1e-15)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(expressions(3), min_size=2, max_size=4))
def test_both_modes_agree_with_each_output_alone_and_finite_differences(bodies):
    names = [f"o{k}" for k in range(len(bodies))]
    source = "\n".join(
        [*(f"{n} = {b}" for n, b in zip(names, bodies, strict=True)), ", ".join(names)]
    )
    program = parse(source)
    point = {name: POINT[name] for name in program.inputs}
    reverse = program.jacobian(point, "reverse")
    forward = program.jacobian(point, "forward")
    for name, body in zip(names, bodies, strict=True):
        alone = parse(body).grad({n: POINT[n] for n in parse(body).inputs})
        assume(math.isfinite(alone.value) and abs(alone.value) < 1e6)
        assert reverse.values[name] == alone.value
        for wrt in program.inputs:
            exact = alone.gradients.get(wrt, 0.0)
            assert reverse.jacobian[name][wrt] == exact
            assert forward.jacobian[name][wrt] == pytest.approx(exact, rel=1e-12, abs=1e-12)
            h = 1e-6
            up = output(program, name).values({**point, wrt: point[wrt] + h})
            down = output(program, name).values({**point, wrt: point[wrt] - h})
            numeric = (up[program.outputs[name]] - down[program.outputs[name]]) / (2 * h)
            assert math.isclose(exact, numeric, rel_tol=1e-4, abs_tol=1e-5), (source, wrt)


def test_auto_is_forward_where_outputs_outnumber_inputs(monkeypatch):
    import nanograd_cli._forward as forward

    calls = []
    monkeypatch.setattr(forward, "forward_jacobian", lambda p, v: calls.append(len(p.outputs)))
    for m in (1, 2, 3):  # outputs of two inputs
        lines = [f"u{k} = x * y * {k + 1}" for k in range(m)]
        parse("\n".join([*lines, ", ".join(f"u{k}" for k in range(m))])).jacobian({"x": 1, "y": 2})
    assert calls == [3]


# the command line


def test_grad_prints_the_jacobian_as_a_table_json_and_csv():
    args = ["grad", "u = x*y; v = x + y; u, v", "--x", "2", "--y", "3"]
    table = in_process(*args)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines() == [
        "output  value  d_x  d_y",
        "u       6.0    3.0  2.0",
        "v       5.0    1.0  1.0",
    ]
    assert json.loads(in_process(*args, "--format", "json").stdout) == {
        "values": {"u": 6.0, "v": 5.0},
        "inputs": {"x": 2.0, "y": 3.0},
        "jacobian": {"u": {"x": 3.0, "y": 2.0}, "v": {"x": 1.0, "y": 1.0}},
    }
    assert (
        in_process(*args, "--format", "csv").stdout
        == "output,value,d_x,d_y\nu,6.0,3.0,2.0\nv,5.0,1.0,1.0\n"
    )
    only_y = in_process(*args, "--format", "csv", "--wrt", "y")
    assert only_y.stdout == "output,value,d_y\nu,6.0,2.0\nv,5.0,1.0\n"


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_every_mode_prints_the_same_full_precision_numbers(mode):
    done = in_process(
        "grad", SOURCE, "--x", "0.3", "--y", "-0.7", "--format", "json", "--mode", mode
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    expected = parse(SOURCE).jacobian({"x": 0.3, "y": -0.7}, "reverse")
    assert result["values"] == expected.values
    for name, row in expected.jacobian.items():
        assert result["jacobian"][name] == pytest.approx(row, rel=1e-15, abs=1e-300)


def test_one_output_is_exactly_todays_grad():
    done = in_process("grad", "x*y + tanh(x)", "--x", "2", "--y", "3", "--format", "json")
    assert json.loads(done.stdout) == {
        "value": 6.9640275800758165,
        "inputs": {"x": 2.0, "y": 3.0},
        "gradients": {"x": 3.0706508248531645, "y": 2.0},
    }


def test_the_jacobian_table_fits_80_columns():
    names = [f"output_{k}" for k in range(3)]
    lines = [f"{n} = sin(alpha*{k + 1}) * tanh(beta) + delta**{k + 2}" for k, n in enumerate(names)]
    source = "; ".join([*lines, ", ".join(names)])
    screen = visible(
        on_terminal("grad", source, "--alpha", "0.3", "--beta", "0.7", "--delta", "1.1")
    )
    assert all(len(line) <= 80 for line in screen)
    assert any("output_2" in line for line in screen) and any("d_delta" in line for line in screen)


@pytest.mark.parametrize("command", ["hessian", "check", "explain", "minimize"])
def test_commands_of_one_result_refuse_a_list(command):
    done = in_process(command, "u = x*y; v = x + y; u, v", "--x", "1", "--y", "2")
    assert done.returncode == 2
    assert done.stderr == (
        f"error: the source lists 2 outputs (u, v), and nanograd {command} takes one: end the "
        "source with one of them (nanograd grad takes several)\n"
    )


def test_each_line_takes_one_output_per_line():
    done = in_process(
        "grad", "-", "--each-line", "--x", "1", "--format", "csv", stdin="x*2\nu = x; u, x\n"
    )
    assert done.returncode == 2
    assert done.stdout == "line,value,d_x\n1,2.0,2.0\n"
    assert done.stderr == (
        "error: line 2: the source lists 2 outputs (u, x), and grad --each-line takes one: end "
        "the source with one of them\n"
    )


def test_the_library_refuses_a_list_where_it_takes_one_result():
    from nanograd_cli import diff, grad

    with pytest.raises(InputError, match=r"grad\(\) takes one.*\(jacobian\(\) takes several\)"):
        grad("u = x; u, x", x=1)
    with pytest.raises(InputError, match=r"diff\(\) takes one"):
        diff("u = x; u, x")
    with pytest.raises(InputError, match=r"gradients\(\) takes one"):
        parse("u = x; u, x").gradients({"x": 1.0})
    with pytest.raises(ValueError, match="not 'sideways'"):
        parse("u = x; u, x").jacobian({"x": 1.0}, "sideways")


@pytest.mark.slow
def test_a_long_list_parses_in_linear_time_and_may_span_lines():
    names = [f"x{k}" for k in range(200_000)]  # quadratic work took 5 s for 40,000
    source = ",\n ".join(names)
    script = (
        "import sys; from nanograd_cli import parse; print(len(parse(sys.stdin.read()).outputs))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=source, capture_output=True, text=True, timeout=60
    )
    assert done.stdout == "200000\n", done.stderr


# many points


POINTS = "x,y,tag\n0.3,-0.7,a\n2,3,b\n-1.5,0.25,c\n"


def expected_rows():
    program = parse(SOURCE)
    for line in POINTS.splitlines()[1:]:
        x, y, tag = line.split(",")
        yield tag, program.jacobian({"x": float(x), "y": float(y)}, "reverse")


def test_points_give_every_outputs_value_and_gradients_as_columns(tmp_path):
    points = tmp_path / "points.csv"
    points.write_text(POINTS)
    done = in_process("grad", SOURCE, "--points", str(points))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "x,y,tag,u,v,w,du/dx,du/dy,dv/dx,dv/dy,dw/dx,dw/dy"
    for line, (tag, expected) in zip(lines[1:], expected_rows(), strict=True):
        cells = line.split(",")
        assert cells[2] == tag
        numbers = [float(c) for c in cells[3:]]
        gradients = [expected.jacobian[u][x] for u in "uvw" for x in "xy"]
        assert numbers == pytest.approx([*expected.values.values(), *gradients], rel=1e-15)


def test_points_in_json_lines_and_parquet_have_the_jacobians_shape(tmp_path):
    import pyarrow.parquet as pq

    points = tmp_path / "points.csv"
    points.write_text(POINTS)
    done = in_process("grad", SOURCE, "--points", str(points), "--format", "json", "--wrt", "y")
    assert done.returncode == 0, done.stderr
    for line, (tag, expected) in zip(done.stdout.splitlines(), expected_rows(), strict=True):
        row = json.loads(line)
        assert list(row) == ["tag", "values", "inputs", "jacobian"]
        assert row["tag"] == tag and row["values"] == pytest.approx(expected.values, rel=1e-15)
        assert row["jacobian"] == {
            u: pytest.approx({"y": r["y"]}, rel=1e-15) for u, r in expected.jacobian.items()
        }
    flat = in_process(
        "grad", SOURCE, "--points", str(points), "--format", "json", "--wrt", "y", "--flat"
    )
    for line, (tag, expected) in zip(flat.stdout.splitlines(), expected_rows(), strict=True):
        row = json.loads(line)  # --flat: the CSV's columns as keys
        assert list(row) == ["x", "y", "tag", "u", "v", "w", "du/dy", "dv/dy", "dw/dy"]
        assert row["tag"] == tag
        for u, r in expected.jacobian.items():
            assert row[u] == pytest.approx(expected.values[u], rel=1e-15)
            assert row[f"d{u}/dy"] == pytest.approx(r["y"], rel=1e-15)
    out = tmp_path / "results.parquet"
    assert in_process("grad", SOURCE, "--points", str(points), "-o", str(out)).returncode == 0
    table = pq.read_table(out).to_pylist()
    for row, (tag, expected) in zip(table, expected_rows(), strict=True):
        assert row["tag"] == tag and row["dw/dx"] == pytest.approx(expected.jacobian["w"]["x"])


def test_an_output_named_as_a_column_is_refused(tmp_path):
    points = tmp_path / "points.csv"
    points.write_text("x,y\n1,2\n")
    done = in_process("grad", "u = x*y; u, x", "--points", str(points))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: --points has a column x, which the results add: rename it\n"


def test_compile_adds_every_outputs_columns_to_a_dataframe():
    import pandas as pd

    from nanograd_cli import compile

    frame = pd.DataFrame({"x": [0.3, 2.0, -1.5], "y": [-0.7, 3.0, 0.25]})
    result = compile(SOURCE)(frame)
    assert list(result.columns) == [
        "x",
        "y",
        "u",
        "v",
        "w",
        "du/dx",
        "du/dy",
        "dv/dx",
        "dv/dy",
        "dw/dx",
        "dw/dy",
    ]
    program = parse(SOURCE)
    for _, row in result.iterrows():
        expected = program.jacobian({"x": row["x"], "y": row["y"]}, "reverse")
        assert row["v"] == pytest.approx(expected.values["v"], rel=1e-15)
        assert row["du/dx"] == pytest.approx(expected.jacobian["u"]["x"], rel=1e-15)
