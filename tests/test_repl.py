"""`nanograd repl`: the session line by line, through a pipe, and on a pseudo-terminal."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import chdir
from pathlib import Path

import pexpect
import pyte
import pytest

from nanograd_cli._session import Session, scripted, statements, unclosed

from .helpers import NANOGRAD, default_signals, in_process, nanograd, on_terminal, visible

WORKED_TABLE = """\
        value               gradient
result  6.9640275800758165
x       2.0                 3.0706508248531645
y       3.0                 2.0"""


def session(*lines: str) -> Session:
    s = Session()
    for line in lines:
        reply = s.run(line)
        assert reply.status == 0, reply.err
    return s


def out(s: Session, line: str) -> str:
    reply = s.run(line)
    assert (reply.status, reply.err) == (0, []), reply.err
    return reply.text()


def error(s: Session, line: str, number: int | None = None) -> str:
    reply = s.run(line, number)
    assert reply.status == 2 and reply.out == [] and len(reply.err) == 1
    return reply.err[0]


# The session, line by line


def test_inputs_then_an_expression_print_grads_table():
    s = session("x = 2", "y = 3")
    assert out(s, "x*y + tanh(x)") == WORKED_TABLE
    # Against the hand derivation: d/dx = y + 1 - tanh(x)**2, d/dy = x.
    assert float(WORKED_TABLE.split()[3]) == pytest.approx(6 + math.tanh(2), rel=1e-15)
    assert float(WORKED_TABLE.split()[6]) == pytest.approx(4 - math.tanh(2) ** 2, rel=1e-15)


def test_assignments_print_nothing_and_persist():
    s = Session()
    for line in ["x = 2", "y = -1.5e0", "q = x*y", "q += 1", "# a comment", ""]:
        reply = s.run(line)
        assert (reply.out, reply.err, reply.status) == ([], [], 0)
    # q = x*y + 1 = -2; dq/dx = y, dq/dy = x
    assert out(s, "q") == (
        "        value  gradient\nresult  -2.0\nx       2.0    -1.5\ny       -1.5   2.0"
    )
    assert out(s, ":inputs") == "x = 2.0\ny = -1.5\nq = x*y\nq += 1"


def test_only_the_inputs_an_expression_reads_are_shown_and_asked_for():
    s = session("x = 3", "unused = a*b")  # a and b have no value: not needed for x**2
    assert out(s, "x**2") == "        value  gradient\nresult  9.0\nx       3.0    6.0"


def test_a_later_definition_wins_and_may_use_the_earlier_one():
    s = session("t = 4", "f = t*t", "f = f + t")  # f = t**2 + t
    assert out(s, "f") == "        value  gradient\nresult  20.0\nt       4.0    9.0"


def test_a_number_makes_a_defined_name_an_input_again():
    s = session("y = 5", "x = y*2", "x = 7")
    assert out(s, "x") == "        value  gradient\nresult  7.0\nx       7.0    1.0"
    assert out(s, ":inputs") == "y = 5.0\nx = 7.0"


def test_a_line_may_set_inputs_define_and_evaluate_at_once():
    s = Session()
    assert out(s, "x = 2; y = 3; p = x*y; p + 1") == (
        "        value  gradient\nresult  7.0\nx       2.0    3.0\ny       3.0    2.0"
    )
    assert out(s, ":inputs") == "x = 2.0\ny = 3.0\np = x*y"


def test_grad_command_keeps_no_assignment():
    s = session("x = 2")
    assert (
        out(s, ":grad a = x + 1; a*a") == "        value  gradient\nresult  9.0\nx       2.0    6.0"
    )
    assert error(s, "a") == "error: missing value for input a: give it a value first: a = VALUE"


def test_missing_inputs_are_named_and_the_session_goes_on():
    s = session("x = 1")
    assert error(s, "x*u*v") == (
        "error: missing values for inputs u, v: give them a value first: u = VALUE; v = VALUE"
    )
    assert out(s, "x + 1").startswith("        value  gradient\nresult  2.0")


def test_syntax_error_has_the_caret_under_the_line_typed():
    s = session("x = 2", "y = x + 1")  # definitions come first in the source parsed
    assert error(s, "y +* 2") == (
        "error: line 1, column 4: expected an expression after '+', found '*'\n"
        "  1 | y +* 2\n"
        "         ^"
    )
    assert error(s, "2x", 7) == (
        "error: line 7, column 2: missing operator between '2' and 'x': write 2*x\n"
        "  7 | 2x\n"
        "       ^"
    )
    assert error(s, "y(2)") == (
        "error: line 1, column 1: y is not a function; to multiply, write y*(...)\n"
        "  1 | y(2)\n"
        "      ^"
    )


def test_bad_entries_are_one_error_each_never_an_exception():
    s = session("x = 2")
    for line in ["sin(", ")", "pi = 3", "sin = 1", "foo(x)", "1e400", ":nope", ":grad", "0 < x <2"]:
        message = error(s, line)
        assert message.startswith("error: ") and "Traceback" not in message
    assert out(s, "x") == "        value  gradient\nresult  2.0\nx       2.0    1.0"


def test_non_finite_warns_where_it_happened():
    s = session("x = 2", "r = log(-x)")
    reply = s.run("r*2")
    assert reply.status == 0
    assert reply.err == ["warning: log gave nan, in a definition:\n  r = log(-x)\n      ^"]
    assert reply.text() == "        value  gradient\nresult  nan\nx       2.0    1.0"
    reply = s.run("sqrt(-x)", 4)
    assert reply.err == ["warning: line 4, column 1: sqrt gave nan\n  4 | sqrt(-x)\n      ^"]


def test_diff_symbolic_derivative():
    s = session("x = 2", "q = x*y")
    assert out(s, ":diff q**2 wrt x") == "2*x*y**2"
    assert out(s, ":diff sin(x)*y") == "d_x = y*cos(x)\nd_y = sin(x)"
    assert out(s, ":diff sin(x)*y wrt x, y") == "d_x = y*cos(x)\nd_y = sin(x)"
    assert error(s, ":diff x*x wrt z") == "error: wrt z: z is not an input (inputs: x)"


def test_hessian_against_hand_derivatives():
    s = session("x = 2", "y = 3")
    # f = x**2*y: f_x = 2xy = 12, f_y = x**2 = 4, f_xx = 2y = 6, f_xy = 2x = 4, f_yy = 0
    assert out(s, ":hessian x**2*y") == (
        "        value  gradient  d_x  d_y\n"
        "result  12.0\n"
        "x       2.0    12.0      6.0  4.0\n"
        "y       3.0    4.0       4.0  0.0"
    )


def test_explain_prints_what_nanograd_explain_prints():
    s = session("x = 2", "y = 3")
    expected = in_process("explain", "x*y + tanh(x)", "--x", "2", "--y", "3").stdout
    assert out(s, ":explain x*y + tanh(x)") + "\n" == expected


def test_draw_writes_the_graph(tmp_path: Path):
    s = session("x = 2", "y = 3")
    target = tmp_path / "g.dot"
    assert out(s, f":draw x*y + tanh(x) {target}") == f"wrote {target}"
    dot = target.read_text()
    assert dot.startswith("digraph") and "tanh" in dot and "3.0707" in dot
    page = tmp_path / "g.html"
    assert out(s, f":draw x*y {page}") == f"wrote {page}"
    assert page.read_text().startswith("<!DOCTYPE html>") and "<svg" in page.read_text()
    bad = tmp_path / "g.txt"
    assert "cannot tell the format" in error(s, f":draw x*y {bad}")
    assert not bad.exists()
    assert error(s, ":draw x*y") == "error: :draw needs EXPR FILE, as in :draw x*y graph.svg"


def test_a_file_given_to_a_command_that_writes_none_is_said_to_be_one(tmp_path: Path):
    """:explain x*x g.svg said "missing operator between 'x' and 'g'"; and :draw read a
    matrix product's second operand, W.T, as its FILE."""
    s = session("x = [1, 2]", "W = [[1, 2], [3, 4]]")
    assert error(s, ":explain x@x g.svg") == (
        "error: :explain writes no file (g.svg): it takes :explain EXPR and its options "
        "(format, digits, strict); :draw EXPR FILE writes a picture"
    )
    assert error(s, ":grad sum(x) wrt x out.csv").startswith("error: :grad writes no file")
    assert out(s, ":grad x @ W.T @ x") == out(s, ":grad x@W.T@x")
    target = tmp_path / "g.dot"
    assert out(s, f":draw x @ W.T @ x {target}") == f"wrote {target}"
    assert target.read_text().startswith("digraph")


