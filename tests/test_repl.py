"""`nanograd repl`: the session line by line, through a pipe, and on a pseudo-terminal."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pyte
import pytest

from nanograd_cli.repl import Session, scripted, statements, unclosed

from .helpers import NANOGRAD, in_process, nanograd, on_terminal, visible

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
        "from nanograd_cli.cli import main\n"
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
            NANOGRAD, ["repl", *args], env=env, dimensions=(rows, columns), encoding="utf-8"
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
