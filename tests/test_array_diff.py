"""`diff` of array programs: the vector form a person writes where one exists, an array
literal element by element where not, each checked against PyTorch's gradient."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nanograd_cli as ng
from nanograd_cli.errors import InputError

from .array_programs import programs, torch_library, values_at
from .helpers import in_process, nanograd

torch = pytest.importorskip("torch")

LEAST_SQUARES = ["--shape", "A=3,2", "--shape", "x=2", "--shape", "b=3"]


@pytest.mark.parametrize(
    ("source", "shapes", "wrt", "expected"),
    [
        ("norm(A@x - b)**2", {"A": (3, 2), "x": 2, "b": 3}, "x", "2*A.T@(A@x - b)"),
        ("norm(A@x - b)**2", {"A": (3, 2), "x": 2, "b": 3}, "A", "outer(2*(A@x - b), x)"),
        ("x.T@A@x", {"A": (3, 3), "x": 3}, "x", "x@A + A@x"),  # x.T is x, for a vector
        ("x.T@x", {"x": 3}, "x", "2*x"),
        ("sum(x)/len(x)", {"x": 3}, "x", "ones(3)/len(x)"),
        ("sum(-y*log(softmax(z)))", {"z": 3, "y": 3}, "z", "softmax(z)*sum(y) - y"),
        ("softmax(z)@w", {"z": 3, "w": 3}, "z", "softmax(z)*(w - sum(w*softmax(z)))"),
        ("sum(x**2)", {"x": 4}, "x", "2*x"),
        ("sum(x)", {"x": 3}, "x", "ones(3)"),
        ("logsumexp(z) - z[1]", {"z": 3}, "z", "softmax(z) - [0, 1, 0]"),
        ("logsumexp(z) - y@z", {"z": 3, "y": 3}, "z", "softmax(z) - y"),
        ("sum(-y*log_softmax(z))", {"z": 3, "y": 3}, "z", "softmax(z)*sum(y) - y"),
        ("w@log_softmax(z)", {"z": 3, "w": 3}, "z", "w - softmax(z)*sum(w)"),
        # the sum of an array of numbers is that number
        ("log_softmax(z)[1]", {"z": 3}, "z", "[0, 1, 0] - softmax(z)"),
        ("sum(log_softmax(z))", {"z": 2}, "z", "ones(2) - 2*softmax(z)"),
        (
            "sum(tanh(W@x))",
            {"W": (2, 3), "x": 3},
            "W",
            "outer(1/cosh(W@x)**2, x)\n# loses digits for |W@x| > 355 (cosh's square "
            "overflows); diff --exact keeps them",
        ),
        ("mean((W@x - y)**2)", {"W": (2, 3), "x": 3, "y": 2}, "W", "outer(W@x - y, x)"),
        ("sum(sum(W, 1)**2)", {"W": (2, 3)}, "W", "outer(2*sum(W, 1), ones(3))"),
        ("sum(W[1]**2)", {"W": (2, 3)}, "W", "outer([0, 1], 2*W[1])"),
        ("sum(W@x)**2", {"W": (2, 2), "x": 2}, "x", "2*W.T@ones(2)*sum(W@x)"),
        ("var(x)", {"x": 3}, "x", "2*(x - mean(x))/3"),
        ("var(x)", {"x": (3, 3, 3)}, "x", "2*(x - mean(x))/27"),  # (was 0.07407407407407407*...)
        ("std(x)", {"x": 4}, "x", "(x - mean(x))/(4*std(x))\n# std(x) != 0"),
        ("var(W@x)", {"W": (2, 3), "x": 3}, "x", "W.T@(W@x - mean(W@x))"),
        ("sum(var(W, 0))", {"W": (2, 3)}, "W", "W - mean(W, 0)"),
        (
            "std(W, 1)@z",
            {"W": (2, 3), "z": 2},
            "W",
            "outer(z/std(W, 1), ones(3))*(W - outer(mean(W, 1), ones(3)))/3\n# std(W, 1) != 0",
        ),
    ],
)
def test_the_vector_form_is_what_a_person_writes(source, shapes, wrt, expected):
    assert ng.diff(source, wrt=wrt, shapes=shapes) == expected


def test_without_a_vector_form_the_derivative_is_an_array_element_by_element():
    assert ng.diff("sum(x[0:2]**2)", shapes={"x": 3}) == "[2*x[0], 2*x[1], 0]"
    # an array result: the Jacobian, of the result's shape then the input's
    assert ng.diff("x**2", wrt="x", shapes={"x": 2}) == "[[2*x[0], 0], [0, 2*x[1]]]"
    assert ng.diff("W@x", wrt="x", shapes={"W": (2, 2), "x": 2}) == (
        "[[W[0,0], W[0,1]], [W[1,0], W[1,1]]]"
    )


def test_every_input_gets_a_line_and_numbers_stay_numbers():
    assert ng.diff("dot(a, b)*c", shapes={"a": 3, "b": 3}) == (
        "d_a = b*c\nd_b = a*c\nd_c = dot(a, b)"
    )


def test_latex_writes_the_transpose_and_matrices_as_a_textbook_does():
    assert ng.diff(
        "norm(A@x - b)**2", "x", format="latex", shapes={"A": (3, 2), "x": 2, "b": 3}
    ) == (r"2 A^{\top} \left(A x - b\right)")
    assert ng.diff("W@x", "x", format="latex", shapes={"W": (2, 2), "x": 2}) == (
        r"\begin{bmatrix}W_{0,0} & W_{0,1} \\ W_{1,0} & W_{1,1}\end{bmatrix}"
    )
    assert ng.diff("logsumexp(z) - z[1]", "z", format="latex", shapes={"z": 3}) == (
        r"\operatorname{softmax}(z) - \begin{bmatrix}0 \\ 1 \\ 0\end{bmatrix}"
    )


def test_the_derivative_goes_back_to_grad_as_the_gradient():
    """The installed command: diff's output, given to grad, is grad's own gradient."""
    values = ["--A", "[[1, 2], [3, 4], [5, 6]]", "--x", "[1, -1]", "--b", "[0, 1, 2]"]
    derivative = nanograd("diff", "norm(A@x - b)**2", "--wrt", "x", *LEAST_SQUARES)
    assert derivative.returncode == 0, derivative.stderr
    again = in_process("grad", "-e", derivative.stdout, *values, "--format", "json")
    direct = in_process("grad", "norm(A@x - b)**2", *values, "--format", "json")
    import json

    assert json.loads(again.stdout)["values"]["result"] == pytest.approx(
        json.loads(direct.stdout)["gradients"]["x"], rel=1e-15
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--shape", "A"], "error: --shape expects NAME=DIMS, got 'A'"),
        (["--shape", "A=3,0"], "error: --shape A=3,0: give whole numbers from 1, such as 3 or 3,2"),
        (["--shape", "A=3,2", "--shape", "A=3"], "error: --shape A is given twice"),
        (["--shape", "q=2"], "error: q is not an input of this source (its inputs: A, x, b)"),
        (
            ["--x", "[1, 2]"],
            "error: nanograd diff takes no input values (--x): for the value of "
            "SOURCE at a point, use nanograd grad; an array input's shape is --shape x=DIMS",
        ),
    ],
)
def test_bad_shapes_are_bad_input(args, message):
    done = in_process("diff", "norm(A@x - b)**2", *args)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == message


def test_shapes_that_do_not_fit_are_said_with_a_caret():
    done = in_process("diff", "norm(A@x - b)**2", "--shape", "A=3,2", "--shape", "x=3")
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "error: line 1, column 7: shapes (3, 2) and (3,) do not match for @: 2 and 3 differ"
    )


def test_the_repl_and_python_take_shapes_as_the_command_line_does():
    done = in_process("repl", stdin=":diff norm(A@x - b)**2 wrt x shape A=3,2 x=2 b=3\n")
    assert done.stdout == "2*A.T@(A@x - b)\n"
    assert ng.diff("norm(A@x - b)**2", "x", shapes={"A": "3,2", "x": "2", "b": "3"}) == (
        "2*A.T@(A@x - b)"
    )


def test_an_array_too_big_for_memory_is_refused_before_it_is_built():
    done = in_process("diff", "sum(x)", "--shape", "x=1000000000")
    assert done.returncode == 1
    # each element three times (its node, value and gradient), and the sum's additions
    assert "written out in scalars, the arrays make 4,000,000,003 operations" in done.stderr


@settings(max_examples=60, deadline=None)
@given(
    programs(("S",), 2),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(0, 2**32 - 1),
)
def test_random_array_programs_differentiate_to_pytorchs_gradient(program, m, n, seed):
    """Each derivative diff writes, evaluated, is PyTorch's gradient: vector form or not."""
    source, reference = program
    given = values_at(source, m, n, seed)
    inputs = list(given)
    shapes = {name: np.shape(value) for name, value in given.items()}
    tensors = {
        name: torch.tensor(value, dtype=torch.float64, requires_grad=True)
        for name, value in given.items()
    }
    reference(tensors, torch_library()).backward()
    for name in inputs:
        text = ng.diff(source, wrt=name, shapes=shapes)
        derivative = ng.parse(text)
        at = {k: v for k, v in given.items() if k in derivative.inputs}
        if shapes[name]:
            got = ng.jacobian(text, **at).values["result"] if at else _constant(text)
        else:
            got = ng.grad(text, **at).value if at else _constant(text)
        np.testing.assert_allclose(
            got, tensors[name].grad.numpy(), rtol=1e-8, atol=1e-11, err_msg=f"{source}: {text}"
        )


