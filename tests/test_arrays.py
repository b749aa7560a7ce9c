"""Arrays: values and derivatives against PyTorch (float64) and identities of matrix
calculus, the ways to give an array, the formats, and the messages for bad shapes."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nanograd_cli as ng
from nanograd_cli._sources import array_value
from nanograd_cli.errors import InputError, SourceError
from nanograd_cli.render.graph import TIMES

from .array_programs import programs, torch_library, values_at
from .helpers import in_process, limited, nanograd, on_terminal, visible

torch = pytest.importorskip("torch")

# Each program, the shapes of its inputs, and the same computation in PyTorch.
PROGRAMS = [
    (
        "sum((A@x - b)**2)",
        {"A": (3, 2), "x": (2,), "b": (3,)},
        lambda A, x, b: ((A @ x - b) ** 2).sum(),
    ),
    ("logsumexp(z)", {"z": (5,)}, lambda z: torch.logsumexp(z, 0)),
    (
        "sum(tanh(W@x + c))",
        {"W": (4, 3), "x": (3,), "c": (4,)},
        lambda W, x, c: torch.tanh(W @ x + c).sum(),
    ),
    ("norm(x)", {"x": (4,)}, lambda x: torch.linalg.norm(x)),
    ("dot(a, b)*prod(a)", {"a": (3,), "b": (3,)}, lambda a, b: torch.dot(a, b) * a.prod()),
    ("sum(outer(a, b)**2)", {"a": (2,), "b": (3,)}, lambda a, b: (torch.outer(a, b) ** 2).sum()),
    ("sum(A.T @ A)", {"A": (3, 2)}, lambda A: (A.T @ A).sum()),
    (
        "sum(exp(A[:, 0])) + sum(A[1, :])",
        {"A": (3, 2)},
        lambda A: A[:, 0].exp().sum() + A[1, :].sum(),
    ),
    ("max(x) - min(x)", {"x": (5,)}, lambda x: x.max() - x.min()),
    (
        "sum(amax(A, 0)) + amin(A, 1) @ x",
        {"A": (3, 2), "x": (3,)},
        lambda A, x: torch.amax(A, 0).sum() + torch.amin(A, 1) @ x,
    ),
    ("sum(A + x)", {"A": (3, 2), "x": (2,)}, lambda A, x: (A + x).sum()),
    (
        "mean(A * B[0], 0) @ sin(x)",
        {"A": (3, 2), "B": (2, 2), "x": (2,)},
        lambda A, B, x: (A * B[0]).mean(0) @ torch.sin(x),
    ),
    ("x[-1] * sum(x[0:2]) + x[1:][0]", {"x": (3,)}, lambda x: x[-1] * x[0:2].sum() + x[1:][0]),
    (
        "sum(norm(A, 1) * softmax(x))",
        {"A": (2, 3), "x": (2,)},
        lambda A, x: (torch.linalg.norm(A, dim=1) * torch.softmax(x, 0)).sum(),
    ),
    ("sum(logsumexp(A, 0))", {"A": (3, 4)}, lambda A: torch.logsumexp(A, 0).sum()),
    (
        "sum(log_softmax(z)**2) + sum(log_softmax(A, 1) * A)",
        {"z": (4,), "A": (2, 3)},
        lambda z, A: (torch.log_softmax(z, 0) ** 2).sum() + (torch.log_softmax(A, 1) * A).sum(),
    ),
    ("x @ A @ x + len(x)", {"x": (3,), "A": (3, 3)}, lambda x, A: x @ A @ x + 3),
    (
        "var(x) * std(x) + sum(var(A, 0)) + std(A, 1) @ z",
        {"x": (4,), "A": (3, 2), "z": (3,)},
        lambda x, A, z: (
            x.var(correction=0) * x.std(correction=0)
            + A.var(0, correction=0).sum()
            + A.std(1, correction=0) @ z
        ),
    ),
    (
        "sum(w * (x - mean(x))/sqrt(var(x) + 1e-5))",
        {"x": (5,), "w": (5,)},
        lambda x, w: (w * torch.nn.functional.layer_norm(x, (5,))).sum(),
    ),
    (
        "sum(sum(A, 1)**2) + sum(A, -1)[0]",
        {"A": (2, 3)},
        lambda A: (A.sum(1) ** 2).sum() + A.sum(-1)[0],
    ),
    (
        "v = [x[0], x[1]**2, sin(x[2])]; v @ v",
        {"x": (3,)},
        lambda x: (torch.stack([x[0], x[1] ** 2, torch.sin(x[2])]) ** 2).sum(),
    ),
    (
        "sum((eye(2) + ones(2, 2)) @ x)",
        {"x": (2,)},
        lambda x: ((torch.eye(2, dtype=torch.float64) + 1) @ x).sum(),
    ),
]
VECTOR_PROGRAMS = [
    ("softmax(z)", {"z": (4,)}, lambda z: torch.softmax(z, 0)),
    ("A @ x", {"A": (3, 2), "x": (2,)}, lambda A, x: A @ x),
    ("softmax(A, 1)", {"A": (2, 3)}, lambda A: torch.softmax(A, 1)),
    ("tanh(W @ x + c)", {"W": (2, 3), "x": (3,), "c": (2,)}, lambda W, x, c: torch.tanh(W @ x + c)),
]


def test_ties_share_the_gradient_as_pytorchs_max_and_amax_do():
    W = np.array([[1.0, 5.0, 5.0], [1.0, 5.0, 0.1], [0.1, 0.1, 0.1]])
    for source, reference in [
        (
            "amax(W, 0) @ [1, 2, 3]",
            lambda W: torch.amax(W, 0) @ torch.tensor([1.0, 2, 3], dtype=torch.float64),
        ),
        ("sum(amin(W, 1))", lambda W: torch.amin(W, 1).sum()),
        ("max(W) + min(W)", lambda W: W.max() + W.min()),
    ]:
        (tensor,) = torch_inputs({"W": W})
        reference(tensor).backward()
        result = ng.grad(source, W=W)
        np.testing.assert_allclose(
            result.gradients["W"], tensor.grad.numpy(), rtol=1e-15, atol=1e-16
        )


def random_inputs(shapes: dict, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=shape) for name, shape in shapes.items()}


def torch_inputs(values: dict[str, np.ndarray]) -> list:
    return [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values.values()]


@pytest.mark.parametrize(("source", "shapes", "reference"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_values_and_gradients_are_pytorchs(source, shapes, reference, seed):
    values = random_inputs(shapes, seed)
    result = ng.grad(source, **values)
    tensors = torch_inputs(values)
    expected = reference(*tensors)
    expected.backward()
    assert result.value == pytest.approx(expected.item(), rel=1e-12, abs=1e-12)
    for (name, value), tensor in zip(values.items(), tensors, strict=True):
        assert result.gradients[name].shape == value.shape  # the input's shape
        np.testing.assert_allclose(
            result.gradients[name], tensor.grad.numpy(), rtol=1e-11, atol=1e-12
        )


@pytest.mark.parametrize(
    ("source", "shapes", "reference"), VECTOR_PROGRAMS, ids=[p[0] for p in VECTOR_PROGRAMS]
)
def test_an_array_result_has_pytorchs_jacobian(source, shapes, reference):
    values = random_inputs(shapes, 7)
    result = ng.jacobian(source, **values)
    tensors = torch_inputs(values)
    expected = torch.autograd.functional.jacobian(reference, tuple(tensors))
    np.testing.assert_allclose(
        result.values["result"], reference(*tensors).detach().numpy(), rtol=1e-13
    )
    for name, block in zip(values, expected, strict=True):
        got = result.jacobian["result"][name]
        assert got.shape == block.shape  # the result's shape, then the input's
        np.testing.assert_allclose(got, block.numpy(), rtol=1e-11, atol=1e-12)


def test_identities_of_matrix_calculus():
    rng = np.random.default_rng(5)
    A, x, b = rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=4)
    S = rng.normal(size=(3, 3))
    quadratic = ng.grad("x @ S @ x", x=x, S=S)
    np.testing.assert_allclose(quadratic.gradients["x"], (S + S.T) @ x, rtol=1e-13)
    np.testing.assert_allclose(quadratic.gradients["S"], np.outer(x, x), rtol=1e-13)
    least = ng.grad("norm(A@x - b)**2", A=A, x=x, b=b)
    np.testing.assert_allclose(least.gradients["x"], 2 * A.T @ (A @ x - b), rtol=1e-12)
    np.testing.assert_allclose(least.gradients["A"], 2 * np.outer(A @ x - b, x), rtol=1e-12)
    hessian = ng.hessian("x @ S @ x", x=x, S=S).hessian
    names = ["x[0]", "x[1]", "x[2]"]
    np.testing.assert_allclose([[hessian[i][j] for j in names] for i in names], S + S.T, rtol=1e-13)


def test_softmax_cross_entropy_has_the_gradient_softmax_less_onehot():
    z, onehot = np.array([2.0, -1.0, 0.5]), np.array([0.0, 1.0, 0.0])
    result = ng.grad("-sum(y * log(softmax(z)))", z=z, y=onehot)
    softmax = np.exp(z) / np.exp(z).sum()
    np.testing.assert_allclose(result.gradients["z"], softmax - onehot, rtol=1e-13, atol=1e-15)


def test_softmax_and_logsumexp_do_not_overflow():
    result = ng.grad("logsumexp(z)", z=np.array([1000.0, 1000.0]))
    assert result.value == pytest.approx(1000 + np.log(2), rel=1e-15)
    np.testing.assert_allclose(result.gradients["z"], [0.5, 0.5])
    assert ng.jacobian("softmax(z)", z=np.array([1000.0, 0.0])).values["result"].tolist() == [
        1.0,
        0.0,
    ]
    # of a number, a number (as NumPy's and PyTorch's of a 0-d array)
    assert ng.grad("softmax(x) + log_softmax(x)", x=3.0).value == 1.0
    # where softmax rounds to 0 (its log -inf), log_softmax is PyTorch's: finite, and so is
    # the cross-entropy's gradient, softmax(z) - y
    z, y = np.array([1000.0, 0.0, -5.0]), np.array([0.0, 1.0, 0.0])
    loss = ng.grad("sum(-y*log_softmax(z))", z=z, y=y)
    expected = torch.log_softmax(torch.tensor(z), 0).numpy()
    assert loss.value == -expected[1] == 1000.0
    np.testing.assert_allclose(loss.gradients["z"], np.exp(expected) - y, rtol=1e-15, atol=0)


def test_an_array_program_is_the_same_computation_written_out_in_scalars():
    written = ng.grad("sum(W @ x)", W=np.array([[1.5, -2.0]]), x=np.array([0.25, 3.0]))
    by_hand = ng.grad("W0*x0 + W1*x1", W0=1.5, W1=-2.0, x0=0.25, x1=3.0)
    assert written.value == by_hand.value
    assert written.gradients["W"].tolist() == [[by_hand.gradients["W0"], by_hand.gradients["W1"]]]


# The command line: values, formats, messages.


def test_json_has_nested_lists_as_the_spec_shows():
    done = in_process("grad", "sum(x**2)", "--x", "[1, 2, 3]", "--format", "json")
    assert done.stdout == (
        '{"value": 14.0, "inputs": {"x": [1.0, 2.0, 3.0]}, "gradients": {"x": [2.0, 4.0, 6.0]}}\n'
    )


def test_csv_has_a_column_per_element_row_major():
    done = in_process("grad", "sum(W)*x", "--W", "[[1, 2], [3, 4]]", "--x", "2", "--format", "csv")
    assert done.stdout == (  # a name with a comma quoted, as CSV readers expect
        'value,"d_W[0,0]","d_W[0,1]","d_W[1,0]","d_W[1,1]",d_x\n20.0,2.0,2.0,2.0,2.0,10.0\n'
    )


def test_an_array_result_gives_its_jacobian_by_element():
    done = in_process("grad", "2*x", "--x", "[1, 2]", "--format", "csv")
    assert (
        done.stdout == "output,value,d_x[0],d_x[1]\nresult[0],2.0,2.0,0.0\nresult[1],4.0,0.0,2.0\n"
    )
    shown = json.loads(in_process("grad", "2*x", "--x", "[1, 2]", "--format", "json").stdout)
    assert shown["jacobian"] == {"result": {"x": [[2.0, 0.0], [0.0, 2.0]]}}


@pytest.mark.parametrize(
    ("file", "content"),
    [
        ("w.csv", "1,2\n3,4\n"),
        ("w.json", "[[1, 2], [3, 4]]"),
    ],
)
def test_an_array_comes_from_a_file(tmp_path, file, content):
    (tmp_path / file).write_text(content)
    done = in_process("grad", "sum(W @ W)", "--W", f"@{file}", "--format", "json", cwd=tmp_path)
    assert json.loads(done.stdout)["gradients"]["W"] == [[7.0, 11.0], [9.0, 13.0]]


def test_an_array_comes_from_a_npy_file_or_an_expression(tmp_path):
    np.save(tmp_path / "x.npy", np.array([1.0, 2.0]))
    done = in_process("grad", "x @ x", "--x", "@x.npy", "--format", "csv", cwd=tmp_path)
    assert done.stdout == "value,d_x[0],d_x[1]\n5.0,2.0,4.0\n"
    done = in_process("grad", "sum(W)", "--W", "2*eye(2)", "--format", "csv")
    assert done.stdout.splitlines()[1] == "4.0,1.0,1.0,1.0,1.0"


def test_a_one_column_csv_is_a_vector(tmp_path):
    (tmp_path / "b.csv").write_text("1\n2\n3\n")
    done = in_process("grad", "sum(b)", "--b", "@b.csv", "--format", "csv", cwd=tmp_path)
    assert done.stdout == "value,d_b[0],d_b[1],d_b[2]\n6.0,1.0,1.0,1.0\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["x + y", "--x", "[1, 2]", "--y", "[1, 2, 3]"],
            "error: line 1, column 3: shapes (2,) and (3,) do not broadcast\n"
            "  1 | x + y\n        ^\n",
        ),
        (
            ["sum((Z - mean(Z, 1))**2)", "--Z", "[[1, 2, 3], [4, 5, 7]]"],
            "error: line 1, column 8: shapes (2, 3) and (2,) do not broadcast (the last axes "
            "are paired): to pair each row with an element, work on the transpose, as "
            "(Z.T - mean(Z, 1)).T does\n  1 | sum((Z - mean(Z, 1))**2)\n             ^\n",
        ),
        (
            ["A @ x", "--A", "[[1, 2, 3]]", "--x", "[1, 2]"],
            "error: line 1, column 3: shapes (1, 3) and (2,) do not match for @: 3 and 2 differ\n"
            "  1 | A @ x\n        ^\n",
        ),
        (
            ["x[3]", "--x", "[1, 2]"],
            "error: line 1, column 3: index 3 is out of range for axis 0 of shape (2,)\n"
            "  1 | x[3]\n        ^\n",
        ),
        (
            ["x[y]", "--x", "[1, 2]", "--y", "0"],
            "error: line 1, column 3: an index, a size or an axis cannot depend on an input: "
            "write a number\n  1 | x[y]\n        ^\n",
        ),
        (
            ["sum(x)", "--x", "[[1, 2], [3]]"],
            "error: --x [[1, 2], [3]]: element [1]: the elements of an array have one shape: "
            "(2,) and (1,) differ\n",
        ),
        (
            ["sum(x)", "--x", "[a, 2]"],
            "error: --x [a, 2]: an array's elements are numbers, such as [1, 2, 3]\n",
        ),
    ],
)
def test_bad_shapes_are_exit_2_with_both_shapes_and_a_caret(tmp_path, args, message):
    done = in_process("grad", *args, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)


def test_the_installed_command_takes_an_array_and_refuses_a_bad_shape():
    done = nanograd("grad", "softmax(z) @ [1, 0, 0]", "--z", "[0, 0, 0]", "--format", "json")
    assert json.loads(done.stdout)["value"] == pytest.approx(1 / 3, rel=1e-15)
    done = nanograd("grad", "sum(x, 2)", "--x", "[[1, 2]]")
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr == "error: line 1, column 8: axis 2 is out of range for shape (1, 2)\n"
        "  1 | sum(x, 2)\n             ^\n"
    )


def test_python_takes_numpy_arrays_and_gives_them_back():
    result = ng.grad("sum(x**2)", x=np.array([1.0, 2.0, 3.0]))
    assert isinstance(result.gradients["x"], np.ndarray)
    assert result.gradients["x"].tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(SourceError, match=r"shapes \(2,\) and \(3,\) do not broadcast"):
        ng.grad("x + y", x=np.ones(2), y=np.ones(3))
    assert ng.check("x[0]*t", x=np.ones(2), t=1, against=["t=x[0]", "x=[t, 0]"]).passed
    # text is read as the command line reads it; a random start is NumPy's to draw
    assert ng.grad("sum(x)*y", x="[1, 2]", y="2").gradients["x"].tolist() == [2.0, 2.0]
    with pytest.raises(InputError, match=r"^x='normal\(3\)': in Python, draw a random start"):
        ng.minimize("sum(x**2)", x="normal(3)", seed=1)
    # a list is an array as NumPy reads it (a tuple is a range, for plot)
    listed = ng.grad("sum(W@x)", W=[[1, 2], [3, 4]], x=[2.0, 0.5])
    assert listed.gradients["x"].tolist() == [4.0, 6.0] and listed.value == 11.0


def test_an_element_to_differentiate_by_in_each_line_and_the_repl():
    """--wrt x[0] as grad's: each line's derivative by that element (0 where the line does
    not read it), an element out of range bad input before any line runs."""
    lines = "sum(x**2)\nx[0]*x[1]\ny\n"
    done = in_process(
        "grad", "--each-line", "--x", "[1, 2]", "--y", "3", "--wrt", "x[0]", "--wrt", "y",
        "--format", "csv", stdin=lines,
    )  # fmt: skip
    assert done.stdout == "line,value,d_x[0],d_y\n1,5.0,2.0,0.0\n2,2.0,2.0,0.0\n3,3.0,0.0,1.0\n"
    done = in_process("grad", "--each-line", "--W", "[[1, 2]]", "--wrt", "W[0, -1]",
                      "--format", "json", stdin="sum(W**2)\n")  # fmt: skip
    assert json.loads(done.stdout)["gradients"] == {"W[0,1]": 4.0}
    done = in_process("grad", "--each-line", "--x", "[1, 2]", "--wrt", "x[5]", stdin=lines)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: --wrt x[5]: out of range for x of shape (2,)\n"
    reply = in_process(
        "repl", stdin="x = [1, 2]\nW = [[1, 2], [3, 4]]\n:grad sum(W@x) wrt W[1, 0], x[1]\n"
    )
    assert "W[1,0]  3.0    1.0" in reply.stdout and "x[1]    2.0    6.0" in reply.stdout
    assert in_process("repl", stdin="x = [1, 2]\n:diff sum(x**3) wrt x[1]\n").stdout == (
        "3*x[1]**2\n"
    )


def test_plot_over_one_element_of_an_array():
    """The hint names the way to sweep an element, in each door's words; the title lists the
    fixed elements, not the swept one; the repl sweeps an element, not a whole array."""
    done = in_process("plot", "sum(x**2)", "--x", "[1, 2]")
    assert done.stderr == "error: give an input a range to plot over, e.g. --var x[0]=-3:3\n"
    with pytest.raises(InputError, match=r"e\.g\. inputs=\{'x\[0\]': '-3:3'\}$"):
        ng.plot("sum(x**2)", x=[1, 2])
    curve = ng.plot("sum(x**2)", x=[1, 2], inputs={"x[0]": "-3:3"})
    assert (curve.name, curve.fixed) == ("x[0]", {"x[1]": 2.0})
    np.testing.assert_allclose(curve.value, curve.x**2 + 4.0)
    reply = in_process("repl", stdin="x = [1, 2]\n:plot sum(x**2)\n:plot sum(x**2) x -1:1\n")
    assert reply.stderr.splitlines() == [
        "error: line 2: give an input a range to plot over, as in :plot sum(x**2) x[0] -3:3",
        "error: line 3: x -1:1: x holds an array of shape (2,): sweep one of its elements, as "
        "in x[0] -1:1",
    ]
    reply = in_process("repl", stdin="x = [1, 2]\n:plot sum(x**2) x[0] -2:2\n")
    assert reply.returncode == 0 and "f(x[0])" in reply.stdout


def test_minimize_moves_array_parameters():
    A, b = np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])
    result = ng.minimize(
        "norm(A@x - b)**2", x=np.zeros(2), A=A, b=b, fix=["A", "b"], lr=0.05, steps=5000
    )
    assert result.converged
    np.testing.assert_allclose(result.inputs["x"], np.linalg.solve(A, b), rtol=1e-6)


def test_the_repl_gives_an_input_an_array_value():
    done = in_process("repl", stdin="x = [1, 2, 3]\nsum(x**2)\nx[3]\n")
    assert "x[2]    3.0    6.0" in done.stdout
    assert "index 3 is out of range for axis 0 of shape (3,)" in done.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.array(["a"]), "x: an array of real numbers, not of text"),
        (np.ones((1,) * 40), "x: an array has at most 32 axes, not 40"),
        (np.array([]), "x: the array is empty, of shape (0,)"),
        (np.array([1 + 2j]), "x: an array of real numbers, not of complex numbers"),
        ([[1, 2], [3]], "x: a ragged array, its rows of different lengths"),
        (["1"], "x: an array of real numbers, not of text"),
    ],
)
def test_python_refuses_arrays_that_are_not_of_numbers(value, message):
    with pytest.raises(InputError) as caught:
        ng.grad("sum(x)", x=value)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("s.json", '[1, "2"]'),
        ("deep.json", "[" * 100_000 + "1" + "]" * 100_000),
        ("r.csv", "1,2\n3\n"),
        ("e.csv", ""),
    ],
)
def test_a_file_that_is_no_array_of_numbers_is_bad_input(tmp_path, name, content):
    (tmp_path / name).write_text(content)
    done = in_process("grad", "sum(x)", "--x", f"@{name}", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"error: --x @{name}: "), done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_diff_writes_out_an_array_of_numbers():
    assert ng.diff("sum([x, x**2])", wrt="x") == "2*x + 1"


def test_slices_take_a_step_and_norm_has_derivative_0_at_0():
    result = ng.grad("sum(x[::2]) + x[::-1][0]", x=np.arange(1.0, 6.0))
    assert result.gradients["x"].tolist() == [1.0, 0.0, 1.0, 0.0, 2.0]
    assert ng.grad("norm(x)", x=np.zeros(2)).gradients["x"].tolist() == [0.0, 0.0]  # PyTorch's


def test_elements_typed_without_commas_get_a_hint():
    done = in_process("grad", "[1 2 3]")
    assert done.stderr.splitlines()[0] == (
        "error: line 1, column 4: missing operator between '1' and '2': write 1*2, or 1, 2 for "
        "two elements"
    )


def test_the_repl_refuses_a_ragged_array_and_keeps_the_old_value():
    done = in_process("repl", stdin="x = [1, 2,\n3]\nx = [[1, 2], [3]]\nsum(x)\n")
    assert done.stderr == (
        "error: line 3: [[1, 2], [3]]: the elements of an array have one shape: (2,) and (1,) "
        "differ\n"
    )
    assert "result  6.0" in done.stdout


def test_random_starts_are_drawn_with_the_seed(tmp_path):
    loss = ["minimize", "sum(W**2)", "--steps", "1", "--format", "json"]
    first = json.loads(in_process(*loss, "--W", "normal(2, 3)", "--seed", "7").stdout)
    again = json.loads(in_process(*loss, "--W", "normal(2, 3)", "--seed", "7").stdout)
    other = json.loads(in_process(*loss, "--W", "normal(2, 3)", "--seed", "8").stdout)
    assert first == again != other
    assert np.shape(first["inputs"]["W"]) == (2, 3)
    spread = json.loads(in_process(*loss, "--W", "uniform(1000)", "--seed", "1").stdout)
    assert -1 <= min(spread["gradients"]["W"]) / 2 and max(spread["gradients"]["W"]) / 2 <= 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["grad", "sum(W)", "--W", "normal(2, 2)"], "error: --W normal(2, 2) is random: random "
         "starts are for nanograd minimize, which draws them with --seed N; here, give the "
         "values (a list, zeros(...) or @FILE)\n"),
        (["minimize", "sum(W**2)", "--W", "normal(2, 2)"], "error: --W normal(2, 2) is random: "
         "give --seed N to draw it, and to draw the same one again\n"),
        (["minimize", "sum(W**2)", "--W", "uniform(2, 0)", "--seed", "1"], "error: --W "
         "uniform(2, 0): uniform takes sizes of 1 or more, not 0\n"),
        (["minimize", "sum(W**2)", "--W", "uniform(2, 1.5)", "--seed", "1"], "error: --W "
         "uniform(2, 1.5): an index, a size or an axis is a whole number, not 1.5\n"),
        (["minimize", "sum(W**2)", "--W", "normal(a)", "--seed", "1"], "error: --W "
         "normal(a): give the shape as whole numbers of 1 or more, normal(16, 2)\n"),
        (["minimize", "x**2", "--x", "1", "--seed", "1"], "error: --seed draws random starts "
         "(--W 'normal(16, 2)') and orders the batches of --batch N: with neither it does "
         "nothing\n"),
    ],
)  # fmt: skip
def test_random_starts_need_a_seed_and_a_shape(args, message):
    done = in_process(*args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)


MLP = """\
# a 2-16-16-1 tanh network, and the squared error of one row
h1 = tanh(W1 @ [x1, x2] + b1)
h2 = tanh(W2 @ h1 + b2)
p = w3 @ h2 + c
(p - y)**2
"""


def test_a_network_in_one_source_trains_with_minimize_data_as_pytorch_does(tmp_path):
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(20, 2)), np.sign(rng.normal(size=20))
    (tmp_path / "rows.csv").write_text(
        "x1,x2,y\n"
        + "".join(f"{a!r},{b!r},{c!r}\n" for (a, b), c in zip(X.tolist(), y.tolist(), strict=True))
    )
    (tmp_path / "mlp.txt").write_text(MLP)
    start = {
        "W1": rng.normal(size=(16, 2)),
        "b1": np.zeros(16),
        "W2": rng.normal(size=(16, 16)) / 4,
        "b2": np.zeros(16),
        "w3": rng.normal(size=16) / 4,
        "c": 0.0,
    }
    values = [f"--{n}={json.dumps(np.asarray(v).tolist())}" for n, v in start.items()]
    options = ["--steps", "20", "--lr", "0.01", "--method", "sgd", "--format", "json"]
    done = in_process(
        "minimize", "-f", "mlp.txt", "--data", "rows.csv", *values, *options, cwd=tmp_path
    )
    ours = json.loads(done.stdout)
    params = {n: torch.tensor(v, dtype=torch.float64, requires_grad=True) for n, v in start.items()}
    inputs, target = torch.tensor(X), torch.tensor(y)
    optimizer = torch.optim.SGD(params.values(), lr=0.01)
    for _ in range(20):
        optimizer.zero_grad()
        h1 = torch.tanh(inputs @ params["W1"].T + params["b1"])
        h2 = torch.tanh(h1 @ params["W2"].T + params["b2"])
        loss = ((h2 @ params["w3"] + params["c"] - target) ** 2).mean()
        loss.backward()
        optimizer.step()
    for name, tensor in params.items():
        np.testing.assert_allclose(
            ours["inputs"][name], tensor.detach().numpy(), rtol=1e-10, atol=1e-12
        )


def test_arrays_too_big_for_memory_are_refused_before_they_are_built():
    code, out, err = limited("nanograd grad 'sum(x)' --x 'zeros(3000, 3000)'", memory=1_000_000)
    assert (code, out) == (1, "")
    assert err.startswith(  # (its value)
        "error: --x zeros(3000, 3000): written out in scalars, the arrays make 9,000,00"
    )
    assert err.rstrip().endswith("fit") and len(err.splitlines()) == 1


def test_fit_takes_array_parameters_a_polynomials_coefficients(tmp_path):
    x = np.linspace(-2, 2, 30)
    y = 1 + 2 * x - 0.5 * x**2 + 0.01 * np.sin(7 * x)
    data = {"x": x, "y": y}
    result = ng.fit("a @ [1, x, x**2]", data, a=np.zeros(3))
    np.testing.assert_allclose(result.parameters["a"], np.polyfit(x, y, 2)[::-1], rtol=1e-9)
    assert result.stderr["a"].shape == (3,)
    # a start is given as to every other command: a list, or the text the command line reads
    for start in ([0, 0, 0], "[0, 0, 0]", "zeros(3)"):
        again = ng.fit("a @ [1, x, x**2]", data, a=start)
        assert again.parameters["a"].tolist() == result.parameters["a"].tolist()
    (tmp_path / "poly.csv").write_text(
        "x,y\n" + "".join(f"{a!r},{b!r}\n" for a, b in zip(x.tolist(), y.tolist(), strict=True))
    )
    done = in_process("fit", "a @ [1, x, x**2]", "--data", "poly.csv", "--a", "[0, 0, 0]",
                      "--format", "csv", cwd=tmp_path)  # fmt: skip
    assert done.stdout.splitlines()[0].startswith("parameter,value,stderr")
    assert [row.split(",")[0] for row in done.stdout.splitlines()[1:4]] == ["a[0]", "a[1]", "a[2]"]


def test_points_read_an_array_from_columns_and_take_arrays_given(tmp_path):
    (tmp_path / "p.csv").write_text("x[0],x[1],y\n1,2,3\n0.5,-1,2\n")
    done = in_process("grad", "sum((W @ x - y)**2)", "--points", "p.csv", "--W",
                      "[[1, 2], [3, 4]]", cwd=tmp_path)  # fmt: skip
    assert done.stdout == (
        'x[0],x[1],y,value,"d_W[0,0]","d_W[0,1]","d_W[1,0]","d_W[1,1]",d_x[0],d_x[1],d_y\n'
        "1,2,3,68.0,4.0,8.0,16.0,32.0,52.0,72.0,-20.0\n"
        "0.5,-1,2,32.5,-3.5,7.0,-4.5,9.0,-34.0,-50.0,16.0\n"
    )
    (tmp_path / "q.csv").write_text("x[0],x[2]\n1,2\n")
    done = in_process("grad", "sum(x)", "--points", "q.csv", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2, "error: --points: the columns x[...] make no array: x[1] is missing\n"
    )  # fmt: skip


def test_plot_takes_arrays_as_fixed_values():
    curve = ng.plot("norm(A @ [x, 1])", A=np.array([[1.0, 2.0], [3.0, 4.0]]), x=(-1, 1, 3))
    expected = [np.linalg.norm(np.array([[1, 2], [3, 4]]) @ [x, 1]) for x in (-1, 0, 1)]
    np.testing.assert_allclose(curve.value, expected, rtol=1e-14)


# Random array programs: a source and the same computation in PyTorch, built together, over
# A (m, n), v (n,), w (m,) and s (a number).


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    programs(("S",), 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(0, 2**32 - 1),
)
def test_random_array_programs_agree_with_pytorch(program, m, n, seed):
    source, reference = program
    given = values_at(source, m, n, seed)
    result = ng.grad(source, **given)
    tensors = {
        name: torch.tensor(value, dtype=torch.float64, requires_grad=True)
        for name, value in given.items()
    }
    expected = reference(tensors, torch_library())
    expected.backward()
    assert result.value == pytest.approx(expected.item(), rel=1e-9, abs=1e-12), source
    for name, tensor in tensors.items():
        np.testing.assert_allclose(
            result.gradients[name], tensor.grad.numpy(), rtol=1e-8, atol=1e-11, err_msg=source
        )


def test_a_terminal_shows_a_matrix_as_a_block_where_it_fits_and_elements_where_not():
    shown = visible(
        on_terminal("grad", "sum(W @ x)", "--W", "[[1, 2], [3, 4]]", "--x", "[0.5, -1]")
    )
    assert shown[3:7] == [
        "│result │         -4.0 │               │",
        "│W      │ [[1.0, 2.0], │ [[ 0.5, -1.0],│",
        "│       │  [3.0, 4.0]] │  [ 0.5, -1.0]]│",
        "│x      │ [ 0.5, -1.0] │     [4.0, 6.0]│",
    ]
    rows = visible(on_terminal("grad", "sum(x**2)", "--x", "ones(30)"))
    assert rows[4] == "│x[0]   │   1.0 │      2.0│" and len(rows) == 4 + 30 + 1


def test_draw_shows_an_array_per_node_and_the_scalars_on_request():
    layer = ["h = tanh(W @ x + b); sum(h**2)", "--W", "[[1, 2], [3, 4], [5, 6]]"]
    layer += ["--x", "[0.5, -1]", "--b", "[0, 0.1, 0.2]", "-o", "-"]
    dot = in_process("draw", *layer).stdout
    assert (
        'v0 [label="W | shape (3, 2) | data 1.0000, 2.0000, 3.0000, 4.0000, … (6 in all) | grad '
        '-0.1636, 0.3271, -0.0319, 0.0637, … (6 in all)"' in dot
    )
    assert '[label="h | shape (3,) | data -0.9051, -0.9837, -0.9973 | grad' in dot
    assert dot.count("shape=ellipse") == 5  # @, +, tanh, **, sum
    assert dot.count("shape=record") == 8  # W, x, W @ x, b, + b, h, h**2, the sum
    scalars = in_process("draw", *layer, "--scalars").stdout
    assert "W[2,1]" in scalars and "shape (" not in scalars
    python = ng.draw(layer[0], format="dot", W=np.ones((3, 2)), x=np.ones(2), b=np.zeros(3))
    assert b"shape (3, 2)" in python


def test_the_drawing_of_arrays_has_a_legend_that_says_how_to_read_an_array():
    layer = ["sum(tanh(W @ x))", "--W", "[[1, 2], [3, 4]]", "--x", "[0.5, -1]", "-o", "-"]
    dot = in_process("draw", *layer).stdout
    assert "an array: its shape, and its first 4 numbers," in dot
    assert "fill: ‖grad‖ on a log scale in 6 equal steps" in dot
    assert "which operand is which" in dot
    assert "≥" not in dot  # the top step runs to the largest ‖grad‖, which it holds
    steps = re.findall(r">([0-9.e+-]+) to ([0-9.e+-]+)<", dot)
    # the largest ‖grad‖ of a node, by hand: 1 (the sum), √2 (tanh's ones), 1/cosh(W@x)**2
    # (W @ x), outer of that and x (W), W.T@ that (x)
    W, x = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, -1.0])
    inner = 1 / np.cosh(W @ x) ** 2
    norms = [1.0, np.sqrt(2), *map(np.linalg.norm, (inner, np.outer(inner, x), W.T @ inner))]
    largest = max(norms)
    assert float(steps[0][1]) == pytest.approx(largest, rel=1e-2)
    assert "legend" not in in_process("draw", *layer, "--no-legend").stdout


def test_the_drawing_of_arrays_names_operands_and_draws_local_derivatives_on_request():
    """As a scalar graph's: a - b and a @ b label their edges; with --edge-grads, an operation
    element by element has its local derivative per element on each edge (tanh's is
    1/cosh**2, by hand), an array operation none."""
    source = "h = tanh(W @ x - b); sum(h**2)"
    given = ["--W", "[[1, 2], [3, 4]]", "--x", "[0.5, -1]", "--b", "[0, 0.1]", "-o", "-"]
    dot = in_process("draw", source, *given).stdout
    # (numbered: the input b is no operand b)
    assert '[label="#1 @ #2"' in dot and '[label="#1 - #2"' in dot
    assert dot.count('headlabel="#1"') == 3 and dot.count('headlabel="#2"') == 3  # and a ** b
    dot = in_process("draw", source, *given, "--edge-grads").stdout
    z = np.array([[1.0, 2.0], [3.0, 4.0]]) @ np.array([0.5, -1.0]) - np.array([0.0, 0.1])
    local = ", ".join(f"{v:.4f}" for v in 1 / np.cosh(z) ** 2)
    assert f'[label="{TIMES}{local}"]' in dot  # into tanh
    assert f'[label="#2 {TIMES}-1.0000, -1.0000" fontcolor="#7a3e9d"]' in dot
    assert 'headlabel="#1"' in dot  # @: which operand, and no local derivative
    assert "an array operation's is no number" in dot
    # a constant's edge (the 2 of h**2) has no derivative; gradients too large for a 2-norm
    # colour their node without a NumPy warning
    assert dot.count(f"#2 {TIMES}") == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        done = in_process("draw", "sum(W@x)", "--W", "[[1, 2]]", "--x", "[1e308, 1e308]", "-o", "-")
    assert done.returncode == 0, done.stderr


def test_draw_of_an_array_result_says_what_to_draw():
    done = in_process("draw", "W @ x", "--W", "[[1, 2], [3, 4]]", "--x", "[1, 2]", "-o", "-")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: draw shows gradients, and the result is an array: draw a number made of it, "
        "such as sum(...) or one element [0], or add --scalars to draw its elements in one "
        "graph\n"
    )


def test_micrograds_mlp_and_the_same_network_as_one_source_train_step_for_step(tmp_path):
    micrograd = pytest.importorskip("micrograd.nn")
    import random

    random.seed(2)
    model = micrograd.MLP(2, [4, 4, 1])  # ReLU, ReLU, linear: micrograd's network
    rows = [(0.5, -1.0, 1.0), (-0.3, 0.8, -1.0), (1.2, 0.1, 1.0), (-0.7, -0.4, -1.0)]
    layers = [
        (
            np.array([[w.data for w in n.w] for n in layer.neurons]),
            [n.b.data for n in layer.neurons],
        )
        for layer in model.layers
    ]
    starts = {"W1": layers[0][0], "b1": layers[0][1], "W2": layers[1][0], "b2": layers[1][1]}
    starts |= {"w3": layers[2][0][0], "c": layers[2][1][0]}
    values = [f"--{n}={json.dumps(np.asarray(v).tolist())}" for n, v in starts.items()]
    (tmp_path / "rows.csv").write_text("x1,x2,y\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows))
    source = "h1 = relu(W1 @ [x1, x2] + b1); h2 = relu(W2 @ h1 + b2); p = w3 @ h2 + c; (p - y)**2"
    steps, lr = 5, 0.05
    done = in_process("minimize", source, "--data", "rows.csv", *values, "--method", "sgd",
                      "--lr", str(lr), "--steps", str(steps), "--tol", "0", "--format", "json",
                      cwd=tmp_path)  # fmt: skip
    ours = json.loads(done.stdout)["inputs"]
    for _ in range(steps):
        model.zero_grad()
        loss = sum((model([a, b]) - c) ** 2 for a, b, c in rows) * (1 / len(rows))
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
    first = model.layers[0].neurons
    np.testing.assert_allclose(ours["W1"], [[w.data for w in n.w] for n in first], rtol=1e-12)
    assert ours["c"] == pytest.approx(model.layers[2].neurons[0].b.data, rel=1e-12)


LEAST_SQUARES = ("--A", "[[1, 2], [3, 4], [5, 6]]", "--x", "[1, -1]", "--b", "[0, 1, 2]")


def test_check_against_takes_diffs_vector_form_element_by_element():
    done = in_process(
        "check", "norm(A@x - b)**2", "--against", "2*A.T@(A@x - b)", "--wrt", "x", *LEAST_SQUARES
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "input  formula          points  skipped  differ  max_abs_error  pass",
        "x[0]   2*A.T@(A@x - b)  1       0        0       0.0            yes",
        "x[1]   2*A.T@(A@x - b)  1       0        0       0.0            yes",
    ]
    wrong = in_process(
        "check",
        "norm(A@x - b)**2",
        "--against",
        "x=A.T@(A@x - b)",
        *LEAST_SQUARES,
        "--format",
        "json",
    )
    assert wrong.returncode == 1
    checks = json.loads(wrong.stdout)["checks"]
    assert [checks[e]["max_abs_error"] for e in ("x[0]", "x[1]")] == [22.0, 28.0]
    assert json.loads(wrong.stdout)["inputs"]["A"] == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def test_check_against_refuses_a_formula_of_another_shape():
    done = in_process("check", "norm(A@x - b)**2", "--against", "x=A@x", *LEAST_SQUARES)
    assert done.returncode == 2
    assert done.stderr == "error: the formula for d/dx has shape (3,), and x has shape (2,)\n"


def test_check_against_ranges_over_numbers_beside_arrays():
    args = ("--against", "x=2*x*s", "--against", "s=sum(x**2)", "--x", "[1, 2]")
    done = in_process("check", "sum(x**2)*s", *args, "--s", "0:1:3", "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert [row.split(",")[:3] for row in done.stdout.splitlines()[1:]] == [
        ["x[0]", "2*x*s", "3"],
        ["x[1]", "2*x*s", "3"],
        ["s", "sum(x**2)", "3"],
    ]


def test_each_line_takes_arrays_a_column_per_element():
    lines = "sum(x**2)\nx[0]*y\ny\n"
    done = in_process(
        "grad", "-", "--each-line", "--x", "[1, 2]", "--y", "3", "--format", "csv", stdin=lines
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "line,value,d_x[0],d_x[1],d_y",
        "1,5.0,2.0,4.0,0.0",
        "2,3.0,3.0,0.0,1.0",
        "3,3.0,0.0,0.0,1.0",
    ]
    as_json = in_process(
        "grad", "-", "--each-line", "--x", "[1, 2]", "--y", "3", "--format", "json", stdin=lines
    )
    first = json.loads(as_json.stdout.splitlines()[0])
    assert first["gradients"] == {"x": [2.0, 4.0], "y": 0.0}


def test_each_line_refuses_a_line_whose_result_is_an_array():
    done = in_process("grad", "-", "--each-line", "--x", "[1, 2]", stdin="x*2\nsum(x)\n")
    assert done.returncode == 2
    assert done.stderr == (
        "error: line 1: a line's result is one number, not an array of shape (2,) "
        "(its Jacobian: nanograd grad without --each-line)\n"
    )
    assert done.stdout.splitlines()[-1].split()[:3] == ["2", "sum(x)", "3.0"]


@pytest.mark.parametrize(
    ("header", "given", "message"),
    [
        (
            "x[0],x[1],t",
            ["--x", "[1, 2]"],
            "error: --points has a column x[0] and --x gives x too\n",
        ),
        ("x[0],x[1],x,t", [], "error: --points has a column x and a column x[0]: give x one way\n"),
    ],
)
def test_points_refuse_an_array_given_two_ways(tmp_path, header, given, message):
    (tmp_path / "p.csv").write_text(f"{header}\n" + ",".join(["1"] * header.count(",")) + ",2\n")
    done = in_process("grad", "sum(x**2)*t", "--points", "p.csv", *given, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, message)


def test_wrt_an_element_gives_that_elements_derivative():
    """The installed command: --wrt x[-1] and W[1, 2] (spaces and negative indices as a
    source writes them), against PyTorch's gradient and Jacobian."""
    W = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.25, -1.5]], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (torch.tanh(W @ x) ** 2).sum().backward()
    given = ["--W", str(W.tolist()), "--x", str(x.tolist())]
    done = nanograd(
        "grad", "sum(tanh(W@x)**2)", *given, "--wrt", "W[1, 2]", "--wrt", "x[-1]", "--format", "csv"
    )
    header, row = done.stdout.splitlines()
    assert header == 'value,"d_W[1,2]",d_x[2]'
    assert [float(v) for v in row.split(",")[1:]] == pytest.approx(
        [W.grad[1, 2].item(), x.grad[2].item()], rel=1e-14
    )
    jacobian = torch.autograd.functional.jacobian(lambda W: torch.tanh(W @ x), W.detach())
    done = in_process("grad", "tanh(W@x)", *given, "--wrt", "W[0,1]", "--format", "json")
    assert json.loads(done.stdout)["jacobian"]["result"]["W[0,1]"] == pytest.approx(
        jacobian[:, 0, 1].tolist(), rel=1e-14
    )


