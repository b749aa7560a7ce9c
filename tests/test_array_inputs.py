"""Arrays at their edges: random starts, array files that hold no array, an element that
gives nan, empty slices, the repl reading a file, draw without a value, and the size of a
program told before it is written out."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import nanograd_cli as ng
from nanograd_cli import _arrays as arrays
from nanograd_cli._array_sizes import operation_count
from nanograd_cli._language import parse
from nanograd_cli._sources import array_value
from nanograd_cli.errors import InputError, NanogradError

from .helpers import in_process, limited, nanograd

# random starts


def test_a_random_starts_sizes_are_read_as_zeros_reads_them():
    """normal(3.0) is normal(3), as zeros(3.0) is zeros(3): a size is a whole number."""
    loss = ["minimize", "sum(W**2)", "--steps", "1", "--format", "json", "--seed", "5"]
    whole = json.loads(in_process(*loss, "--W", "normal(2, 3)").stdout)
    written = json.loads(in_process(*loss, "--W", "normal(2.0, 1 + 2)").stdout)
    assert whole == written and np.shape(whole["inputs"]["W"]) == (2, 3)
    zeros = json.loads(in_process("grad", "sum(W)", "--W", "zeros(3.0)", "--format", "json").stdout)
    assert zeros["inputs"]["W"] == [0.0, 0.0, 0.0]


def test_a_random_start_given_to_another_command_says_it_is_minimizes():
    """--seed given to grad (here an input of the source) is not what is missing."""
    done = nanograd("grad", "sum(W**2) + seed", "--W", "normal(2)", "--seed", "1")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: --W normal(2) is random: random starts are for nanograd minimize, which draws "
        "them with --seed N; here, give the values (a list, zeros(...) or @FILE)\n"
    )


def test_a_random_start_too_large_for_memory_is_refused_before_it_is_drawn():
    code, out, err = limited(
        "nanograd minimize 'sum(W)' --W 'normal(100000, 100000)' --seed 1", seconds=20
    )
    assert (code, out) == (1, "")
    assert err.startswith(
        "error: --W normal(100000, 100000): written out in scalars, the arrays make "
        "10,000,000,004 operations (an array of shape (100000, 100000): 10,000,000,000 "
        "elements): "
    )
    assert err.rstrip().endswith("fit") and len(err.splitlines()) == 1


def test_the_repl_says_where_random_starts_are_drawn_and_keeps_the_value():
    done = in_process("repl", stdin="x = [1, 2]\nx = normal(3)\nsum(x)\n")
    assert done.stderr == (
        "error: line 2: x = normal(3): a random start is drawn on the command line, with a seed "
        "(nanograd minimize ... --x 'normal(3)' --seed N): here, give its values (x = [0.5, -1, "
        "2]) or read them from a file (x = @FILE)\n"
    )
    assert "result  3.0" in done.stdout


# array files


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("s.npy", np.array(["a", "b"]), "an array of real numbers, not of text"),
        ("o.npy", np.array([1, None], dtype=object), "an array of real numbers, not of Python "
         "objects"),
        ("c.npy", np.array([1 + 2j]), "an array of real numbers, not of complex numbers"),
        ("cut.npy", b"cut", "not a .npy file: it does not begin as NumPy's files do"),
        ("short.npy", "numbers", "the file is cut short: its numbers end early"),
        ("head.npy", "header", "the file is cut short: its header ends early"),
        ("r.json", "[[1, 2], [3]]", "[1] has 1 element, [0] has 2: an array's rows are equally "
         "long"),
        ("r3.json", "[[[1], [2]], [[1], [2, 3]]]", "[1, 1] has 2 elements, [0, 0] has 1: an "
         "array's rows are equally long"),
        ("m.json", "[[1, 2], 3]", "[1] is a number where [0] is a list: an array's rows are "
         "equally long"),
        ("t.json", "[[1, 2],\n [3", "line 2, column 4: the JSON ends before its lists are "
         "closed"),
        ("x.json", "[1, 2] x", "line 1, column 8: not JSON (extra data)"),
        ("s.json", '[1, "a"]', '[1]: "a" is not a number'),
        ("n.json", "[[1, null]]", "[0, 1]: null is not a number"),
        ("b.json", "true", "the file: true is a boolean, not a number: write 1 for true and 0 "
         "for false"),
        ("deep.json", "[" * 100_000 + "1" + "]" * 100_000, "its lists are nested more than 32 "
         "deep"),
        ("tab.csv", "1\t2\n", "line 1, field 1: '1\\t2' is not a number: separate by commas "
         "(or name the file .tsv)"),
    ],
)  # fmt: skip
def test_an_array_file_that_holds_no_array_says_why_in_our_words(tmp_path, name, content, message):
    """Not NumPy's words (`not of <U21`, a generic failure), but what is wrong and where."""
    path = tmp_path / name
    if isinstance(content, np.ndarray):
        np.save(path, content, allow_pickle=True)
    elif content in ("numbers", "header"):
        np.save(path, np.arange(10.0))
        path.write_bytes(path.read_bytes()[: -8 if content == "numbers" else 20])
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(InputError) as raised:
        array_value(f"@{path}", f"--W @{name}")
    assert str(raised.value) == f"--W @{name}: {message}"


