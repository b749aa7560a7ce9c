"""Array inputs read from the columns x[0], x[1], ... of data (minimize, fit, compile), and
a missing array input reported as missing before any shape is checked."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import nanograd_cli as ng
from nanograd_cli.errors import InputError, ShapeProblem

from .helpers import nanograd, run


@pytest.fixture
def linear(tmp_path):
    """20 rows of x[0], x[1], x[2], y with y = x @ [1, 2, 3] + 0.5 + noise, and NumPy's
    least-squares coefficients for them."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 3))
    y = x @ [1.0, 2.0, 3.0] + 0.5 + 0.01 * rng.normal(size=20)
    path = tmp_path / "lin.csv"
    rows = [",".join(repr(float(v)) for v in [*r, t]) for r, t in zip(x, y, strict=True)]
    path.write_text("x[0],x[1],x[2],y\n" + "\n".join(rows) + "\n")
    design = np.column_stack([x, np.ones(20)])
    return str(path), np.linalg.lstsq(design, y, rcond=None)[0]


def test_fit_reads_an_array_from_element_columns(linear):
    path, expected = linear
    code, out, err = run(
        "fit", "w @ x + c", "--data", path, "--w", "zeros(3)", "--c", "0", "--format", "json"
    )
    assert code == 0, err
    parameters = json.loads(out)["parameters"]
    found = [*parameters["w"], parameters["c"]]
    np.testing.assert_allclose(found, expected, rtol=1e-9, atol=1e-12)


def test_minimize_reads_an_array_from_element_columns(linear):
    path, expected = linear
    code, out, err = run(
        "minimize", "(w @ x + c - y)**2", "--data", path, "--w", "zeros(3)", "--c", "0",
        "--lr", "0.05", "--steps", "20000", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    point = json.loads(out)["inputs"]
    np.testing.assert_allclose([*point["w"], point["c"]], expected, rtol=1e-6, atol=1e-8)


def test_compile_reads_an_array_from_element_columns():
    frame = pd.DataFrame({"w[0]": [1.0, 2.0], "w[1]": [2.0, 3.0], "x": [1.0, 1.0], "y": [1.0, 5.0]})
    result = ng.compile("w @ [x, y]")(frame)
    np.testing.assert_array_equal(result["value"], [3.0, 17.0])  # 1*1 + 2*1, 2*1 + 3*5
    np.testing.assert_array_equal(result["d_w[1]"], [1.0, 5.0])
    np.testing.assert_array_equal(result["d_y"], [2.0, 3.0])
    np.testing.assert_array_equal(ng.compile("sum(w)")(frame)["value"], [3.0, 5.0])
    with pytest.raises(InputError, match=r"^no column for input w$"):
        ng.compile("w @ [x, y]")(frame[["x", "y"]])


def test_compile_takes_an_array_per_row_by_keyword():
    """x of shape (rows, 2) is x[0] and x[1] of each row, as a table's columns are: with a
    fixed array whose product with x needs x's shape (compile raised UnknownInputs for
    `w[0], w[1]`), by element's name, and with nothing fixed."""
    rows = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    f = ng.compile("w @ x + c", "w", w=np.array([0.3, -0.7]), c=0.1)
    expected = {  # by hand: w @ x + c, and its gradient by w, x itself
        "value": rows @ [0.3, -0.7] + 0.1,
        "d_w[0]": rows[:, 0],
        "d_w[1]": rows[:, 1],
    }
    for found in (f(x=rows), f(**{"x[0]": rows[:, 0], "x[1]": rows[:, 1]})):
        assert found.keys() == expected.keys()
        for name, values in expected.items():
            np.testing.assert_allclose(found[name], values, rtol=1e-15)
    g = ng.compile("sum(x**2)*y")
    found = g(x=rows, y=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(found["value"], [5.0, 50.0, 183.0])
    np.testing.assert_array_equal(found["d_x[1]"], [4.0, 16.0, 36.0])  # 2*x[1]*y
    np.testing.assert_array_equal(g(x=np.ones((2, 2, 2)), y=1.0)["value"], [4.0, 4.0])
    with pytest.raises(InputError, match=r"^y has 4 values, x\[0\] 3: give every input as many$"):
        g(x=rows, y=np.zeros(4))
    with pytest.raises(InputError, match=r"give a 1-D array, one value per row$"):
        ng.compile("x*y")(x=rows, y=1.0)  # numbers: x*y has no array x
    with pytest.raises(InputError, match=r"^x is an array in 'w @ x \+ c': give it a row per row"):
        f(x=np.array([1.0, 2.0]))  # one number a row: no array
    with pytest.raises(ShapeProblem, match=r"shapes \(2,\) and \(3,\) do not match for @"):
        f(x=np.ones((3, 3)))  # three elements a row, where w has two
    assert repr(f) == "nanograd_cli.compile('w @ x + c', 'w', w=..., c=...)"


@pytest.mark.parametrize(
    "args",
    [("grad", "a @ [1, x]", "--x", "1"), ("grad", "a[0]"), ("minimize", "sum(a)**2")],
)
def test_a_missing_array_input_is_missing(args):
    code, _, err = run(*args)
    assert (code, err) == (2, "error: missing value for input a: pass --a VALUE\n")


def test_fit_without_the_start_of_an_array_parameter(tmp_path):
    path = tmp_path / "poly.csv"
    path.write_text("x,y\n0,1\n1,3\n2,7\n3,13\n")
    result = nanograd("fit", "a @ [1, x, x**2]", "--data", str(path))
    assert result.returncode == 2
    assert result.stderr == (
        "error: no start for parameter a: give a start value for each input that is not a "
        "column of the data\n"
    )