@pytest.mark.parametrize(
    ("wrt", "message"),
    [
        ("x[3]", "error: --wrt x[3]: out of range for x of shape (3,)\n"),
        (
            "x[0, 1]",
            "error: --wrt x[0, 1]: an element of x of shape (3,) has 1 index: x[0] to x[2]\n",
        ),
        ("y[0]", "error: --wrt y[0]: y is a number, not an array: differentiate by --wrt y\n"),
        ("z[0]", "error: --wrt z[0]: z[0] is not an input (inputs: x, y)\n"),
    ],
)
def test_wrt_an_element_that_is_not_one_is_bad_input(wrt, message):
    done = nanograd("grad", "sum(x**2)*y", "--x", "[1, 2, 3]", "--y", "2", "--wrt", wrt)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)


def test_an_array_value_may_hold_nan_and_inf_with_a_warning_naming_the_element():
    """As --x nan is (spec §3): exit 0, the warning names x[1]; --strict is exit 1."""
    done = nanograd("grad", "sum(x**2)", "--x", "[1, nan, -Infinity]", "--format", "csv")
    assert done.returncode == 0
    assert done.stderr.splitlines()[0] == "warning: line 1, column 5: input x[1] is nan"
    assert done.stdout == "value,d_x[0],d_x[1],d_x[2]\nNaN,2.0,NaN,-inf\n"
    done = nanograd("grad", "sum(W)", "--W", "[[1, 2], [inf, 3]]", "--strict")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[0] == "error: line 1, column 5: input W[1,0] is inf"