def test_an_array_files_message_through_the_command(tmp_path):
    (tmp_path / "r.json").write_text("[[1, 2], [3]]")
    done = nanograd("grad", "sum(W)", "--W", "@r.json", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: --W @r.json: [1] has 1 element, [0] has 2: an array's rows are equally long\n"
    )


def test_a_tab_in_an_array_files_name_is_shown_as_one_escape():
    done = in_process("grad", "sum(x)", "--x", "@no\tsuch.csv")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: --x @no\\tsuch.csv: cannot read no\\tsuch.csv: No such file or directory\n"
    )


@pytest.mark.parametrize("value", ["@", "@ "])
def test_an_array_file_without_a_name_says_it_is_missing(value):
    done = in_process("grad", "sum(x)", "--x", value)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: --x {value}: the file's name is missing after @ (@FILE)\n"


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


# the repl and draw


def test_the_repl_reads_an_array_from_a_file(tmp_path):
    (tmp_path / "A.csv").write_text("1,2\n3,4\n")
    done = in_process("repl", stdin="A = @A.csv\nsum(A**2)\nA = @none.csv\n", cwd=tmp_path)
    assert "result  30.0" in done.stdout and "A[1,0]  3.0    6.0" in done.stdout
    assert done.stderr == "error: line 3: A = @none.csv: cannot read none.csv: No such file or " \
        "directory\n"  # fmt: skip


def test_a_file_read_in_the_repl_ends_its_statement_at_a_semicolon(tmp_path):
    """`x = @A.csv; sum(x)` reads A.csv and goes on, as `x = 2; x**2` does."""
    (tmp_path / "A.csv").write_text("1,2\n3,4\n")
    done = in_process("repl", stdin="A = @A.csv; sum(A**2)\nB = @A.csv ;\nsum(B)\n", cwd=tmp_path)
    assert done.stderr == ""
    assert done.stdout.count("result  30.0") == 1 and done.stdout.count("result  10.0") == 1
    assert "A[1,0]  3.0    6.0" in done.stdout and "B[1,1]  4.0    1.0" in done.stdout