def test_diff_without_an_expression_or_a_name_says_so():
    s = session("x = 2")
    for entry in (":diff x wrt", ":diff wrt x"):
        assert error(s, entry) == (
            "error: :diff EXPR wrt NAME: give both the expression and the input"
        )


def test_reset_help_quit():
    s = session("x = 2", "q = x")
    assert out(s, ":reset") == ""
    assert out(s, ":inputs") == "no inputs or definitions yet"
    assert error(s, "x") == "error: missing value for input x: give it a value first: x = VALUE"
    help_text = out(s, ":help")
    for command in [":grad", ":diff", ":hessian", ":explain", ":draw", ":inputs", ":reset"]:
        assert f"\n{command} " in help_text
    assert s.run(":quit").quit and s.run(":q").quit


def test_statement_splitting_and_open_parentheses():
    text = "a = (x +\n y); b = 2 # c; d\nb"
    assert [text[i:j] for i, j in statements(text)] == ["a = (x +\n y)", " b = 2 # c; d", "b"]
    assert unclosed("sin(x") and unclosed("(x # )") and not unclosed("(x)\n")


def test_scripted_reports_lines_and_exit_status(tmp_path):
    import io

    # An open parenthesis takes the next lines, up to a command
    lines = ["x = 2", "sin(x", ")", "", "nope(", "q", ":quit", "x"]
    out, err = io.StringIO(), io.StringIO()
    assert scripted(Session(), lines, out, err) == 2
    assert out.getvalue() == (
        "        value               gradient\n"
        "result  0.9092974268256817\n"
        "x       2.0                 -0.4161468365471424\n"
    )
    assert err.getvalue() == (
        "error: line 5, column 5: '(' is never closed\n  5 | nope(\n          ^\n"
    )


# Through a pipe

SCRIPT = """\
x = 2
y = 3
x*y + tanh(x)
q = x*y   # a definition
:diff q**2 wrt x
sin(x +
    y)
q*z
"""


def test_pipe_prints_plainly_and_exits_2_when_a_line_failed():
    done = nanograd("repl", stdin=SCRIPT)
    assert done.stdout == (
        WORKED_TABLE + "\n2*x*y**2\n"
        "        value                gradient\n"
        "result  -0.9589242746631385\n"
        "x       2.0                  0.28366218546322625\n"
        "y       3.0                  0.28366218546322625\n"
    )
    assert done.stderr == (
        "error: line 8: missing value for input z: give it a value first: z = VALUE\n"
    )
    assert done.returncode == 2
    assert math.sin(5) == pytest.approx(-0.9589242746631385, rel=1e-15)
    assert math.cos(5) == pytest.approx(0.28366218546322625, rel=1e-15)


def test_pipe_exits_0_when_every_line_worked_and_stops_at_quit():
    done = nanograd("repl", stdin="x = 4\nsqrt(x)\n:quit\nnope(\n")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "        value  gradient\nresult  2.0\nx       4.0    0.25\n"