def test_an_array_file_may_begin_with_a_bom_and_one_that_cannot_be_read_is_exit_1(tmp_path):
    """As --data FILE: a missing file or a directory is a file that cannot be read (spec §3)."""
    (tmp_path / "w.csv").write_bytes(b"\xef\xbb\xbf1,2\r\n3,4\r\n")
    (tmp_path / "w.json").write_bytes(b"\xef\xbb\xbf[1.5, 2]")
    (tmp_path / "folder").mkdir()
    done = nanograd(
        "grad", "sum(W)*x[0]", "--W", "@w.csv", "--x", "@w.json", "--format", "json", cwd=tmp_path
    )
    assert json.loads(done.stdout)["inputs"] == {"W": [[1.0, 2.0], [3.0, 4.0]], "x": [1.5, 2.0]}
    for name, reason in [
        ("nowhere.csv", "No such file or directory"),
        ("folder", "Is a directory"),
    ]:
        done = nanograd("grad", "sum(x)", "--x", f"@{name}", cwd=tmp_path)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == f"error: --x @{name}: cannot read {name}: {reason}\n"
        data = nanograd("minimize", "(a - x)**2", "--a", "0", "--data", name, cwd=tmp_path)
        assert (data.returncode, data.stderr) == (1, f"error: cannot read {name}: {reason}\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,2\n1e999,4\n", "line 2, field 1: 1e999 is too large for a float"),
        ("1,2\n3\n", "line 2 has 1 number, line 1 has 2: a matrix's rows are equally long"),
        (
            "# W\n\n1,2,3\n4,5\n",
            "line 4 has 2 numbers, line 3 has 3: a matrix's rows are equally long",
        ),
        ("a,b\n1,2\n", "line 1, field 1: 'a' is not a number: an array file has no header"),
        ("1,x\n", "line 1, field 2: 'x' is not a number"),
        ("1;2\n3;4\n", "line 1, field 1: '1;2' is not a number: separate by commas"),
        ("1,,2\n", "line 1, field 2 is empty"),
        ("", "no numbers in the file"),
        ("\n# only a comment\n", "no numbers in the file"),
    ],
)
def test_a_csv_array_file_that_holds_no_array_says_where(tmp_path, text, message):
    """A CSV of numbers read with --W @FILE: what is wrong, by line and field (exit 2)."""
    path = tmp_path / "w.csv"
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        array_value(f"@{path}", "--W @w.csv")
    assert str(raised.value) == f"--W @w.csv: {message}"


