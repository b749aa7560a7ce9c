"""`nanograd fit` as a user runs it: its formats, files and exit codes (in process), and Ctrl-C and
standard input through the installed command."""

from __future__ import annotations

import json
import math
import re
import signal
import subprocess

import numpy as np
import pytest

from .helpers import (
    NANOGRAD,
    default_signals,
    in_process,
    nanograd,
    wait_for_cpu,
)

# y = 2.5*exp(-1.3*x) + 0.5, with a small wobble so that the fit has residuals
ROWS = [(i / 5, 2.5 * math.exp(-1.3 * i / 5) + 0.5 + 0.01 * (-1) ** i) for i in range(21)]
MODEL = "a*exp(-b*x) + c"
STARTS = ["--a", "1", "--b", "0.1", "--c", "0"]


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "decay.csv"
    path.write_text(
        "x,y,note\n" + "".join(f"{x!r},{y!r},run {i}\n" for i, (x, y) in enumerate(ROWS))
    )
    return path


def test_a_fit_converges_to_the_least_squares_solution(data):
    done = in_process("fit", MODEL, "--data", str(data), *STARTS, "--format", "json")
    result = json.loads(done.stdout)
    assert (done.returncode, done.stderr, result["converged"]) == (0, "", True)
    assert result["parameters"] == pytest.approx({"a": 2.5, "b": 1.3, "c": 0.5}, rel=2e-2)
    assert (result["n"], result["dof"], result["inputs"]) == (
        21,
        18,
        {"a": 1.0, "b": 0.1, "c": 0.0},
    )
    # the least-squares solution: residuals orthogonal to the model's derivatives
    a, b, c = (result["parameters"][k] for k in "abc")
    columns = [[math.exp(-b * x), -a * x * math.exp(-b * x), 1.0] for x, _ in ROWS]
    residuals = [y - (a * math.exp(-b * x) + c) for x, y in ROWS]
    for j in range(3):
        assert abs(sum(r * row[j] for r, row in zip(residuals, columns, strict=True))) < 1e-9
    assert result["rss"] == pytest.approx(sum(r * r for r in residuals), rel=1e-12)
    table = in_process("fit", MODEL, "--data", str(data), *STARTS)
    names = [line.split("  ")[0] for line in table.stdout.splitlines()]
    assert names == [
        "",
        "a",
        "b",
        "c",
        "rss",
        "residual sd",
        "dof",
        "rows",
        "iterations",
        "converged",
    ]
    csv = in_process("fit", MODEL, "--data", str(data), *STARTS, "--format", "csv").stdout
    assert csv.splitlines()[0] == "parameter,value,stderr"
    assert csv.splitlines()[1] == f"a,{a!r},{result['stderr']['a']!r}"


def test_data_near_1e_300_is_fitted_as_at_scale_1(data, tmp_path):
    # the squared residuals underflow to 0: once, rss 0 and "converged" at the start
    tiny = tmp_path / "tiny.csv"
    tiny.write_text("x,y\n" + "".join(f"{x!r},{y * 1e-300!r}\n" for x, y in ROWS))
    starts = ["--a", "1e-300", "--b", "0.1", "--c", "0"]
    done = in_process("fit", MODEL, "--data", str(tiny), *starts, "--format", "json")
    one = json.loads(
        in_process("fit", MODEL, "--data", str(data), *STARTS, "--format", "json").stdout
    )
    result = json.loads(done.stdout)
    assert (done.returncode, done.stderr, result["converged"]) == (0, "", True)
    for name, unit in (("a", 1e-300), ("b", 1.0), ("c", 1e-300)):
        assert result["parameters"][name] == pytest.approx(one["parameters"][name] * unit, rel=1e-9)
        assert result["stderr"][name] == pytest.approx(one["stderr"][name] * unit, rel=1e-7)
    assert result["residual_sd"] == pytest.approx(one["residual_sd"] * 1e-300, rel=1e-7)


@pytest.mark.parametrize("extension", ["csv", "jsonl", "parquet"])
def test_output_has_the_rows_with_fitted_and_residual(data, tmp_path, extension):
    out = tmp_path / f"fitted.{extension}"
    done = in_process(
        "fit", MODEL, "--data", str(data), *STARTS, "-o", str(out), "--format", "json"
    )
    a, b, c = (json.loads(done.stdout)["parameters"][k] for k in "abc")
    if extension == "csv":
        lines = out.read_text().splitlines()
        assert lines[0] == "x,y,note,fitted,fitted_se,residual"
        rows = [dict(zip(lines[0].split(","), line.split(","), strict=True)) for line in lines[1:]]
    elif extension == "jsonl":
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    else:
        import pyarrow.parquet as pq

        rows = pq.read_table(out).to_pylist()
    assert len(rows) == len(ROWS)
    for row, (x, y) in zip(rows, ROWS, strict=True):
        assert (float(row["x"]), float(row["y"])) == (x, y)
        fitted = a * math.exp(-b * x) + c
        assert float(row["fitted"]) == pytest.approx(fitted, rel=1e-14)
        assert float(row["residual"]) == pytest.approx(y - fitted, rel=1e-9, abs=1e-15)
    assert rows[3]["note"] == "run 3"


@pytest.mark.slow
def test_data_from_standard_input(data):
    done = nanograd(
        "fit", MODEL, "--data", "-", *STARTS, "--format", "json", stdin=data.read_text()
    )
    assert (done.returncode, json.loads(done.stdout)["n"]) == (0, 21)


