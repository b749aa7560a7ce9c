"""The command line: exact output, exit codes and error messages, through click's runner and
through real processes for what depends on a terminal or a pipe."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nanograd_cli import __version__
from nanograd_cli._cli import cli

from .helpers import (
    NANOGRAD,
    WORKED,
    default_signals,
    in_process,
    nanograd,
    run,
    wait_until_reading,
)


def test_json_exactly_as_specified():
    code, out, err = run("grad", "x*y+tanh(x)", "--x", "2", "--y", "3", "--format", "json")
    assert (code, err) == (0, "")
    assert out == (
        '{"value": 6.9640275800758165, "inputs": {"x": 2.0, "y": 3.0}, '
        '"gradients": {"x": 3.0706508248531645, "y": 2.0}}\n'
    )


def test_csv():
    code, out, _ = run("grad", "x*y+tanh(x)", "--x=2", "--y", "3", "--format", "csv")
    assert code == 0
    assert out == "value,d_x,d_y\n6.9640275800758165,3.0706508248531645,2.0\n"


def test_plain_table_when_not_a_terminal():
    code, out, _ = run("grad", "x*y+tanh(x)", "--x", "2", "--y", "3")
    assert code == 0
    assert out == (
        "        value               gradient\n"
        "result  6.9640275800758165\n"
        "x       2.0                 3.0706508248531645\n"
        "y       3.0                 2.0\n"
    )


def test_worked_example_from_a_file_and_stdin():
    code, out, _ = run("grad", WORKED, "--x", "-4", "--y", "2", "--format", "json")
    result = json.loads(out)
    assert code == 0
    assert round(result["value"], 4) == 4.6945
    assert round(result["gradients"]["x"], 4) == 24.7180
    assert round(result["gradients"]["y"], 4) == 106.6648
    code, out2, _ = run(
        "grad", "-", "--x", "-4", "--y", "2", "--format", "json", stdin=Path(WORKED).read_text()
    )
    assert (code, out2) == (0, out)


@pytest.mark.parametrize(
    "args",
    [
        ["--x", "-1.5"],
        ["--x=-1.5"],
        ["--var", "x=-1.5"],
        ["--x", "-15e-1"],
    ],
)
def test_input_value_forms(args):
    code, out, _ = run("grad", "x*x", *args, "--format", "csv")
    assert (code, out) == (0, "value,d_x\n2.25,-3.0\n")


def test_source_starting_with_minus_goes_after_double_dash():
    code, out, _ = run("grad", "--x", "3", "--format", "csv", "--", "-x**2")
    assert (code, out) == (0, "value,d_x\n-9.0,-6.0\n")


def test_inputs_named_like_options():
    code, out, _ = run(
        "grad", "format*p + form", "--var", "format=2", "--p", "3", "--form", "1", "--format", "csv"
    )
    assert (code, out) == (0, "value,d_format,d_p,d_form\n7.0,3.0,2.0,1.0\n")


def test_wrt_limits_gradients():
    code, out, _ = run("grad", "x*y", "--x", "2", "--y", "3", "--wrt", "y", "--format", "json")
    assert code == 0
    assert json.loads(out) == {
        "value": 6.0,
        "inputs": {"x": 2.0, "y": 3.0},
        "gradients": {"y": 2.0},
    }
    _, out, _ = run("grad", "x*y", "--x", "2", "--y", "3", "--wrt", "y", "--format", "csv")
    assert out == "value,d_y\n6.0,2.0\n"


def test_non_finite_results_are_strings_and_warned():
    code, out, err = run("grad", "a = 1/x\nlog(a - 2)", "--x", "1", "--format", "json")
    assert code == 0
    # d/dx log(1/x - 2) = (1/(1/x - 2)) * (-1/x**2) = 1 at x = 1, as PyTorch computes it
    assert out == '{"value": "nan", "inputs": {"x": 1.0}, "gradients": {"x": 1.0}}\n'
    assert err == "warning: line 2, column 1: log gave nan\n  2 | log(a - 2)\n      ^\n"
    code, out, err = run("grad", "1/x", "--x", "0", "--format", "csv")
    assert out == "value,d_x\ninf,-inf\n"
    code, out, err = run("grad", "log(x)", "--x", "-1", "--strict", "--format", "json")
    assert (code, out) == (1, "")
    assert err.startswith("error: line 1, column 1: log gave nan\n")


@pytest.mark.parametrize(
    ("args", "code", "first_line"),
    [
        (
            ["2x", "--x", "1"],
            2,
            "error: line 1, column 2: missing operator between '2' and 'x': write 2*x",
        ),
        (
            ["x*y*z", "--y", "1"],
            2,
            "error: missing values for inputs x, z: pass --x VALUE --z VALUE",
        ),
        (
            ["x", "--x", "1", "--z", "2"],
            2,
            "error: z is not an input of this source (its inputs: x)",
        ),
        (["x", "--x", "abc"], 2, "error: --x expects a number, got 'abc'"),
        (["x", "--x"], 2, "error: --x needs a value: --x VALUE"),
        (["x", "--x-y", "2"], 2, "error: No such option '--x-y'."),
        (["x", "--x", "1", "--x", "2"], 2, "error: a value for x is given twice"),
        (["x", "--x", "1", "--wrt", "q"], 2, "error: --wrt q: q is not an input (inputs: x)"),
        (
            ["x", "--x", "1", "--format", "xml"],
            2,
            "error: Invalid value for '--format': 'xml' is not one of 'table', 'json', 'csv'.",
        ),
        (["x", "--x", "1", "--var", "oops"], 2, "error: --var expects NAME=VALUE, got 'oops'"),
        (
            ["tahn(x)", "--x", "1"],
            2,
            "error: line 1, column 1: unknown function tahn: did you mean tan or tanh or atan?",
        ),
        (["", "--x", "1"], 2, "error: the source has no statements: there is nothing to evaluate"),
        (["/"], 1, "error: cannot read /: Is a directory"),
    ],
)
def test_errors(args, code, first_line):
    got, out, err = run("grad", *args)
    assert (got, out) == (code, "")
    assert err.splitlines()[0] == first_line
    assert "Traceback" not in err


def test_invalid_utf8_is_bad_input(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"x + \xff")
    assert run("grad", str(bad), "--x", "1")[0::2] == (
        2,
        f"error: {bad} is not valid UTF-8 (byte 0xff at offset 4)\n",
    )
    assert run("grad", "-", "--x", "1", stdin=b"\xfe")[0] == 2


def test_each_line():
    lines = "x*x\n\n# comment\nsin(x)\n2y\nx+y\n"
    code, out, err = run("grad", "-", "--each-line", "--x", "1", "--format", "json", stdin=lines)
    assert code == 2
    assert out == (
        '{"line": 1, "value": 1.0, "inputs": {"x": 1.0}, "gradients": {"x": 2.0}}\n'
        '{"line": 4, "value": 0.8414709848078965, "inputs": {"x": 1.0}, '
        '"gradients": {"x": 0.5403023058681398}}\n'
    )
    assert err == (
        "error: line 5, column 2: missing operator between '2' and 'y': write 2*y\n"
        "  5 | 2y\n"
        "       ^\n"
        "error: line 6: missing value for input y: pass --y VALUE\n"
    )
    code, out, _ = run(
        "grad", "-", "--each-line", "--x", "1", "--y", "2", "--format", "csv", stdin="x*y\n\ny\n"
    )
    assert (code, out) == (0, "line,value,d_x,d_y\n1,2.0,2.0,1.0\n3,2.0,0.0,1.0\n")
    code, out, _ = run("grad", "-", "--each-line", "--x", "1", stdin="x*x\nsin(x)\n")
    assert out == (
        "line  expression  value               d_x\n"
        "1     x*x         1.0                 2.0\n"
        "2     sin(x)      0.8414709848078965  0.5403023058681398\n"
    )


@pytest.mark.parametrize("lines", ["", "\n# a comment\n\n"])
def test_each_line_csv_has_its_header_without_a_line_to_compute(lines):
    """The header is known from the command line: a reader such as pandas gets a table with
    no rows, not an empty file it cannot read."""
    done = nanograd(
        "grad", "-", "--each-line", "--x", "1", "--y", "2", "--format", "csv", stdin=lines
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "line,value,d_x,d_y\n", "")


def test_each_line_wrt_is_the_same_in_every_format():
    """--wrt chooses the gradients of every line, 0 where a line does not read the input."""
    args = ("grad", "-", "--each-line", "--x", "1", "--y", "2", "--wrt", "y")
    code, out, _ = run(*args, "--format", "csv", stdin="x*y\nx\n")
    assert (code, out) == (0, "line,value,d_y\n1,2.0,1.0\n2,1.0,0.0\n")
    code, out, _ = run(*args, "--format", "json", stdin="x*y\nx\n")
    assert [json.loads(line)["gradients"] for line in out.splitlines()] == [{"y": 1.0}, {"y": 0.0}]
    code, _, err = run("grad", "-", "--each-line", "--x", "1", "--wrt", "q", stdin="x\n")
    assert (code, err.splitlines()[0]) == (2, "error: --wrt q: q is not an input (inputs: x)")


def test_each_line_warnings_name_the_line():
    code, out, err = run(
        "grad", "-", "--each-line", "--x", "0", "--format", "csv", stdin="x\nlog(x)\n"
    )
    assert code == 0 and out == "line,value,d_x\n1,0.0,1.0\n2,-inf,inf\n"
    assert err == "warning: line 2, column 1: log gave -inf\n  2 | log(x)\n      ^\n"


def test_mode_forward_with_each_line_and_points():
    code, out, _ = run(
        "grad",
        "-",
        "--each-line",
        "--x",
        "2",
        "--mode",
        "forward",
        "--format",
        "csv",
        stdin="x*x\n",
    )
    assert (code, out) == (0, "line,value,d_x\n1,4.0,4.0\n")
    code, _, err = run("grad", "x", "--points", "-", "--mode", "forward", stdin="x\n1\n")
    assert (code, err) == (
        2,
        "error: --points runs the vectorized reverse mode: drop --mode forward\n",
    )


def test_version_and_help():
    assert run("--version")[:2] == (0, f"nanograd {__version__}\n")
    for args in (["-h"], ["--help"], ["grad", "-h"]):
        code, out, _ = run(*args)
        assert code == 0
        assert "Usage: nanograd" in out
        assert "Examples:" in out
    # no command at all is a usage error, as in git: the help, on standard error, exit 2
    code, out, err = run()
    assert (code, out) == (2, "") and err.startswith("Usage: nanograd [OPTIONS] COMMAND")


def test_every_command_and_option_is_documented():
    reference = (Path(__file__).resolve().parents[1] / "docs" / "commands.md").read_text()
    for name in cli.list_commands(None):
        command = cli.get_command(None, name)
        assert f"## nanograd {name}" in reference
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("-"):
                    assert f"`{opt}" in reference, f"{name} {opt} is not in docs/commands.md"


def _process(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, **kwargs.pop("env", {})}
    return subprocess.run(
        [sys.executable, "-m", "nanograd_cli", *args], capture_output=True, env=env, **kwargs
    )


@pytest.mark.slow
def test_pipe_gives_plain_text_and_terminal_gives_a_rich_table():
    piped = _process("grad", "x*y", "--x", "2", "--y", "3")
    assert piped.returncode == 0
    assert b"\x1b[" not in piped.stdout and "─".encode() not in piped.stdout
    script = (
        "import pty, os, sys\n"
        "pid, fd = pty.fork()\n"
        "if pid == 0:\n"
        "    os.execv(sys.executable, [sys.executable, '-m', 'nanograd_cli', 'grad', 'x*y', "
        "'--x', '2', '--y', '3'])\n"
        "out = b''\n"
        "while True:\n"
        "    try:\n"
        "        chunk = os.read(fd, 1024)\n"
        "    except OSError:\n"
        "        break\n"
        "    if not chunk:\n"
        "        break\n"
        "    out += chunk\n"
        "os.waitpid(pid, 0)\n"
        "sys.stdout.buffer.write(out)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    on_terminal = subprocess.run([sys.executable, "-c", script], capture_output=True, env=env)
    text = on_terminal.stdout.decode()
    assert "┃" in text or "│" in text  # box drawing: a Rich table
    assert "6.0" in text and "result" in text
    no_color = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, env={**env, "NO_COLOR": "1"}
    )
    assert "│" not in no_color.stdout.decode() and "result" in no_color.stdout.decode()


def test_closed_pipe_ends_quietly():
    lines = "x\n" * 20000
    shell = subprocess.run(
        f"{sys.executable} -m nanograd_cli grad - --each-line --x 1 --format json | head -1",
        shell=True,
        input=lines.encode(),
        capture_output=True,
    )
    assert (
        shell.stdout
        == b'{"line": 1, "value": 1.0, "inputs": {"x": 1.0}, "gradients": {"x": 1.0}}\n'
    )
    assert shell.stderr == b""


def test_the_program_ends_with_all_its_output_and_its_exit_code(tmp_path):
    """The installed program ends past the interpreter's teardown (where PyArrow's threads
    can abort a process): what it wrote to a file, a pipe and standard error is whole, and
    its exit code is the command's."""
    lines = "x*y\n" * 20000
    with open(tmp_path / "out.csv", "w") as out:
        done = subprocess.run(
            [NANOGRAD, "grad", "-", "--each-line", "--x", "1", "--y", "nan", "--format", "csv"],
            input=lines,
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
        )
    written = (tmp_path / "out.csv").read_text().splitlines()
    assert done.returncode == 0 and len(written) == 20001
    assert written[-1] == "20000,NaN,NaN,1.0"
    assert done.stderr.count("warning: ") == 20000
    piped = nanograd("grad", "-", "--each-line", "--x", "1", "--y", "2", stdin=lines)
    assert piped.returncode == 0 and piped.stdout.count("\n") == 20001
    assert piped.stdout.endswith("20000  x*y         2.0    2.0  1.0\n")
    failed = nanograd("grad", "x", "--q", "1")
    assert (failed.returncode, failed.stderr) == (
        2,
        "error: q is not an input of this source (its inputs: x)\n",
    )