def test_a_csv_array_file_may_quote_its_numbers_and_write_inf(tmp_path):
    (tmp_path / "w.csv").write_text('"1","2"\n"inf",-Infinity\n')
    assert array_value(f"@{tmp_path / 'w.csv'}", "--W").tolist() == [[1, 2], [np.inf, -np.inf]]
    (tmp_path / "w.json").write_text("[1, 1e999]")
    with pytest.raises(InputError, match=r"^--W: the number 1e999 is too large for a float$"):
        array_value(f"@{tmp_path / 'w.json'}", "--W")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("sum(x.t)", "line 1, column 6: unexpected character '.': did you mean x.T?"),
        ("sum(x.transpose())", "line 1, column 6: unexpected character '.': did you mean x.T?"),
        ("sum(transpose(x))", "line 1, column 5: unknown function transpose: did you mean x.T?"),
        (
            "sum(transpose(A@x))",
            "line 1, column 5: unknown function transpose: did you mean (A@x).T?",
        ),
        (
            "sum(transpose(A[0]))",
            "line 1, column 5: unknown function transpose: did you mean A[0].T?",
        ),
        (
            "sum(np.exp(x))",
            "line 1, column 7: unexpected character '.': the language's functions go without "
            "np., write exp(...)",
        ),
        ("x.sum()", "line 1, column 2: unexpected character '.': write sum(x), not x.sum()"),
        (
            "sum(np.linalg.inv(A) @ x)",
            "line 1, column 7: unexpected character '.': the language has no matrix inverse: "
            "for x = inv(A) @ b, minimize norm(A@x - b)**2",
        ),
        (
            "sum(inv(A) @ x)",
            "line 1, column 5: unknown function inv: the language has no matrix inverse: "
            "for x = inv(A) @ b, minimize norm(A@x - b)**2",
        ),
    ],
)
def test_numpys_habits_get_a_hint(source, message):
    done = nanograd("grad", source, "--x", "[1, 2]", "--A", "[[1, 0], [0, 1]]")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == f"error: {message}"