def test_a_fit_that_does_not_converge_prints_the_point_reached_and_exits_1(data, tmp_path):
    done = in_process(
        "fit", MODEL, "--data", str(data), *STARTS, "--steps", "1", "--format", "json"
    )
    result = json.loads(done.stdout)
    assert (done.returncode, result["converged"], result["iterations"]) == (1, False, 1)
    assert done.stderr == (
        "error: the fit did not converge: stopped after 1 evaluation (the steps limit) before "
        "converging\n"
    )
    # the point reached is printed, and no file is left behind
    files = ["-o", "out.csv", "--plot", "fit.svg", "--save", "fit.json"]
    failed = in_process(
        "fit",
        MODEL,
        "--data",
        str(data),
        *STARTS,
        "--steps",
        "1",
        "--format",
        "json",
        *files,
        cwd=tmp_path,
    )
    assert (failed.returncode, json.loads(failed.stdout)) == (1, result)
    assert failed.stderr == (
        "note: out.csv, fit.svg and fit.json not written: the fit did not converge\n" + done.stderr
    )
    assert not any((tmp_path / name).exists() for name in ("out.csv", "fit.svg", "fit.json"))
    undetermined = in_process("fit", "a*b*x", "--data", str(data), "--a", "1", "--b", "1")
    assert undetermined.returncode == 1
    assert "the data cannot determine a and b" in undetermined.stderr


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["a*x + b", "--a", "1", "--b", "0"],
            "fit needs the data: --data FILE (- for standard input)",
        ),
        (
            ["a*x + b", "--data", "{data}", "--a", "1"],
            "no start for parameter b: give a start value for each input that is not a column "
            "of the data",
        ),
        (
            ["a*x + b", "--data", "{data}", "--a", "1", "--b", "0", "--x", "2"],
            "x is a column of the data, and a start is given for it too: a column is data, not "
            "a parameter",
        ),
        (
            ["a*x + b", "--data", "{data}", "--a", "1", "--b", "0", "--target", "log(z)"],
            "--target reads z, which is no column of --data (its columns: x, y, note): the "
            "target is a column or an expression over the columns",
        ),
        (
            ["a*x + b", "--data", "{data}", "--a", "1", "--b", "0", "--target", "log(yy)"],
            "--target reads yy, which is no column of --data (its columns: x, y, note); did you "
            "mean y?",
        ),
        (
            ["a*x + b", "--data", "{data}", "--a", "1", "--b", "0", "--sigma", "0.1*nte"],
            "--sigma reads nte, which is no column of --data (its columns: x, y, note); did you "
            "mean note?",
        ),
        (
            ["a", "--data", "{units}", "--a", "1", "--sigma", "time"],
            "--sigma reads time, which is no column of --data (its columns: time (s), y); the "
            "column 'time (s)' is read by its header, which is no name: rename it in the "
            "file's first line (as time_s) and write that in --sigma",
        ),
        (  # a column of text named as a parameter: said so, not read as numbers
            ["a*exp(-k*t)", "--data", "{labels}", "--a", "1", "--k", "0.1"],
            "a is a column of the data, and a start is given for it too: a column is data, not "
            "a parameter",
        ),
        (
            ["a*x", "--data", "{noy}", "--a", "1"],
            "the data has no column y, the default target (its columns: x, z): give --target, "
            "a column or an expression over the columns",
        ),
        (
            ["a*y", "--data", "{units}", "--a", "1", "--target", "2*time_s"],
            "--target reads time_s, which is no column of --data (its columns: time (s), y); the "
            "column 'time (s)' is read by its header, which is no name: rename it in the "
            "file's first line (as time_s) and write that in --target",
        ),
        (
            ["a*x + b", "--data", "{few}", "--a", "1", "--b", "0"],
            "1 row of data and 2 parameters to fit: a fit needs at least as many rows as free "
            "parameters",
        ),
        (
            ["a*x + b", "--data", "{bad}", "--a", "1", "--b", "0"],
            "--data row 2, column y: 'oops' is not a number",
        ),
        (
            ["a*log(x - 1)", "--data", "{data}", "--a", "1"],
            "at the start, row 1 (x = 0.0): the model is nan; start from values where it is finite",
        ),
        (
            ["a*x + b", "--data", "{data}", "--a", "1", "--b", "0", "--q", "1"],
            "q is not an input of this source (its inputs: a, b); x is a column of the data",
        ),
        (
            ["a*X + b", "--data", "{data}", "--a", "1", "--b", "0"],
            "X is no column of --data (its columns: x, y, note); did you mean x? (a start for "
            "it would make X a parameter)",
        ),
        (
            ["a*exp(-b*time)", "--data", "{units}", "--a", "1", "--b", "1"],
            "time is no column of --data (its columns: time (s), y); the column 'time (s)' is "
            "read by its header, which is no name: rename it in the file's first line (as "
            "time_s) and write that in the model",
        ),
        (
            ["h*exp(-x/sigma)", "--data", "{data}", "--h", "1", "--sigma", "1"],
            "no start for parameter sigma: --sigma is an option of nanograd fit; give the start "
            "as --var sigma=VALUE",
        ),
        (
            ["a*x + b", "--data", "{nan}", "--a", "1", "--b", "0"],
            "--data row 2, column y: a missing value (empty, NA or nan); --drop-nan leaves out "
            "the rows with one",
        ),
        (
            ["a*x + b", "--data", "{huge}", "--a", "1e300", "--b", "0"],
            "at the start, the sum of the squared residuals is too large for a float in units "
            "of the target's size (4), which the fit works in (the largest residual is 2e+300, "
            "of a target at most 3): start nearer the data's scale",
        ),
        (
            ["a*x + b", "--data", "{data}", "--a", "1", "--b", "0", "--target", "log(y"],
            "--target: line 1, column 4: '(' is never closed\n  1 | log(y\n         ^",
        ),
    ],
)
def test_bad_input_is_exit_2_naming_the_problem(arguments, message, data, tmp_path):
    (tmp_path / "few.csv").write_text("x,y\n1,2\n")
    (tmp_path / "bad.csv").write_text("x,y\n1,2\n2,oops\n")
    (tmp_path / "nan.csv").write_text("x,y\n0,1\n1,nan\n2,5\n")
    (tmp_path / "huge.csv").write_text("x,y\n0,1\n1,2\n2,3\n")
    (tmp_path / "units.csv").write_text("time (s),y\n0,1\n1,2\n2,3\n")
    (tmp_path / "noy.csv").write_text("x,z\n0,1\n1,2\n2,3\n")
    (tmp_path / "labels.csv").write_text("a,t,y\nA,0,5.1\nB,0,2.9\nA,1,3.0\nB,1,2.2\n")
    names = ("few", "bad", "nan", "huge", "units", "noy", "labels")
    paths = {name: str(tmp_path / f"{name}.csv") for name in names}
    paths["data"] = str(data)
    out = tmp_path / "out.csv"
    arguments = [a.format(**paths) for a in arguments]
    done = in_process("fit", *arguments, "-o", str(out))
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.signals
def test_ctrl_c_prints_the_best_point_reached(tmp_path):
    # a slow fit: many rows of a model the solver takes many steps over (13 s of CPU, where
    # starting and reading the rows take 1 s)
    path = tmp_path / "many.csv"
    path.write_text(
        "x,y\n" + "".join(f"{i / 1000!r},{math.sin(i / 1000)!r}\n" for i in range(400_000))
    )
    rows = tmp_path / "out.csv"
    command = [NANOGRAD, "fit", "a*sin(b*x + c) + d*x*x", "--data", str(path), "-o", str(rows)]
    command += ["--format", "json"]
    with subprocess.Popen(
        [*command, "--a", "0.1", "--b", "30", "--c", "1", "--d", "0.3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    ) as process:
        wait_for_cpu(process, 3.0)  # reading done, fitting under way
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    result = json.loads(out)
    if result["message"] != "interrupted (Ctrl-C) before converging":
        pytest.skip("the fit ended before it was interrupted")
    assert (process.returncode, result["converged"]) == (130, False)
    assert result["message"] == "interrupted (Ctrl-C) before converging"
    note, error = err.splitlines()
    assert note == f"note: {rows} not written: the fit was interrupted"
    assert error.startswith("error: interrupted after ")
    assert error.endswith(" evaluations: the output is the best point reached")
    assert not rows.exists()


@pytest.mark.signals
@pytest.mark.parametrize(
    "command",
    [["fit", "a*x + b", "--a", "1", "--b", "0"], ["minimize", "(a*x - y)**2", "--a", "0"]],
    ids=["fit", "minimize"],
)
def test_ctrl_c_while_the_data_is_read_says_so(tmp_path, monkeypatch, command):
    """Ctrl-C while a large file is still being read ended the run without a word: the
    KeyboardInterrupt that Ctrl-C raises in the reading (here, at its first batch) is exit
    130 and a line that says so. (In process: a real signal's moment in PyArrow's own reading
    thread, which has its own handler of it, cannot be pinned down from outside.)"""
    from nanograd_cli import _io

    path = tmp_path / "big.csv"
    path.write_text("x,y\n1,3\n2,5\n")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_io, "_read_table", interrupted)
    done = in_process(*command, "--data", str(path))
    assert (done.returncode, done.stdout, done.stderr) == (
        130,
        "",
        f"error: interrupted while reading --data {path}\n",
    )


@pytest.mark.slow
def test_plot_draws_the_data_the_fitted_curve_and_the_residuals(data, tmp_path):
    import xml.etree.ElementTree as ET

    picture = tmp_path / "fit.svg"
    done = in_process("fit", MODEL, "--data", str(data), *STARTS, "--plot", str(picture))
    assert done.returncode == 0
    ids = {e.get("id") for e in ET.parse(picture).iter() if e.get("id")}
    assert {"data", "fit", "residuals"} <= ids
    text = in_process("fit", MODEL, "--data", str(data), *STARTS, "--plot", "-", "--format", "csv")
    assert text.stdout.startswith("parameter,value,stderr\n")  # the plot goes to stderr
    assert "a*exp(-b*x) + c   at a = 2.5" in text.stderr and "data" in text.stderr
    banded = in_process("fit", MODEL, "--data", str(data), *STARTS, "--plot", "-", "--band",
                        "0.9", "--format", "csv").stderr.splitlines()  # fmt: skip
    legend = [line for line in banded if "fit" in line and "data" in line]
    assert legend[-1].split() == ["..", "0.9", "band", "**", "fit", "oo", "data"]  # one band
    two = in_process("fit", "a*x + b*y", "--data", str(data), "--a", "1", "--b", "1",
                   "--target", "1", "--plot", "f.svg", cwd=tmp_path)  # fmt: skip
    assert (two.returncode, two.stderr) == (
        2,
        "error: --plot draws a fit over one column; the model reads x, y\n",
    )
    assert not (tmp_path / "f.svg").exists()


def test_files_that_cannot_be_written_are_refused_before_the_fit(data, tmp_path):
    nowhere = in_process(
        "fit", MODEL, "--data", str(data), *STARTS, "-o", str(tmp_path / "no/o.csv")
    )
    assert (nowhere.returncode, nowhere.stdout) == (1, "")
    assert (
        nowhere.stderr
        == f"error: cannot write {tmp_path / 'no/o.csv'}: No such file or directory\n"
    )
    over = in_process("fit", MODEL, "--data", str(data), *STARTS, "-o", str(data))
    assert (over.returncode, over.stderr) == (
        2,
        f"error: {data} is the --data file, which is read: write to another file\n",
    )


def test_a_pole_inside_the_data_at_the_point_reached_is_a_note_on_stderr(tmp_path):
    rows = zip([0.02, 0.06, 0.11, 0.22, 0.56, 1.10], [76, 97, 123, 159, 191, 207], strict=True)
    (tmp_path / "p.csv").write_text("S,v\n" + "".join(f"{s},{v}\n" for s, v in rows))
    done = in_process("fit", "Vmax*S/(Km + S)", "--data", "p.csv", "--target", "v",
                      "--Vmax", "1", "--Km", "1", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0
    assert done.stderr.startswith("note: at the point reached, the model has a pole between S =")


def test_stats_and_ci_in_the_table_and_a_bad_level(tmp_path):
    rows = zip([0.02, 0.06, 0.11, 0.22, 0.56, 1.10], [76, 97, 123, 159, 191, 207], strict=True)
    (tmp_path / "p.csv").write_text("S,v\n" + "".join(f"{s},{v}\n" for s, v in rows))
    fit = ["fit", "Vm*S/(K + S)", "--data", "p.csv", "--target", "v", "--Vm", "200", "--K", "0.1"]
    done = in_process(*fit, "--stats", "--ci", "0.95", "--digits", "4", cwd=tmp_path)
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["value", "stderr", "t", "p", "lower", "upper"]
    assert [line.split()[0] for line in lines[3:9]] == [
        "rss",
        "residual",
        "reduced",
        "r2",
        "aic",
        "bic",
    ]
    done = in_process(*fit, "--ci", "1.5", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: --ci 1.5: a level between 0 and 1, such as 0.95\n"


def test_ci_in_json_with_nan_errors_and_in_csv(tmp_path):
    (tmp_path / "two.csv").write_text("x,y\n1,2\n2,4.1\n")
    done = in_process("fit", "a*x+b", "--data", "two.csv", "--a", "1", "--b", "0", "--format",
                      "json", "--ci", "0.9", cwd=tmp_path)  # fmt: skip
    assert json.loads(done.stdout)["ci"] == {"a": ["nan", "nan"], "b": ["nan", "nan"]}
    (tmp_path / "d.csv").write_text("x,y\n0,3.02\n1,1.17\n2,0.69\n3,0.56\n")
    done = in_process("fit", "a*x+b", "--data", "d.csv", "--a", "1", "--b", "0", "--format",
                      "csv", "--ci", "0.9", "--stats", cwd=tmp_path)  # fmt: skip
    assert done.stdout.splitlines()[0] == "parameter,value,stderr,t,p,lower,upper"
    assert len(done.stdout.splitlines()[1].split(",")) == 7
    done = in_process("fit", "a*x+b", "--data", "d.csv", "--a", "1", "--b", "0", "--ci", "95",
                      cwd=tmp_path)  # fmt: skip
    assert done.stderr == (
        "error: --ci 95: a level between 0 and 1, such as 0.95 (95 is a percentage: 0.95)\n"
    )


def test_bound_through_the_command_line(tmp_path):
    rows = zip([0.02, 0.06, 0.11, 0.22, 0.56, 1.10], [76, 97, 123, 159, 191, 207], strict=True)
    (tmp_path / "p.csv").write_text("S,v\n" + "".join(f"{s},{v}\n" for s, v in rows))
    fit = ["fit", "Vm*S/(K + S)", "--data", "p.csv", "--target", "v", "--Vm", "200", "--K", "0.5"]
    done = in_process(*fit, "--bound", "K=0.1:1", "--digits", "4", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.splitlines()[2].split() == ["K", "0.1", "at", "bound"]
    done = in_process(*fit, "--bound", "K", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, "error: --bound expects NAME=LO:HI, got 'K'\n")


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["fit", "a*x", "--a", "1"], "none is left for 1 parameter"),
        (["fit", "a*x + b", "--a", "1", "--b", "0"], "1 is left for 2 parameters"),
        (["minimize", "(w*x - y)**2", "--w", "1"], None),
    ],
)
def test_drop_nan_that_leaves_too_few_rows_says_so(tmp_path, command, message):
    rows = "x,y\n1,\n2,NA\n" if message != "1 is left for 2 parameters" else "x,y\n1,\n2,3\n"
    (tmp_path / "d.csv").write_text(rows)
    done = in_process(*command, "--data", "d.csv", "--drop-nan", cwd=tmp_path)
    assert done.returncode == 2
    said = done.stderr.splitlines()[-1]
    if message is None:  # minimize: its note says how many rows, then
        assert (
            said
            == "error: the data has no rows left once the rows with a missing value are left out"
        )
    else:
        assert said == (
            f"error: with the rows that have a missing value left out, {message}: a fit "
            "needs at least as many"
        )


def test_drop_nan_leaves_out_rows_with_a_missing_value(tmp_path):
    (tmp_path / "h.csv").write_text(
        "x,y\n0,3.02\n0.5,\n1,1.17\n1.5,NA\n2,nan\n2.5,0.6\n3,0.56\n3.5,0.53\n"
    )
    fit = ["fit", "a*exp(-b*x) + c", "--data", "h.csv", "--a", "1", "--b", "1", "--c", "0"]
    done = in_process(*fit, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: --data row 2, column y: a missing value (empty, NA or nan); --drop-nan leaves "
        "out the rows with one\n"
    )
    done = in_process(*fit, "--drop-nan", "--format", "json", "-o", "out.csv", cwd=tmp_path)
    result = json.loads(done.stdout)
    assert result["n"] == 5 and result["converged"]
    assert done.stderr == "note: 3 rows with a missing value (nan, empty or NA) left out\n"
    assert result["warnings"] == ["3 rows with a missing value (nan, empty or NA) left out"]
    rows = (tmp_path / "out.csv").read_text().splitlines()
    # the cells given come back as they were; only what was computed is NaN
    assert (rows[2], rows[4], rows[5]) == (
        "0.5,,NaN,NaN,NaN",
        "1.5,NA,NaN,NaN,NaN",
        "2,nan,NaN,NaN,NaN",
    )
    assert len(rows) == 9
    (tmp_path / "kept.csv").write_text(
        "x,y\n0,3.02\n1,1.17\n2.5,0.6\n3,0.56\n3.5,0.53\n"
    )  # the same fit on the rows kept
    alone = in_process("fit", "a*exp(-b*x) + c", "--data", "kept.csv", "--a", "1", "--b", "1",
                       "--c", "0", "--format", "json", cwd=tmp_path)  # fmt: skip
    assert json.loads(alone.stdout)["parameters"] == result["parameters"]
    minimize = in_process("minimize", "(a*x - y)**2", "--data", "h.csv", "--a", "0",
                          "--drop-nan", "--format", "json", cwd=tmp_path)  # fmt: skip
    assert minimize.returncode == 0
    assert minimize.stderr == "note: 3 rows with a missing value (nan, empty or NA) left out\n"


def test_o_gives_back_each_cell_as_it_was_in_every_format(tmp_path):
    """-o of a fit with --drop-nan: a missing cell comes back missing (CSV as it was
    written, null where a format has types), a column of text as text (an id's leading
    zeros kept), a column the fit read as numbers."""
    import pyarrow.parquet as pq

    (tmp_path / "d.csv").write_text(
        "id,x,y,label\n001,0,1,a\n002,1,3,\n003,2,NA,c\n004,3,7,NA\n005,4,,e\n"
    )
    fit = ["fit", "a*x + b", "--data", "d.csv", "--a", "1", "--b", "0", "--drop-nan"]
    for name in ("out.csv", "out.jsonl", "out.parquet"):
        done = in_process(*fit, "-o", name, cwd=tmp_path)
        assert (done.returncode, done.stderr) == (
            0,
            "note: 2 rows with a missing value (nan, empty or NA) left out\n",
        )
    assert [line.split(",")[:4] for line in (tmp_path / "out.csv").read_text().splitlines()] == [
        ["id", "x", "y", "label"],
        ["001", "0", "1", "a"],
        ["002", "1", "3", ""],
        ["003", "2", "NA", "c"],
        ["004", "3", "7", "NA"],
        ["005", "4", "", "e"],
    ]
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert [(r["id"], r["x"], r["y"], r["label"]) for r in rows] == [
        ("001", 0.0, 1.0, "a"),
        ("002", 1.0, 3.0, ""),
        ("003", 2.0, None, "c"),
        ("004", 3.0, 7.0, "NA"),
        ("005", 4.0, None, "e"),
    ]
    assert [r["fitted"] for r in rows] == [1.0, 3.0, "nan", 7.0, "nan"]
    table = pq.read_table(tmp_path / "out.parquet")
    assert [str(table.schema.field(n).type) for n in ("id", "x", "y", "label")] == [
        "string",
        "double",
        "double",
        "string",
    ]
    assert table.column("id").to_pylist() == ["001", "002", "003", "004", "005"]
    assert table.column("y").to_pylist() == [1.0, 3.0, None, 7.0, None]


@pytest.mark.parametrize(
    ("data", "target", "message"),
    [
        ("x,y\n0,1\n1,inf\n2,5\n3,7\n", [],
         "error: row 2 (x = 1.0): the target is inf; a fit needs finite data on every row: "
         "correct the row or leave it out of the data (--drop-nan leaves out missing values "
         "only)\n"),
        ("x,y\n0,1\n-inf,3\n2,5\n3,7\n", [],
         "error: row 2 (x = -inf): x is -inf; a fit needs finite data on every row: correct "
         "the row or leave it out of the data (--drop-nan leaves out missing values only)\n"),
        ("x,y\n0,1\n1,0\n2,5\n3,7\n", ["--target", "log(y)"],
         "error: row 2 (x = 1.0): the target is -inf; a fit needs finite data on every row: "
         "correct the row or leave it out of the data (--drop-nan leaves out missing values "
         "only)\n"),
    ],
)  # fmt: skip
def test_an_infinite_value_is_not_missing_and_drop_nan_keeps_it(tmp_path, data, target, message):
    """--drop-nan leaves out missing values (nan, empty, NA) only, in a column or the target,
    as for minimize and grad --points; an infinite one stops the fit with or without it, and
    the message does not offer --drop-nan as the way out."""
    (tmp_path / "d.csv").write_text(data)
    fit = ["fit", "a*x + b", "--data", "d.csv", "--a", "1", "--b", "0", *target]
    for options in ([], ["--drop-nan"]):
        done = in_process(*fit, *options, cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", message)
    # a target computed as nan (log of a negative number) is a missing value
    (tmp_path / "n.csv").write_text("x,y\n0,1\n1,-1\n2,5\n3,7\n4,9\n")
    fit = ["fit", "a*x + b", "--data", "n.csv", "--a", "1", "--b", "0", "--target", "log(y)"]
    done = in_process(*fit, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "error: row 2 (x = 1.0): the target is nan; a fit needs finite data on every row: "
        "leave the row out (--drop-nan leaves out every row with a missing value)\n",
    )
    done = in_process(*fit, "--drop-nan", "--format", "json", cwd=tmp_path)
    assert (done.returncode, json.loads(done.stdout)["n"]) == (0, 4)


@pytest.mark.parametrize(
    ("arguments", "what"),
    [
        (["fit", "a*x + b", "--target", "e"], "the target"),
        (["fit", "a*e + b"], "the model"),
        (["fit", "a*x + b", "--target", "x", "--sigma", "0.1*e"], "sigma"),
        (["fit", "a*x + b", "--sigma", "e"], "sigma"),
        (["minimize", "(a*x + b - e)**2"], "the source"),
    ],
)
def test_a_column_named_as_a_constant_that_the_source_reads_is_refused(tmp_path, arguments,
                                                                       what):  # fmt: skip
    """A column e (or pi) where the model, the target or sigma writes e: the source means
    the constant, and a fit of it was silently wrong (b = 2.718, rss 0, converged). It is
    exit 2, from the command line and Python alike; unread, such a column is no matter."""
    import nanograd_cli as ng

    (tmp_path / "d.csv").write_text("x,e,y\n0,1,1\n1,2.1,2\n2,2.9,3\n3,4.2,4\n")
    message = (
        f"the data has a column e, and {what} reads e as the constant e = 2.718281828: rename "
        "the column to read it"
    )
    done = in_process(*arguments, "--data", "d.csv", "--a", "1", "--b", "0", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")
    command, source, *options = arguments
    call = {"fit": ng.fit, "minimize": ng.minimize}[command]
    named = {k.removeprefix("--"): v for k, v in zip(options[::2], options[1::2], strict=True)}
    columns = {"x": [0.0, 1, 2, 3], "e": [1, 2.1, 2.9, 4.2], "y": [1.0, 2, 3, 4]}
    with pytest.raises(ng.errors.InputError, match=f"^{re.escape(message)}$"):
        if command == "fit":
            call(source, columns, a=1, b=0, **named)
        else:
            call(source, data=columns, a=1, b=0)
    unread = in_process("fit", "a*x + b", "--data", "d.csv", "--a", "1", "--b", "0", cwd=tmp_path)
    assert unread.returncode == 0


def test_sigma_missing_on_a_row_names_drop_nan_which_leaves_it_out(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n1,1\n2,-4\n3,9\n4,16\n")
    fit = ["fit", "a*x", "--data", "d.csv", "--a", "1", "--sigma", "sqrt(y)"]
    done = in_process(*fit, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "error: sigma: row 2 of sigma = sqrt(y) is nan; a standard deviation is a positive "
        "number (--drop-nan leaves out the rows where it is missing)\n",
    )
    assert in_process(*fit, "--drop-nan", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("option", ["--data", "--predict"])
def test_data_from_a_named_pipe_is_read_once(tmp_path, option):
    """A pipe (mkfifo, `<(...)`, /dev/stdin) can be read once: the format is not sniffed from
    it first (which took its header, or hung waiting for a second writer)."""
    import os
    import threading

    (tmp_path / "d.csv").write_text("x,y\n0,1\n1,3.1\n2,4.9\n3,7\n")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    text = "x,y\n0,1\n1,3.1\n2,4.9\n3,7\n" if option == "--data" else "x\n5\n"
    writer = threading.Thread(target=pipe.write_text, args=(text,), daemon=True)
    writer.start()
    given = {"--data": ["--data", str(pipe)], "--predict": ["--data", "d.csv", "--predict",
                                                           str(pipe)]}[option]  # fmt: skip
    done = subprocess.run([NANOGRAD, "fit", "a*x + b", *given, "--a", "1", "--b", "0"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)  # fmt: skip
    writer.join(timeout=5)
    assert (done.returncode, done.stderr) == (0, "")
    assert (
        ("converged    yes" in done.stdout)
        if option == "--data"
        else done.stdout.startswith("x,fitted,fitted_se\n5,10.9")
    )


@pytest.mark.parametrize(
    ("options", "first", "second"),
    [
        (["--save", "same.json", "-o", "./same.json"], "-o", "--save"),
        (["--plot", "same.png", "--save", "same.png"], "--plot", "--save"),
        (["-o", "same", "--save", "sub/../same"], "-o", "--save"),
    ],
)
def test_two_outputs_on_one_file_are_refused_before_the_fit(tmp_path, options, first, second):
    """Two outputs naming one file: one would be lost (--save wrote over -o's rows, exit 0)."""
    (tmp_path / "d.csv").write_text("x,y\n0,1\n1,3.1\n2,4.9\n3,7\n")
    (tmp_path / "sub").mkdir()
    done = in_process("fit", "a*x + b", "--data", "d.csv", "--a", "1", "--b", "0", *options,
                      cwd=tmp_path)  # fmt: skip
    path = options[options.index(first) + 1]
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {first} and {second} both name {path}: give each its own file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "sub"]


def test_standard_output_carries_one_thing_the_rows_the_saved_fit_or_the_fit(tmp_path):
    """-o - (and --save -) put their output on standard output in place of the fit's table,
    which made one stream of a table and CSV rows after it; two of them are refused."""
    (tmp_path / "d.csv").write_text("x,y\n0,1\n1,3.1\n2,4.9\n3,7\n")
    fit = ["fit", "a*x + b", "--data", "d.csv", "--a", "1", "--b", "0"]
    rows = in_process(*fit, "-o", "-", cwd=tmp_path)
    assert rows.returncode == 0 and rows.stdout.splitlines()[0] == "x,y,fitted,fitted_se,residual"
    assert len(rows.stdout.splitlines()) == 5
    lines = in_process(*fit, "-o", "-", "--format", "json", cwd=tmp_path).stdout.splitlines()
    assert [json.loads(line)["x"] for line in lines] == [0, 1, 2, 3]
    saved = json.loads(in_process(*fit, "--save", "-", cwd=tmp_path).stdout)
    assert saved["format"] == "nanograd fit" and saved["parameters"]["a"] == pytest.approx(1.98)
    for options, first in ((["-o", "-"], "-o -"), (["--predict", "d.csv"], "--predict")):
        done = in_process(*fit, *options, "--save", "-", cwd=tmp_path)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            f"error: {first} and --save - would both write to standard output: give --save a file\n"
        )


def test_by_shows_each_groups_derived_quantities_in_the_table_and_csv(runs):
    """--derive applies to each group: its value and standard error are columns of the
    groups' table and CSV (with --ci, its interval too), each group's as its fit alone has."""
    arguments = ["fit", MODEL, "--data", str(runs), "--by", "run", *STARTS,
                 "--derive", "half = log(2)/b"]  # fmt: skip
    found = in_process(*arguments, "--format", "json", "--ci", "0.9").stdout
    lines = [json.loads(line) for line in found.splitlines()]
    csv = in_process(*arguments, "--format", "csv", "--ci", "0.9").stdout.splitlines()
    header = csv[0].split(",")
    assert header[header.index("c") + 4 : header.index("rss")] == [
        "half", "stderr_half", "lower_half", "upper_half"
    ]  # fmt: skip
    for row, line in zip(csv[1:], lines, strict=True):
        cells = dict(zip(header, row.split(","), strict=True))
        half = line["derived"]["half"]
        assert [float(cells[k]) for k in ("half", "stderr_half", "lower_half", "upper_half")] == [
            half["value"], half["stderr"], *half["ci"]
        ]  # fmt: skip
    table = in_process(*arguments, "--digits", "4").stdout.splitlines()
    assert table[0].split() == ["run", "a", "stderr", "b", "stderr", "c", "stderr", "half",
                                "stderr", "rss", "converged"]  # fmt: skip
    assert table[1].split()[7] == f"{lines[0]['derived']['half']['value']:.4g}"


@pytest.mark.parametrize(
    ("derive", "message"),
    [
        ("b = 2*b", "--derive b: b is a parameter of the model: give the quantity its own name"),
        ("rss = 2*b", "--derive rss: rss is a row of the fit's table: give the quantity its own "
                      "name"),
        ("h = a; g = b", "--derive 'h = a; g = b': give NAME = EXPR, such as 'half_life = "
                         "log(2)/k' (one quantity each: --derive again for another)"),
        ("h = q = a", "--derive 'h = q = a': give NAME = EXPR, such as 'half_life = log(2)/k' "
                      "(one quantity each: --derive again for another)"),
    ],
)  # fmt: skip
def test_a_derived_quantity_named_as_a_row_of_the_table_is_refused(runs, derive, message):
    done = in_process("fit", MODEL, "--data", str(runs), *STARTS, "--derive", derive)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")


@pytest.mark.parametrize("missing", ["", "NA", "nan"])
def test_a_row_without_a_group_is_refused(tmp_path, missing):
    """A missing value in the column of --by made a group of its own ("" or "NA", and the
    numbers of the others text): it is exit 2 naming the row, from every door."""
    import nanograd_cli as ng

    (tmp_path / "g.csv").write_text(f"g,x,y\n1,0,1\n1,1,2\n{missing},2,3\n2,0,1\n2,1,2\n")
    message = (
        "row 3, column g: a missing value (empty, NA or nan), where each row names its group: "
        "give every row one"
    )
    done = in_process("fit", "a*x + b", "--data", "g.csv", "--by", "g", "--a", "1", "--b", "0",
                      cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: --data {message}\n")
    with pytest.raises(ng.errors.InputError, match=f"^data {re.escape(message)}$"):
        ng.fit("a*x + b", str(tmp_path / "g.csv"), by="g", a=1, b=0)
    groups = [1, 1, None if missing == "" else float("nan"), 2, 2]
    columns = {"g": groups, "x": [0.0, 1, 2, 0, 1], "y": [1.0, 2, 3, 1, 2]}
    with pytest.raises(ng.errors.InputError, match=f"^data {re.escape(message)}$"):
        ng.fit("a*x + b", columns, by="g", a=1, b=0)


def test_a_parquet_file_read_as_csv_is_named_with_the_option_that_reads_it(tmp_path):
    """A Parquet file without its extension, or on standard input: the message names --data
    and --data-format (it said --points and --points-format), or the format to give."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [0.0, 1, 2], "y": [1.0, 3, 5]}), tmp_path / "rows")
    fit = ["fit", "a*x + b", "--a", "1", "--b", "0"]
    done = in_process(*fit, "--data", "rows", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "error: --data rows is a Parquet file, not CSV: name it with .parquet (or give "
        "--data-format parquet)\n",
    )
    assert in_process(*fit, "--data", "rows", "--data-format", "parquet",
                      cwd=tmp_path).returncode == 0  # fmt: skip
    piped = subprocess.run([NANOGRAD, *fit, "--data", "-"], input=(tmp_path / "rows").read_bytes(),
                           capture_output=True, cwd=tmp_path)  # fmt: skip
    assert (piped.returncode, piped.stderr.decode()) == (
        2,
        "error: --data: the header is not valid UTF-8: it is a Parquet file: give its format, "
        "parquet\n",
    )


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_a_binary_file_through_a_named_pipe_is_read_once(tmp_path, fmt):
    """Parquet or Arrow through a named pipe: it was opened a second time (for Arrow's own
    reader), which waited forever for a writer, or failed to seek."""
    import os
    import threading

    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    table = pa.table({"x": [0.0, 1, 2, 3], "y": [1.0, 3.1, 4.9, 7]})
    written = tmp_path / f"d.{fmt}"
    (pq.write_table if fmt == "parquet" else feather.write_feather)(table, written)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    writer = threading.Thread(target=pipe.write_bytes, args=(written.read_bytes(),),
                              daemon=True)  # fmt: skip
    writer.start()
    done = subprocess.run([NANOGRAD, "fit", "a*x + b", "--data", str(pipe), "--data-format", fmt,
                           "--a", "1", "--b", "0"], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    writer.join(timeout=5)
    assert (done.returncode, done.stderr) == (0, "") and "converged    yes" in done.stdout


def test_a_target_or_sigma_made_of_arrays_is_one_number_a_row_or_refused(tmp_path):
    """--target "sum([y, y])/2" is y; "[y, y]" is two numbers a row, exit 2 (both were an
    internal error)."""
    (tmp_path / "d.csv").write_text("x,y\n0,1\n1,3.1\n2,4.9\n3,7\n")
    fit = ["fit", "a*x + b", "--data", "d.csv", "--a", "1", "--b", "0", "--format", "json"]
    plain = json.loads(in_process(*fit, cwd=tmp_path).stdout)
    for options in (["--target", "sum([y, y])/2"], ["--sigma", "sum([x, 1])"]):
        done = in_process(*fit, *options, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        if options[0] == "--target":
            assert json.loads(done.stdout)["parameters"] == pytest.approx(plain["parameters"])
    for options in (["--target", "[y, y]"], ["--sigma", "[x, x]"]):
        done = in_process(*fit, *options, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (2, "")
        assert "the result is an array of 2 elements" in done.stderr


def test_tsv_on_standard_input_is_read_with_the_format_its_message_names(tmp_path):
    tsv = "x\ty\n0\t1\n1\t3.1\n2\t4.9\n3\t7\n"
    fit = ["fit", "a*x + b", "--data", "-", "--a", "1", "--b", "0"]
    done = nanograd(*fit, stdin=tsv)
    assert (done.returncode, done.stderr) == (
        2,
        "error: --data: its header 'x\\ty' is one column, the names between tabs: for TSV, give "
        "--data-format tsv\n",
    )
    done = nanograd(*fit, "--data-format", "tsv", "--format", "json", stdin=tsv)
    assert (done.returncode, json.loads(done.stdout)["n"]) == (0, 4)


def test_a_sigma_whose_weight_overflows_is_refused_in_words_not_a_warning(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n0,1\n1,3.1\n2,4.9\n3,7\n")
    done = in_process("fit", "a*x + b", "--data", "d.csv", "--a", "1", "--b", "0", "--sigma",
                      "1e-320", cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "error: sigma: row 1 of sigma = 1e-320 is 1e-320, too small for the fit: its weight, "
        "1/sigma, is past the largest float (scale sigma and the data up)\n",
    )


def test_a_derived_quantity_that_is_nan_says_so_in_a_note(runs):
    done = in_process("fit", MODEL, "--data", str(runs), *STARTS, "--derive", "h = log(-a)",
                      "--format", "json")  # fmt: skip
    result = json.loads(done.stdout)
    assert done.returncode == 0 and result["derived"]["h"] == {"value": "nan", "stderr": "nan"}
    assert done.stderr == "note: h = log(-a) is nan at the fit's values\n"


def test_a_group_that_drop_nan_empties_says_how_many_rows_it_lost(tmp_path):
    (tmp_path / "g.csv").write_text("g,x,y\nA,0,1\nA,1,3\nA,2,5\nB,0,\nB,1,\nB,2,7\n")
    done = in_process("fit", "a*x + b", "--data", "g.csv", "--by", "g", "--a", "1", "--b", "0",
                      "--drop-nan", "--format", "csv", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    assert done.stdout.splitlines()[2].endswith(
        ",false,1 row (2 left out for a missing value) for 2 parameters: a fit needs at least as "
        "many rows as free parameters"
    )


def test_seed_without_restarts_does_nothing_and_says_so(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n0,1\n1,3\n2,5\n")
    done = in_process("fit", "a*x + b", "--data", "d.csv", "--a", "1", "--b", "0", "--seed", "3",
                      cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stderr) == (
        2, "error: --seed draws the starts of --restarts: without them it does nothing\n"
    )  # fmt: skip
    import nanograd_cli as ng  # from Python too (it was taken and did nothing)

    with pytest.raises(ng.errors.InputError, match=r"^seed draws the starts of restarts: "):
        ng.fit("a*x + b", str(tmp_path / "d.csv"), a=1, b=0, seed=3)


def test_restarts_beyond_the_most_are_refused_before_the_data_is_read(tmp_path):
    """--restarts 100000000 would fit for days, keeping every fit: bad input that names the
    most, said before a large file is read (here, one that does not exist)."""
    fit = ["fit", "a*x + b", "--data", "absent.csv", "--a", "1", "--b", "0", "--seed", "1"]
    done = in_process(*fit, "--restarts", "100000000", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "error: --restarts must be from 0 to 10000, not 100000000\n",
    )
    most = in_process(*fit, "--restarts", "10000", cwd=tmp_path)  # taken: the data is read
    assert (most.returncode, most.stderr.startswith("error: --restarts")) == (1, False)
    import nanograd_cli as ng

    (tmp_path / "d.csv").write_text("x,y\n0,1\n1,3\n2,5.5\n")
    with pytest.raises(ng.errors.InputError, match=r"^restarts must be from 0 to 10000, not "):
        ng.fit("a*x + b", str(tmp_path / "d.csv"), a=1, b=0, restarts=10001)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--loss", "l1"], "--loss 'l1' is no loss: choose one of linear, soft_l1, huber, "
         "cauchy, arctan"),
        (["--loss", "huber", "--f-scale", "0"], "--f-scale 0.0: a positive finite number, the "
         "size of residual beyond which a row counts less than its square"),
        (["--loss", "huber", "--f-scale", "nan"], "--f-scale nan: a positive finite number, "
         "the size of residual beyond which a row counts less than its square"),
        (["--loss", "huber", "--f-scale", "inf"], "--f-scale inf: a positive finite number, "
         "the size of residual beyond which a row counts less than its square"),
        (["--f-scale", "2"], "--f-scale sets where a robust --loss turns from squares: with "
         "the linear loss it does nothing"),
        (["--profile"], "--profile finds the intervals of --ci LEVEL: without a level it does "
         "nothing"),
        (["--profile", "--ci", "0.9", "--loss", "cauchy"], "--profile profiles the sum of "
         "squares, which a robust --loss cauchy does not minimize: leave out --profile for "
         "approximate asymptotic intervals"),
    ],
)  # fmt: skip
def test_bad_loss_f_scale_and_profile_are_exit_2(options, message, data, tmp_path):
    out = tmp_path / "out.csv"
    done = in_process("fit", MODEL, "--data", str(data), *STARTS, *options, "-o", str(out))
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")
    assert not out.exists()


def test_a_robust_fit_and_profile_intervals_through_the_command_line(data, tmp_path):
    fit = ["fit", MODEL, "--data", str(data), *STARTS]
    robust = in_process(*fit, "--loss", "soft_l1", "--f-scale", "0.01", "--format", "json")
    result = json.loads(robust.stdout)
    assert robust.returncode == 0 and result["converged"]
    assert (result["loss"], result["f_scale"], result["stderr_approximate"]) == (
        "soft_l1", 0.01, True
    )  # fmt: skip
    table = in_process(*fit, "--loss", "huber", "--digits", "4").stdout.splitlines()
    assert table[-2].split() == ["loss", "huber", "f_scale", "1;", "stderr", "approximate"]
    profiled = in_process(*fit, "--ci", "0.95", "--profile", "--format", "json")
    asymptotic = in_process(*fit, "--ci", "0.95", "--format", "json")
    shown, plain = json.loads(profiled.stdout), json.loads(asymptotic.stdout)
    assert (shown["ci_method"], plain["ci_method"]) == ("profile", "asymptotic")
    assert shown["ci_level"] == 0.95 and set(shown["ci"]) == {"a", "b", "c"}
    for name, (low, high) in shown["ci"].items():  # near the asymptotic: a near-linear fit
        assert low < shown["parameters"][name] < high
        assert (low, high) == pytest.approx(plain["ci"][name], rel=1e-2)
    csv = in_process(*fit, "--ci", "0.95", "--profile", "--format", "csv").stdout.splitlines()
    assert csv[0] == "parameter,value,stderr,lower,upper"
    assert [float(x) for x in csv[1].split(",")[3:]] == pytest.approx(shown["ci"]["a"], rel=1e-12)


# --by COLUMN: a fit per group of rows; --shared NAME: one fit sharing NAME between groups.

# three runs of a*exp(-b*x) + c, their rows interleaved, named by a number or a text
RUNS = {"10": (2.0, 1.1, 0.3), "2.5": (1.5, 1.4, 0.2), "late": (3.0, 0.9, 0.5)}


@pytest.fixture
def runs(tmp_path):
    path = tmp_path / "runs.csv"
    lines = ["run,x,y"]
    for i in range(12):
        for run, (a, b, c) in RUNS.items():
            x = i / 3
            lines.append(f"{run},{x!r},{a * math.exp(-b * x) + c + 0.01 * (-1) ** i!r}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_by_writes_a_row_per_group_as_a_table_csv_and_json_lines(runs):
    arguments = ["fit", MODEL, "--data", str(runs), "--by", "run", *STARTS]
    lines = [
        json.loads(line) for line in in_process(*arguments, "--format", "json").stdout.splitlines()
    ]
    assert [line["run"] for line in lines] == ["10", "2.5", "late"]  # text: a word among them
    for line, (a, b, c) in zip(lines, RUNS.values(), strict=True):
        assert line["converged"] and line["n"] == 12
        assert line["parameters"] == pytest.approx({"a": a, "b": b, "c": c}, rel=0.05)
    csv = in_process(*arguments, "--format", "csv")
    rows = csv.stdout.splitlines()
    assert (csv.returncode, rows[0]) == (
        0,
        "run,a,stderr_a,b,stderr_b,c,stderr_c,rss,converged,message",
    )
    for row, line in zip(rows[1:], lines, strict=True):
        cells = row.split(",")
        assert cells[0] == line["run"] and cells[-2:] == ["true", ""]
        values = [float(v) for v in cells[1:8]]
        assert values == [line[k][n] for n in "abc" for k in ("parameters", "stderr")] + [
            line["rss"]
        ]
    table = in_process(*arguments).stdout.splitlines()
    assert table[0].split() == ["run", "a", "stderr", "b", "stderr", "c", "stderr", "rss",
                                "converged"]  # fmt: skip
    assert [line.split()[0] for line in table[1:]] == ["10", "2.5", "late"]
    assert [line.split()[-1] for line in table[1:]] == ["yes"] * 3


def test_by_with_stats_shows_each_groups_t_p_and_statistics_as_json_has_them(runs):
    arguments = ["fit", MODEL, "--data", str(runs), "--by", "run", *STARTS, "--stats"]
    lines = [json.loads(x) for x in in_process(*arguments, "--format", "json").stdout.splitlines()]
    csv = in_process(*arguments, "--format", "csv").stdout.splitlines()
    header = csv[0].split(",")
    assert header[:5] == ["run", "a", "stderr_a", "t_a", "p_a"]
    assert header[-7:] == ["rss", "reduced_chi2", "r2", "aic", "bic", "converged", "message"]
    for row, line in zip(csv[1:], lines, strict=True):
        cells = dict(zip(header, row.split(","), strict=True))
        for name in "abc":
            assert float(cells[f"t_{name}"]) == line["t"][name]
            assert float(cells[f"p_{name}"]) == line["p"][name]
        for key in ("reduced_chi2", "r2", "aic", "bic"):
            assert float(cells[key]) == line[key]
    table = in_process(*arguments).stdout.splitlines()
    assert table[0].split()[:5] == ["run", "a", "stderr", "t", "p"]
    assert table[0].split()[-7:] == ["rss", "reduced", "chi2", "r2", "aic", "bic", "converged"]
    first = table[1].split()
    assert float(first[3]) == lines[0]["t"]["a"]
    assert float(first[-2]) == lines[0]["bic"]
    plain = in_process(*arguments[:-1]).stdout.splitlines()[0].split()
    assert "t" not in plain and "aic" not in plain


def test_group_names_are_data_in_csv_and_escaped_in_aligned_tables(tmp_path):
    path = tmp_path / "named.csv"
    names = ['"a,b"', '"c""d"', "e\x1b[31m"]
    path.write_text("g,x,y\n" + "".join(
        f"{g},{x},{2 * math.exp(-x) + 0.01 * (-1) ** x}\n" for g in names for x in range(5)
    ))  # fmt: skip
    fit = ["fit", "a*exp(-b*x)", "--data", str(path), "--by", "g", "--a", "1", "--b", "1"]
    csv = in_process(*fit, "--format", "csv").stdout.splitlines()
    assert [row.split(",")[0] for row in csv[1:]] == ['"a', '"c""d"', "e\x1b[31m"]
    table = in_process(*fit).stdout.splitlines()
    assert [row[:11] for row in table[1:]] == ["a,b        ", 'c"d        ', "e\\x1b[31m  "]
    starts = {row.index("2.") for row in table[1:]}
    assert len(starts) == 1  # the numbers line up
    shared = in_process(*fit, "--shared", "b").stdout.splitlines()
    assert shared[3].startswith("a[e\\x1b[31m]  ")
    assert len({row.index(" 2.") for row in shared[1:4]}) == 1
    # the predictions' table too, and an error that lists the groups: one line each
    (tmp_path / "new.csv").write_text("g,x\ne\x1b[31m,1\n")
    table = in_process(*fit, "--predict", str(tmp_path / "new.csv"), "--format", "table")
    assert table.stdout.splitlines()[1].startswith("e\\x1b[31m  1.0  ")
    (tmp_path / "other.csv").write_text('g,x\n"t\tab",1\n')
    other = in_process(*fit, "--predict", str(tmp_path / "other.csv"))
    assert (other.returncode, other.stderr) == (
        2,
        "error: row 1: g = t\\tab, a group that was not fitted (the groups fitted: a,b, "
        'c"d, e\\x1b[31m)\n',
    )


def test_groups_named_by_numbers_are_numbers_in_json(tmp_path):
    path = tmp_path / "numbered.csv"
    path.write_text("run,x,y\n" + "".join(f"{1 + i % 2}.0,{i},{2 * i + i % 2}\n" for i in range(8)))
    done = in_process("fit", "a*x + b", "--data", str(path), "--by", "run", "--a", "1",
                      "--b", "0", "--format", "json")  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["run"] for line in lines] == [1, 2]
    assert [line["parameters"]["b"] for line in lines] == pytest.approx([0.0, 1.0], abs=1e-12)


def test_groups_named_by_whole_numbers_beyond_floats_are_kept_apart(tmp_path):
    """IDs from 2**53 on: as floats, 9007199254740993 was 9007199254740992, one group of
    both; the column is kept as read, and Python's integers as given."""
    ids = [9007199254740993, 9007199254740992]
    path = tmp_path / "ids.csv"
    path.write_text("g,x,y\n" + "".join(f"{g},{x},{(k + 1) * x + k}\n" for k, g in
                                         enumerate(ids) for x in range(3)))  # fmt: skip
    done = in_process("fit", "a*x + b", "--data", str(path), "--by", "g", "--a", "1", "--b",
                      "0", "--format", "csv")  # fmt: skip
    rows = [row.split(",") for row in done.stdout.splitlines()[1:]]
    assert [row[0] for row in rows] == [str(g) for g in ids]
    assert [float(row[1]) for row in rows] == pytest.approx([1, 2])
    from nanograd_cli import fit

    data = {"g": [ids[0]] * 3 + [ids[1]] * 3, "x": [0, 1, 2] * 2, "y": [0, 1, 2, 1, 3, 5]}
    assert list(fit("a*x + b", data, by="g", a=1, b=0)) == ids


def test_by_with_output_writes_every_groups_fitted_rows(runs, tmp_path):
    out = tmp_path / "fitted.csv"
    done = in_process("fit", MODEL, "--data", str(runs), "--by", "run", *STARTS, "-o", str(out),
                      "--format", "json")  # fmt: skip
    fits = {line["run"]: line["parameters"] for line in map(json.loads, done.stdout.splitlines())}
    lines = out.read_text().splitlines()
    assert lines[0] == "run,x,y,fitted,fitted_se,residual" and len(lines) == 37
    for line in lines[1:]:
        run, x, y, fitted, _, residual = line.split(",")
        p = fits[run]
        expected = p["a"] * math.exp(-p["b"] * float(x)) + p["c"]
        assert float(fitted) == pytest.approx(expected, rel=1e-13)
        assert float(residual) == pytest.approx(float(y) - expected, rel=1e-9, abs=1e-14)


def test_a_group_that_cannot_be_fitted_is_its_row_and_exit_1(runs, tmp_path):
    with runs.open("a") as extra:
        extra.write("lone,0,1\nlone,1,2\n")
    out = tmp_path / "fitted.csv"
    done = in_process("fit", MODEL, "--data", str(runs), "--by", "run", *STARTS, "-o", str(out),
                      "--format", "csv")  # fmt: skip
    rows = done.stdout.splitlines()
    assert done.returncode == 1 and len(rows) == 5
    assert rows[-1] == (
        "lone,NaN,NaN,NaN,NaN,NaN,NaN,NaN,false,2 rows for 3 parameters: a fit needs at least "
        "as many rows as free parameters"
    )
    assert all(row.endswith(",true,") for row in rows[1:4])
    assert done.stderr == (
        f"note: {out} not written: not every group's fit converged\n"
        "error: 1 of 4 groups did not converge (see their rows)\n"
    )
    assert not out.exists()


def test_shared_names_a_parameter_per_group_and_the_shared_one_once(runs):
    done = in_process("fit", MODEL, "--data", str(runs), "--by", "run", "--shared", "b",
                      *STARTS, "--format", "json")  # fmt: skip
    result = json.loads(done.stdout)
    assert (done.returncode, result["converged"], result["n"], result["dof"]) == (0, True, 36, 29)
    assert list(result["parameters"]) == [
        "a[10]", "a[2.5]", "a[late]", "b", "c[10]", "c[2.5]", "c[late]"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["--by", "Run"],
            "--by Run: the data has no column Run (its columns: run, x, y); did you mean run?",
        ),
        (
            ["--by", "x"],
            "--by x: the fit reads the column x; the column of the groups is not "
            "data of the model, the target or sigma",
        ),
        (
            ["--shared", "b"],
            "--shared shares a parameter between the groups of --by: give the column of the groups",
        ),
        (
            ["--by", "run", "--shared", "k"],
            "--shared k: k is not a parameter (parameters: a, b, c)",
        ),
        (["--by", "run", "--shared", "b", "--shared", "b"], "--shared b is given twice"),
    ],
)
def test_bad_groups_are_exit_2(runs, arguments, message):
    done = in_process("fit", MODEL, "--data", str(runs), *STARTS, *arguments)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")


# --derive over an array parameter: a quadratic's vertex, against numpy.polyfit's covariance

POLY_X = [i / 3 for i in range(10)]
POLY_Y = [1 + 0.5 * x - 0.3 * x * x + 0.02 * (-1) ** i for i, x in enumerate(POLY_X)]


@pytest.fixture
def quadratic(tmp_path):
    path = tmp_path / "poly.csv"
    path.write_text(
        "x,y\n" + "".join(f"{x!r},{y!r}\n" for x, y in zip(POLY_X, POLY_Y, strict=True))
    )
    return path


def test_derive_reads_an_array_parameter_whole_or_by_element(quadratic):
    (c2, c1, c0), cov = np.polyfit(POLY_X, POLY_Y, 2, cov=True)  # highest power first
    covariance = cov[::-1, ::-1]  # in the order c[0], c[1], c[2]
    done = in_process(
        "fit", "c[0] + c[1]*x + c[2]*x**2", "--data", str(quadratic), "--c", "[0, 0, 0]",
        "--derive", "top = -c[1]/(2*c[2])", "--derive", "s = sum(c)", "--ci", "0.95",
        "--format", "json",
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    result = json.loads(done.stdout)
    assert result["parameters"]["c"] == pytest.approx([c0, c1, c2], rel=1e-12)
    top, s = result["derived"]["top"], result["derived"]["s"]
    g = np.array([0.0, -1 / (2 * c2), c1 / (2 * c2**2)])  # the vertex's gradient, by hand
    assert top["value"] == pytest.approx(-c1 / (2 * c2), rel=1e-12)
    assert top["stderr"] == pytest.approx(math.sqrt(g @ covariance @ g), rel=1e-9)
    assert s["value"] == pytest.approx(c0 + c1 + c2, rel=1e-12)
    assert s["stderr"] == pytest.approx(math.sqrt(covariance.sum()), rel=1e-9)
    half = 2.3646242515927849 * top["stderr"]  # Student's t at 0.975 with 7 dof
    assert top["ci"] == pytest.approx([top["value"] - half, top["value"] + half], rel=1e-12)


@pytest.mark.parametrize(
    ("derive", "message"),
    [
        ("v = c", "--derive v is an array of shape (3,): a derived quantity is one number "
         "(derive each element on its own, or a sum)"),
        ("v = d[1]", "--derive v reads d, which is no parameter of the fit (c)"),
    ],
)  # fmt: skip
def test_derive_of_an_array_that_is_no_number_is_exit_2(quadratic, derive, message):
    done = in_process(
        "fit", "c[0] + c[1]*x + c[2]*x**2", "--data", str(quadratic), "--c", "[0, 0, 0]",
        "--derive", derive,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")


def _group(runs, name):
    """The x and y of one run of the `runs` file."""
    rows = [line.split(",") for line in runs.read_text().splitlines()[1:]]
    x, y = zip(*[(float(r[1]), float(r[2])) for r in rows if r[0] == name], strict=True)
    return np.array(x), np.array(y)


def _decay_jacobian(x, a, b, c):
    e = np.exp(-b * x)
    return np.column_stack([e, -a * x * e, np.ones_like(x)])


def test_by_with_a_robust_loss_fits_each_group_as_curve_fit_does(runs):
    from scipy.optimize import curve_fit

    done = in_process("fit", MODEL, "--data", str(runs), "--by", "run", *STARTS, "--loss",
                      "soft_l1", "--f-scale", "0.005", "--format", "json")  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    for line in map(json.loads, done.stdout.splitlines()):
        x, y = _group(runs, line["run"])
        expected, _ = curve_fit(lambda x, a, b, c: a * np.exp(-b * x) + c, x, y, p0=[1, 0.1, 0],
                                method="trf", jac=_decay_jacobian, loss="soft_l1", f_scale=0.005,
                                xtol=1e-15, ftol=1e-15, gtol=1e-15)  # fmt: skip
        assert (line["loss"], line["f_scale"], line["stderr_approximate"]) == (
            "soft_l1",
            0.005,
            True,
        )
        assert [line["parameters"][n] for n in "abc"] == pytest.approx(expected, rel=1e-7)
    table = in_process("fit", MODEL, "--data", str(runs), "--by", "run", *STARTS, "--loss",
                       "soft_l1", "--f-scale", "0.005")  # fmt: skip
    assert table.returncode == 0


def test_by_with_absolute_sigma_gives_each_group_unscaled_errors(runs):
    from scipy.optimize import curve_fit

    done = in_process("fit", MODEL, "--data", str(runs), "--by", "run", *STARTS,
                      "--absolute-sigma", "--format", "json")  # fmt: skip
    for line in map(json.loads, done.stdout.splitlines()):
        x, y = _group(runs, line["run"])
        _, covariance = curve_fit(lambda x, a, b, c: a * np.exp(-b * x) + c, x, y,
                                  p0=[1, 0.1, 0], absolute_sigma=True)  # fmt: skip
        assert [line["stderr"][n] for n in "abc"] == pytest.approx(
            np.sqrt(np.diag(covariance)), rel=1e-5
        )


def test_by_with_profile_gives_each_group_its_own_fits_profile_intervals(runs, tmp_path):
    done = in_process("fit", MODEL, "--data", str(runs), "--by", "run", *STARTS, "--ci", "0.95",
                      "--profile", "--format", "json")  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    for line in map(json.loads, done.stdout.splitlines()):
        x, y = _group(runs, line["run"])
        alone = tmp_path / "alone.csv"
        alone.write_text(
            "x,y\n" + "".join(f"{float(u)!r},{float(v)!r}\n" for u, v in zip(x, y, strict=True))
        )
        alone_fit = ["fit", MODEL, "--data", str(alone), *STARTS, "--ci", "0.95", "--profile"]
        single = json.loads(in_process(*alone_fit, "--format", "json").stdout)
        assert (line["ci_method"], single["ci_method"]) == ("profile", "profile")
        for name, interval in single["ci"].items():
            assert line["ci"][name] == pytest.approx(interval, rel=1e-9)
    csv = in_process("fit", MODEL, "--data", str(runs), "--by", "run", *STARTS, "--ci", "0.95",
                     "--profile", "--format", "csv").stdout.splitlines()  # fmt: skip
    assert csv[0] == (
        "run,a,stderr_a,lower_a,upper_a,b,stderr_b,lower_b,upper_b,c,stderr_c,lower_c,upper_c,"
        "rss,converged,message"
    )
    for row, line in zip(csv[1:], map(json.loads, done.stdout.splitlines()), strict=True):
        cells = row.split(",")
        assert [float(v) for v in cells[7:9]] == line["ci"]["b"]
    shared = in_process("fit", MODEL, "--data", str(runs), "--by", "run", "--shared", "b",
                        *STARTS, "--ci", "0.95", "--profile")  # fmt: skip
    assert (shared.returncode, shared.stdout, shared.stderr) == (
        2, "", "error: --profile refits one fit's parameters, not those of groups sharing "
        "--shared ones: leave out --profile for asymptotic intervals\n"
    )  # fmt: skip


def test_by_save_and_load_predicts_each_group_without_the_data(runs, tmp_path):
    """Saved by the installed command, loaded back: each row predicted with its group's fit,
    as the fit itself predicts them, and the saved fits are those printed."""
    saved, later = tmp_path / "runs.json", tmp_path / "later.csv"
    later.write_text("run,x\nlate,0.5\n10,2\n2.5,3.5\n")
    fit = ["fit", MODEL, "--data", str(runs), "--by", "run", *STARTS]
    done = nanograd(*fit, "--save", str(saved), "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    document = json.loads(saved.read_text())
    assert (document["format"], document["source"], document["by"]) == (
        "nanograd fit",
        MODEL,
        "run",
    )
    assert document["groups"] == printed
    direct = in_process(*fit, "--predict", str(later), "--band", "0.95")
    loaded = nanograd("fit", "--load", str(saved), "--predict", str(later), "--band", "0.95")
    assert (loaded.returncode, loaded.stderr) == (0, "")
    assert loaded.stdout == direct.stdout
    rows = [line.split(",") for line in loaded.stdout.splitlines()[1:]]
    for (run, x, fitted, *_), (group, at) in zip(rows, [("late", 0.5), ("10", 2), ("2.5", 3.5)],
                                                 strict=True):  # fmt: skip
        p = next(line["parameters"] for line in printed if line["run"] == group)
        assert (run, float(x)) == (group, at)
        assert float(fitted) == pytest.approx(p["a"] * math.exp(-p["b"] * at) + p["c"], rel=1e-14)
    shown = in_process("fit", "--load", str(saved), "--format", "csv")
    assert shown.stdout == in_process(*fit, "--format", "csv").stdout
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("run,x\nearly,1\n")
    refused = in_process("fit", "--load", str(saved), "--predict", str(unknown))
    assert (refused.returncode, refused.stderr) == (
        2, "error: row 1: run = early, a group that was not fitted (the groups fitted: 10, 2.5, "
        "late)\n",
    )  # fmt: skip


def test_a_saved_fit_of_groups_sharing_a_parameter_predicts_with_the_joint_fit(runs, tmp_path):
    saved, later = tmp_path / "shared.json", tmp_path / "later.csv"
    later.write_text("run,x\nlate,0.5\n10,2\n")
    fit = ["fit", MODEL, "--data", str(runs), "--by", "run", "--shared", "b", *STARTS]
    assert in_process(*fit, "--save", str(saved)).returncode == 0
    assert json.loads(saved.read_text())["by"] == "run"
    direct = in_process(*fit, "--predict", str(later), "--band", "0.9")
    loaded = in_process("fit", "--load", str(saved), "--predict", str(later), "--band", "0.9")
    assert (loaded.returncode, loaded.stdout) == (0, direct.stdout)


@pytest.mark.parametrize(
    ("groups", "why"),
    [
        ('"by": "run", "groups": []', '"groups" is not a list of the groups\' fits under "by"'),
        ('"groups": [{"run": "A"}]', '"groups" is not a list of the groups\' fits under "by"'),
        ('"by": "run", "groups": [{"x": 1}]', 'a group without its value of "run"'),
        ('"by": 3, "groups": [{"x": 1}]', '"by" is not the name of a column'),
        ('"by": "run", "groups": [{"run": "A"}]', 'no "parameters"'),
    ],
)
def test_a_damaged_file_of_groups_is_exit_2(tmp_path, groups, why):
    path = tmp_path / "groups.json"
    path.write_text(
        '{"format": "nanograd fit", "version": 1, "source": "a*x", "target": null, '
        f'"sigma": null, {groups}}}'
    )
    done = in_process("fit", "--load", str(path))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {path}: not a fit saved by nanograd fit --save ({why})\n"


@pytest.mark.slow
def test_by_plots_every_groups_data_curve_and_residuals_in_one_figure(runs, tmp_path):
    import xml.etree.ElementTree as ET

    picture = tmp_path / "runs.svg"
    fit = ["fit", MODEL, "--data", str(runs), "--by", "run", *STARTS]
    done = in_process(*fit, "--plot", str(picture), "--band", "0.95")
    assert (done.returncode, done.stderr) == (0, "")
    tree = ET.parse(picture)
    ids = {e.get("id") for e in tree.iter() if e.get("id")}
    for group in range(3):
        assert {f"data_{group}", f"fit_{group}", f"residuals_{group}", f"band_{group}"} <= ids
    words = " ".join(e.text or "" for e in tree.iter())
    assert all(f"run = {name}" in words for name in RUNS)
    assert "a*exp(-b*x) + c, a fit per run" in words
    text = in_process(*fit, "--plot", "-", "--format", "csv")
    assert text.returncode == 0 and text.stdout.startswith("run,a,stderr_a")
    legend = [line for line in text.stderr.splitlines() if "run = 10 fit" in line]
    assert legend and "run = late" in text.stderr
    shared = in_process(*fit, "--shared", "b", "--plot", str(picture))
    assert shared.returncode == 0
    words = " ".join(e.text or "" for e in ET.parse(picture).iter())
    assert "shared by every run" in words and "at b = " in words


def test_a_text_plot_has_the_residuals_below_on_the_same_x_axis(data, runs, tmp_path):
    out = tmp_path / "out.csv"
    done = in_process("fit", MODEL, "--data", str(data), *STARTS, "--plot", "-", "-o", str(out))
    assert done.returncode == 0
    residuals = [float(row.split(",")[-1]) for row in out.read_text().splitlines()[1:]]
    lines = done.stderr.splitlines()
    tops = [k for k, line in enumerate(lines) if line.startswith("┌")]
    assert len(tops) == 2  # the fit, then the residuals
    title = lines[tops[1] - 1].strip()
    assert title == f"residuals (the largest {max(map(abs, residuals)):.3g})"
    assert lines[tops[0]] == lines[tops[1]]  # frames as wide: one x axis
    axis = [line for line in lines if line.lstrip().startswith("0 ")]
    assert len(axis) == 2 and axis[0] == axis[1]  # labelled alike
    bottom = lines[tops[1]].replace("┌", "└").replace("┐", "┘")
    panel = lines[tops[1] + 1 : lines.index(bottom, tops[1])]
    inside = {c for line in panel for c in line[1 : line.rindex("│")]}  # (labels left out)
    assert inside - set("│─ ") == {"o"}  # the data's symbol
    by = in_process("fit", MODEL, "--data", str(runs), "--by", "run", *STARTS, "--plot", "-")
    lines = by.stderr.splitlines()
    below = lines[lines.index(next(x for x in lines if x.strip().startswith("residuals"))) :]
    drawn = {c for line in below[2:7] for c in line[1 : line.rindex("│")]} - set("│─ ")
    assert drawn <= {"*", "o", "+"} and len(drawn) >= 2  # each group's data symbol


def test_a_figure_of_many_groups_names_none_in_its_legend_and_says_how_many(tmp_path):
    """30 groups: a legend of 30 entries hid the plot (and 500 made matplotlib warn on
    standard error); the title says how many groups, and no group is in the legend."""
    import xml.etree.ElementTree as ET

    x = [0.0, 1, 2, 3]
    lines = [f"g{k},{t},{(k + 1) * math.exp(-t)}" for k in range(30) for t in x]
    (tmp_path / "many.csv").write_text("g,x,y\n" + "\n".join(lines) + "\n")
    picture = tmp_path / "many.svg"
    fit = ["fit", "a*exp(-b*x)", "--data", "many.csv", "--by", "g", "--a", "1", "--b", "1"]
    done = in_process(*fit, "--plot", str(picture), "--format", "csv", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    words = " ".join(e.text or "" for e in ET.parse(picture).iter())
    assert "(30 groups, too many to name: colours repeat)" in words
    assert "g = g0" not in words and "g = g29" not in words
    text = in_process(*fit, "--plot", "-", "--format", "csv", cwd=tmp_path)  # in text too
    assert text.returncode == 0 and "(30 groups, too many to name)" in text.stderr
    # the two panels, about 35 lines: no legend of a line or more per group
    assert "g = g0" not in text.stderr and len(text.stderr.splitlines()) < 40


def test_a_plot_without_the_prediction_band_that_sigma_leaves_out_says_so(tmp_path):
    """--sigma dy is known at the rows only: the prediction band along the curve cannot be
    drawn, and a note says so (as --predict does); a constant sigma draws it. The data are
    drawn with their error bars, ± sigma."""
    (tmp_path / "d.csv").write_text(
        "x,y,dy\n0,3.02,0.1\n0.5,1.83,0.1\n1,1.17,0.05\n1.5,0.86,0.05\n2,0.69,0.02\n"
    )
    fit = ["fit", "a*exp(-b*x) + c", "--data", "d.csv", "--a", "1", "--b", "1", "--c", "0",
           "--band", "0.95", "--plot", "d.svg"]  # fmt: skip
    done = in_process(*fit, "--sigma", "dy", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        0,
        "note: no prediction band on --plot: sigma reads dy, which is known at the rows only, "
        "not along the curve\n",
    )
    drawn = (tmp_path / "d.svg").read_text()
    assert 'id="pred_lower"' not in drawn
    assert drawn.count('id="data"') == 1 and 'id="sigma"' in drawn  # the data ± sigma
    done = in_process(*fit, "--sigma", "0.05", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert 'id="pred_lower"' in (tmp_path / "d.svg").read_text()


def test_a_text_plot_wraps_a_long_title_instead_of_cutting_it(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    (tmp_path / "d.csv").write_text("x,y\n" + "".join(f"{t},{2 * t + 1 + 0.1 * t**3}\n"
                                                        for t in range(8)))  # fmt: skip
    done = in_process("fit", "alpha*x + beta + kappa*x**2 + delta*x**3", "--data", "d.csv",
                      "--alpha", "1", "--beta", "0", "--kappa", "0", "--delta", "0",
                      "--plot", "-", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0
    plot = done.stderr[: done.stderr.index("┌")]
    assert "delta = 0.1" in plot.replace("\n", " ")  # the last value, on a second line
    assert all(len(line) <= 80 for line in done.stderr.splitlines())


def test_the_progress_display_is_in_colour_unless_color_never(data):
    from .helpers import on_terminal

    for command in (["fit", "a*x + b", "--data", str(data), "--a", "1", "--b", "0"],
                    ["minimize", "(x - 3)**2", "--x", "0", "--steps", "20"]):  # fmt: skip
        coloured = on_terminal(*command)
        plain = on_terminal(*command, "--color", "never")
        shown = "evaluation 0" if command[0] == "fit" else "step 0/20"
        assert shown in coloured and shown in plain
        assert "\x1b[33m0:00:00" in coloured  # the time taken, in yellow
        assert not re.search(r"\x1b\[[0-9;]*m", plain)  # no colour, no bold


def test_a_text_plot_on_a_terminal_is_in_colour_or_plain_never_escaped(tmp_path):
    """--plot - on a terminal: uniplot's colours reach it as colours (they were shown as the
    text \\x1b[34m...), and --color never draws plain symbols; a group's name from the data
    has its control characters escaped."""
    from .helpers import on_terminal, visible

    data = tmp_path / "d.csv"
    data.write_text("g,x,y\n" + "".join(f"\x1b[31mRED,{t},{3 * math.exp(-t)}\n"
                                          for t in range(6)))  # fmt: skip
    fit = ["fit", "a*exp(-b*x)", "--data", str(data), "--a", "1", "--b", "1", "--plot", "-"]

    def plot(screen: str) -> str:  # (the progress display and the table's row left out)
        return "\n".join(line for line in screen.split("\n") if "│" in line and "RED" not in line)

    for options in ([], ["--by", "g"]):
        coloured = plot(on_terminal(*fit, *options))
        assert "\\x1b[3" not in coloured  # no colour as text
        assert "\x1b[3" in coloured  # colour codes, for the terminal
        plain = plot(on_terminal(*fit, *options, "--color", "never"))
        assert "\x1b[3" not in plain
        assert any("*" in line for line in visible(plain))
    assert "g = \\x1b[31mRED" in on_terminal(*fit, "--by", "g", "--color", "never")


def test_each_groups_curve_is_its_fit_and_its_residuals_its_rows(runs):
    from nanograd_cli import _api as api
    from nanograd_cli._language import parse

    columns = {"x": [], "y": []}
    groups = []
    for line in runs.read_text().splitlines()[1:]:
        run, x, y = line.split(",")
        groups.append(run)
        columns["x"].append(float(x))
        columns["y"].append(float(y))
    program = parse(MODEL)
    for shared in ((), ("b",)):
        result = api.fit(program, columns, {"a": 1, "b": 0.1, "c": 0}, by=groups, shared=shared)
        curves, _ = api.fit_group_curves(program, columns, result, groups, "run")
        assert list(curves) == [f"run = {name}" for name in RUNS]
        for name, curve in zip(RUNS, curves.values(), strict=True):
            p = {
                k: result.parameters.get(f"{k}[{name}]", result.parameters.get(k))
                for k in "abc"
            } if shared else result[name].parameters  # fmt: skip
            x, y = _group(runs, name)
            assert curve.x.tolist() == x.tolist() and curve.observed == pytest.approx(y, rel=1e-14)
            model = p["a"] * np.exp(-p["b"] * x) + p["c"]
            assert curve.residuals == pytest.approx(y - model, abs=1e-13)
            assert (curve.curve_x[0], curve.curve_x[-1]) == (x.min(), x.max())
            expected = p["a"] * np.exp(-p["b"] * curve.curve_x) + p["c"]
            assert curve.curve == pytest.approx(expected, rel=1e-13)


# two runs of a*sin(w*t) with a small wobble: from w = 0.5, each one's fit stops at a local
# minimum (a long period through the data) unless restarted
WAVES = {"p": (2.0, 1.3), "q": (1.5, 2.1)}


@pytest.fixture
def waves(tmp_path):
    path = tmp_path / "waves.csv"
    t = np.linspace(0, 10, 21)
    lines = ["g,t,y"]
    for g, (a, w) in WAVES.items():
        y = a * np.sin(w * t) + 0.05 * np.sin(7 * t + 1)
        lines += [f"{g},{ti:g},{yi:.4f}" for ti, yi in zip(t, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _rows_of(path, group: str) -> tuple[np.ndarray, np.ndarray]:
    rows = [line.split(",") for line in path.read_text().splitlines()[1:]]
    t, y = zip(*[(float(r[1]), float(r[2])) for r in rows if r[0] == group], strict=True)
    return np.array(t), np.array(y)


def test_by_with_restarts_restarts_each_group_as_its_fit_alone(waves, tmp_path):
    from scipy.optimize import curve_fit

    fit = ["fit", "a*sin(w*t)", "--data", str(waves), "--by", "g", "--a", "1", "--w", "0.5"]
    stuck = in_process(*fit, "--format", "json")
    assert all(json.loads(line)["rss"] > 20 for line in stuck.stdout.splitlines())
    done = in_process(*fit, "--restarts", "8", "--seed", "4", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    for line in lines:
        t, y = _rows_of(waves, line["g"])
        # curve_fit from near the true values: the least sum of squares
        expected, _ = curve_fit(lambda t, a, w: a * np.sin(w * t), t, y, p0=WAVES[line["g"]],
                                xtol=1e-15, ftol=1e-15, gtol=1e-15)  # fmt: skip
        assert [line["parameters"][n] for n in "aw"] == pytest.approx(expected, rel=1e-7)
        assert line["restarts"] == {"starts": 9, "reached": 1}
        # the group's fit is that of its rows alone, with the same restarts and seed
        alone = tmp_path / f"{line['g']}.csv"
        alone.write_text("t,y\n" + "".join(f"{a},{b}\n" for a, b in zip(t, y, strict=True)))
        one = in_process("fit", "a*sin(w*t)", "--data", str(alone), "--a", "1", "--w", "0.5",
                         "--restarts", "8", "--seed", "4", "--format", "json")  # fmt: skip
        assert json.loads(one.stdout)["parameters"] == line["parameters"]
    again = in_process(*fit, "--restarts", "8", "--seed", "4", "--format", "json")
    assert again.stdout == done.stdout  # the same seed, the same starts
    table = in_process(*fit, "--restarts", "8", "--seed", "4", "--digits", "6")
    assert table.stdout == (
        "g  a        stderr     w        stderr       rss        starts  converged\n"
        "p  2.00097  0.0125491  1.30021  0.000980938  0.029435   1 of 9  yes\n"
        "q  1.49966  0.0121399  2.0995   0.00143251   0.0293286  1 of 9  yes\n"
    )
    csv = in_process(*fit, "--restarts", "8", "--seed", "4", "--format", "csv")
    rows = csv.stdout.splitlines()
    assert rows[0] == "g,a,stderr_a,w,stderr_w,rss,starts,reached,converged,message"
    assert [row.split(",")[-4:] for row in rows[1:]] == [["9", "1", "true", ""]] * 2


def test_by_with_shared_restarts_the_one_joint_fit(waves):
    fit = ["fit", "a*sin(w*t)", "--data", str(waves), "--by", "g", "--shared", "w", "--a", "1",
           "--w", "0.5", "--format", "json"]  # fmt: skip
    plain = json.loads(in_process(*fit).stdout)
    done = in_process(*fit, "--restarts", "3", "--seed", "1")
    restarted = json.loads(done.stdout)
    assert done.returncode == 0 and restarted["restarts"] == {"starts": 4, "reached": 2}
    assert restarted["rss"] <= plain["rss"]
    assert set(restarted["parameters"]) == {"a[p]", "a[q]", "w"}


def test_the_rows_of_many_groups_cost_in_proportion_to_the_groups(runs):
    """A thousand groups are a thousand rows of output, whatever the format: twice the
    groups, about twice the CPU (each row once asked whether any group was restarted cost
    the square of the groups)."""
    import gc
    import time

    import nanograd_cli as ng
    from nanograd_cli.render._text import csv_rows, table_rows
    from nanograd_cli.results import Fits

    fit = ng.fit(MODEL, str(runs), by="run", a=1, b=0.1, c=0)["10"]

    def cpu(fits: Fits) -> float:
        """The CPU time of one run, the garbage collector held off (a collection of the
        older objects, whose cost is not the rows', fell in some runs)."""
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            csv_rows(fits)
            table_rows(fits)
            return time.process_time() - start
        finally:
            gc.enable()

    sizes = {n: Fits({f"g{i}": fit for i in range(n)}, by="g") for n in (2000, 4000)}
    # the least of seven runs of each, taken in turn, so that a busy spell falls on both
    times: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(7):
        for n, fits in sizes.items():
            times[n].append(cpu(fits))
    assert min(times[4000]) < 3 * min(times[2000])