def test_a_format_in_capitals_is_taken_and_an_extension_alone_is_refused(tmp_path):
    """--format SVG was refused where -o UP.SVG and --rankdir tb were taken; -o .svg said it
    could not tell the format of .svg and to use .svg."""
    lower = in_process("grad", "x*x", "--x", "2", "--format", "json").stdout
    assert in_process("grad", "x*x", "--x", "2", "--format", "JSON").stdout == lower
    drawn = in_process("draw", "x*x", "--x", "2", "--format", "SVG", "-o", "-")
    assert drawn.returncode == 0 and drawn.stdout.startswith("<?xml")
    points = tmp_path / "points.csv"
    points.write_text("x\n1\n2\n")
    for command, name, args in [
        ("draw", ".svg", ["--x", "2"]),
        ("plot", ".png", ["--x", "-1:1"]),
        ("grad", ".csv", ["--points", str(points)]),
    ]:
        target = tmp_path / name
        done = in_process(command, "x*x", *args, "-o", str(target))
        assert done.returncode == 2, command
        assert done.stderr == (
            f"error: {target} is an extension alone: give the file a name before it (out{name})\n"
        )
        assert not target.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["grad", "x*x", "--x", "2"],
        ["hessian", "x*x", "--x", "2"],
        ["check", "x*x", "--x", "2"],
        ["minimize", "(x-1)**2", "--x", "0"],
        ["explain", "x*x", "--x", "2"],
        ["taylor", "exp(x)", "--x", "0", "--order", "2"],
        ["fit", "a*x", "--data", "d.csv", "--a", "1"],
    ],
)
def test_digits_full_is_taken_in_any_case_as_a_format_is(tmp_path, command):
    """--digits FULL was refused where --format JSON was taken."""
    (tmp_path / "d.csv").write_text("x,y\n1,2.1\n2,3.9\n3,6.2\n")
    full = in_process(*command, "--digits", "full", cwd=tmp_path)
    assert full.returncode == 0, full.stderr
    for spelled in ("FULL", "Full"):
        assert in_process(*command, "--digits", spelled, cwd=tmp_path).stdout == full.stdout