def test_an_array_without_brackets_and_a_bracket_left_open_say_so():
    """The caret of a '[' closed by ')' is under the '[', in a source and in the repl."""
    done = nanograd("grad", "sum(x)", "--x", "1, 2, 3")
    assert (done.returncode, done.stderr) == (
        2,
        "error: --x expects a number, got '1, 2, 3'; an array is written in brackets, "
        '--x "[1, 2, 3]"\n',
    )
    for typed in ("{1,2}", "(1,2)"):  # other brackets
        done = in_process("grad", "sum(x)", "--x", typed)
        assert done.stderr.endswith('an array is written in brackets, --x "[1,2]"\n'), typed
    assert (
        "index 1e+300 is out of range"
        in in_process("grad", "sum(x[1e300])", "--x", "[1, 2]").stderr
    )
    deep = in_process("grad", "sum(x)", "--x", "[" * 300 + "1" + "]" * 300).stderr
    assert deep.endswith("[…: an array has at most 32 axes\n") and len(deep) < 120  # no place
    done = nanograd("grad", "sum([1, 2, x) + 1", "--x", "1")
    assert (done.returncode, done.stderr) == (
        2,
        "error: line 1, column 5: '[' is not closed before the ')' at column 13\n"
        "  1 | sum([1, 2, x) + 1\n          ^\n",
    )
    done = nanograd("repl", stdin="x = 2\ny = [1,\n  x)\ny\n")
    assert done.stderr.splitlines()[:3] == [
        "error: line 2, column 5: '[' is not closed before the ')' 1 line below, at column 4",
        "  2 | y = [1,",
        "          ^",
    ]


