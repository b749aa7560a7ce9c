"""Arrays at their edges: random starts, array files that hold no array, an element that
gives nan, empty slices, the repl reading a file, draw without a value, and the size of a
program told before it is written out."""

from __future__ import annotations

import numpy as np
import pytest

import nanograd_cli as ng
from nanograd_cli import arrays
from nanograd_cli.array_sizes import operation_count
from nanograd_cli.errors import NanogradError
from nanograd_cli.language import parse

from .helpers import in_process, limited, nanograd

# nan and inf, by element


def test_an_operation_that_gives_nan_on_arrays_names_the_element():
    done = nanograd("grad", "sum(log(x - 2))", "--x", "[3, 1, 4]", "--format", "csv")
    assert done.returncode == 0
    assert done.stderr == (
        "warning: line 1, column 5: log gave nan at [1]\n  1 | sum(log(x - 2))\n          ^\n"
    )
    # of a matrix, where only part of it is used (the rest is left out of the graph)
    done = in_process("grad", "sum(sqrt(W)[:, 1])", "--W", "[[1, 2], [3, -1]]", "--strict")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[0] == "error: line 1, column 5: sqrt gave nan at [1,1]"
    # a number's operation names none
    done = in_process("grad", "log(x - 2)", "--x", "1")
    assert done.stderr.splitlines()[0] == "warning: line 1, column 1: log gave nan"


# slices


@pytest.mark.parametrize(
    ("source", "value", "message"),
    [
        ("sum(x[2:2])", "[1, 2, 3]", "line 1, column 8: the slice 2:2 takes no element of axis "
         "0 of shape (3,): an array holds one element or more"),
        ("sum(x[5:])", "[1, 2, 3]", "line 1, column 8: the slice 5: takes no element of axis 0 "
         "of shape (3,): an array holds one element or more"),
        ("sum(x[0:3:-1])", "[1, 2, 3]", "line 1, column 8: the slice 0:3:-1 takes no element "
         "of axis 0 of shape (3,): an array holds one element or more"),
        ("max(W[:, 3:])", "eye(3)", "line 1, column 11: the slice 3: takes no element of axis "
         "1 of shape (3, 3): an array holds one element or more"),
    ],
)  # fmt: skip
def test_an_empty_slice_is_bad_input_that_names_it(source, value, message):
    done = in_process("grad", source, "--x" if "x[" in source else "--W", value)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == f"error: {message}"


SLICES = [slice(1, 3), slice(None, None, -1), slice(3, 0, -1), slice(-2, None), slice(None, 10),
          slice(-10, 2), slice(4, 0, -2)]  # fmt: skip


@pytest.mark.parametrize("part", SLICES)
def test_a_slice_takes_what_numpys_takes(part):
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    written = ":".join("" if b is None else str(b) for b in (part.start, part.stop, part.step))
    taken = x[part]
    weights = np.arange(1.0, len(taken) + 1)
    result = ng.grad(f"x[{written}] @ w", x=x, w=weights)
    assert result.value == taken @ weights
    expected = np.zeros(5)
    expected[part] = weights
    np.testing.assert_array_equal(result.gradients["x"], expected)


# size


PROGRAMS = [
    ("sum(A@B)", {"A": (3, 4), "B": (4, 5)}),
    ("x@x + sum(W@x)", {"x": (4,), "W": (2, 4)}),
    ("sum(softmax(Z, 1)) + sum(logsumexp(Z, -1)) + sum(norm(Z, 0))", {"Z": (3, 4)}),
    ("sum(outer(x, y)) + len(x) + dot(x, x)", {"x": (3,), "y": (5,)}),
    ("sum(x[1:len(x) - 1]) + W[1, :] @ x[:2]", {"x": (4,), "W": (2, 2)}),
    ("sum(eye(3) @ x) + sum(zeros(2, 3)) + prod(x) + max(x) + mean(x.T)", {"x": (3,)}),
    ("h = tanh(W1 @ [a, b] + b1); sum(h**2)", {"W1": (16, 2), "b1": (16,)}),
    ("sum(x)", {"x": (1000,)}),
]


@pytest.mark.parametrize(("source", "shapes"), PROGRAMS)
def test_the_size_told_before_writing_is_never_less_than_what_is_written(source, shapes):
    """The count is an upper bound (each input's element three times, as room is made for
    it), within three times what the writer makes."""
    program = parse(source)
    written, _ = arrays.written_out(program, shapes)
    told = operation_count(program, shapes)
    assert len(written.code) <= told <= 3 * len(written.code) + 10


def test_a_program_too_large_is_refused_before_any_node_is_made(monkeypatch):
    """With room for 1,000 operations, A @ B of two 20x20 matrices is refused with its size
    and what fits, and no instruction is written: 3x800 for the inputs' elements, 20x20x39
    for @ and 400 + 3 for the sum."""
    import nanograd_cli.memory

    bytes_per = 400  # language.BYTES_PER_INSTRUCTION
    monkeypatch.setattr(nanograd_cli.memory, "available", lambda: 1000 * bytes_per)

    def unmade(self, instruction):
        raise AssertionError("an instruction was made")

    monkeypatch.setattr(arrays._Writer, "emit", unmade)
    with pytest.raises(NanogradError) as raised:
        ng.grad("sum(A @ B)", A=np.ones((20, 20)), B=np.ones((20, 20)))
    assert str(raised.value) == (
        "written out in scalars, the arrays make 18,403 operations: their graph would need "
        "0.0 GB of memory, and 0.0 GB is free: about 1,000 fit"
    )


def test_large_array_inputs_are_refused_within_a_few_seconds_of_cpu(tmp_path):
    """A @ B of two 300x300 matrices (54 million operations, past 4 GB) and of two 1400x1400
    ones: refused before their inputs are written out, within 10 s of CPU (ulimit -t, not
    wall time) and 4 GB (ulimit -v)."""
    np.save(tmp_path / "A.npy", np.ones((300, 300)))
    np.save(tmp_path / "B.npy", np.ones((1400, 1400)))
    for name in ("A", "B"):
        code, out, err = limited(
            f"nanograd grad 'sum(A @ B)' --A @{name}.npy --B @{name}.npy", cwd=tmp_path, seconds=10
        )
        assert (code, out) == (1, "")
        assert err.startswith("error: written out in scalars, the arrays make ")
        assert err.rstrip().endswith("fit") and len(err.splitlines()) == 1