def _constant(text: str):
    return np.asarray(ng.jacobian(f"{text} + 0*q", q=0.0).values["result"])


@pytest.mark.parametrize("given", ["", "3,,2", "+3", "3_0", "\uff13", "0", "2.5"])
def test_a_shape_is_whole_numbers_from_1_and_nothing_else(given):
    done = in_process("diff", "sum(x)", "--shape", f"x={given}")
    assert done.returncode == 2
    assert done.stderr == (
        f"error: --shape x={given}: give whole numbers from 1, such as 3 or 3,2\n"
    )


def test_python_takes_numpy_sizes_and_says_what_a_shape_is():
    assert ng.diff("sum(x*x)", "x", shapes={"x": np.int64(2)}) == "2*x"
    assert ng.diff("sum(x*x)", "x", shapes={"x": "(2,)"}) == "2*x"
    with pytest.raises(InputError, match="give whole numbers from 1"):
        ng.diff("sum(x*x)", "x", shapes={"x": 2.0})
    with pytest.raises(InputError, match="give a mapping of each array input to its shape"):
        ng.diff("sum(x*x)", "x", shapes=[("x", 2)])


def test_exact_is_the_engines_derivative_where_the_vector_form_is_not():
    """norm's derivative is 0 at the origin in the engine; x/norm(x) is nan there."""
    text = ng.diff("norm(x)", "x", shapes={"x": 2}, exact=True)
    assert "where(" in text
    assert ng.jacobian(text, x=np.zeros(2)).values["result"].tolist() == [0.0, 0.0]


