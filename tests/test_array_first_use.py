"""Arrays as a new user meets them from the README and docs/arrays.md: the messages of what
fails (each the one line a user reads, exact), files of numbers separated by tabs or spaces,
the largest and smallest element along an axis (against JAX and finite differences), and
arrays in the repl."""

from __future__ import annotations

import json

import numpy as np
import pytest

import nanograd_cli as ng
import nanograd_cli._memory
from nanograd_cli.errors import InputError, NanogradWarning

from .helpers import in_process, limited, nanograd


def error(*args: str, stdin: str = "", cwd=None) -> tuple[int, str]:
    done = in_process(*args, stdin=stdin, cwd=cwd)
    assert done.stdout == ""
    return done.returncode, done.stderr


# 1. Arrays too large for memory: refused at once, naming the input and its elements


def test_an_input_value_too_large_is_refused_naming_the_input_and_its_elements(monkeypatch):
    """With room for 1,000,000 operations (0.4 GB), the value of --x, of --var x= and a random
    start are refused before any is made, each named as it was typed."""
    monkeypatch.setattr(nanograd_cli._memory, "available", lambda: 400_000_000)
    tail = (
        "written out in scalars, the arrays make 9,000,004 operations (an array of shape (3000, "
        "3000): 9,000,000 elements): their graph would need 3.6 GB of memory, and 0.4 GB is "
        "free: about 1,000,000 fit\n"
    )
    assert error("grad", "sum(x)", "--x", "zeros(3000, 3000)") == (
        1,
        f"error: --x zeros(3000, 3000): {tail}",
    )
    assert error("grad", "sum(W)", "--var", "W=ones(3000, 3000)") == (
        1,
        f"error: --var W=ones(3000, 3000): {tail}",
    )
    assert error("minimize", "sum(W**2)", "--W", "normal(3000, 3000)", "--seed", "1") == (
        1,
        f"error: --W normal(3000, 3000): {tail}",
    )


def test_a_program_too_large_names_each_array_input_and_its_elements(tmp_path, monkeypatch):
    np.save(tmp_path / "W.npy", np.ones((1000, 1000)))
    monkeypatch.setattr(nanograd_cli._memory, "available", lambda: 400_000_000)
    assert error("grad", "sum(W @ x)", "--W", "@W.npy", "--x", "ones(1000)", cwd=tmp_path) == (
        1,
        "error: written out in scalars, the arrays make 5,003,003 operations (W: 1,000,000 "
        "elements, x: 1,000 elements): their graph would need 2.0 GB of memory, and 0.4 GB is "
        "free: about 1,000,000 fit\n",
    )


def test_the_3000_by_3000_sum_is_refused_in_a_second_within_1_gb():
    """The installed command, under ulimit -v 1 GB: refused before the 9 million elements are
    written out (which takes about 1.1 GB per million elements, and minutes)."""
    code, out, err = limited(
        "nanograd grad 'sum(x)' --x 'zeros(3000, 3000)'", seconds=20, memory=1_000_000
    )
    assert (code, out) == (1, "")
    assert err.startswith(
        "error: --x zeros(3000, 3000): written out in scalars, the arrays make 9,000,004 "
        "operations (an array of shape (3000, 3000): 9,000,000 elements): their graph would "
        "need 3.6 GB of memory, and "
    )
    assert err.rstrip().endswith("fit") and len(err.splitlines()) == 1


# 2. Messages that named the wrong cause


def test_sweeping_an_element_of_an_array_not_given_says_to_give_the_array():
    assert error("plot", "sum(x**2)", "--var", "x[0]=-3:3") == (
        2,
        "error: --var x[0]=LO:HI sweeps an element of x, whose value is not given: give x too "
        "(--x '[1, 2, 3]'), which holds its other elements\n",
    )
    assert error("plot", "sum(x**2)", "--x", "2", "--var", "x[0]=-3:3") == (
        2,
        "error: --var x[0]=LO:HI sweeps an element of x, which is a number: sweep --x LO:HI\n",
    )
    assert error("plot", "sum(x**2)", "--x", "[1, 2]", "--var", "x[5]=-3:3") == (
        2,
        "error: --var x[5]=LO:HI: x has shape (2,): no element x[5]\n",
    )


def test_a_range_of_an_element_is_named_as_typed_with_var():
    assert error("plot", "sum(x**2)", "--x", "[1, 2]", "--var", "x[0]=3:-3") == (
        2,
        "error: --var x[0]=3:-3: a range goes from low to high (LO < HI)\n",
    )
    assert error("plot", "sum(x**2)", "--x", "[1, 2]", "--var", "x[0]=a:b") == (
        2,
        "error: --var x[0]=a:b: a range is LO:HI or LO:HI:N, e.g. --var x[0]=-3:3 or "
        "--var x[0]=0:1:50\n",
    )