def test_pipe_reports_a_line_that_is_not_utf8_and_goes_on():
    done = subprocess.run(
        [NANOGRAD, "repl"], input=b"x = 1\n\xff\nx\n", capture_output=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.decode() == "error: line 2 is not valid UTF-8 (byte 0xff at offset 0)\n"
    assert done.stdout.decode() == "        value  gradient\nresult  1.0\nx       1.0    1.0\n"


def test_other_commands_do_not_import_prompt_toolkit():
    code = (
        "import sys\n"
        "from nanograd_cli._cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('prompt_toolkit' in sys.modules, file=sys.stderr)\n"
    )
    for args in (["grad", "x*y", "--x", "1", "--y", "2"], ["repl"]):
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            input="x = 1\nx\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.stderr == "False\n", args  # repl in a pipe needs no line editing


@pytest.mark.slow
def test_help_on_a_terminal_offers_the_repl():
    screen = "\n".join(visible(on_terminal()))
    assert "nanograd repl" in screen
    assert "repl" in [line.split()[0] for line in screen.splitlines() if line.startswith("  ")]


# On a pseudo-terminal


class Terminal:
    """`nanograd repl` on a pseudo-terminal, its screen kept by a terminal emulator."""

    def __init__(self, home: Path, columns: int = 80, rows: int = 60, args: tuple = ()):
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
        # No terminal answers cursor position requests here; prompt_toolkit would wait.
        env.update(TERM="xterm-256color", XDG_DATA_HOME=str(home), PROMPT_TOOLKIT_NO_CPR="1")
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.Stream(self.screen)
        self.child = pexpect.spawn(
            NANOGRAD,
            ["repl", *args],
            env=env,
            dimensions=(rows, columns),
            encoding="utf-8",
            preexec_fn=default_signals,
        )

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def wait_for(self, predicate, timeout: float = 20) -> list[str]:
        """Read output until the screen satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        while not predicate(self.lines()):
            if time.monotonic() > deadline:
                raise AssertionError("\n".join(self.lines()))
            try:
                self.stream.feed(self.child.read_nonblocking(65536, timeout=0.2))
            except pexpect.TIMEOUT:
                pass
        return self.lines()

    def prompts(self) -> int:
        return sum(1 for line in self.lines() if line.startswith(">"))

    def type(self, text: str) -> list[str]:
        """Type a line, then wait for the next prompt."""
        before = self.prompts()
        self.child.send(text + "\r")
        return self.wait_for(lambda lines: self.prompts() > before and self.last_prompt_is_empty())

    def last_prompt_is_empty(self) -> bool:
        return [line for line in self.lines() if line.startswith(">")][-1] == ">"


def row(screen: list[str], entry: str, label: str) -> list[str]:
    """The cells after `label` in the first Rich table below the line `entry`."""
    for line in screen[screen.index(entry) :]:
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        if cells[0] == label:
            return cells[1:]
    raise AssertionError(f"no row {label} under {entry}")


@pytest.fixture
def terminal(tmp_path):
    t = Terminal(tmp_path)
    t.wait_for(lambda lines: any(line == ">" for line in lines))
    yield t
    if t.child.isalive():
        t.child.terminate(force=True)


@pytest.mark.slow
def test_terminal_table_completion_caret_cancel_and_exit(terminal, tmp_path):
    terminal.type("x = 2")
    terminal.type("y = 3")
    screen = terminal.type("x*y + tanh(x)")
    assert row(screen, "> x*y + tanh(x)", "x") == ["2.0", "3.0706508248531645"]
    table = screen[screen.index("> x*y + tanh(x)") + 1 :]
    assert table[1].split("┃")[2:4] == ["              value ", "           gradient"]
    assert table[3] == "│result │ 6.9640275800758165 │                   │"
    assert table[4] == "│x      │                2.0 │ 3.0706508248531645│"
    assert table[5] == "│y      │                3.0 │                2.0│"

    # ta + Tab: both functions that begin so, in a menu under the line
    terminal.child.send("ta\t")
    screen = terminal.wait_for(lambda lines: "      tanh" in lines)
    menu = [line.strip() for line in screen if line.startswith("      ")]
    assert menu[:2] == ["tan", "tanh"]
    # Ctrl-C drops the line: the next entry runs alone
    terminal.child.send("\x03")
    terminal.wait_for(lambda lines: terminal.last_prompt_is_empty())
    screen = terminal.type("y*y")
    assert row(screen, "> y*y", "result") == ["9.0", ""]
    assert row(screen, "> y*y", "y") == ["3.0", "6.0"]

    screen = terminal.type("x +* 1")
    at = screen.index("> x +* 1")
    assert screen[at + 1 : at + 4] == [
        "error: line 1, column 4: expected an expression after '+', found '*'",
        "  1 | x +* 1",
        "         ^",
    ]

    # Multi-line while a parenthesis is open
    terminal.child.send("sin(x\r")
    terminal.wait_for(lambda lines: "..." in lines)
    screen = terminal.type("  - 2)")
    assert "...   - 2)" in screen
    assert row(screen, "...   - 2)", "x") == ["2.0", repr(math.cos(0.0))]

    terminal.child.sendeof()  # Ctrl-D
    terminal.child.expect(pexpect.EOF, timeout=20)
    terminal.child.close()
    assert terminal.child.exitstatus == 0
    history = (tmp_path / "nanograd" / "history").read_text()
    assert "+x*y + tanh(x)" in history and "+sin(x\n+  - 2)" in history


@pytest.mark.parametrize(
    "typed, shown",
    [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"), ("Infinity", "inf"), ("-Infinity", "-inf")],
)
def test_an_input_can_be_set_to_nan_or_inf(typed, shown):
    """As `--x nan` does: a value, with the warning that names the input."""
    done = nanograd("repl", stdin=f"x = {typed}\nx*2\n:inputs\n")
    assert done.returncode == 0
    table = f"        value  gradient\nresult  {shown}\nx       {shown:<5}  2.0\n"
    assert done.stdout == f"{table}x = {shown}\n"
    assert done.stderr == f"warning: line 2, column 1: input x is {shown}\n  2 | x*2\n      ^\n"


def test_an_input_redefined_in_terms_of_itself_stays_an_input():
    s = session("x = 2")
    assert out(s, "x = x + 1") == ""
    assert out(s, "x").splitlines()[1] == "result  3.0"
    assert out(s, ":inputs") == "x = 2.0\nx = x + 1"
    s.run("x = x * 10")
    assert out(s, "x").splitlines()[1] == "result  30.0"


def test_a_name_bound_to_a_constant_expression_is_an_input():
    s = session("y = pi/2")
    assert out(s, "sin(y)").splitlines()[2] == "y       1.5707963267948966  6.123233995736766e-17"


@pytest.mark.slow
def test_color_chooses_rich_tables_or_plain_text_as_for_every_command(tmp_path):
    """--color never: plain text on a terminal; --color always: Rich's table in a pipe (also
    given before the command); auto: plain in a pipe."""
    terminal = Terminal(tmp_path, args=("--color", "never"))
    try:
        terminal.wait_for(lambda lines: any(line == ">" for line in lines))
        screen = terminal.type("x = 2")
        screen = terminal.type("x*x")
        at = screen.index("> x*x")
        assert screen[at + 1 : at + 4] == [
            "        value  gradient",
            "result  4.0",
            "x       2.0    4.0",
        ]
    finally:
        terminal.child.terminate(force=True)
    script = "x = 2\nx*x\n"
    plain = nanograd("repl", stdin=script)
    assert (plain.returncode, plain.stdout) == (
        0,
        "        value  gradient\nresult  4.0\nx       2.0    4.0\n",
    )
    assert nanograd("repl", "--color", "never", stdin=script).stdout == plain.stdout
    for args in (("repl", "--color", "always"), ("--color", "always", "repl")):
        drawn = nanograd(*args, stdin=script, env={**os.environ, "COLUMNS": "80"})
        lines = re.sub(r"\x1b\[[0-9;]*m", "", drawn.stdout).splitlines()
        assert lines == [
            "┏━━━━━━━┳━━━━━━━┳━━━━━━━━━┓",
            "┃       ┃ value ┃ gradient┃",
            "┡━━━━━━━╇━━━━━━━╇━━━━━━━━━┩",
            "│result │   4.0 │         │",
            "│x      │   2.0 │      4.0│",
            "└───────┴───────┴─────────┘",
        ], args
    bad = nanograd("repl", "--color", "sometimes")
    assert (
        bad.returncode == 2 and "'sometimes' is not one of 'auto', 'always', 'never'" in bad.stderr
    )


# Every command, with the command line's options after the expression


def failed(s: Session, line: str, status: int = 1) -> tuple[str, list[str]]:
    """What a line that fails after printing a result prints, and its messages."""
    reply = s.run(line)
    assert reply.status == status, reply.err
    return reply.text(), reply.err


def test_check_against_finite_differences_with_the_tolerances_given():
    s = session("x = 2", "y = 3")
    table = out(s, ":check x*y + tanh(x)")
    rows = {row.split()[0]: row.split() for row in table.splitlines()}
    assert rows["x"][1] == repr(3 - math.tanh(2) ** 2 + 1) and rows["x"][-1] == "yes"
    assert rows["y"][1:2] == ["2.0"] and rows["y"][-1] == "yes"
    # floor at a step: the engine's derivative is 0, a central difference is 1/(2h), large
    s.run("z = 0")
    text, err = failed(s, ":check floor(z) rtol 1e-6 atol 1e-6")
    assert text.splitlines()[1].split()[1] == "0.0" and text.endswith("NO")
    assert err == ["error: gradient check failed for z"]
    assert out(s, ":check floor(z) atol 1e6").endswith("yes")


def test_check_against_a_formula_at_the_point_and_over_a_range():
    s = session("x = 2", "y = 3")
    assert out(s, ":check x**3 against 3*x**2") == (
        "input  formula  points  skipped  differ  max_abs_error  pass\n"
        "x      3*x**2   1       0        0       0.0            yes"
    )
    # a formula with blanks, then a range: 101 points by default
    assert out(s, ":check x**3 against 3 * x**2 x 0:1").splitlines()[1].split()[:6] == [
        "x",
        "3",
        "*",
        "x**2",
        "101",
        "0",
    ]
    assert out(s, ":check x*y against x=y against y=x").splitlines()[1:] == [
        "x      y        1       0        0       0.0            yes",
        "y      x        1       0        0       0.0            yes",
    ]
    text, err = failed(s, ":check x**3 against 3*x x 0.5:2:4")
    assert text.splitlines()[-5:] == [
        "first points where they differ:",
        "d/d  x    engine  formula  abs_error",
        "x    0.5  0.75    1.5      0.75",
        "x    1.5  6.75    4.5      2.25",
        "x    2.0  12.0    6.0      6.0",
    ]
    assert err == [
        "error: the formula for d/dx differs from the engine's derivative at 3 of 4 points"
    ]
    assert error(s, ":check x*y against y") == (
        "error: say which derivative 'y' is: wrt NAME, or NAME=FORMULA (the inputs are x, y)"
    )
    assert out(s, ":check x*y against y wrt x").endswith("yes")
    only_x = out(s, ":check x*y wrt x").splitlines()  # x = 2, y = 3 here: d/dx = y = 3
    assert [line.split()[:2] for line in only_x[1:]] == [["x", "3.0"]]
    assert error(s, ":check x x 0:1") == (
        "error: a range is for :check with against, and for :plot: give each input a value"
    )
    assert error(s, ":check x against 1 q 0:1") == ("error: q 0:1: q is not an input (inputs: x)")


def test_minimize_starts_from_the_session_and_keeps_the_point_only_when_asked():
    s = session("x = 0")
    text = out(s, ":minimize (x - 3)**2 lr 0.1 steps 500")
    point = {row.split()[0]: row.split()[1:] for row in text.splitlines()[1:]}
    assert float(point["x"][0]) == pytest.approx(3, abs=1e-8)  # the minimum, worked out
    assert point["steps"][1] == "converged" and int(point["steps"][0]) <= 500
    assert out(s, ":inputs") == "x = 0.0"
    out(s, ":minimize (x - 3)**2 lr 0.1 keep")
    assert float(out(s, ":inputs").split(" = ")[1]) == pytest.approx(3, abs=1e-8)


def test_minimize_that_runs_out_of_steps_shows_the_point_and_a_note():
    s = session("x = 0", "y = 5")
    text, err = failed(s, ":minimize (x - 3)**2 + y method sgd lr 0.1 steps 5 fix y keep", status=0)
    # sgd on (x-3)**2: x moves 0.2*(3 - x) a step, so 3 - x shrinks by 0.8 each time
    x = float(text.splitlines()[2].split()[1])
    assert x == pytest.approx(3 - 3 * 0.8**5, rel=1e-12)
    assert err == [
        f"note: did not converge: after 5 steps the gradient's norm is {2 * (3 - x):.3g}, "
        "more than tol 1e-08 (more steps, or another lr, may reach it)"
    ]
    assert out(s, ":inputs") == f"x = {x!r}\ny = 5.0"  # kept, though it did not converge
    s.run("x = 0")
    assert failed(s, ":minimize sqrt((x - 3)**2) method sgd lr 3")[1] == [
        "error: diverged at step 1: the gradient by x is nan; try a smaller lr"
    ]


def test_minimize_over_data_and_fit_take_starts_from_the_session(tmp_path: Path):
    data = tmp_path / "d.csv"
    data.write_text("x,y\n0,1.1\n1,2.9\n2,5.2\n3,6.8\n")
    s = session("a = 1", "x = 100")  # x is a column of the data: its value is not used
    assert error(s, f":fit a*x + b data {data}") == (  # the fit's words, as fit's
        "error: no start for parameter b: give a start value for each input that is not a "
        "column of the data"
    )
    s.run("b = 0")
    text = out(s, f":fit a*x + b data {data} keep")
    # least squares by hand: slope 19.4/10 = 1.94, intercept 4 - 1.94*1.5 = 1.09
    rows = {row[:12].strip(): row[12:].split() for row in text.splitlines()}
    assert float(rows["a"][0]) == pytest.approx(1.94, rel=1e-12)
    assert float(rows["b"][0]) == pytest.approx(1.09, rel=1e-12)
    assert rows["converged"][0] == "yes"
    kept = dict(line.split(" = ") for line in out(s, ":inputs").splitlines())
    assert float(kept["a"]) == pytest.approx(1.94, rel=1e-12) and kept["x"] == "100.0"
    s.run("w = 0")
    text = out(s, f":minimize (w*x - y)**2 data {data} lr 0.1")
    w = float(text.splitlines()[2].split()[1])
    assert w == pytest.approx((2.9 + 2 * 5.2 + 3 * 6.8) / 14, rel=1e-6)  # sum(xy)/sum(x²)
    assert error(s, ":fit a*x + b") == (
        "error: :fit needs the data: data FILE, as in :fit a*x + b data points.csv"
    )
    assert error(s, f":fit a*x + b data {data} target log(") == (
        "error: target: line 1, column 4: '(' is never closed\n  1 | log(\n         ^"
    )
    assert error(s, ":minimize w*x seed 1") == (
        "error: seed orders the batches of batch N: without batches it does nothing"
    )
    assert error(s, ":minimize w*x drop-nan") == (
        "error: batch, data-format and drop-nan are for the rows of data FILE"
    )
    assert error(s, ":minimize (w*x - y)**2 data -") == (
        "error: data -: the session reads its lines from standard input; give the data as a file"
    )
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n0,1\n1,oops\n")
    message = error(s, f":fit a*x + b data {bad}")
    assert message.startswith("error: data row 2") and "--" not in message
    bad.write_text("x,y,x\n0,1,2\n")
    assert error(s, f":fit a*x + b data {bad}") == (
        "error: data: the header names the column x twice"
    )


def test_plot_in_the_terminal_is_what_nanograd_plot_prints(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    s = session("x = 1", "y = 2")
    expected = nanograd("plot", "sin(x)*y", "--x", "-3:3", "--y", "2", env={**os.environ})
    assert out(s, ":plot sin(x)*y x -3:3") + "\n" == expected.stdout
    picture = tmp_path / "p.svg"
    assert out(s, f":plot sin(x)*y x -3:3 {picture} ylim -1:1") == f"wrote {picture}"
    assert picture.read_text().lstrip().startswith("<?xml")
    assert error(s, ":plot x*y x 0:1 y 0:1") == (
        "error: a contour plot of two ranges is a picture: add a FILE, as in "
        ":plot x*y x 0:1 y 0:1 plot.png"
    )
    assert error(s, ":plot sin(x)") == (
        "error: give an input a range to plot over, as in :plot sin(x) x -3:3"
    )
    assert error(s, ":plot sin(x) x 3:-3") == (
        "error: x 3:-3: a range goes from low to high (LO < HI)"
    )
    assert error(s, ":plot sin(x) x -3:3 ylim 1") == (
        "error: ylim 1: give LO:HI (e.g. ylim -10:10), auto or full"
    )


def test_grad_diff_draw_take_their_options(tmp_path: Path):
    s = session("x = 2", "y = 3")
    assert out(s, ":grad x*y wrt y") == (
        "        value  gradient\nresult  6.0\nx       2.0\ny       3.0    2.0"
    )
    assert out(s, ":grad x*y mode forward") == out(s, ":grad x*y")
    assert out(s, ":diff x**2 format latex") == "2 x"
    reply = s.run(":grad sqrt(-x) strict")
    assert reply.status == 1 and reply.err[0].startswith("error: line 1, column 1: sqrt gave nan")
    graph = tmp_path / "g.dot"
    assert out(s, f":draw y/2 + 10/x {graph} hide-constants no-legend")
    hidden = graph.read_text()
    out(s, f":draw y/2 + 10/x {graph}")
    assert len(hidden) < len(graph.read_text()) and "legend" not in hidden.lower()
    assert out(s, f":draw y/2 + 10/x dpi 50 format png {tmp_path / 'g'}")
    assert (tmp_path / "g").read_bytes().startswith(b"\x89PNG")
    assert error(s, f":draw x {graph} dpi 50") == "error: dpi is for png; dot is not made of pixels"


def test_a_big_graph_suggests_the_option_as_the_repl_spells_it(tmp_path: Path):
    s = session("x = 2")
    expr = " + ".join(f"x*{k}" for k in range(1, 400))
    reply = s.run(f":draw {expr} {tmp_path / 'big.dot'}")
    assert reply.status == 0
    assert reply.err[-1] == (
        "warning: the graph has 1,994 nodes; for a picture you can read, try hide-constants"
    )


def test_options_are_parsed_alike_for_every_command():
    s = session("x = 2", "lr = 3")
    assert error(s, ":minimize (x - 3)**2 lrr 0.1") == (
        "error: :minimize has no option lrr; did you mean lr? (its options: steps, lr, "
        "method, bound, tol, wrt, fix, data, data-format, drop-nan, batch, seed, weight-decay, "
        "lr-schedule, lr-step-size, lr-gamma, lr-t-max, lr-min, strict, keep)"
    )
    assert error(s, ":minimize x lr") == "error: lr needs a value: lr R"
    assert error(s, ":minimize x lr 1 lr 2") == "error: lr is given twice: give it once"
    assert error(s, ":minimize lr 0.1") == (
        "error: :minimize EXPR: the expression comes first, then the options"
    )
    # a value is checked where the command line's is, in the same words
    assert error(s, ":minimize x steps 0") == "error: invalid value for steps: 0 is not at least 1"
    assert error(s, ":minimize x steps 10.5") == (
        "error: invalid value for steps: '10.5' is not a valid integer"
    )
    assert error(s, ":minimize x lr -1") == "error: invalid value for lr: -1 is not more than 0"
    assert error(s, ":minimize x method rmsprop") == (
        "error: invalid value for method: 'rmsprop' is not one of 'sgd', 'momentum', 'adam', "
        "'bfgs', 'lbfgs', 'newton'"
    )
    assert error(s, ":draw x g.svg rankdir XX") == (
        "error: invalid value for rankdir: 'XX' is not one of 'LR', 'TB', 'RL', 'BT'"
    )
    assert error(s, ":check x*x rtol nan") == "error: invalid value for rtol: nan is not at least 0"
    assert error(s, ":hessian x strictly") == (
        "error: :hessian has no option strictly; did you mean strict? (its options: wrt, strict)"
    )
    # After an operator, a word goes on with the expression; in parentheses, so does an option's
    # name; a word that is no option and like none is the expression's, and its syntax error
    assert out(s, ":grad x * lr") == out(s, ":grad x*(lr)") == out(s, "x*lr")
    assert error(s, ":hessian x y").startswith("error: line 1, column 3: missing operator")
    # names go on up to the next option; a comma may part them
    assert out(s, ":diff x*lr wrt x, lr") == out(s, ":diff x*lr") == "d_x = lr\nd_lr = x"


def test_another_commands_option_or_a_misspelt_one_after_names_is_said_to_be_no_option():
    s = session("x = 3", "stepz = 2")
    assert error(s, ":explain x*x order 2") == (
        "error: :explain has no option order (its options: format, digits, strict)"
    )
    assert error(s, ":grad x*x order 2") == (
        "error: :grad has no option order; did you mean mode? (its options: wrt, mode, strict)"
    )
    diff_options = "(its options: wrt, format, exact, order, mixed, shape, steps, implicit, notes)"
    assert error(s, ":diff x**2 wrt x ordr 2") == (
        f"error: :diff has no option ordr; did you mean order? {diff_options}"
    )
    assert error(s, ":diff x**2 wrt x stps") == (
        f"error: :diff has no option stps; did you mean steps? {diff_options}"
    )
    # a name the expression reads stays a name, however near an option it is
    assert out(s, ":diff stepz**2 wrt stepz") == "2*stepz"


def test_explain_writes_each_format_the_command_line_writes():
    s = session("x = 3")
    for fmt in ["latex", "markdown", "json"]:
        typed = in_process("explain", "x*x + 1", "--x", "3", "--format", fmt)
        assert typed.returncode == 0
        assert out(s, f":explain x*x + 1 format {fmt}") + "\n" == typed.stdout
    assert error(s, ":explain x format html") == (
        "error: invalid value for format: 'html' is not one of 'table', 'markdown', 'latex', 'json'"
    )


def test_help_and_completion_name_every_command_and_its_options():
    from nanograd_cli._session import COMMANDS, OPTIONS, completions

    help_text = out(Session(), ":help")
    for command in [":check", ":minimize", ":fit", ":plot", ":draw"]:
        assert f"\n{command} " in help_text
    assert "hide-constants" in help_text and "--" not in help_text
    s = session("x = 2", "lrate = 1")
    assert [c for _, c in completions(s, ":mi")] == [":minimize"]
    assert list(completions(s, ":draw x g.svg hide-c")) == [("hide-c", "hide-constants")]
    offered = [c for _, c in completions(s, ":minimize x l")]
    assert offered[:7] == [
        *("lr", "lr-schedule", "lr-step-size", "lr-gamma", "lr-t-max", "lr-min"),
        "lrate",
    ]
    assert [c for _, c in completions(s, "x*l")][:2] == ["lrate", "log"]  # no options
    assert [c for _, c in completions(s, "softs")] == ["softsign"]  # the prelude's too
    session_only = (":inputs", ":reset", ":help", ":quit")
    assert set(OPTIONS) == {c for c in COMMANDS if c not in session_only}


def test_pipe_runs_minimize_and_keeps_the_point():
    done = nanograd("repl", stdin="x = 0\n:minimize (x - 3)**2 lr 0.1 keep\n:inputs\nx - 3\n")
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["value", "gradient"] and lines[4].split()[-1] == "converged"
    reached = float(lines[2].split()[1])
    assert reached == pytest.approx(3, abs=1e-8)
    assert lines[5] == f"x = {reached!r}"
    assert lines[7].split() == ["result", repr(reached - 3)]


@pytest.mark.signals
def test_ctrl_c_stops_a_long_minimize_and_shows_the_point_reached(terminal):
    terminal.type("x = 0")
    terminal.child.send(":minimize (x - 3)**2 lr 1e-12 steps 100000000 keep\r")
    time.sleep(1.5)
    terminal.child.send("\x03")
    screen = terminal.wait_for(
        lambda lines: (
            any(x.startswith("│gradient norm") for x in lines) and terminal.last_prompt_is_empty()
        )
    )
    assert any("error: interrupted at step " in line for line in screen)  # after ^C
    screen = terminal.type(":inputs")
    kept = next(line for line in screen if line.startswith("x = "))
    assert 0 < float(kept.split(" = ")[1]) < 3  # moved, and kept


@pytest.mark.signals
def test_ctrl_c_stops_a_long_entry_of_a_script_and_the_script_goes_on():
    """Over a pipe, Ctrl-C in a long :hessian ended the whole script (exit 130, nothing
    said, the lines after it never run): it stops that entry, as it stops :minimize's."""
    # (about 14 s of work on the 2-core development machine; 3,000 shorter terms, under 3 s
    # there, were done in under 1.5 s in one CI run, before the signal came)
    long = "+".join(f"sin(x*{k})*cos(y + {k})*exp(x*y/{k + 1})" for k in range(12000))
    child = subprocess.Popen(
        [NANOGRAD, "repl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    child.stdin.write(f"x = 2\ny = 1\n:hessian {long}\n")
    child.stdin.flush()
    time.sleep(1.5)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate("x*x\n", timeout=60)
    assert child.returncode == 130
    assert err == "error: line 3: interrupted\n"
    assert out.split()[:5] == ["value", "gradient", "result", "4.0", "x"]


def test_explain_takes_the_digits_of_the_command_line():
    """:explain digits 3 prints what nanograd explain --digits 3 does."""
    s = session("x = 2")
    for fmt in ("table", "latex"):
        reply = s.run(f":explain x**x format {fmt} digits 3")
        done = in_process("explain", "x**x", "--x", "2", "--format", fmt, "--digits", "3")
        assert reply.text() + "\n" == done.stdout, fmt
        full = s.run(f":explain x**x format {fmt} digits full").text()
        assert s.run(f":explain x**x format {fmt} digits FULL").text() == full
    assert error(s, ":explain x**x digits 0") == (
        "error: invalid value for digits: '0' is neither a number of digits from 1 to 17 nor 'full'"
    )


def test_an_inputs_value_typed_after_the_expression_says_how_to_give_it():
    s = session("x = 2")
    hint = "x 3: an input's value is not an option; give it on a line of its own first (x = 3)"
    assert error(s, ":check x**2 x 3") == f"error: {hint}, or a range to :check over: x LO:HI"
    assert error(s, ":check x**3 against 3*x**2 x 3").startswith(f"error: {hint}")
    assert error(s, ":hessian x**2 x 3") == f"error: {hint}"
    # a typo of an option is still said to be one, and so is a word the expression does not read
    assert error(s, ":minimize x**2 lrr 0.1").startswith("error: :minimize has no option lrr;")
    assert error(s, ":hessian x**2 frobnicate 3").startswith(
        "error: :hessian has no option frobnicate"
    )


def test_a_mistyped_command_gets_the_nearest_and_extra_words_are_refused():
    s = session("x = 2")
    assert error(s, ":chek x").startswith("error: unknown command :chek; did you mean :check?")
    assert error(s, ":gard x").startswith("error: unknown command :gard; did you mean :grad?")
    for entry in (":reset extra", ":quit now", ":help me", ":inputs all"):
        command, word = entry.split()
        assert error(s, entry) == f"error: {command} takes nothing after it: '{word}' is extra"
    assert s.inputs == {"x": 2.0} and not s.run(":quit now").quit
    # a flag said twice is said once
    assert out(s, ":grad x**2 strict strict") == out(s, ":grad x**2 strict")
    assert error(s, ":minimize x lr 1 lr 2") == "error: lr is given twice: give it once"


def test_a_strict_error_shows_its_place_once():
    s = session("x = -1", "f(t) = log(t)")
    reply = s.run(":grad log(x) strict", line=3)
    assert reply.status == 1
    assert reply.err == ["error: line 3, column 1: log gave nan\n  3 | log(x)\n      ^"]
    reply = s.run(":grad f(x) strict", line=4)
    assert reply.err == [
        "error: line 4: log gave nan, in a definition:\n  f(t) = log(t)\n         ^"
    ]
    assert s.run(":explain log(x) strict").err[0].startswith("error: line 1, column 1: log")


def test_an_interrupted_descent_says_so_and_after_how_many_steps():
    from nanograd_cli import _api as api
    from nanograd_cli import parse
    from nanograd_cli.errors import Interrupted
    from nanograd_cli.render._text import table_rows, to_json

    def stop(step: int, value: float) -> None:
        if step == 7:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as raised:
        api.minimize(parse("(x - 3)**2"), {"x": 0.0}, steps=100, on_step=stop)
    reached = raised.value.reached
    assert str(raised.value) == "interrupted at step 7: the output is the point reached"
    assert reached.interrupted and reached.steps == 7
    assert table_rows(reached)[-1] == ["steps", "7", "interrupted"]
    assert '"interrupted": true' in to_json(reached)


def test_fit_takes_loss_f_scale_and_profile(tmp_path: Path):
    data = tmp_path / "d.csv"
    data.write_text("x,y\n0,1.1\n1,2.9\n2,5.2\n3,6.8\n4,15\n")
    s = session("a = 1", "b = 0")
    text = out(s, f":fit a*x + b data {data} loss cauchy f-scale 0.5 ci 0.9")
    rows = {row[:12].strip(): row[12:].split() for row in text.splitlines()}
    assert rows["loss"][:3] == ["cauchy", "f_scale", "0.5;"]
    assert error(s, f":fit a*x + b data {data} f-scale 2") == (
        "error: f-scale sets where a robust loss turns from squares: with the linear loss it "
        "does nothing"
    )
    assert error(s, f":fit a*x + b data {data} profile") == (
        "error: profile finds the intervals of ci LEVEL: without a level it does nothing"
    )
    profiled = out(s, f":fit a*x + b data {data} ci 0.9 profile")
    plain = out(s, f":fit a*x + b data {data} ci 0.9")
    # a straight line: χ² is a parabola in each parameter, so that the profile intervals are
    # value ± t·se exactly (F(1, dof) is t(dof)²)
    for name in ("a", "b"):
        ends = [line.split()[3:5] for line in profiled.splitlines() if line.split()[0] == name]
        expected = [line.split()[3:5] for line in plain.splitlines() if line.split()[0] == name]
        assert [float(x) for x in ends[0]] == pytest.approx([float(x) for x in expected[0]])


def test_an_array_with_nan_is_a_value_and_inputs_writes_it_back():
    done = in_process(
        "repl", stdin="x = [1, nan]\nW = [[1, 2], [3, inf]]\n:inputs\n:grad sum(x*x)\n"
    )
    assert done.stdout.splitlines()[:2] == ["x = [1.0, nan]", "W = [[1.0, 2.0], [3.0, inf]]"]
    assert "input x[1] is nan" in done.stderr and "missing value" not in done.stderr


def test_taylor_prints_its_table_a_blank_line_and_the_polynomial_as_the_command_does():
    s = session("x = 1")
    text = out(s, ":taylor exp(x) wrt x order 2")
    done = in_process("taylor", "exp(x)", "--x", "1", "--order", "2")
    assert text + "\n" == done.stdout
    assert text.splitlines()[-2:] == ["", "e + e*(x - 1) + e*(x - 1)**2/2"]


# two runs of a decay, as docs/fit.md fits them
RUNS = (
    "run,t,y\nA,0,5.1\nB,0,2.9\nA,1,3.0\nB,1,2.2\nA,2,1.9\nB,2,1.6\nA,3,1.1\nB,3,1.2\n"
    "A,4,0.7\nB,4,0.9\n"
)


def test_fit_by_plot_and_save_are_the_commands(tmp_path: Path, monkeypatch):
    """:fit's by, shared, restarts, plot (a file, or - for text) and save reach the fit and
    its picture and file as nanograd fit's --by, --shared, --plot and --save do."""
    monkeypatch.setenv("COLUMNS", "80")
    data = tmp_path / "runs.csv"
    data.write_text(RUNS)
    command = ["fit", "a*exp(-k*t)", "--data", str(data), "--by", "run", "--a", "1", "--k", "0.1"]
    s = session("a = 1", "k = 0.1")
    fit = f":fit a*exp(-k*t) data {data} by run"
    saved, expected = tmp_path / "r.json", tmp_path / "expected.json"
    reply = s.run(f"{fit} save {saved} plot -")
    assert (reply.status, reply.err) == (0, [])
    cli = in_process(*command, "--plot", "-", "--save", str(expected))
    table, picture, wrote = reply.out
    assert table.plain() + "\n" == cli.stdout
    assert picture + "\n" == cli.stderr  # the plot in text, on the repl's output
    assert (wrote, saved.read_bytes()) == (f"wrote {saved}", expected.read_bytes())
    assert out(s, f"{fit} shared k") + "\n" == in_process(*command, "--shared", "k").stdout
    assert out(s, f"{fit} restarts 2 seed 1") + "\n" == (
        in_process(*command, "--restarts", "2", "--seed", "1").stdout
    )
    svg = tmp_path / "r.svg"
    assert out(s, f"{fit} plot {svg} band 0.95").endswith(f"\nwrote {svg}")
    assert "a*exp(-k*t), a fit per run" in svg.read_text()
    assert error(s, f"{fit} keep") == (
        "error: keep makes one fit's parameters the inputs' values; by COLUMN fits each "
        "group: leave out keep"
    )
    assert error(s, f"{fit} logx") == "error: logx is an axis of plot FILE: give one"
    assert error(s, f"{fit} band 0.9") == (
        "error: band LEVEL is drawn on plot and written with predict or output"
    )
    assert error(s, f":fit a*exp(-k*t) data {data} shared k") == (
        "error: shared shares a parameter between the groups of by: give the column of the groups"
    )
    assert error(s, f":fit a*exp(-k*t) data {data} by Run") == (
        "error: by Run: the data has no column Run (its columns: run, t, y); did you mean run?"
    )


def test_pipe_fits_by_group_and_saves(tmp_path: Path):
    (tmp_path / "runs.csv").write_text(RUNS)
    done = nanograd(
        "repl",
        stdin="a = 1\nk = 0.1\n:fit a*exp(-k*t) data runs.csv by run save r.json\n",
        cwd=tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[0].split() == ["run", "a", "stderr", "k", "stderr", "rss",
                                                   "converged"]  # fmt: skip
    assert done.stdout.endswith("wrote r.json\n")
    assert json.loads((tmp_path / "r.json").read_text())["by"] == "run"


def test_a_missing_value_in_data_names_drop_nan_in_the_repl_and_python_as_on_the_command_line(
    tmp_path: Path,
):
    import nanograd_cli
    from nanograd_cli.errors import InputError

    rows = tmp_path / "rows.csv"
    rows.write_text("x,y\n0,1\n1,3\n,5\n3,7\n")
    typed = in_process("minimize", "(w*x + b - y)**2", "--data", str(rows), "--w", "0", "--b", "0")
    assert typed.stderr == (
        "error: --data row 3, column x: a missing value (empty, NA or nan); --drop-nan leaves out "
        "the rows with one\n"
    )
    s = session("w = 0", "b = 0")
    assert error(s, f":minimize (w*x + b - y)**2 data {rows}") == (
        "error: data row 3, column x: a missing value (empty, NA or nan); drop-nan leaves out "
        "the rows with one"
    )
    with pytest.raises(InputError) as raised:
        nanograd_cli.minimize("(w*x + b - y)**2", data=rows, w=0, b=0)
    assert str(raised.value) == (
        "data row 3, column x: a missing value (empty, NA or nan); drop_nan leaves out the rows "
        "with one"
    )
    # with drop-nan, the three rows left give the same descent through every door
    kept = in_process(
        "minimize", "(w*x + b - y)**2", "--data", str(rows), "--drop-nan", "--w", "0", "--b", "0",
        "--steps", "5", "--format", "json",
    )  # fmt: skip
    reply = s.run(f":minimize (w*x + b - y)**2 data {rows} drop-nan steps 5")
    assert reply.err[0] == "note: 1 row with a missing value (nan, empty or NA) left out"
    found = json.loads(kept.stdout)
    with pytest.warns(nanograd_cli.NanogradWarning):
        python = nanograd_cli.minimize(
            "(w*x + b - y)**2", data=rows, w=0, b=0, drop_nan=True, steps=5
        )
    assert python.inputs == found["inputs"]


# an exponential decay, and rows to predict at, as docs/fit.md has them
DECAY = "x,y\n0,3.02\n0.5,1.83\n1,1.17\n1.5,0.86\n2,0.69\n2.5,0.6\n3,0.56\n"
AGAIN = "x,y\n0,3.31\n0.5,2.02\n1,1.29\n1.5,0.95\n2,0.77\n2.5,0.66\n3,0.62\n"


def test_fit_predict_output_and_load_are_the_commands(tmp_path: Path):
    """:fit's predict (with band), output and load print and write what nanograd fit's
    --predict, -o and --load do, byte for byte."""
    data, later, again = (tmp_path / n for n in ("decay.csv", "later.csv", "again.csv"))
    data.write_text(DECAY)
    later.write_text("x\n0.25\n4\n")
    again.write_text(AGAIN)
    model = "a*exp(-b*x) + c"
    command = ["fit", model, "--data", str(data), "--a", "1", "--b", "1", "--c", "0"]
    fit = f":fit {model} data {data}"
    s = session("a = 1", "b = 1", "c = 0")

    def cli(*more: str) -> str:
        done = in_process(*command, *more)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        return done.stdout

    # predictions in place of the fit: CSV, as on the command line's standard output
    predicted = out(s, f"{fit} predict {later} band 0.95")
    assert predicted + "\n" == cli("--predict", str(later), "--band", "0.95")
    assert predicted.splitlines()[0] == "x,fitted,fitted_se,lower,upper,pred_lower,pred_upper"
    # output: the data's rows with fitted values, or the predictions, in the file's format
    for name, more in [
        ("fitted.csv", ["band", "0.9"]),
        ("fitted.parquet", []),
        ("predicted.jsonl", ["predict", str(later)]),
        ("predicted.csv", ["predict", str(later), "band", "0.5"]),
    ]:
        mine, theirs = tmp_path / f"repl-{name}", tmp_path / f"cli-{name}"
        shown = out(s, f"{fit} output {mine} {' '.join(more)}")
        dashed = [f"--{word}" if word in ("band", "predict") else word for word in more]
        assert shown + "\n" == cli("-o", str(theirs), *dashed) + f"wrote {mine}\n"
        assert mine.read_bytes() == theirs.read_bytes(), name
    # load: the saved fit shown, predicting, or starting a new fit from its values
    saved = tmp_path / "decay.json"
    assert out(s, f"{fit} save {saved}").endswith(f"\nwrote {saved}")
    loaded = in_process("fit", "--load", str(saved), "--stats")
    assert out(s, f":fit load {saved} stats") + "\n" == loaded.stdout
    loaded = in_process("fit", "--load", str(saved), "--predict", str(later), "--band", "0.9")
    assert out(s, f":fit load {saved} predict {later} band 0.9") + "\n" == loaded.stdout
    # the saved values start the fit, whatever the session's values (a = 1, ...)
    anew = in_process("fit", model, "--data", str(again), "--load", str(saved))
    assert out(s, f":fit {model} data {again} load {saved}") + "\n" == anew.stdout
    assert out(s, ":inputs").splitlines()[:3] == ["a = 1.0", "b = 1.0", "c = 0.0"]
    # with keep, a saved fit's values become the inputs', to start another fit from
    out(s, f":fit load {saved} keep")
    values = dict(line.split(" = ") for line in out(s, ":inputs").splitlines())
    document = json.loads(saved.read_text())
    assert {n: float(values[n]) for n in "abc"} == document["parameters"]


def test_fit_predicts_each_group_with_its_fit_as_the_command_does(tmp_path: Path):
    data, later = tmp_path / "runs.csv", tmp_path / "later.csv"
    data.write_text(RUNS)
    later.write_text("run,t\nB,0.5\nA,2.5\n")
    saved = tmp_path / "runs.json"
    s = session("a = 1", "k = 0.1")
    typed = out(s, f":fit a*exp(-k*t) data {data} by run predict {later} band 0.95 save {saved}")
    command = ["fit", "a*exp(-k*t)", "--data", str(data), "--by", "run", "--a", "1", "--k", "0.1"]
    done = in_process(*command, "--predict", str(later), "--band", "0.95")
    assert typed + "\n" == done.stdout + f"wrote {saved}\n"
    assert out(s, f":fit load {saved} predict {later} band 0.95") + "\n" == done.stdout
    assert error(s, f":fit load {saved} keep") == (
        f"error: keep makes one fit's parameters the inputs' values; {saved} holds the fits of "
        "the groups of run: leave out keep"
    )


def test_a_failed_or_interrupted_fit_writes_no_file_in_the_repl_as_on_the_command_line(
    tmp_path: Path, monkeypatch
):
    data, later = tmp_path / "decay.csv", tmp_path / "later.csv"
    data.write_text(DECAY)
    later.write_text("x\n0.25\n4\n")
    files = [tmp_path / n for n in ("out.csv", "fit.json")]
    s = session("a = 1", "b = 1", "c = 0")
    reply = s.run(f":fit a*exp(-b*x) + c data {data} steps 1 output {files[0]} save {files[1]}")
    done = in_process(
        "fit", "a*exp(-b*x) + c", "--data", str(data), "--a", "1", "--b", "1", "--c", "0",
        "--steps", "1", "-o", str(files[0]), "--save", str(files[1]),
    )  # fmt: skip
    assert (reply.status, done.returncode) == (1, 1)
    assert reply.text() + "\n" == done.stdout  # the point reached
    assert "\n".join(reply.err) + "\n" == done.stderr.replace("--steps", "steps")
    assert reply.err[0] == f"note: {files[0]} and {files[1]} not written: the fit did not converge"
    assert not any(f.exists() for f in files)
    reply = s.run(f":fit a*exp(-b*x) + c data {data} steps 1 predict {later}")
    assert reply.status == 1 and reply.text() + "\n" == done.stdout  # the point, no prediction

    from nanograd_cli import _api as api
    from nanograd_cli._io import read_rows
    from nanograd_cli._language import parse
    from nanograd_cli.errors import Interrupted

    columns = read_rows(str(data), "csv", ["x", "y"]).columns
    reached = api.fit(parse("a*exp(-b*x) + c"), columns, {"a": 1, "b": 1, "c": 0}, steps=1)

    def stopped(*args, **kwargs):  # Ctrl-C during the fit, with the point it had reached
        raise Interrupted("interrupted at step 1: the output is the point reached", reached)

    monkeypatch.setattr(api, "fit", stopped)
    reply = s.run(f":fit a*exp(-b*x) + c data {data} output {files[0]} keep")
    assert reply.status == 130 and reply.text() + "\n" == done.stdout
    assert reply.err[-2:] == [
        f"note: {files[0]} not written: the fit was interrupted",
        "error: interrupted at step 1: the output is the point reached",
    ]
    assert not files[0].exists()
    assert out(s, ":inputs").splitlines()[0] == f"a = {reached.parameters['a']!r}"  # kept


def test_bad_predict_output_and_load_say_what_the_command_line_says(tmp_path: Path):
    """Each bad input of :fit's predict, output and load is the command line's one-line
    error, its options spelled without dashes."""
    data, saved = tmp_path / "decay.csv", tmp_path / "decay.json"
    data.write_text(DECAY)
    for name, text in [("t.csv", "t\n1\n"), ("gap.csv", "x\n1\nNA\n2\n"), ("bad.json", "[1]")]:
        (tmp_path / name).write_text(text)
    model, starts = "a*exp(-b*x) + c", ["--a", "1", "--b", "1", "--c", "0"]
    in_process("fit", model, "--data", str(data), *starts, "--save", str(saved))
    s = session("a = 1", "b = 1", "c = 0")
    fit, line = [model, "--data", data, *starts], f"{model} data {data}"
    cases = [  # the command line's arguments and error, the repl's words after :fit and error
        (
            [*fit, "--predict", "t.csv"],
            "missing value for input x: give --predict a column x",
            f"{line} predict t.csv",
            "missing value for input x: give predict a column x",
        ),
        (
            [*fit, "--predict", "gap.csv"],
            "--predict row 2, column x: a missing value (empty, NA or nan); give x on every "
            "row to predict at",
            f"{line} predict gap.csv",
            "predict row 2, column x: a missing value (empty, NA or nan); give x on every row "
            "to predict at",
        ),
        (
            [*fit, "-o", data],
            f"{data} is the --data file, which is read: write to another file",
            f"{line} output {data}",
            f"{data} is the data file, which is read: write to another file",
        ),
        (
            [*fit, "--band", "0.9"],
            "--band LEVEL is drawn on --plot and written with --predict or -o",
            f"{line} band 0.9",
            "band LEVEL is drawn on plot and written with predict or output",
        ),
        (
            [*fit, "-o", "x.xlsx"],
            "cannot tell the format of x.xlsx from its extension: use .csv, .tsv, .parquet, "
            ".arrow, .feather, .jsonl or .json",
            f"{line} output x.xlsx",
            "cannot tell the format of x.xlsx from its extension: use .csv, .tsv, .parquet, "
            ".arrow, .feather, .jsonl or .json",
        ),
        (
            ["--load", "bad.json"],
            'bad.json: not a fit saved by nanograd fit --save (no "format": "nanograd fit")',
            "load bad.json",
            'bad.json: not a fit saved by nanograd fit --save (no "format": "nanograd fit")',
        ),
        (
            ["--load", saved, "--fix", "a", "--bound", "b=0:2", "--plot", "p.svg"],
            "--load alone takes a saved fit, not another one: leave out --fix, --bound, --plot "
            "(it draws the data) (or give SOURCE and --data for a new fit from its values)",
            f"load {saved} fix a bound b=0:2 plot p.svg",
            "load alone takes a saved fit, not another one: leave out fix, bound, plot (it "
            "draws the data) (or give EXPR and data for a new fit from its values)",
        ),
        (
            ["--load", saved, "-o", "o.csv"],
            "--load alone takes a saved fit, not another one: leave out -o (it writes the "
            "data's rows; --predict FILE writes a prediction) (or give SOURCE and --data for a "
            "new fit from its values)",
            f"load {saved} output o.csv",
            "load alone takes a saved fit, not another one: leave out output (it writes the "
            "data's rows; predict FILE writes a prediction) (or give EXPR and data for a new "
            "fit from its values)",
        ),
        (
            ["--load", saved, "--save", "s.json"],
            "--load with --save would copy the saved fit: copy the file itself instead",
            f"load {saved} save s.json",
            "load with save would copy the saved fit: copy the file itself instead",
        ),
        (
            ["--load", saved, "--data", data],
            "--load FIT.json with --data starts a new fit from the saved values: give the "
            "model, SOURCE, too",
            f"load {saved} data {data}",
            "load FIT.json with data starts a new fit from the saved values: give the model, "
            "EXPR, too",
        ),
        (
            ["--load", saved, "--predict", "t.csv", "--band", "95"],
            "--band 95: a level between 0 and 1, such as 0.95 (95 is a percentage: 0.95)",
            f"load {saved} predict t.csv band 95",
            "band 95: a level between 0 and 1, such as 0.95 (95 is a percentage: 0.95)",
        ),
    ]
    for args, message, words, said in cases:
        done = in_process("fit", *map(str, args), cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")
        with chdir(tmp_path):
            assert error(s, f":fit {words}") == f"error: {said}"
    # a file that could not be written is refused before the fit, as on the command line
    missing = tmp_path / "no" / "fit.json"
    done = in_process("fit", *map(str, fit), "--save", str(missing))
    reply = s.run(f":fit {line} save {missing}")
    assert (reply.status, reply.out) == (done.returncode, []) == (1, [])
    assert reply.err == [done.stderr.rstrip("\n")] == [f"error: cannot write {missing}: No such "
                                                       "file or directory"]  # fmt: skip
    assert error(s, f":fit {model} data {data} predict -") == (
        "error: predict -: the session reads its lines from standard input; give the rows to "
        "predict at as a file"
    )


def test_fit_keep_makes_the_fits_parameters_the_inputs_also_when_it_predicts(tmp_path):
    (tmp_path / "line.csv").write_text("x,y\n0,1\n1,3\n2,5.1\n3,6.9\n")
    (tmp_path / "later.csv").write_text("x\n5\n")
    lines = "a = 0.5\nb = 1\n:fit a*x + b data line.csv keep predict later.csv\n:inputs\n"
    done = in_process("repl", stdin=lines, cwd=tmp_path)
    # The least-squares line through these rows is a = 1.98, b = 1.03 exactly; the fit reaches
    # it to rounding, whose last bit differs between builds of the linear algebra.
    last = [line.split(" = ") for line in done.stdout.splitlines()[-2:]]
    assert [name for name, _ in last] == ["a", "b"]
    assert [float(value) for _, value in last] == [pytest.approx(1.98, rel=1e-13),
                                                   pytest.approx(1.03, rel=1e-13)]  # fmt: skip