# Every option that names a file to write, with what else its command needs: an input's
# value, or the rows a fit reads (d.csv, with columns x and y, in the working directory).
OUTPUT_OPTIONS = [
    (["minimize", "(a-1)**2", "--a", "0"], "--log", ".csv"),
    (["minimize", "(a-1)**2", "--a", "0"], "--save", ".json"),
    (["minimize", "(a-1)**2", "--a", "0"], "--plot", ".svg"),
    (["fit", "a*x+b", "--data", "d.csv", "--a", "1", "--b", "0"], "-o", ".csv"),
    (["fit", "a*x+b", "--data", "d.csv", "--a", "1", "--b", "0"], "--save", ".json"),
    (["fit", "a*x+b", "--data", "d.csv", "--a", "1", "--b", "0"], "--plot", ".png"),
    (["grad", "x*x", "--points", "d.csv"], "-o", ".jsonl"),
    (["draw", "x*x", "--x", "2"], "-o", ".dot"),
    (["plot", "x*x", "--x", "-1:1"], "-o", ".pdf"),
]


@pytest.mark.parametrize(("command", "option", "name"), OUTPUT_OPTIONS)
def test_every_output_option_refuses_an_extension_alone_and_a_directory(
    tmp_path, command, option, name
):
    """--log .csv and --save .json wrote hidden files where --plot .svg was refused; -o sub/
    wrote a file named sub. Each is bad input, and nothing is written."""
    (tmp_path / "d.csv").write_text("x,y\n1,2.1\n2,3.9\n3,6.2\n")
    (tmp_path / "dir").mkdir()
    for target, message in [
        (name, f"{name} is an extension alone: give the file a name before it (out{name})"),
        ("sub/", "sub/ ends in /, as a directory's name: give the name of a file to write"),
        ("dir", "dir is a directory: give the name of a file to write"),
    ]:
        done = in_process(*command, option, target, cwd=tmp_path)
        assert (done.returncode, done.stderr) == (2, f"error: {message}\n"), target
        assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "dir"]
        assert not any((tmp_path / "dir").iterdir())


