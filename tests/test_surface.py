"""What a user meets first: help, completion in a real bash, tables on a pseudo-terminal of 80
and 60 columns, errors that say what to do. The installed `nanograd` command runs where the
process matters (a terminal, completion, its exit codes once per command, closed and full
streams); the rest runs the command line in process."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

from nanograd_cli._cli import cli

from .helpers import NANOGRAD, in_process, nanograd, on_terminal, visible

COMMANDS = sorted(cli.list_commands(None))


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("help_option", ["-h", "--help"])
def test_every_command_has_help_with_and_without_source(command, help_option):
    for args in ([command, help_option], [command, "x*y", help_option]):
        done = in_process(*args)
        assert (done.returncode, done.stderr) == (0, ""), args
        assert done.stdout.startswith(f"Usage: nanograd {command} ")
        assert "Examples:" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_the_installed_command_exits_0_on_help_and_2_on_a_usage_error(command):
    done = nanograd(command, "--help")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith(f"Usage: nanograd {command} ")
    done = nanograd(command, "--no-such-option")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: No such option '--no-such-option'.\nTry 'nanograd {command} --help' for help.\n"
    )


def test_top_level_help_and_no_arguments():
    for args in ([], ["-h"], ["--help"]):
        done = in_process(*args)
        shown = done.stdout if args else done.stderr  # no command: a usage error (exit 2)
        assert done.returncode == (0 if args else 2) and "Commands:" in shown
        assert all(command in shown for command in COMMANDS)


def complete(line: str, shell: str = "bash") -> list[str]:
    """The completions a real bash offers for `line` (the cursor at its end), through the
    script that `nanograd completion bash` prints, as docs/commands.md says to load it."""
    script = f"""
        eval "$({NANOGRAD} completion bash)"
        COMP_WORDS=({line})
        COMP_CWORD=$(( ${{#COMP_WORDS[@]}} {"" if line.endswith(" ") else "- 1"} ))
        {"COMP_WORDS+=('')" if line.endswith(" ") else ""}
        _nanograd_completion nanograd 2>/dev/null
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """
    env = {**os.environ, "PATH": f"{Path(NANOGRAD).parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return [w for w in done.stdout.splitlines() if w]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_completion_prints_each_shells_script_and_fish_keeps_descriptions_whole():
    """`nanograd completion SHELL` is click's script (bash's the same as the environment
    variable's); fish's reply is split at its first comma only, so that a description with
    commas is shown whole, as the reply for --ylim has it."""
    bash = nanograd("completion", "bash")
    assert bash.stdout == nanograd(env={**os.environ, "_NANOGRAD_COMPLETE": "bash_source"}).stdout
    assert "complete -o nosort -F _nanograd_completion nanograd" in bash.stdout
    assert "compdef _nanograd_completion nanograd" in nanograd("completion", "zsh").stdout
    fish = nanograd("completion", "fish").stdout
    assert 'string split -m 1 "," $completion' in fish and 'string split "," ' not in fish
    env = {**os.environ, "_NANOGRAD_COMPLETE": "fish_complete", "COMP_WORDS": "nanograd plot --"}
    reply = nanograd(env={**env, "COMP_CWORD": "--"}).stdout.splitlines()
    ylim = next(line for line in reply if line.startswith("plain,--ylim"))
    _, whole = ylim.split(",", 1)  # as the script splits it
    assert whole.split("\t")[1].startswith(
        "The y axis of f (and of the terminal plot): LO:HI; full,"
    )
    done = nanograd("completion", "tcsh")
    assert done.returncode == 2 and "'tcsh' is not one of 'bash', 'zsh', 'fish'" in done.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_of_commands_options_and_input_names(tmp_path):
    source = nanograd(env={**os.environ, "_NANOGRAD_COMPLETE": "bash_source"})
    assert source.returncode == 0 and "_nanograd_completion" in source.stdout
    assert "Examples:" not in source.stdout
    assert set(complete("nanograd ")) >= set(COMMANDS)
    assert complete("nanograd gr") == ["grad"]
    assert {"--format", "--wrt", "--points"} <= set(complete("nanograd grad x --"))
    assert complete('nanograd grad "x*y" --')[:2] == ["--x", "--y"]
    assert complete('nanograd grad "x*y" --x 1 --')[:1] == ["--y"]
    assert complete("nanograd grad x --format ") == ["table", "json", "csv"]
    assert complete('nanograd grad -e "a+b" --')[:2] == ["--a", "--b"]
    assert complete('nanograd grad "x*y" --wrt ') == ["x", "y"]
    assert complete('nanograd diff "x*y" --wrt ') == ["x", "y"]
    assert complete("nanograd draw x -o graph.s") == ["graph.svg"]
    assert complete("nanograd plot x --x 0:1 -o p.p") == ["p.png", "p.pdf"]


def replies(line: str) -> list[tuple[str, str]]:
    """What the command answers bash's completion script for `line`, as (type, value) pairs:
    for a `file`, bash itself lists the file names that start with the value."""
    words = line.split(" ")
    env = {**os.environ, "_NANOGRAD_COMPLETE": "bash_complete"}
    env |= {"COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    done = subprocess.run([NANOGRAD], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return [tuple(reply.split(",", 1)) for reply in done.stdout.splitlines()]


@pytest.mark.slow
def test_completion_of_file_names_and_output_extensions():
    assert replies("nanograd grad -f ") == [("file", "")]
    assert replies("nanograd grad --file m") == [("file", "m")]
    assert replies("nanograd grad x --points p") == [("file", "p")]
    assert replies("nanograd draw x -o ") == [("file", "")]
    # A name typed up to its dot: the files there, then the formats that the command writes.
    drawn = replies("nanograd draw x -o graph.")
    assert drawn == [
        ("file", "graph."),
        *(("plain", f"graph.{e}") for e in "svg png pdf dot gv html htm".split()),
    ]
    assert replies("nanograd plot x --x 0:1 -o p.p") == [
        ("file", "p.p"),
        ("plain", "p.png"),
        ("plain", "p.pdf"),
    ]
    assert replies("nanograd minimize x --plot d.s") == [("file", "d.s"), ("plain", "d.svg")]
    assert replies("nanograd grad x --points p -o out.p")[1:3] == [
        ("plain", "out.parquet"),
        ("plain", "out.pq"),
    ]
    assert replies("nanograd grad x --points p -o dir.x/o") == [("file", "dir.x/o")]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_completion_scripts(shell):
    done = nanograd(env={**os.environ, "_NANOGRAD_COMPLETE": f"{shell}_source"})
    assert done.returncode == 0 and "nanograd" in done.stdout and "Examples:" not in done.stdout


# What check and hessian show at 60 and 80 columns. check's table fits in fewer digits,
# where the numeric derivative is marked ≈ and the errors show the difference; hessian's
# cannot fit 60 columns without breaking its numbers, and is shown as records.
CHECK = {
    60: """\
┏━━━━━━┳━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━┓
┃input ┃ analytic ┃ numeric ┃ abs_error ┃ rel_error ┃ pass┃
┡━━━━━━╇━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━┩
│x     │    3.071 │  ≈3.071 │ 5.761e-11 │ 1.876e-11 │  yes│
│y     │        2 │      ≈2 │ 1.785e-12 │ 8.924e-13 │  yes│
└──────┴──────────┴─────────┴───────────┴───────────┴─────┘
""",
    80: """\
┏━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━┳━━━━━┓
┃input ┃    analytic ┃      numeric ┃       abs_error ┃       rel_error ┃ pass┃
┡━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━╇━━━━━┩
│x     │ 3.070650825 │ ≈3.070650825 │ 5.761080502e-11 │ 1.876175713e-11 │  yes│
│y     │           2 │           ≈2 │ 1.784794534e-12 │ 8.923972672e-13 │  yes│
└──────┴─────────────┴──────────────┴─────────────────┴─────────────────┴─────┘
""",
}

HESSIAN = {
    60: """\
┌─────────┬─────────────────────┐
│         │ result              │
│value    │ 2.3471760331426434  │
├─────────┼─────────────────────┤
│         │ a                   │
│value    │ 1.0                 │
│gradient │ 0.3913016497063289  │
│d_a      │ -0.5448747497084523 │
│d_b      │ -0.07678655000106166│
│d_c      │ 0.5                 │
│d_d      │ 1.0                 │
├─────────┼─────────────────────┤
│         │ b                   │
│value    │ 2.0                 │
│gradient │ 0.19565082485316446 │
│d_a      │ -0.07678655000106166│
│d_b      │ -0.13621868742711307│
│d_c      │ 0.25                │
│d_d      │ 0.5                 │
├─────────┼─────────────────────┤
│         │ c                   │
│value    │ 0.5                 │
│gradient │ 0.7832871132667065  │
│d_a      │ 0.5                 │
│d_b      │ 0.25                │
│d_c      │ 0.07082177831667665 │
│d_d      │ 3.27479200970018    │
├─────────┼─────────────────────┤
│         │ d                   │
│value    │ 0.25                │
│gradient │ 1.566574226533413   │
│d_a      │ 1.0                 │
│d_b      │ 0.5                 │
│d_c      │ 3.27479200970018    │
│d_d      │ 0.2832871132667066  │
└─────────┴─────────────────────┘
""",
    80: """\
┏━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━┓
┃       ┃   value ┃ gradient ┃        d_a ┃        d_b ┃       d_c ┃      d_d┃
┡━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━┩
│result │ 2.34718 │          │            │            │           │         │
│a      │       1 │ 0.391302 │  -0.544875 │ -0.0767866 │       0.5 │        1│
│b      │       2 │ 0.195651 │ -0.0767866 │  -0.136219 │      0.25 │      0.5│
│c      │     0.5 │ 0.783287 │        0.5 │       0.25 │ 0.0708218 │  3.27479│
│d      │    0.25 │  1.56657 │          1 │        0.5 │   3.27479 │ 0.283287│
└───────┴─────────┴──────────┴────────────┴────────────┴───────────┴─────────┘
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("columns", [60, 80])
def test_tables_fit_the_terminal_without_losing_a_label_or_a_digit(columns):
    check = visible(on_terminal("check", "x*y + tanh(x)", "--x", "2", "--y", "3", columns=columns))
    assert [line.rstrip() for line in check] == CHECK[columns].splitlines()
    hessian = visible(
        on_terminal(
            "hessian",
            "a*b*c*d + tanh(a*b) + exp(c*d)",
            *("--a", "1", "--b", "2", "--c", "0.5", "--d", "0.25"),
            columns=columns,
        )
    )
    assert [line.rstrip() for line in hessian] == HESSIAN[columns].splitlines()


@pytest.mark.slow
def test_digits_on_a_terminal_and_full_precision_in_a_pipe():
    screen = "\n".join(
        visible(on_terminal("grad", "x*y + tanh(x)", "--x", "2", "--y", "3", "--digits", "4"))
    )
    assert "6.964" in screen and "3.071" in screen and "6.9640275" not in screen
    screen = "\n".join(visible(on_terminal("grad", "x*y + tanh(x)", "--x", "2", "--y", "3")))
    assert "6.9640275800758165" in screen  # it fits: full precision
    piped = in_process("grad", "x*y + tanh(x)", "--x", "2", "--y", "3")
    assert "6.9640275800758165" in piped.stdout  # a pipe gets full precision
    bad = in_process("grad", "x", "--x", "1", "--digits", "0")
    assert bad.returncode == 2 and "neither a number of digits from 1 to 17 nor full" in bad.stderr


def test_an_explicit_digits_applies_to_every_table():
    """NO_COLOR turns colour off, nothing else; --digits asks for digits wherever a table goes."""
    point = ["--x", "2", "--y", "3", "--digits", "4"]
    piped = in_process("grad", "x*y + tanh(x)", *point)
    assert (
        piped.stdout
        == "        value  gradient\nresult  6.964\nx       2      3.071\ny       3      2\n"
    )
    no_color = in_process(
        "explain", "x*x", "--x", "3.3333333", "--digits", "3", env={**os.environ, "NO_COLOR": "1"}
    )
    assert "= 6.67" in no_color.stdout and "3.3333333" not in no_color.stdout
    # JSON and CSV keep every digit
    assert (
        "6.9640275800758165"
        in in_process("grad", "x*y + tanh(x)", *point, "--format", "csv").stdout
    )


def test_check_shows_analytic_and_numeric_apart_in_any_digits():
    done = in_process("check", "x*y + tanh(x)", "--x", "2", "--y", "3", "--digits", "3")
    assert done.stdout.splitlines()[1:] == [
        "x      3.07      ≈3.07    5.76e-11   1.88e-11   yes",
        "y      2         ≈2       1.78e-12   8.92e-13   yes",
    ]
    full = in_process("check", "x*y + tanh(x)", "--x", "2", "--y", "3", "--digits", "full")
    assert "≈" not in full.stdout and "1.999999999998" in full.stdout


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_standard_output_is_an_error():
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [NANOGRAD, "grad", "x", "--x", "1"], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert done.returncode == 1
    assert done.stderr == "error: cannot write standard output: No space left on device\n"


def test_inputs_in_the_order_read_after_an_augmented_assignment():
    done = in_process(
        "grad", "v += u + v; v*t", "--v", "1", "--u", "2", "--t", "3", "--format", "json"
    )
    assert list(json.loads(done.stdout)["inputs"]) == ["v", "u", "t"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["grad", "sin x", "--x", "1"], "missing operator between 'sin' and 'x': write sin(x)"),
        (["grad", "arcsin(x)", "--x", "1"], "unknown function arcsin: did you mean asin?"),
        (["grad", "x²", "--x", "1"], "unexpected character '²': write '**2'"),
        (["grad", "x \u00d7 x", "--x", "1"], "unexpected character '\u00d7': write '*'"),
        (["grad", "x \u2212 1", "--x", "1"], "unexpected character '\u2212': write '-'"),
        (["grad", "x · x", "--x", "1"], "unexpected character '·': write '*'"),
        (["grad", "model.txt", "--x", "1"], "error: no such file: model.txt"),
        (["grad", "./nosuch", "--x", "1"], "error: no such file: ./nosuch"),
        (["grad", "x", "--x", "1", "--fromat", "json"], "did you mean --format?"),
        (["draw", "x*x", "--x", "1", "--wrt", "x"], "nanograd draw has no --wrt option"),
        (["check", "x", "--x", "1", "--rtol", "-1"], "'--rtol': -1 is not at least 0"),
        (["grad", "-x**2", "--x", "1"], "goes after -e: nanograd grad -e '-x**2' (or last"),
        (["grad", "x", "--x", "1e999"], "error: --x 1e999 is too large for a float"),
        (["grad", "x", "--x", "1_000"], "error: --x expects a number, got '1_000'"),
        (["grad", "x*y", "--x", "2", "--y", "3", "--wtr", "x"], "did you mean --wrt?"),
        (["diff", "x**2", "--latex"], "No such option: --latex; for LaTeX, give --format latex"),
        (["explain", "x", "--x", "1", "--latex"], "; for LaTeX, give --format latex"),
        (
            ["grad", "where(x = 2, 1, 0)", "--x", "1"],
            "(for --implicit y of nanograd diff), write '=='",
        ),
        (["grad", "x <> 1", "--x", "1"], "unknown comparison '<>': write '!='"),
        (["grad", "arcsec(x)", "--x", "2"], "unknown function arcsec: did you mean acos(1/x)?"),
        (["grad", "exp^x", "--x", "1"], "for e to a power, write exp(x) or e**x"),
        (["diff", "x**2", "--with", "x"], "No such option '--with'. Did you mean '--wrt'?"),
        (["grad", "t*x", "--t", "1,5", "--x", "1"], "error: --t expects a number, got '1,5'\n"),
        (["derivative", "x"], "No such command 'derivative': did you mean diff?"),
        (
            ["check", "x*y", "--against", "d_x = y\nd_y = q", "--x", "1", "--y", "2"],
            "the formula for d/dy reads q, which is no input of the source",
        ),
    ],
)
def test_errors_say_what_to_do(args, message):
    done = in_process(*args)
    assert done.returncode in (1, 2) and done.stdout == ""
    assert message in done.stderr and "Traceback" not in done.stderr


def test_binary_pictures_are_not_written_to_a_terminal():
    screen = on_terminal("draw", "x*x", "--x", "1", "--format", "png")
    assert "error: png is binary: write it to a file with -o graph.png, or pipe it" in screen


@pytest.mark.slow
def test_minimize_progress_never_shows_a_loss_of_nan():
    screen = on_terminal("minimize", "(x - 3)**2", "--x", "0", "--steps", "20000", "--tol", "0")
    assert "loss nan" not in screen


def test_python_api_takes_keyword_inputs():
    import doctest

    import nanograd_cli

    assert doctest.testmod(nanograd_cli).failed == 0
    assert nanograd_cli.hessian("x*y", x=1, y=2).hessian["x"]["y"] == 1.0
    assert nanograd_cli.check("x*x", x=1).passed
    with pytest.raises(nanograd_cli.errors.MissingInputs) as caught:
        nanograd_cli.grad("x*y", x=1)
    assert str(caught.value) == "missing value for input y: give y=VALUE"
    assert repr(nanograd_cli.parse("x*y")) == "<Program 3 instructions, inputs: x, y>"


def test_one_ctrl_d_ends_a_source_typed_at_a_terminal():
    import pexpect

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    child = pexpect.spawn(
        NANOGRAD, ["grad", "-", "--x", "3", "--format", "csv"], env=env, timeout=60
    )
    child.send("x*x\n")
    child.sendeof()  # once, at the start of a line, as `cat` takes it
    child.expect(pexpect.EOF)
    assert child.before.decode().splitlines()[-2:] == ["value,d_x", "9.0,6.0"]


def test_command_summaries_fit_80_columns_uncut():
    done = in_process("--help", env={**os.environ, "COLUMNS": "80"})
    summaries = done.stdout.split("Commands:\n")[1].splitlines()
    assert [line.split()[0] for line in summaries] == COMMANDS  # one line each
    assert all(len(line) <= 80 and not line.endswith("...") for line in summaries), summaries


@pytest.mark.slow
def test_without_source_a_pipe_or_file_on_standard_input_is_the_source(tmp_path):
    done = in_process("grad", "--x", "1", "--format", "json", stdin="x*x\n")
    assert (done.returncode, done.stdout) == (
        0,
        '{"value": 1.0, "inputs": {"x": 1.0}, "gradients": {"x": 2.0}}\n',
    )
    done = in_process("grad", "--each-line", "--x", "1", "--format", "csv", stdin="x*x\nsin(x)\n")
    assert done.stdout.splitlines()[:2] == ["line,value,d_x", "1,1.0,2.0"]
    assert in_process("diff", "--wrt", "x", stdin="x**3").stdout == "3*x**2\n"
    (tmp_path / "model.txt").write_text("x*y\n")
    with open(tmp_path / "model.txt") as file:
        done = subprocess.run(
            [NANOGRAD, "grad", "--x", "2", "--y", "3", "--format", "csv"],
            stdin=file,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.stdout == "value,d_x,d_y\n6.0,3.0,2.0\n"
    # Standard input empty, or closed, or already the points: there is no source.
    empty = in_process("grad", "--x", "1")
    assert (empty.returncode, empty.stderr) == (
        2,
        "error: give a source: SOURCE (- for standard input), -e TEXT or -f PATH (standard "
        "input, read for want of one, is empty)\n",
    )
    given = in_process("grad", "-", "--x", "1")  # asked for: an empty source
    assert given.stderr == "error: the source has no statements: there is nothing to evaluate\n"
    once = "error: give a source: SOURCE (- for standard input), -e TEXT or -f PATH\n"
    closed = subprocess.run(
        f"{NANOGRAD} grad --x 1 <&-", shell=True, capture_output=True, text=True, timeout=60
    )
    assert (closed.returncode, closed.stderr.splitlines()[0]) == (2, once.strip())
    points = nanograd("grad", "--points", "-", stdin="x\n1\n")
    assert (points.returncode, points.stderr.splitlines()[0]) == (2, once.strip())


def test_without_source_on_a_terminal_it_asks_for_one():
    screen = visible(on_terminal("grad", "--x", "1"))
    assert "error: give a source: SOURCE (- for standard input), -e TEXT or -f PATH" in screen


def test_color_always_never_auto_and_the_environment():
    args = ["grad", "x*y", "--x", "2", "--y", "3"]
    plain = "        value  gradient\nresult  6.0\nx       2.0    3.0\ny       3.0    2.0\n"
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}

    def drawn(*extra: str, **env: str) -> str:
        done = in_process(*args, *extra, env={**base, **env})
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert drawn() == plain  # a pipe
    assert drawn(FORCE_COLOR="") == plain  # empty: not set
    for rich in (drawn("--color", "always"), drawn(FORCE_COLOR="1"), drawn("--color=always")):
        assert "\x1b[1m" in rich and "┏" in rich and "6.0" in rich
    assert drawn("--color", "always", NO_COLOR="1") == drawn("--color", "always")
    assert drawn("--color", "never", FORCE_COLOR="1") == plain
    assert drawn(NO_COLOR="1", FORCE_COLOR="1") == plain
    # Before the command, too.
    done = in_process("--color", "always", *args, env=base)
    assert done.stdout == drawn("--color", "always")
    # Terminal plots colour as tables do.
    plot = in_process("plot", "sin(x)", "--x", "0:1", "--color", "always", env=base).stdout
    assert "\x1b[" in plot


@pytest.mark.slow
def test_color_never_on_a_terminal_is_plain():
    plain = ["        value  gradient", "result  1.0", "x       1.0    1.0"]
    assert "┏" in on_terminal("grad", "x", "--x", "1")
    assert visible(on_terminal("grad", "x", "--x", "1", "--color", "never")) == plain
    assert visible(on_terminal("--color", "never", "grad", "x", "--x", "1")) == plain


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["grd", "x"], "error: No such command 'grd': did you mean grad?\nTry 'nanograd --help'"),
        (
            ["help"],
            "error: No such command 'help': for help, nanograd --help, or nanograd COMMAND "
            "--help\nTry 'nanograd --help'",
        ),
        (
            ["grad", "x", "--x", "1", "--format"],
            "error: Option '--format' requires an argument.\nTry 'nanograd grad --help'",
        ),
        (
            ["hessian", "x*y", "-x", "1"],
            "error: No such option '-x': an input's value is --x VALUE\n"
            "Try 'nanograd hessian --help'",
        ),
    ],
)
def test_a_mistyped_command_or_option_gets_a_hint_and_the_right_help(args, said):
    done = in_process(*args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == said + " for help.\n"


class StderrOnTerminal:
    """The installed command with standard error on a pseudo-terminal (80 columns) and
    standard input and output on pipes: what a terminal shows of a run whose output goes to
    a file, as `nanograd fit ... > out.json` has it."""

    def __init__(self, *args: str):
        self.main, child = pty.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
        self.process = subprocess.Popen(
            [NANOGRAD, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=child,
            env=env,
        )  # fmt: skip
        os.close(child)
        self.screen = b""

    def shown(self) -> str:
        """The screen so far, without colour codes and carriage returns."""
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", self.screen.decode(errors="replace"))

    def wait_for(self, pattern: str, timeout: float = 60) -> None:
        while not re.search(pattern, self.shown()):
            ready, _, _ = select.select([self.main], [], [], timeout)
            assert ready, f"not shown in {timeout} s: {pattern!r}; shown: {self.shown()[-300:]!r}"
            self.screen += os.read(self.main, 65536)

    def finish(self, stdin: bytes = b"") -> tuple[int, str, str]:
        """Write the rest of standard input, and wait: the exit code, standard output, and all
        the terminal showed."""
        out, _ = self.process.communicate(stdin, timeout=120)
        while select.select([self.main], [], [], 1)[0]:
            try:
                data = os.read(self.main, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            self.screen += data
        os.close(self.main)
        return self.process.returncode, out.decode(), self.shown()


ROWS = b"x,y\n" + b"".join(b"%d,%d\n" % (k, 2 * k + 1) for k in range(1000))
MORE = b"".join(b"%d,%d\n" % (k, 2 * k + 1) for k in range(1000, 1500))
LINE = ("(w*x + b - y)**2", "--data", "-", "--w", "0", "--b", "0")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["fit", "minimize"])
def test_reading_the_data_shows_rows_and_the_time_taken(command):
    """The rows of --data are read with a display of how many, how fast and for how long,
    from a second on (here from a pipe whose first rows come long before the rest)."""
    source, *rest = LINE
    args = [command, "w*x + b", *rest] if command == "fit" else [command, source, *rest]
    steps = ["--steps", "3"] if command == "minimize" else []
    run = StderrOnTerminal(*args, *steps, "--format", "json")
    run.process.stdin.write(ROWS)
    run.process.stdin.flush()
    run.wait_for(r"reading standard input .*1,000 rows, [\d,]+ rows/s,? 0:00:0\d elapsed")
    code, out, _ = run.finish(MORE)
    found = json.loads(out)
    assert code == 0 and found["n" if command == "fit" else "steps"] == (
        1500 if command == "fit" else 3
    )


@pytest.mark.slow
def test_quiet_shows_no_note_and_no_progress_but_errors():
    """minimize, whose --steps run out, shows its steps and a note; with --quiet (before the
    command, or after it) the terminal shows nothing, also while --data is read, and still
    an error."""
    args = ("minimize", "(x - 3)**2", "--x", "0", "--steps", "300", "--lr", "1e-4", "--method",
            "sgd", "--format", "json")  # fmt: skip
    code, out, shown = StderrOnTerminal(*args).finish()
    assert code == 0 and json.loads(out)["converged"] is False
    assert "step " in shown and "elapsed" in shown
    assert "note: did not converge: after 300 steps" in shown
    for quiet in (["-q", *args], [*args, "--quiet"]):
        code, out, shown = StderrOnTerminal(*quiet).finish()
        assert (code, shown) == (0, "") and json.loads(out)["converged"] is False
    run = StderrOnTerminal(
        "minimize", *LINE, "--drop-nan", "--steps", "3", "--quiet", "--format", "json"
    )
    run.process.stdin.write(ROWS + b",7\n")  # a row left out: a note, without --quiet
    run.process.stdin.flush()
    time.sleep(2)  # past the second after which the reading would be shown
    code, out, shown = run.finish(MORE)
    assert (code, shown) == (0, "") and json.loads(out)["steps"] == 3
    code, out, shown = StderrOnTerminal(*args, "--quiet", "--y", "1").finish()
    assert (code, out) == (2, "")
    assert shown == "error: y is not an input of this source (its inputs: x)\n"