def test_a_random_start_in_a_source_says_where_it_goes_not_norm():
    assert error("grad", "sum(normal(2))") == (
        2,
        "error: line 1, column 5: unknown function normal: a random start is an input's "
        "value, never part of a source: give the input one, --W 'normal(16, 2)' --seed 1, to "
        "nanograd minimize\n  1 | sum(normal(2))\n          ^\n",
    )
    code, err = error("grad", "uniform(3)")
    assert (code, err.splitlines()[0]) == (
        2,
        "error: line 1, column 1: unknown function uniform: a random start is an input's "
        "value, never part of a source: give the input one, --W 'uniform(16, 2)' --seed 1, "
        "to nanograd minimize",
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"a": [1, 2]}', "the file holds a JSON object ({\"a\": [1, 2]}), not a list: an array "
         "is nested lists of numbers, [[1, 2], [3, 4]]"),
        ("[true, 2]", "[0]: true is a boolean, not a number: write 1 for true and 0 for false"),
        ('[1, {"a": 2}]', '[1]: {"a": 2} is not a number'),
    ],
)  # fmt: skip
def test_a_json_file_of_no_nested_lists_says_what_it_holds(tmp_path, content, message):
    (tmp_path / "w.json").write_text(content)
    assert error("grad", "sum(W)", "--W", "@w.json", cwd=tmp_path) == (
        2,
        f"error: --W @w.json: {message}\n",
    )


def test_booleans_are_refused_alike_from_json_and_npy(tmp_path):
    """One rule: true and false are no numbers, in any file (and from Python)."""
    np.save(tmp_path / "b.npy", np.array([True, False]))
    assert error("grad", "sum(W)", "--W", "@b.npy", cwd=tmp_path) == (
        2,
        "error: --W @b.npy: an array of real numbers, not of booleans: write 1 for true and 0 "
        "for false\n",
    )
    with pytest.raises(InputError, match="not of booleans"):
        ng.grad("sum(x)", x=np.array([True, False]))


def test_a_literal_element_too_large_for_a_float_is_named():
    assert error("grad", "sum(x)", "--x", "[1e999]") == (
        2,
        "error: --x [1e999]: element [0]: the number 1e999 is too large for a float\n",
    )
    assert error("grad", "sum(x)", "--x", "[[1, 2], [max(3, 4), -1e999]]") == (
        2,
        "error: --x [[1, 2], [max(3, 4), -1e999]]: element [1, 1]: the number 1e999 is too "
        "large for a float\n",
    )