def test_check_against_takes_the_whole_of_diffs_output_and_names_every_element_that_differs():
    """diff's output for every input, its t1 = ... lines and comments as it prints them, is
    a formula per input; changed by hand in one line, that input's elements differ (by
    hand: 3*x**2 against 2*x**2 differs by x**2 at x = 2 and 3, not at 0)."""
    source = "sum(x**3)*y + sum(sin(x[0:2]*y)**3)*exp(sum(sin(x[0:2]*y)**3))"
    given = ["--x", "[0, 2, 3]", "--y", "0.5"]
    derivatives = nanograd("diff", source, "--shape", "x=3")
    assert derivatives.stdout.startswith("t1 = ") and "\nd_y = " in derivatives.stdout
    done = nanograd("check", source, *given, "--against", derivatives.stdout, "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert [row.split(",")[0] for row in done.stdout.splitlines()[1:]] == [
        "x[0]",
        "x[1]",
        "x[2]",
        "y",
    ]
    with_notes = nanograd("diff", "sum(x**y)", "--shape", "x=2").stdout
    assert "\n# x > 0; loses digits where x**y is below 2.2e-308" in with_notes
    done = nanograd("check", "sum(x**y)", "--x", "[1, 2]", "--y", "3", "--against", with_notes)
    assert done.returncode == 0, done.stderr
    wrong = "d_x = 2*x**2*y\nd_y = sum(x**3)"
    done = nanograd(
        "check",
        "sum(x**3)*y",
        "--x",
        "[0, 2, 3]",
        "--y",
        "1",
        "--against",
        wrong,
        "--format",
        "json",
    )
    assert done.returncode == 1
    errors = {n: c["max_abs_error"] for n, c in json.loads(done.stdout)["checks"].items()}
    assert errors == {"x[0]": 0.0, "x[1]": 4.0, "x[2]": 9.0, "y": 0.0}
    assert done.stderr == (
        "error: the formulas for d/dx[1], d/dx[2] differ from the engine's derivatives\n"
    )
    done = nanograd("check", "sum(x**2)", "--x", "[1, 2, 3, 4, 5, 6]", "--against", "3*x")
    assert done.stderr == (
        "error: the formulas for 6 derivatives (the worst: d/dx[5]) differ from the "
        "engine's derivatives\n"
    )


