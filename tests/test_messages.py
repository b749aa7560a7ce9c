"""Messages that name the real cause: a Greek letter and its ASCII name, an option guessed
for one that exists, an inverse function written tan^-1, a table whose separator is not
CSV's, options typed after `--`, completion that offers no column of --data as an input."""

from __future__ import annotations

import json
import math
import shlex
import shutil

import pytest

from .helpers import in_process, limited, nanograd
from .test_surface import complete


@pytest.mark.parametrize(
    ("letter", "name"),
    [
        ("\u03c1", "rho"),
        ("\u03c3", "sigma"),
        ("ς", "sigma"),  # final sigma
        ("μ", "mu"),
        ("µ", "mu"),  # the micro sign
        ("ω", "omega"),
        ("Σ", "Sigma"),
        ("Δ", "Delta"),
        ("λ", "lambda1 (lambda is a keyword)"),
        ("\u03b3", "gamma1 (gamma is a function)"),
    ],
)
def test_a_greek_letter_is_told_its_ascii_name_which_then_works(letter, name):
    done = in_process("grad", f"2*{letter}*v", "--v", "3")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[:3] == [
        f"error: line 1, column 3: unexpected character '{letter}': write {name}",
        f"  1 | 2*{letter}*v",
        "        ^",
    ]
    ascii_name = name.split()[0]
    done = in_process("grad", f"2*{ascii_name}*v", f"--{ascii_name}", "5", "--v", "3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split() == ["result", "30.0"]


def test_pi_is_still_read_as_pi():
    done = in_process("grad", "π*x", "--x", "2", "--format", "json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["value"] == pytest.approx(2 * math.pi, rel=1e-15)


def test_the_source_names_a_greek_letter_before_its_option_is_refused():
    done = nanograd(
        "grad", "\u03c1*v**2", "--\u03c1", "1", "--v", "2"
    )  # the process: exit code, streams
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == (
        "error: line 1, column 1: unexpected character '\u03c1': write rho"
    )
    # a source that does not use it: the option is refused, as before
    done = in_process("grad", "v**2", "--\u03c1", "1", "--v", "2")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == "error: No such option '--\u03c1'."
    done = in_process("grad", "v**2", "--\u03c1=1", "--v", "2")
    assert done.stderr.splitlines()[0] == "error: No such option '--\u03c1=1'."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["fit", "k*x", "--data", "d.csv", "--bounds", "k>0"],
            "--bounds is no option of fit and no input of the source: did you mean --bound?",
        ),
        (
            ["fit", "k*x", "--data", "d.csv", "--k", "1", "--bounds", "0"],
            "--bounds is no option of fit and no input of the source: did you mean --bound?",
        ),
        (
            ["grad", "x", "--x", "1", "--fromat", "json"],
            "--fromat is no option of grad and no input of the source: did you mean --format?",
        ),
        (
            ["minimize", "x**2", "--x", "1", "--step", "0.1"],
            "--step is no option of minimize and no input of the source: did you mean --steps?",
        ),
        # an input of the source named like an option: its value is what is wrong
        (
            ["grad", "x*fromat", "--x", "1", "--fromat", "json"],
            "--fromat expects a number, got 'json'; did you mean --format?",
        ),
    ],
)
def test_an_option_guessed_is_told_it_is_no_option_and_no_input(args, message, tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n1,2\n2,4\n")
    done = in_process(*args, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {message}\n"


@pytest.mark.parametrize("function", ["sin", "cos", "tan", "sinh", "cosh", "tanh"])
@pytest.mark.parametrize("power", ["^-1", "**-1", " ^ -1", "**(-1)"])
def test_an_inverse_written_as_a_power_is_told_the_inverse_function(function, power):
    done = in_process("grad", f"{function}{power}(x)", "--x", "0.5")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == (
        f"error: line 1, column 1: {function} is a function: call it as {function}(...); "
        f"for its inverse, write a{function}(...)"
    )
    x = 1.5 if function == "cosh" else 0.5  # acosh is defined from 1
    done = in_process("grad", f"a{function}(x)", "--x", str(x), "--format", "json")
    assert done.returncode == 0
    reference = getattr(math, f"a{function}")(x)
    assert json.loads(done.stdout)["value"] == pytest.approx(reference, rel=1e-14)


def test_a_power_other_than_minus_one_gets_no_inverse_hint():
    for source in ("sin^-12(x)", "sin^-1.5(x)", "exp^-1"):
        err = in_process("grad", source, "--x", "0.5").stderr
        assert "inverse" not in err.splitlines()[0]


@pytest.mark.parametrize(
    ("table", "said"),
    [
        (
            b"x\ty\n1\t2\n",
            "its header 'x\\ty' is one column, the names between tabs: for TSV, give "
            "--{}-format tsv",
        ),
        (
            b"x;y\n1;2\n",
            "its header 'x;y' is one column, the names between ';': CSV has commas between "
            "them (or tabs, with --{}-format tsv)",
        ),
    ],
)
def test_a_table_between_tabs_or_semicolons_read_as_csv_says_so(table, said, tmp_path):
    code, out, err = limited('nanograd grad "x*y" --points -', stdin=table)
    assert (code, out, err) == (2, "", f"error: --points: {said.format('points')}\n")
    (tmp_path / "d.txt").write_bytes(table)
    done = in_process("fit", "k*x", "--data", "d.txt", "--k", "1", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: --data: {said.format('data')}\n"
    done = in_process("minimize", "(k*x - y)**2", "--data", "d.txt", "--k", "1", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, f"error: --data: {said.format('data')}\n")


def test_the_hint_for_tsv_works(tmp_path):
    (tmp_path / "p.txt").write_text("x\ty\n1\t2\n3\t4\n")
    done = in_process("grad", "x*y", "--points", "p.txt", cwd=tmp_path)
    assert done.returncode == 2 and "--points-format tsv" in done.stderr
    done = in_process("grad", "x*y", "--points", "p.txt", "--points-format", "tsv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "x\ty\tvalue\td_x\td_y\n1\t2\t2.0\t2.0\t1.0\n3\t4\t12.0\t4.0\t3.0\n"


@pytest.mark.parametrize(
    ("table", "fmt", "out", "csv"),
    [
        (b"x,y\n", "csv", "x,y,value,d_x,d_y\n", "x,y,value,d_x,d_y\n"),
        (b"x\ty\n", "tsv", "x\ty\tvalue\td_x\td_y\n", "x,y,value,d_x,d_y\n"),
        (b"[]", "json", "[]\n", "value,d_x,d_y\n"),
        (b"[]\n", "jsonl", "", "value,d_x,d_y\n"),
        (b"", "jsonl", "", "value,d_x,d_y\n"),
    ],
)
def test_a_table_with_no_rows_gives_an_empty_result_in_every_format(table, fmt, out, csv, tmp_path):
    """In the format of the table from standard input; from a file, CSV (no column of the
    table where JSON names none)."""
    path = tmp_path / f"p.{fmt}"
    path.write_bytes(table)
    done = in_process("grad", "x*y", "--points", str(path))
    assert (done.returncode, done.stdout, done.stderr) == (0, csv, "")
    done = nanograd("grad", "x*y", "--points", "-", "--points-format", fmt, stdin=table.decode())
    assert (done.returncode, done.stdout, done.stderr) == (0, out, "")


def test_json_rows_without_the_inputs_are_still_refused(tmp_path):
    (tmp_path / "p.json").write_text("[{}]")
    done = in_process("grad", "x*y", "--points", "p.json", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: missing values for inputs x, y: give --points columns x, y or pass "
        "--x VALUE --y VALUE\n"
    )


@pytest.mark.parametrize("missing", ["NA", "N/A", "n/a", "#N/A", "<NA>", "null", "NULL", "None"])
def test_a_missing_value_written_as_na_names_the_option_that_reads_it(missing, tmp_path):
    (tmp_path / "p.csv").write_text(f"x\n1\n{missing}\n")
    done = in_process("grad", "x", "--points", "p.csv", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: --points row 2, column x: '{missing}' is a missing value: --na reads it as nan\n"
    )
    done = in_process("grad", "x", "--points", "p.csv", "--na", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (
        0,
        "x,value,d_x\n1,1.0,1.0\nNaN,NaN,1.0\n",  # as every reader of CSV reads nan
    )


def test_options_after_dashes_are_told_to_go_before_and_that_works():
    done = nanograd("check", "--", "-(y*log(p))", "--w", "0.3")
    assert (done.returncode, done.stdout) == (2, "")
    moved = "nanograd check --w 0.3 -- '-(y*log(p))'"
    assert done.stderr.splitlines() == [
        "error: Got unexpected extra arguments (--w 0.3)",
        f"Options go before --, the source after it: {moved}",
        "Try 'nanograd check --help' for help.",
    ]
    # the command the hint gives runs (the source has no w: check says so)
    done = in_process(*shlex.split(moved)[1:])
    assert done.stderr == "error: w is not an input of this source (its inputs: y, p)\n"
    done = in_process("check", "--y", "1", "--p", "0.3", "--", "-(y*log(p))")
    assert done.returncode == 0, done.stderr


def test_the_leading_dash_hint_gives_a_command_that_runs():
    done = nanograd("grad", "-(y*log(p))", "--y", "1", "--p", "0.5")
    assert (done.returncode, done.stdout) == (2, "")
    last = "nanograd grad --y 1 --p 0.5 -- '-(y*log(p))'"
    assert done.stderr.splitlines()[1] == (
        "A source that begins with - goes after -e: nanograd grad -e '-(y*log(p))' "
        f"(or last, after the options and --: {last})"
    )
    for recipe in (["-e", "-(y*log(p))", "--y", "1", "--p", "0.5"], shlex.split(last)[2:]):
        done = in_process("grad", "--format", "json", *recipe)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["value"] == pytest.approx(math.log(2), rel=1e-15)
        # d/dy = -log(p), d/dp = -y/p
        assert result["gradients"] == pytest.approx({"y": math.log(2), "p": -2.0}, rel=1e-15)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_completion_offers_no_column_of_the_data_as_an_input(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("x,y\n1,2\n2,4\n")
    offered = complete(f'nanograd fit "k*x-y+c" --data {data} --')
    assert offered[:2] == ["--k", "--c"] and not {"--x", "--y"} & set(offered)
    offered = complete(f'nanograd minimize "(k*x-y)**2" --data {data} --')
    assert offered[0] == "--k" and not {"--x", "--y"} & set(offered)
    # without --data every input is offered, and a file that cannot be read hides none
    assert complete('nanograd fit "k*x-y" --')[:3] == ["--k", "--x", "--y"]
    assert complete(f'nanograd fit "k*x-y" --data {tmp_path}/no.csv --')[:3] == [
        "--k",
        "--x",
        "--y",
    ]