def test_a_json_file_of_rank_three_is_an_array_of_three_axes(tmp_path):
    """As docs/arrays.md says: nested lists of any depth, the shape as NumPy reads them."""
    (tmp_path / "t.json").write_text("[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]")
    done = in_process("grad", "sum(T[1]**2)", "--T", "@t.json", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0
    assert json.loads(done.stdout)["gradients"]["T"] == [[[0, 0], [0, 0]], [[10, 12], [14, 16]]]


def test_a_list_in_a_json_lines_row_says_how_arrays_are_given_there(tmp_path):
    (tmp_path / "p.jsonl").write_text('{"x": [1, 2], "y": 3}\n')
    (tmp_path / "m.jsonl").write_text('{"W": [[1, 2]], "y": 3}\n')
    assert error("grad", "sum(x)*y", "--points", "p.jsonl", cwd=tmp_path) == (
        2,
        "error: --points column x holds lists, not numbers: an array input is a column per "
        'element, row-major, x[0], x[1], ... (a JSON Lines row {"x[0]": 1, "x[1]": 2})\n',
    )
    assert error("grad", "sum(W)*y", "--points", "m.jsonl", cwd=tmp_path)[1] == (
        "error: --points column W holds lists, not numbers: an array input is a column per "
        'element, row-major, W[0,0], W[0,1], ... (a JSON Lines row {"W[0,0]": 1, "W[0,1]": '
        "2})\n"
    )
    (tmp_path / "q.jsonl").write_text('{"x[0]": 1, "x[1]": 2, "y": 3}\n')
    done = in_process("grad", "sum(x)*y", "--points", "q.jsonl", cwd=tmp_path)
    assert done.stdout == "x[0],x[1],y,value,d_x[0],d_x[1],d_y\n1,2,3,9.0,3.0,3.0,3.0\n"


# 3. Files of numbers separated by tabs or spaces


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("w.tsv", "1\t2.5\n-3\t4e-3\n"),
        ("w.txt", "# weights\n1  2.5\n\n-3 \t 4e-3  # the second row\n"),
        ("w.dat", "1 2.5\n-3 4e-3\n"),
        ("w.txt", "1, 2.5\n-3, 4e-3\n"),  # commas, in a file named otherwise
    ],
)
def test_numbers_separated_by_tabs_or_spaces_are_read_as_loadtxt_reads_them(
    tmp_path, name, content
):
    (tmp_path / name).write_text(content)
    done = in_process("grad", "sum(W**2)", "--W", f"@{name}", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    delimiter = "," if "," in content else ("\t" if name.endswith(".tsv") else None)
    expected = np.loadtxt(tmp_path / name, delimiter=delimiter)
    assert json.loads(done.stdout)["inputs"]["W"] == expected.tolist() == [[1, 2.5], [-3, 4e-3]]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.tsv", "1\t2\n3\n", "line 2 has 1 number, line 1 has 2: a matrix's rows are "
         "equally long"),
        ("bad.txt", "1 2\n3 1e999\n", "line 2, field 2: 1e999 is too large for a float"),
        ("semi.txt", "1;2\n", "line 1, field 1: '1;2' is not a number: separate by spaces or "
         "tabs"),
        ("tab.csv", "1\t2\n", "line 1, field 1: '1\\t2' is not a number: separate by commas (or "
         "name the file .tsv)"),
    ],
)  # fmt: skip
def test_a_tab_or_space_separated_file_that_is_wrong_says_where(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    assert error("grad", "sum(W)", "--W", f"@{name}", cwd=tmp_path) == (
        2,
        f"error: --W @{name}: {message}\n",
    )


def test_a_tsv_file_in_a_subprocess(tmp_path):
    (tmp_path / "w.tsv").write_text("1\t2\n3\t4\n")
    done = nanograd("grad", "sum(W)", "--W", "@w.tsv", "--format", "csv", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert (
        done.stdout == 'value,"d_W[0,0]","d_W[0,1]","d_W[1,0]","d_W[1,1]"\n10.0,1.0,1.0,1.0,1.0\n'
    )


# 4. The largest and the smallest element along an axis


jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

LARGEST = [
    ("amax(W, 0) @ [1, 2, 3]", lambda W: jnp.max(W, axis=0) @ jnp.array([1.0, 2.0, 3.0])),
    ("sum(amin(W, 1)**2)", lambda W: jnp.sum(jnp.min(W, axis=1) ** 2)),
    ("amax(W, -1) @ [1, -1]", lambda W: jnp.max(W, axis=-1) @ jnp.array([1.0, -1.0])),
    ("amax(W) - 2*amin(W)", lambda W: jnp.max(W) - 2 * jnp.min(W)),
    ("max(W) * min(W)", lambda W: jnp.max(W) * jnp.min(W)),
]
# Ties in every row and column, and a matrix with none.
MATRICES = [
    np.array([[1.0, 5.0, 2.0], [1.0, 5.0, 2.0]]),
    np.array([[0.1, 0.1, 0.1], [0.1, 0.1, 0.1]]),
    np.array([[3.0, -1.0, 3.0], [-1.0, -1.0, 7.0]]),
    np.array([[0.3, -1.7, 2.2], [1.1, 0.4, -0.6]]),
]


@pytest.mark.parametrize(("source", "reference"), LARGEST)
@pytest.mark.parametrize("W", MATRICES, ids=["columns", "all", "some", "none"])
def test_largest_along_an_axis_against_jax_ties_shared_equally(source, reference, W):
    """Values to the bit; gradients to 1e-15 of JAX's, which share a tie's gradient equally
    among the elements that tie, as PyTorch's max and amax do (within an ulp of 1/ties)."""
    result = ng.grad(source, W=W)
    assert result.value == float(reference(jnp.asarray(W)))
    np.testing.assert_allclose(
        result.gradients["W"], jax.grad(reference)(jnp.asarray(W)), rtol=1e-15, atol=1e-16
    )


def test_largest_along_an_axis_against_finite_differences_where_no_element_ties():
    W = np.array([[0.3, -1.7, 2.2], [1.1, 0.4, -0.6]])
    result = ng.grad("sum(amax(W, 0)**3) + sum(amin(W, 1))", W=W)
    f = lambda W: (W.max(axis=0) ** 3).sum() + W.min(axis=1).sum()  # noqa: E731
    h = 1e-6
    for index in np.ndindex(W.shape):
        step = np.zeros_like(W)
        step[index] = h
        slope = (f(W + step) - f(W - step)) / (2 * h)
        assert abs(result.gradients["W"][index] - slope) <= 1e-8 * max(1.0, abs(slope))


def test_largest_along_an_axis_on_the_command_line():
    done = in_process("grad", "amax(W, 0)", "--W", "[[1, 5], [1, 2], [0, 5]]", "--format", "json")
    assert json.loads(done.stdout) == {
        "values": {"result": [1.0, 5.0]},
        "inputs": {"W": [[1.0, 5.0], [1.0, 2.0], [0.0, 5.0]]},
        "jacobian": {
            "result": {
                "W": [[[0.5, 0.0], [0.5, 0.0], [0.0, 0.0]], [[0.0, 0.5], [0.0, 0.0], [0.0, 0.5]]]
            }
        },
    }
    # a tie of three: a third each (to rounding: 1 - 3*(1/3) passes 5.6e-17 on)
    done = in_process("grad", "max(x)", "--x", "[2, 2, 1, 2]", "--format", "csv")
    header, values = done.stdout.splitlines()
    assert header == "value,d_x[0],d_x[1],d_x[2],d_x[3]"
    np.testing.assert_allclose(
        [float(v) for v in values.split(",")], [2, 1 / 3, 1 / 3, 0, 1 / 3], rtol=1e-15
    )


def test_largest_along_an_axis_out_of_range_and_of_infinities():
    assert error("grad", "sum(amax(W, 2))", "--W", "[[1, 2], [3, 4]]")[1] == (
        "error: line 1, column 13: axis 2 is out of range for shape (2, 2)\n"
        "  1 | sum(amax(W, 2))\n"
        "                  ^\n"
    )
    # an infinite maximum stays infinite (not the nan of inf - inf)
    with pytest.warns(NanogradWarning, match=r"input x\[0\] is inf"):
        result = ng.grad("amax(x)", x=np.array([np.inf, 1.0, 2.0]))
    assert (result.value, result.gradients["x"].tolist()) == (np.inf, [1.0, 0.0, 0.0])


def test_max_of_two_arguments_stays_element_by_element():
    """max(x, 0) is ReLU: the axis is amax's second argument, not max's."""
    result = ng.grad("sum(max(x, 0))", x=np.array([-1.0, 2.0, 0.0]))
    assert (result.value, result.gradients["x"].tolist()) == (2.0, [0.0, 1.0, 0.5])


# 5. The repl


def test_the_repl_reads_an_array_file_and_reduces_it(tmp_path):
    (tmp_path / "A.csv").write_text("1,2\n3,4\n")
    entries = "x = @A.csv\nsum(x)\namax(x, 1) @ [1, -1]\n:diff sum(x**2)\n:diff norm(x)\n"
    done = in_process("repl", stdin=entries, cwd=tmp_path)
    assert done.stderr == ""
    rows = ["x[0,0]  1.0    {}", "x[0,1]  2.0    {}", "x[1,0]  3.0    {}", "x[1,1]  4.0    {}"]
    assert done.stdout.splitlines() == [
        "        value  gradient",
        "result  10.0",
        *(row.format("1.0") for row in rows),
        "        value  gradient",
        "result  -2.0",
        *(row.format(g) for row, g in zip(rows, ["0.0", "1.0", "0.0", "-1.0"], strict=True)),
        "2*x",
        "x/norm(x)",
        "# norm(x) != 0",
    ]


def test_diff_steps_in_the_repl_says_which_array_the_session_holds(tmp_path):
    """The shape comes from the session (x = @A.csv), not from a `shape` the user gave."""
    (tmp_path / "A.csv").write_text("1,2\n3,4\n")
    done = in_process("repl", stdin="x = @A.csv\n:diff norm(x) steps\n", cwd=tmp_path)
    assert (done.stdout, done.stderr) == (
        "",
        "error: line 2: steps is for numbers, and x holds an array of shape (2, 2)\n",
    )


def test_diff_steps_ends_with_the_result_even_after_one_rule():
    """The `= ...` line is the answer, printed under every derivation (docs/calculus.md),
    also where one rule gave it (`hypot(a, b)`), so it repeats that rule's line."""
    done = in_process("diff", "hypot(a, b)", "--wrt", "a", "--steps")
    assert done.stdout == ("d/da [hypot(a, b)] = a/hypot(a, b)    (hypot rule)\n= a/hypot(a, b)\n")