def test_python_and_the_repl_refuse_a_directory_and_an_extension_alone(tmp_path, monkeypatch):
    """draw(output="sub/", format="svg") wrote a file named sub, as did Fit.save(".json") a
    hidden one."""
    import nanograd_cli as ng
    from nanograd_cli.errors import InputError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"^sub/ ends in /, as a directory's name"):
        ng.draw("x*x", x=2, format="svg", output="sub/")
    fitted = ng.fit("a*x", {"x": [1.0, 2.0], "y": [2.0, 4.1]}, a=1)
    with pytest.raises(InputError, match=r"^\.json is an extension alone"):
        fitted.save(".json")
    lines = "x = 2\n:draw x*x sub/\n:plot x*x x -1:1 .png\n"
    done = in_process("repl", stdin=lines, cwd=tmp_path)
    assert done.stderr == (
        "error: line 2: sub/ ends in /, as a directory's name: give the name of a file to write\n"
        "error: line 3: .png is an extension alone: give the file a name before it (out.png)\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.signals
def test_interrupt_exits_130_quietly():
    proc = subprocess.Popen(
        [sys.executable, "-m", "nanograd_cli", "grad", "-", "--x", "1"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        preexec_fn=default_signals,
    )
    import signal

    wait_until_reading(proc)  # it waits for standard input
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 130
    assert err == b""


@pytest.mark.signals
def test_interrupt_while_the_command_line_loads_exits_130_quietly():
    """Ctrl-C in the tenth of a second the command line takes to load printed a traceback of
    the import it stopped: it ends the run as Ctrl-C later does. The signal is sent from
    inside the import, so that it comes then whatever the machine's speed."""
    script = (
        "import builtins, os, signal, sys\n"
        "from nanograd_cli import _entry\n"
        "real = builtins.__import__\n"
        "def importing(name, *args, **kwargs):\n"
        "    if name == '_cli':\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = importing\n"
        "sys.argv = ['nanograd', 'grad', 'x', '--x', '1']\n"
        "_entry.command()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
        preexec_fn=default_signals,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "")


@pytest.mark.slow
def test_input_values_may_be_constant_expressions_and_warn_when_they_underflow():
    done = in_process("grad", "sin(x)", "--x", "pi/2", "--format", "json")
    assert json.loads(done.stdout)["inputs"] == {"x": math.pi / 2}
    assert in_process("grad", "x", "--var", "x=2*pi", "--format", "csv").stdout == (
        f"value,d_x\n{2 * math.pi!r},1.0\n"
    )
    tiny = in_process("grad", "x", "--x", "1e-400", "--format", "csv")
    assert (tiny.returncode, tiny.stdout) == (0, "value,d_x\n0.0,1.0\n")
    assert tiny.stderr == "warning: --x 1e-400 is too small for a float: it is taken as 0.0\n"
    assert in_process("grad", "x", "--x", "0e-5").stderr == ""  # a zero written as one
    for text in ("y + 1", "\uff11", "1_000"):  # a full-width digit one
        bad = in_process("grad", "x", "--x", text)
        assert (bad.returncode, bad.stderr) == (2, f"error: --x expects a number, got {text!r}\n")


def test_every_help_writes_what_an_option_takes_in_the_documented_style():
    """Each option's placeholder in every --help is one of docs/commands.md's table, or
    choices in brackets, each a word as typed (LR, svg) or such a placeholder; so no
    click default (FLOAT RANGE, INTEGER) and no letter of its own (R, W)."""
    import re

    reference = (Path(__file__).resolve().parents[1] / "docs" / "commands.md").read_text()
    table = reference.split("<!-- placeholders:")[1].split("\n\n")[0]
    documented = set(re.findall(r"^\s*\| `([^`]+)` \|", table, re.M))
    assert {"N", "NUMBER", "FILE", "EXPR", "NAME=LO:HI"} <= documented
    seen = set()
    for name in ["", *cli.list_commands(None)]:
        done = in_process(*([name] if name else []), "--help")
        if name:  # a command's arguments (the group's are click's COMMAND [ARGS]...)
            usage = done.stdout.splitlines()[0].partition(" [OPTIONS]")[2]
            seen.update(re.findall(r"\[?([A-Z][A-Z.=:,]*[A-Z])\]?(?:\.\.\.)?", usage))
        for line in done.stdout.splitlines():
            match = re.match(r"  (?:-\w, )?--?[\w-]+(?:, --[\w-]+)* ?(\S*)(?:  |$)", line)
            if match and match.group(1):
                seen.add(match.group(1))
    for metavar in seen:
        choices = re.fullmatch(r"\[(.+)\]", metavar)
        words = choices.group(1).split("|") if choices else [metavar]
        for word in words:
            ok = word in documented or (choices is not None and re.fullmatch(r"\w+", word))
            assert ok, f"{metavar!r} in --help is not in docs/commands.md's placeholders"
    assert {"N", "NUMBER", "FILE", "[N|full]", "[table|json|csv]", "SOURCE"} <= seen