def test_an_array_operation_without_shapes_says_how_to_give_them():
    done = in_process("diff", "x@x")
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "error: line 1, column 2: @ multiplies arrays; for a number, write * "
        "(the shape of an array input: --shape NAME=DIMS)"
    )
    # a shape for A alone: x's is missing
    done = in_process("diff", "sum(A@x)", "--shape", "A=2,3")
    assert (done.returncode, done.stderr.splitlines()[0]) == (
        2,
        "error: line 1, column 6: @ multiplies arrays; for a number, write * "
        "(x has no shape: --shape x=DIMS)",
    )


def test_diff_by_an_element_is_that_element_of_the_derivative():
    """--wrt x[1] and A[2,1]: the element of the vector form, or of the derivative written
    element by element (d/dW[1,2] of sum(W**3) is 3*W[1,2]**2, by hand)."""
    done = nanograd("diff", "norm(A@x - b)**2", "--wrt", "x[1]", "--wrt", "A[2, 1]", *LEAST_SQUARES)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "d_x[1] = (2*A.T@(A@x - b))[1]\nd_A[2,1] = outer(2*(A@x - b), x)[2, 1]\n"
    latex = ng.diff(
        "norm(A@x - b)**2", "x[1]", format="latex", shapes={"A": (3, 2), "x": 2, "b": 3}
    )
    assert latex == r"\left(2 A^{\top} \left(A x - b\right)\right)_{1}"
    assert ng.diff("sum(W[1]**3)", "W[1,2]", shapes={"W": (2, 3)}) == "3*W[1,2]**2"
    assert ng.diff("W@x", "W[1, 2]", shapes={"W": (2, 3), "x": 3}) == "[0, x[2]]"