def test_check_against_the_one_input_twice_says_so():
    done = nanograd("check", "sum(x**2)", "--x", "[1, 2]", "--against", "2*x", "--against", "2*x")
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr
        == "error: --against is given 2 times for d/dx, the one input: give one formula\n"
    )


def test_a_random_start_may_be_scaled_by_a_number():
    """One SGD step on sum(W**2) moves W to W*(1 - 2*lr): from NumPy's draw with the seed,
    times 0.1 or divided by 4, by hand. Other arithmetic on a random start says what is
    taken, not that --seed does nothing."""
    loss = ["minimize", "sum(W**2)", "--steps", "1", "--method", "sgd", "--lr", "0.25"]
    drawn = np.random.default_rng(7).standard_normal((2, 3))
    for start, scaled in [("0.1*normal(2, 3)", 0.1 * drawn), ("normal(2, 3)/4", drawn / 4)]:
        done = nanograd(*loss, "--W", start, "--seed", "7", "--format", "json")
        moved = json.loads(done.stdout)["inputs"]["W"]
        assert np.ravel(moved).tolist() == pytest.approx((scaled * 0.5).ravel().tolist(), rel=1e-15)
    done = nanograd(*loss, "--W", "uniform(2, 3) + 1", "--seed", "7")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: --W uniform(2, 3) + 1: a random start is normal(...) or uniform(...), alone, "
        "times a number or divided by one: 0.1*uniform(2, 3), normal(16, 2)/4\n"
    )


