"""`hessian --wrt`: the second derivatives by some inputs only (a network's weights, one
parameter), alike from the command line, the repl and Python."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import nanograd_cli as ng
from nanograd_cli import parse
from nanograd_cli._symbolic import hessian

from .helpers import expressions, in_process
from .test_calculus import point_for
from .test_repl import error, out, session


@settings(max_examples=40, deadline=None)
@given(expressions(), st.data())
def test_the_hessian_by_some_inputs_is_that_part_of_the_whole_bit_for_bit(source, data):
    program = parse(source)
    assume(program.inputs)
    values = point_for(program)
    whole = hessian(program, values)
    wrt = data.draw(st.lists(st.sampled_from(program.inputs), min_size=1, unique=True))
    part = hessian(program, values, [n for n in program.inputs if n in wrt])
    assert part.value == whole.value or part.value != part.value
    assert part.inputs == whole.inputs
    kept = [n for n in program.inputs if n in wrt]
    assert list(part.gradients) == list(part.hessian) == kept
    same = np.testing.assert_array_equal  # nan where the whole has nan
    same([part.gradients[a] for a in kept], [whole.gradients[a] for a in kept])
    same(
        [[part.hessian[a][b] for b in kept] for a in kept],
        [[whole.hessian[a][b] for b in kept] for a in kept],
    )


def test_the_table_shows_every_input_and_the_matrix_by_those_asked_in_their_order():
    # f = x*y*z: f_x = yz = 6, f_z = xy = 2, f_xx = f_zz = 0, f_xz = y = 2
    result = in_process("hessian", "x*y*z", "--x", "1", "--y", "2", "--z", "3",
                        "--wrt", "z", "--wrt", "x")  # fmt: skip
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        "        value  gradient  d_x  d_z\n"
        "result  6.0\n"
        "x       1.0    6.0       0.0  2.0\n"
        "y       2.0\n"
        "z       3.0    2.0       2.0  0.0\n"
    )
    csv = in_process("hessian", "x*y*z", "--x", "1", "--y", "2", "--z", "3", "--wrt", "y",
                     "--format", "csv")  # fmt: skip
    assert csv.stdout == "name,value,gradient,d_y\nresult,6.0,,\nx,1.0,,\ny,2.0,3.0,0.0\nz,3.0,,\n"
    line = json.loads(in_process("hessian", "x*y*z", "--x", "1", "--y", "2", "--z", "3",
                                 "--wrt", "y", "--format", "json").stdout)  # fmt: skip
    assert line == {
        "value": 6.0,
        "inputs": {"x": 1.0, "y": 2.0, "z": 3.0},
        "gradients": {"y": 3.0},
        "hessian": {"y": {"y": 0.0}},
    }


def test_a_layers_weights_alone_have_the_hessian_pytorch_gives():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    W, x, b = rng.normal(size=(2, 3)), rng.normal(size=3), rng.normal(size=2)
    source = "sum(tanh(W @ x + b)**2)"
    result = ng.hessian(source, W=W, x=x, b=b, wrt="W")
    names = [f"W[{i},{j}]" for i in range(2) for j in range(3)]
    assert list(result.hessian) == names
    assert list(result.inputs)[:6] == names and len(result.inputs) == 11

    def loss(w):
        return (torch.tanh(w.reshape(2, 3) @ torch.tensor(x) + torch.tensor(b)) ** 2).sum()

    expected = torch.autograd.functional.hessian(loss, torch.tensor(W).reshape(6)).numpy()
    np.testing.assert_allclose(result.matrix, expected, rtol=1e-12, atol=1e-15)
    one = ng.hessian(source, W=W, x=x, b=b, wrt=["W[1,2]", "b[0]"])
    assert list(one.hessian) == ["W[1,2]", "b[0]"]
    assert one.hessian["W[1,2]"]["W[1,2]"] == pytest.approx(expected[5, 5], rel=1e-12)


def test_the_repl_takes_wrt_as_the_command_line_does():
    s = session("x = 2", "y = 3")
    # f = x**2*y: f_y = x**2 = 4, f_yy = 0
    assert out(s, ":hessian x**2*y wrt y") == (
        "        value  gradient  d_y\nresult  12.0\nx       2.0\ny       3.0    4.0       0.0"
    )
    assert error(s, ":hessian x*y wrt z") == "error: wrt z: z is not an input (inputs: x, y)"


@pytest.mark.parametrize(
    ("wrt", "message"),
    [
        ("q", "error: --wrt q: q is not an input (inputs: x, y)\n"),
        ("x[0]", "error: --wrt x[0]: x is a number, not an array"),
    ],
)
def test_a_wrt_that_names_no_input_is_bad_input(wrt, message):
    result = in_process("hessian", "x*y", "--x", "1", "--y", "2", "--wrt", wrt)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(message)
    assert "Traceback" not in result.stderr


def test_an_element_out_of_range_is_bad_input():
    result = in_process("hessian", "x@x", "--x", "[1, 2]", "--wrt", "x[5]")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "error: --wrt x[5]: out of range for x of shape (2,)\n"