def test_diff_by_an_element_of_an_input_without_a_shape_asks_for_one():
    done = nanograd("diff", "sum(x**2)", "--wrt", "x[1]")
    assert (done.returncode, done.stderr) == (2, "error: --wrt x[1]: give x a shape, --shape x=N\n")


def test_the_repls_diff_takes_the_shapes_of_the_arrays_it_holds():
    """As `shape A=3,2 x=2 b=3` would; a shape given says otherwise (here, one that does not
    fit), and a number held stays a number."""
    held = "A = [[1, 2], [3, 4], [5, 6]]\nx = [1, -1]\nb = [0, 1, 2]\ny = 2\n"
    done = nanograd(
        "repl",
        stdin=held + ":diff norm(A@x - b)**2 wrt x\n:diff sum(x**2)*y\n"
        ":diff norm(A@x - b)**2 wrt x shape b=2\n",
    )
    assert done.stdout == "2*A.T@(A@x - b)\nd_x = 2*x*y\nd_y = sum(x**2)\n"
    assert done.stderr.splitlines()[0] == (
        "error: line 7, column 10: shapes (3,) and (2,) do not broadcast"
    )


def test_latex_writes_a_product_of_two_arrays_element_by_element_as_odot():
    """x*y of two vectors is not the matrix product x y: the Hadamard product x \\odot y;
    a number times an array, and a matrix product, stay as they were."""
    shapes = {"x": 3, "y": 3}
    assert ng.diff("sum((x*y)**2)", "x", format="latex", shapes=shapes) == r"2 x \odot y^{2}"
    assert ng.diff("sum(x**2)*c", "x", format="latex", shapes={"x": 3}) == "2 c x"
    done = in_process(
        "diff",
        "sum((x*y)**2)",
        "--wrt",
        "y",
        "--shape",
        "x=3",
        "--shape",
        "y=3",
        "--format",
        "latex",
    )
    assert done.stdout == "2 x^{2} \\odot y\n"


def test_the_vector_form_of_norm_says_where_it_holds():
    """x/norm(x) is nan at 0, where the engine's derivative is 0: the form says `# norm(x)
    != 0`, and check --against leaves the origin out; where norm(...)**2 cancels the norm,
    no condition is left (2*A.T@(A@x - b) holds everywhere)."""
    done = in_process("diff", "norm(x)", "--shape", "x=3")
    assert done.stdout == "x/norm(x)\n# norm(x) != 0\n"
    done = in_process(
        "diff", "norm(A@x - b)**2", "--wrt", "x", "--shape", "A=3,2", "--shape", "x=2",
        "--shape", "b=3",
    )  # fmt: skip
    assert done.stdout == "2*A.T@(A@x - b)\n"
    formula = "x/norm(x)\n# norm(x) != 0"
    done = in_process("check", "norm(x)", "--against", formula, "--x", "[0, 0, 0]")
    assert done.returncode == 0 and "outside where the formula" in done.stderr
    grad = in_process("grad", formula, "--x", "[3, 0, 4]", "--format", "json")
    assert json.loads(grad.stdout)["values"]["result"] == [0.6, 0.0, 0.8]