def test_points_take_wrt_an_element(tmp_path):
    """By hand: d/dx[1] of sum(x**2)*y is 2*x[1]*y, d/dy is sum(x**2)."""
    (tmp_path / "p.csv").write_text("x[0],x[1],y\n1,2,3\n4,5,6\n")
    done = nanograd(
        "grad", "sum(x**2)*y", "--points", "p.csv", "--wrt", "x[1]", "--wrt", "y", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "x[0],x[1],y,value,d_x[1],d_y",
        "1,2,3,15.0,12.0,5.0",
        "4,5,6,246.0,60.0,41.0",
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["explain", "W @ x", "--W", "[[1, 2], [3, 4]]", "--x", "[1, 2]"],
        ["hessian", "x**2", "--x", "[1, 2]"],
        ["check", "x**2", "--x", "[1, 2]"],
        ["plot", "t*[1, 2]", "--t", "-1:1"],
    ],
)
def test_an_array_result_where_one_number_is_taken_says_so(args):
    """Not the message of a source that lists outputs, which this one does not: the result
    is an array, and the command takes a number made of it."""
    done = in_process(*args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: the result is an array of 2 elements, and nanograd {args[0]} takes one "
        "number: end the source with a number made of it, such as sum(...) or one element [0] "
        "(nanograd grad takes several)\n"
    )


def test_std_of_a_constant_row_has_pytorchs_gradient_0():
    A, z = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]), np.array([0.5, -1.0])
    tensors = torch_inputs({"A": A, "z": z})
    (tensors[0].std(1, correction=0) * tensors[1]).sum().backward()
    result = ng.grad("sum(std(A, 1) * z)", A=A, z=z)
    np.testing.assert_allclose(result.gradients["A"], tensors[0].grad.numpy(), rtol=1e-14)
    assert result.gradients["A"][0].tolist() == [0.0, 0.0, 0.0]
    assert ng.grad("std(x)", x=5.0).gradients["x"] == 0.0