def test_draw_of_arrays_says_which_input_has_no_value(tmp_path):
    done = in_process("draw", "sum(a @ x)", "--x", "[1, 2]", "-o", "g.svg", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "error: missing value for input a: pass --a VALUE\n",
    )
    assert not (tmp_path / "g.svg").exists()


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
    ("amax(W, 0) @ amin(W, 1) + max(W) * min(W[0])", {"W": (3, 3)}),
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
    import nanograd_cli._memory

    bytes_per = 400  # language.BYTES_PER_INSTRUCTION
    monkeypatch.setattr(nanograd_cli._memory, "available", lambda: 1000 * bytes_per)

    def unmade(self, instruction):
        raise AssertionError("an instruction was made")

    monkeypatch.setattr(arrays._Writer, "emit", unmade)
    with pytest.raises(NanogradError) as raised:
        ng.grad("sum(A @ B)", A=np.ones((20, 20)), B=np.ones((20, 20)))
    assert str(raised.value) == (
        "written out in scalars, the arrays make 18,403 operations (A: 400 elements, B: 400 "
        "elements): their graph would need 0.007 GB of memory, and 0.000 GB is free: about "
        "1,000 fit"
    )  # (the digits that tell them apart, where 0.0 GB and 0.0 GB would not)


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


@pytest.mark.parametrize(
    "args",
    [
        ["grad", "sum(W@[1,2])", "--W", "[[1,2],[3,4]]"],
        ["grad", "W@[1,2]", "--W", "[[1,2],[3,4]]"],
        ["hessian", "sum(A**3)", "--A", "[[1,2]]"],
        ["minimize", "sum((W-1)**2)", "--W", "[[0,0]]", "--method", "sgd", "--lr", "0.5"],
        ["check", "sum(W**2)", "--W", "[[1,2]]"],
    ],
    ids=["grad", "jacobian", "hessian", "minimize", "check"],
)
def test_csv_of_a_matrix_is_valid_csv(args):
    """A matrix element's name holds a comma (d_W[0,1]): quoted, every row has the header's
    number of fields, and the names read back whole."""
    import csv

    done = in_process(*args, "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(done.stdout.splitlines()))
    assert len({len(row) for row in rows}) == 1, rows
    assert any("[0,1]" in field or "[0,0]" in field for field in rows[0] + [r[0] for r in rows])


def test_an_unquoted_matrix_header_says_to_quote_it(tmp_path):
    (tmp_path / "w.csv").write_text("W[0,0],W[0,1]\n1,2\n")
    done = in_process("grad", "sum(W)", "--points", "w.csv", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: --points: the header names the column W[0 twice; a name with a comma is quoted "
        'in CSV: "W[0,0]"\n'
    )
    (tmp_path / "w.csv").write_text('"W[0,0]","W[0,1]"\n1,2\n')
    done = in_process("grad", "sum(W)", "--points", "w.csv", cwd=tmp_path)
    assert done.stdout == '"W[0,0]","W[0,1]",value,"d_W[0,0]","d_W[0,1]"\n1,2,3.0,1.0,1.0\n'


@pytest.mark.slow
def test_minimize_of_an_array_costs_in_proportion_to_its_size():
    """Its checks looked names up in lists: 20,000 elements took 11x the CPU of 5,000 (16x
    where it grows as the square); each is now looked up in a set. 8 times the elements may
    take 8 times the CPU, and three times that for a loaded machine, not 64 times."""
    import time

    def cpu(n: int) -> float:
        best = math.inf
        for _ in range(2):
            started = time.process_time()
            ng.minimize("sum(w**2)", w=np.ones(n), steps=1)
            best = min(best, time.process_time() - started)
        return best

    cpu(1000)  # (imports)
    assert cpu(32_000) < 24 * cpu(4_000)


def test_an_array_file_is_read_by_its_extension_in_any_case(tmp_path):
    """w.JSON is JSON (it was read as CSV); a .npz, several arrays, says how to give one."""
    (tmp_path / "w.JSON").write_text("[[1, 2], [3, 4]]")
    done = in_process("grad", "sum(W)", "--W", "@w.JSON", "--format", "csv", cwd=tmp_path)
    assert (done.returncode, done.stdout.splitlines()[1]) == (0, "10.0,1.0,1.0,1.0,1.0")
    np.savez(tmp_path / "w.npz", a=np.ones(2))
    done = in_process("grad", "sum(W)", "--W", "@w.npz", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "error: --W @w.npz: a .npz holds several arrays: save one with numpy.save (.npy), or "
        "give it as CSV or JSON\n",
    )
