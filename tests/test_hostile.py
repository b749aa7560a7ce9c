"""Hostile input, run as an attacker would: the installed command in a shell, under `timeout 60`
and `ulimit -v 4000000` (small non-finite and mistyped inputs, which need neither, run in
process). Non-finite inputs, closed and full standard streams, endless and
oversized sources, --each-line's bytes and line ends."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import nanograd_cli
from nanograd_cli import _memory as memory
from nanograd_cli._language import check_memory
from nanograd_cli._output_files import target, write_atomically
from nanograd_cli.errors import NanogradError

from .helpers import (
    NANOGRAD,
    as_typed,
    default_signals,
    in_process,
    limited,
    on_terminal,
    pdflatex,
    visible,
)


def caret(message: str, line: str, column: int, number: int = 1) -> str:
    """A message at a place in the source, as standard error shows it."""
    margin = f"{number} | "
    return f"{message}\n  {margin}{line}\n  {' ' * (len(margin) + column - 1)}^\n"


# Non-finite inputs: a warning naming the input; --strict makes it exit 1.


@pytest.mark.parametrize(
    "value, shown, csv",
    [("nan", "nan", "NaN"), ("inf", "inf", "inf"), ("-Infinity", "-inf", "-inf")],
)
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_non_finite_input_is_named_and_strict_fails(value, shown, csv, mode):
    where = caret(f"line 1, column 1: input x is {shown}", "x*2", 1)
    code, out, err = as_typed(f"nanograd grad 'x*2' --x {value} --mode {mode} --format csv")
    assert (code, err) == (0, f"warning: {where}")
    assert out == f"value,d_x\n{csv},2.0\n"
    code, out, err = as_typed(f"nanograd grad 'x*2' --x {value} --mode {mode} --strict")
    assert (code, out, err) == (1, "", f"error: {where}")


@pytest.mark.parametrize("command", ["hessian", "check", "explain", "draw", "minimize"])
def test_every_command_warns_of_a_non_finite_input_and_has_strict(command):
    where = caret("line 1, column 5: input x is inf", "exp(x)", 5)
    code, out, err = as_typed(f"nanograd {command} 'exp(x)' --x inf")
    assert err.startswith(f"warning: {where}")
    code, out, err = as_typed(f"nanograd {command} 'exp(x)' --x inf --strict")
    assert (code, out, err) == (1, "", f"error: {where}")
    code, out, err = as_typed(f"nanograd {command} --help")
    assert code == 0 and "--strict" in out and "input is nan or inf" in " ".join(out.split())


@pytest.mark.parametrize("command", ["hessian", "check", "explain", "draw"])
def test_every_command_warns_of_an_operation_that_made_nan(command):
    where = caret("line 1, column 1: log gave nan", "log(x)", 1)
    code, out, err = as_typed(f"nanograd {command} 'log(x)' --x -1")
    assert err.startswith(f"warning: {where}")
    code, out, err = as_typed(f"nanograd {command} 'log(x)' --x -1 --strict")
    assert (code, out, err) == (1, "", f"error: {where}")


def test_hessian_of_log_at_minus_one_warns():
    code, out, err = as_typed("nanograd hessian 'log(x)' --x -1 --format json")
    assert code == 0 and err == "warning: " + caret("line 1, column 1: log gave nan", "log(x)", 1)
    assert '"value": "nan"' in out


def test_minimize_checks_its_starting_point():
    where = caret("line 1, column 2: input x is nan", "(x-1)**2", 2)
    code, out, err = as_typed("nanograd minimize '(x-1)**2' --x nan --strict")
    assert (code, out, err) == (1, "", f"error: {where}")
    code, out, err = as_typed("nanograd minimize '(x-1)**2' --x 3 --strict --format csv")
    assert code == 0 and err == "" and out.startswith("value,x,d_x,")


def test_each_line_names_the_line_of_a_non_finite_input():
    code, out, err = limited(
        "nanograd grad - --each-line --x nan --y 1 --strict --format csv", stdin=b"x*2\ny\n"
    )
    assert code == 1
    assert out == "line,value,d_x,d_y\n2,1.0,0.0,1.0\n"
    assert err == "error: " + caret("line 1, column 1: input x is nan", "x*2", 1)
    code, out, err = limited(
        "nanograd grad - --each-line --x -1 --format csv", stdin=b"x\nlog(x)\n"
    )
    assert code == 0 and out == "line,value,d_x\n1,-1.0,1.0\n2,NaN,-1.0\n"
    assert err == "warning: " + caret("line 2, column 1: log gave nan", "log(x)", 1, number=2)


@pytest.mark.slow
def test_huge_and_overflowing_values_are_bad_input():
    digits = "9" * 100_000
    code, out, err = limited(f"nanograd grad 'x*2' --x {digits}")
    shown = "9" * 39 + "…"
    assert (code, out, err) == (2, "", f"error: --x {shown} is too large for a float\n")
    code, out, err = limited(f"nanograd grad 'x*2' --x 0.{digits} --format csv --strict")
    assert (code, out, err) == (0, "value,d_x\n2.0,2.0\n", "")
    code, out, err = limited("nanograd grad 'x*2' --x -1e999")
    assert (code, out, err) == (2, "", "error: --x -1e999 is too large for a float\n")


# Closed and full standard streams: one error line, exit 1, never silence.

WRITE_CLOSED = "error: cannot write standard output: Bad file descriptor\n"
WRITE_FULL = "error: cannot write standard output: No space left on device\n"
READ_CLOSED = "error: cannot read standard input: Bad file descriptor\n"

WRITERS = [
    "nanograd grad 'x*x' --x 1 --format csv",
    "nanograd grad 'x*x' --x 1",
    "nanograd grad 'x*x' --x 1 --format json --mode forward",
    "nanograd diff 'x*x'",
    "nanograd draw 'x*x' --x 1 -o -",
    "nanograd draw 'x*x' --x 1 -o - --format svg",
    "nanograd hessian 'x*x' --x 1",
    "nanograd check 'x*x' --x 1",
    "nanograd explain 'x*x' --x 1",
    "nanograd minimize '(x-1)**2' --x 0",
    "nanograd plot 'x*x' --x 0:1",
    "printf 'x\\nx*x\\n' | nanograd grad - --each-line --x 1 --format csv",
    "printf 'x=1\\nx*x\\n' | nanograd repl",
    "nanograd --version",
    "nanograd grad --help",
    "nanograd --help",
]


@pytest.mark.slow
@pytest.mark.parametrize("command", WRITERS)
def test_closed_standard_output(command):
    assert limited(f"{command} >&-") == (1, "", WRITE_CLOSED)


@pytest.mark.slow
@pytest.mark.parametrize("command", WRITERS)
def test_full_standard_output(command):
    assert limited(f"{command} > /dev/full") == (1, "", WRITE_FULL)


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        "nanograd grad - --x 1",
        "nanograd grad - --x 1 --each-line",
        "nanograd draw - --x 1",
        "nanograd diff -",
        "nanograd repl",
    ],
)
def test_closed_standard_input(command):
    assert limited(f"{command} <&-") == (1, "", READ_CLOSED)


@pytest.mark.slow
def test_points_with_closed_or_full_streams(tmp_path):
    pytest.importorskip("pyarrow")
    rows = b"x\n1\n2\n"
    assert limited("nanograd grad -e 'x*x' --points - >&-", stdin=rows) == (1, "", WRITE_CLOSED)
    assert limited("nanograd grad -e 'x*x' --points - >/dev/full", stdin=rows) == (
        1,
        "",
        WRITE_FULL,
    )
    assert limited("nanograd grad -e 'x*x' --points - <&-") == (1, "", READ_CLOSED)
    # Results to a file need no standard output.
    code, out, err = limited(
        "nanograd grad -e 'x*x' --points - -o out.csv >&-", stdin=rows, cwd=str(tmp_path)
    )
    assert (code, out, err) == (0, "", "")
    assert (tmp_path / "out.csv").read_text() == "x,value,d_x\n1,1.0,2.0\n2,4.0,4.0\n"


@pytest.mark.slow
def test_a_closed_stream_is_not_taken_by_a_file(tmp_path):
    """With standard output or error closed, the picture written is the picture alone."""
    for closed in (">&-", "2>&-", ">&- 2>&-"):
        picture = tmp_path / "graph.dot"
        code, out, err = limited(f"nanograd draw 'x*x' --x 1 -o {picture} {closed}")
        assert code == 0 and picture.read_text().startswith("digraph nanograd {")
        assert "error" not in picture.read_text()
    code, out, err = limited("nanograd grad 'x*2' --x nan --strict 2>&-")
    assert (code, out, err) == (1, "", "")


# Endless and oversized sources: refused before memory runs out.

REFUSAL = re.compile(
    r"error: the source is at least [\d.]+ MB: its graph would need at least [\d.]+ GB of "
    r"memory, and [\d.]+ GB is free\n"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        "nanograd grad /dev/zero",
        "nanograd grad -f /dev/zero --x 1",
        "nanograd grad - < /dev/zero",
        "nanograd grad /dev/zero --each-line --x 1",
        "nanograd grad - --each-line < /dev/zero",
        "nanograd draw /dev/zero",
        "nanograd diff /dev/zero",
    ],
)
def test_an_endless_source_is_refused(command):
    code, out, err = limited(command)
    assert code == 1 and out == "" and REFUSAL.fullmatch(err), err


@pytest.mark.slow
@pytest.mark.parametrize("how", ["big.txt", "- < big.txt", "-f big.txt", "- --each-line < big.txt"])
def test_a_3_mb_source_under_a_600_mb_limit_is_refused(tmp_path, how):
    (tmp_path / "big.txt").write_text("x+" * 1_500_000 + "x")
    code, out, err = limited(f"ulimit -v 600000; nanograd grad {how} --x 1", cwd=str(tmp_path))
    assert code == 1 and out == "" and REFUSAL.fullmatch(err), err


@pytest.mark.slow
def test_a_source_that_fits_is_read_whole(tmp_path):
    """Read in chunks, checked as it grows: a source past the first check still runs."""
    (tmp_path / "long.txt").write_text("x+" * 100_000 + "x")
    for how in ("long.txt", "- < long.txt"):
        code, out, err = limited(f"nanograd grad {how} --x 1 --format csv", cwd=str(tmp_path))
        assert (code, out, err) == (0, "value,d_x\n100001.0,100001.0\n", "")


def test_memory_left_counts_the_process_limit():
    script = (
        "from nanograd_cli import _memory as memory; "
        "print(memory.process_limit_left(), memory.available())"
    )
    done = subprocess.run(
        ["bash", "-c", f'ulimit -v 600000; "$PYTHON" -c "{script}"'],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON": sys.executable},
        timeout=60,
    )
    left, available = map(int, done.stdout.split())
    # The limit less what the interpreter already has mapped (tens of MB).
    assert 400_000_000 < left < 600_000 * 1024 and available <= left


def test_memory_left_reads_cgroups_v1_and_v2(tmp_path):
    v2 = tmp_path / "v2"
    (v2 / "box").mkdir(parents=True)
    (v2 / "box" / "memory.max").write_text("1000000000\n")
    (v2 / "box" / "memory.current").write_text("300000000\n")
    (v2 / "box" / "memory.stat").write_text("anon 1\ninactive_file 50000000\n")
    cgroups = tmp_path / "cgroup"
    cgroups.write_text("0::/box\n")
    assert memory.cgroup_left(str(v2), str(cgroups)) == 750_000_000
    (v2 / "box" / "memory.max").write_text("max\n")
    assert memory.cgroup_left(str(v2), str(cgroups)) is None
    # v1, in a container: the cgroup's own directory is mounted as the hierarchy's root.
    v1 = tmp_path / "v1" / "memory"
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text("2000000000\n")
    (v1 / "memory.usage_in_bytes").write_text("500000000\n")
    (v1 / "memory.stat").write_text("total_inactive_file 100000000\n")
    cgroups.write_text("4:memory:/some/where\n0::/\n")
    assert memory.cgroup_left(str(tmp_path / "v1"), str(cgroups)) == 1_600_000_000
    (v1 / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # no limit
    assert memory.cgroup_left(str(tmp_path / "v1"), str(cgroups)) is None


def test_a_source_read_so_far_is_refused_with_at_least(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 4000000 kB\nMemAvailable: 1000000 kB\n")
    with pytest.raises(NanogradError) as caught:
        check_memory(2_621_440, str(meminfo), so_far=True)
    assert str(caught.value) == (
        "the source is at least 2.6 MB: its graph would need at least 1.0 GB of memory, "
        "and 1.0 GB is free"
    )
    assert memory.system_free(str(meminfo)) == 1_024_000_000


# --each-line: the same lines from a file, standard input or -e; a bad line fails alone.

LINES = b"x\n\xff\nx*2\r\nlog(x)\nx\xc2\x85+1\nx\x0c+1\n\nx+1"


@pytest.mark.slow
def test_each_line_reads_the_same_rows_from_a_file_standard_input_and_text(tmp_path):
    (tmp_path / "lines.txt").write_bytes(LINES)
    expected_out = "line,value,d_x\n1,-1.0,1.0\n3,-2.0,2.0\n4,NaN,-1.0\n6,0.0,1.0\n8,0.0,1.0\n"
    expected_err = (
        "error: line 2: the line is not valid UTF-8 (byte 0xff at offset 0)\n"
        + "warning: "
        + caret("line 4, column 1: log gave nan", "log(x)", 1, number=4)
        + "error: "
        + caret("line 5, column 2: unexpected character '\\x85'", "x +1", 2, number=5)
    )
    runs = [
        limited("nanograd grad lines.txt --each-line --x -1 --format csv", cwd=str(tmp_path)),
        limited("nanograd grad -f lines.txt --each-line --x -1 --format csv", cwd=str(tmp_path)),
        limited("nanograd grad - --each-line --x -1 --format csv", stdin=LINES),
        limited(
            'nanograd grad -e "$(cat lines.txt)" --each-line --x -1 --format csv',
            cwd=str(tmp_path),
        ),
    ]
    for code, out, err in runs:
        assert out == expected_out
        assert err == expected_err, err
        assert code == 2


def test_the_repl_refuses_an_endless_line():
    code, out, err = limited("nanograd repl < /dev/zero")
    assert code == 1 and out == "" and REFUSAL.fullmatch(err), err


@pytest.mark.slow
@pytest.mark.parametrize("value, shown, csv", [("nan", "nan", "NaN"), ("-inf", "-inf", "-inf")])
def test_points_strict_fails_on_an_input_given_non_finite_on_the_command_line(
    tmp_path, value, shown, csv
):
    where = caret(f"line 1, column 3: input y is {shown}", "x*y", 3)
    command = f"printf 'x\\n2\\n' | nanograd grad 'x*y' --points - --y {value}"
    assert limited(f"{command} --strict") == (1, "", f"error: {where}")
    code, out, err = limited(f"{command} --strict -o out.csv", cwd=str(tmp_path))
    assert (code, err) == (1, f"error: {where}") and not (tmp_path / "out.csv").exists()
    # Without --strict it is a row like any other, and so is a nan in the table with it.
    code, out, err = limited(command)
    assert (code, out) == (0, f"x,value,d_x,d_y\n2,{csv},{csv},2.0\n")
    code, out, err = limited("printf 'x\\nnan\\n' | nanograd grad 'x*y' --points - --y 1 --strict")
    assert (code, out) == (0, "x,value,d_x,d_y\nNaN,NaN,1.0,NaN\n")


BOM = b"\xef\xbb\xbf"


@pytest.mark.slow
def test_a_byte_order_mark_is_ignored(tmp_path):
    (tmp_path / "bom.txt").write_bytes(BOM + b"x*2\n")
    (tmp_path / "lines.txt").write_bytes(BOM + b"x*2\r\nx+1\r\n")
    for how in ("bom.txt", "-f bom.txt", "- < bom.txt"):
        code, out, err = limited(f"nanograd grad {how} --x 1 --format csv", cwd=str(tmp_path))
        assert (code, out, err) == (0, "value,d_x\n2.0,2.0\n", ""), how
    for how in ("lines.txt", "- < lines.txt"):
        command = f"nanograd grad {how} --each-line --x 1 --format csv"
        code, out, err = limited(command, cwd=str(tmp_path))
        assert (code, out, err) == (0, "line,value,d_x\n1,2.0,2.0\n2,2.0,1.0\n", ""), how
    table = "        value  gradient\nresult  6.0\nx       3.0    2.0\n"
    assert limited("nanograd repl", stdin=BOM + b"x = 3\nx*2\n") == (0, table, "")
    # Only at the start: elsewhere it is a character like any other.
    code, out, err = limited("nanograd grad - --x 1", stdin=b"x*2" + BOM)
    assert code == 2 and "unexpected character '\\ufeff'" in err


UNKNOWN_XP = caret("line 1, column 1: unknown function xp: did you mean exp?", "xp(x)", 1)


@pytest.mark.parametrize(
    "source, inputs, code, error, after",
    [
        ("-exp(x)", "--x 0", 2, UNKNOWN_XP, "-1.0,-1.0"),
        ("-fx", "--fx 3", 1, "cannot read x: No such file or directory\n", "-3.0,-1.0"),
        ("-floor(x)", "--x 2.5", 1, "cannot read loor(x): No such file or directory\n", "-2.0,0.0"),
    ],
)
def test_a_source_read_as_dash_e_or_dash_f_says_to_put_it_after_dashes(
    tmp_path, source, inputs, code, error, after
):
    done = as_typed(f"nanograd grad '{source}' {inputs}", cwd=str(tmp_path))
    last = f"nanograd grad {inputs} -- {shlex.quote(source)}"
    hint = (
        f"A source that begins with - goes after -e: nanograd grad -e '{source}' "
        f"(or last, after the options and --: {last})\n"
    )
    assert done == (code, "", f"error: {error}{hint}")
    for recipe in (f"-e '{source}' {inputs}", f"{inputs} -- {shlex.quote(source)}"):
        # both ways the hint says, in CSV
        done = as_typed(f"nanograd grad --format csv {recipe}", cwd=str(tmp_path))
        assert done[0] == 0 and done[1].splitlines()[1] == after


def test_dash_e_and_dash_f_typed_apart_get_no_hint(tmp_path):
    """`-e TEXT` and `-f FILE` as typed: the source is what the user meant."""
    assert as_typed("nanograd grad -e 'xp(x)' --x 1") == (2, "", f"error: {UNKNOWN_XP}")
    assert as_typed("nanograd grad -f x --x 1", cwd=str(tmp_path)) == (
        1,
        "",
        "error: cannot read x: No such file or directory\n",
    )
    # -e glued to a text that fails both as -e's and with the dash: no hint either.
    code, out, err = as_typed("nanograd grad '-ex+' --x 1")
    assert (code, out) == (2, "") and "goes after --" not in err


def test_a_value_too_large_is_named_as_typed():
    assert as_typed("nanograd grad x --var x=1e999") == (
        2,
        "",
        "error: --var x=1e999 is too large for a float\n",
    )
    assert as_typed("nanograd grad x --x 1e999") == (
        2,
        "",
        "error: --x 1e999 is too large for a float\n",
    )
    assert as_typed("nanograd grad x --var x=abc") == (
        2,
        "",
        "error: --var x=VALUE expects a number, got 'abc'\n",
    )


def test_each_line_table_streams_in_a_pipe():
    """An endless input: the first rows reach `head` at once, and the run ends with it."""
    code, out, err = limited("yes x | nanograd grad - --each-line --x 1 | head -2")
    assert (code, out, err) == (
        0,
        "line  expression  value  d_x\n1     x           1.0    1.0\n",
        "",
    )
    # Past the first rows, each is printed as it comes, in their columns, widened as needed.
    lines = "".join(f"{n}*x\n" for n in range(1, 103)) + "sin(x)\nx\n"
    code, out, err = limited("nanograd grad - --each-line --x 1", stdin=lines.encode())
    assert out.splitlines()[-4:] == [
        "101   101*x       101.0  101.0",
        "102   102*x       102.0  102.0",
        "103   sin(x)      0.8414709848078965  0.5403023058681398",
        "104   x           1.0                 1.0",
    ]


# A run stopped by a signal leaves no temporary file: Ctrl-C, `kill` and `timeout`, a closed
# terminal.

STOPPED = [
    (signal.SIGTERM, -signal.SIGTERM),
    (signal.SIGHUP, -signal.SIGHUP),
    (signal.SIGINT, 130),
]


def temporaries(where: Path) -> list[str]:
    return sorted(p.name for p in where.iterdir() if p.name.startswith(".nanograd-"))


@pytest.mark.slow
@pytest.mark.signals
@pytest.mark.parametrize("sent, code", STOPPED, ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_points_stopped_by_a_signal_leave_no_file(tmp_path, sent, code):
    """Rows written to -o FILE as they come, endlessly: a signal removes the temporary file."""
    pytest.importorskip("pyarrow")
    rows = subprocess.Popen(["bash", "-c", "echo x,y; yes 1,2"], stdout=subprocess.PIPE)
    script = 'ulimit -v 4000000; ulimit -t 120; exec "$NANOGRAD" "$@"'
    command = ["grad", "x*y", "--points", "-", "-o", "out.csv"]
    with subprocess.Popen(
        ["bash", "-c", script, "nanograd", *command],
        cwd=tmp_path,
        env={**os.environ, "NANOGRAD": NANOGRAD},
        stdin=rows.stdout,
        stderr=subprocess.PIPE,
        preexec_fn=default_signals,
    ) as process:
        rows.stdout.close()
        try:
            deadline = time.monotonic() + 60
            while not temporaries(tmp_path) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert temporaries(tmp_path), "no temporary file was made"
            time.sleep(0.2)  # rows are being written to it
            process.send_signal(sent)
            ended = process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
            rows.wait(timeout=30)
        err = process.stderr.read()
    assert (ended, err) == (code, b"")
    assert temporaries(tmp_path) == [] and not (tmp_path / "out.csv").exists()


@pytest.mark.signals
@pytest.mark.parametrize("sent", [s for s, _ in STOPPED], ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_every_file_written_is_removed_on_a_signal(tmp_path, sent):
    """draw, plot, minimize --plot, the repl's :draw and --points all write through
    OutputFile: a signal while it is open removes what was written, and the old file stays."""
    (tmp_path / "old.svg").write_text("old")
    script = (
        "import os, signal, sys\n"
        "from nanograd_cli._output_files import OutputFile, write_atomically\n"
        "f = OutputFile('old.svg')\n"
        "f.file.write(b'new, half written')\n"
        f"os.kill(os.getpid(), {int(sent)})\n"
        "sys.exit(3)  # not reached\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        preexec_fn=default_signals,
    )
    # Python ends on a KeyboardInterrupt no one caught as Ctrl-C would have ended it.
    assert done.returncode == -sent
    if sent == signal.SIGINT:
        assert done.stderr.decode().rstrip().endswith("KeyboardInterrupt")
    assert temporaries(tmp_path) == [] and (tmp_path / "old.svg").read_text() == "old"
    # The handlers that were there before are back once no file is being written.
    script = (
        "import signal\n"
        "from nanograd_cli._output_files import write_atomically\n"
        "before = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]\n"
        "write_atomically('new.svg', b'new')\n"
        "after = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]\n"
        "assert before == after, (before, after)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        preexec_fn=default_signals,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "new.svg").read_text() == "new" and temporaries(tmp_path) == []


@pytest.mark.signals
@pytest.mark.parametrize("sent", [s for s, _ in STOPPED], ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_files_written_together_are_all_new_or_all_old(tmp_path, sent):
    """A fit's rows, picture and saved fit are written together: a signal after the first is
    written and before the last leaves every old file as it was, and no temporary file."""
    for name in ("a.csv", "b.png"):
        (tmp_path / name).write_text("old")
    script = (
        "import os, sys\n"
        "from nanograd_cli._output_files import together, write_atomically\n"
        "with together():\n"
        "    write_atomically('a.csv', b'new')\n"
        "    write_atomically('b.png', b'new')\n"
        f"    os.kill(os.getpid(), {int(sent)})\n"
        "sys.exit(3)  # not reached\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          preexec_fn=default_signals)  # fmt: skip
    assert done.returncode == -sent
    assert temporaries(tmp_path) == []
    assert [(tmp_path / n).read_text() for n in ("a.csv", "b.png")] == ["old", "old"]
    script = (
        "from nanograd_cli._output_files import together, write_atomically\n"
        "with together():\n"
        "    write_atomically('a.csv', b'new')\n"
        "    write_atomically('b.png', b'new')\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=tmp_path, check=True)
    assert [(tmp_path / n).read_text() for n in ("a.csv", "b.png")] == ["new", "new"]


def test_a_fit_stopped_while_its_files_are_written_writes_none_and_says_so(tmp_path, monkeypatch):
    from nanograd_cli import _api

    (tmp_path / "d.csv").write_text("x,y\n0,1\n1,3.1\n2,4.9\n3,7\n")

    def stopped(fit):  # Ctrl-C as the saved fit is made, after -o's rows are written
        raise KeyboardInterrupt

    monkeypatch.setattr(_api, "saved_fit", stopped)
    done = in_process("fit", "a*x + b", "--data", "d.csv", "--a", "1", "--b", "0", "-o",
                      "rows.csv", "--save", "fit.json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 130
    assert done.stderr == "note: rows.csv and fit.json not written: the run was interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]


def test_a_symbolic_link_is_written_through(tmp_path, monkeypatch):
    """-o onto a link replaces the file it points to, atomically, and keeps the link: one
    relative to its own directory, one that points at nothing yet, and a link to a link."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "graph.dot").write_text("old")
    (tmp_path / "link.dot").symlink_to("real/graph.dot")
    (tmp_path / "again.dot").symlink_to("link.dot")
    (tmp_path / "dangling.dot").symlink_to("real/new.dot")
    for link in ("link.dot", "again.dot", "dangling.dot"):
        done = in_process("draw", "x*y", "--x", "1", "--y", "2", "-o", link)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / link).is_symlink()
    assert (tmp_path / "real" / "graph.dot").read_text().startswith("digraph")
    assert (tmp_path / "real" / "new.dot").read_text().startswith("digraph")
    assert temporaries(tmp_path) == temporaries(tmp_path / "real") == []
    nanograd_cli.draw("x", x=1, output=tmp_path / "link.dot", format="dot")
    assert (tmp_path / "link.dot").is_symlink()


def test_a_pipe_and_a_stream_are_written_directly(tmp_path):
    """A FIFO is written as it is (no temporary file renamed over it), and so is a name of a
    stream, /dev/fd/N: what the shell opened is what gets the bytes, even where N is a regular
    file (as `-o /dev/stdout > out.txt` makes it), which a rename would have replaced."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomically(str(fifo), b"through the pipe")
    reader.join(timeout=30)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert temporaries(tmp_path) == []

    with open(tmp_path / "out.txt", "wb") as out:
        write_atomically(f"/dev/fd/{out.fileno()}", b"into the stream")
        assert os.path.islink("/dev/fd") or os.path.isdir("/dev/fd")
    assert (tmp_path / "out.txt").read_bytes() == b"into the stream"
    assert temporaries(tmp_path) == []
    assert target("/dev/stdout").startswith(("/dev/", "/proc/"))


def test_fit_to_dev_stdout_keeps_the_table_before_the_rows_and_stops_quietly_at_head(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n1,2\n2,4.1\n3,5.9\n")
    fit = "nanograd fit 'a*x+b' --data d.csv --a 1 --b 0 -o /dev/stdout"
    code, out, err = limited(f"{fit} > out.txt", cwd=str(tmp_path))
    written = (tmp_path / "out.txt").read_text()
    assert (code, out, err) == (0, "", "")
    table, header, rows = written.partition("x,y,fitted,fitted_se,residual\n")
    assert table.startswith("             value") and header
    # a = 1.95, b = 0.1; fitted_se: s·sqrt(1/3 + (x - 2)²/2) with s² = 0.015, the residual
    # variance (to rounding: the last digits follow NumPy's and SciPy's versions)
    got = [float(v) for line in rows.splitlines() for v in line.split(",")]
    assert got == pytest.approx(
        [
            *(1, 2, 2.05, (0.015 * 5 / 6) ** 0.5, -0.05),
            *(2, 4.1, 4.0, (0.015 / 3) ** 0.5, 0.1),
            *(3, 5.9, 5.95, (0.015 * 5 / 6) ** 0.5, -0.05),
        ],
        rel=1e-12,
    )
    code, out, err = limited(f"{fit} | head -c 20; exit ${{PIPESTATUS[0]}}", cwd=str(tmp_path))
    assert (code, len(out), err) == (0, 20, "")


# Control characters from the user never reach the terminal raw: a file name, a word typed
# in the repl, an option's value, a comment, each is shown with its escapes.

TITLE = "\\x1b]0;pwned\\x07"  # what sets a terminal's title, as a message shows it


@pytest.mark.slow
@pytest.mark.parametrize(
    "command, code, message",
    [
        (
            "nanograd grad -f $'\\e]0;pwned\\a.txt'",
            1,
            f"cannot read {TITLE}.txt: No such file or directory",
        ),
        (
            "nanograd grad x --points $'\\e]0;pwned\\a.csv'",
            1,
            f"cannot read {TITLE}.csv: No such file or directory",
        ),
        (
            "echo x | nanograd grad x --points - -o $'nowhere/\\e]0;pwned\\a.csv'",
            1,
            f"cannot write nowhere/{TITLE}.csv: No such file or directory",
        ),
        (
            "nanograd draw x --x 1 -o $'\\e]0;pwned\\a.txt'",
            2,
            f"cannot tell the format of {TITLE}.txt from its extension: "
            "use .svg, .png, .pdf, .dot, .gv or .html",
        ),
        (
            "nanograd plot x --x 0:1 -o $'\\e]0;pwned\\a.txt'",
            2,
            f"cannot tell the format of {TITLE}.txt from its extension: use .svg, .png or .pdf",
        ),
        ("nanograd grad x --x $'\\e]0;pwned\\a'", 2, f"--x expects a number, got '{TITLE}'"),
        (
            "printf 'x,y\\n1,2\\n' | nanograd grad x --points - -o $'\\e]0;pwned\\a.jsonl' "
            "--format csv",
            2,
            f"--format csv and -o {TITLE}.jsonl disagree: give one of them",
        ),
        (
            "printf 'x,\\033]0;pwned\\a\\n1,a\\n' | nanograd grad x --points - --format json "
            "--points-format csv -o out.parquet",
            2,
            "--format json and -o out.parquet disagree: give one of them",
        ),
    ],
)
def test_a_name_with_control_characters_is_shown_escaped(tmp_path, command, code, message):
    assert limited(command, cwd=str(tmp_path)) == (code, "", f"error: {message}\n")


def test_a_file_that_is_not_utf8_is_named_escaped(tmp_path):
    (tmp_path / "\x1b]0;pwned\x07.txt").write_bytes(b"x\xff")
    assert limited("nanograd grad -f $'\\e]0;pwned\\a.txt'", cwd=str(tmp_path)) == (
        2,
        "",
        f"error: {TITLE}.txt is not valid UTF-8 (byte 0xff at offset 1)\n",
    )


def test_a_byte_of_the_command_line_that_is_not_utf8_is_said_as_that_byte(tmp_path):
    code, out, err = limited("nanograd grad $'x*\\xff' --x 1", cwd=str(tmp_path))
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == (
        "error: line 1, column 3: the source is not valid UTF-8 (byte 0xff)"
    )
    assert limited("nanograd grad -f $'no\\xfe.txt'", cwd=str(tmp_path)) == (
        1,
        "",
        "error: cannot read no\\xfe.txt: No such file or directory\n",
    )
    assert limited("nanograd grad x --x $'\\xfe1'", cwd=str(tmp_path)) == (
        2,
        "",
        "error: --x expects a number, got '\\xfe1'\n",  # (quoted by repr: '\\udcfe1')
    )


@pytest.mark.slow
def test_a_column_named_with_control_characters_is_shown_escaped():
    header = "x,\\033]0;pwned\\a,\\033]0;pwned\\a"
    assert limited(f"printf '{header}\\n1,2,3\\n' | nanograd grad x --points -") == (
        2,
        "",
        f"error: --points: the header names the column {TITLE} twice\n",
    )


def test_the_repl_shows_a_command_word_escaped():
    listed = ", ".join(
        ":grad :diff :hessian :explain :draw :check :minimize :fit :plot :taylor :inputs :reset "
        ":help :quit".split()
    )
    code, out, err = limited("printf ':frob\\033[2J\\033]0;pwned\\a x\\n' | nanograd repl")
    assert (code, out) == (2, "")
    assert err == f"error: line 1: unknown command :frob\\x1b[2J{TITLE}; commands are {listed}\n"


def test_the_repl_shows_a_file_name_escaped(tmp_path):
    script = b"x = 1\n:draw x \x1b]0;pwned\x07.dot\n"
    code, out, err = limited("nanograd repl", stdin=script, cwd=str(tmp_path))
    assert (code, out, err) == (0, f"wrote {TITLE}.dot\n", "")
    assert (tmp_path / "\x1b]0;pwned\x07.dot").read_text().startswith("digraph")


def test_each_line_shows_a_comment_escaped():
    code, out, err = limited("printf 'x # \\033]0;pwned\\a\\n' | nanograd grad - --each-line --x 1")
    assert (code, err) == (0, "")
    assert out == f"line  expression            value  d_x\n1     x # {TITLE}  1.0    1.0\n"


def test_a_comment_is_not_read_as_rich_markup_on_a_terminal():
    screen = on_terminal(
        "grad", "-e", "x # [link=https://example.com]click[/link]", "--each-line", "--x", "1"
    )
    assert "\x1b]8;" not in screen  # no hyperlink made
    assert "[link=https://example.com]click[/link]" in "".join(visible(screen))


# A comment inside a statement that goes on over several lines is no part of its box's label.

COMMENTED = "a = (x + # \x1b]0;pwned\x07 \\G \\N \x01\n 1)\nb = a*x\n"


def test_draw_labels_a_statement_without_its_comment(tmp_path):
    (tmp_path / "c.txt").write_text(COMMENTED)
    code, out, err = limited("nanograd draw -f c.txt --x 1", cwd=str(tmp_path))
    assert (code, err) == (0, "")
    assert 'label="a = (x + 1)"' in out and 'label="b = a*x"' in out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out) and "\\G" not in out


@pytest.mark.slow
def test_draw_with_a_control_character_in_a_comment_writes_valid_svg_and_html(tmp_path):
    import xml.etree.ElementTree as ElementTree

    pytest.importorskip("graphviz")
    (tmp_path / "c.txt").write_text(COMMENTED)
    code, out, err = limited("nanograd draw -f c.txt --x 1 -o g.svg", cwd=str(tmp_path))
    if code == 1 and "no Graphviz found" in err:
        pytest.skip(err)
    assert (code, out, err) == (0, "", "")
    texts = [t.text for t in ElementTree.parse(tmp_path / "g.svg").iter() if t.text]
    assert "a = (x + 1)" in texts and not any("pwned" in t for t in texts)
    code, out, err = limited("nanograd draw -f c.txt --x 1 -o g.html", cwd=str(tmp_path))
    assert (code, out, err) == (0, "", "")
    page = (tmp_path / "g.html").read_text()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", page)
    assert "a = (x + # \\x1b]0;pwned\\x07 \\G \\N \\x01" in page  # the source, shown escaped


# Tables of points no parser should be handed as they are.


def nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


@pytest.mark.slow
@pytest.mark.parametrize("depth", [101, 1000, 100_000])
@pytest.mark.parametrize("how", ["file", "stdin"])
def test_a_json_row_nested_too_deep_is_bad_input(tmp_path, depth, how):
    pytest.importorskip("pyarrow")
    rows = f'{{"x": 1}}\n\n{{"x": 2, "a": {nested(depth)}}}\n{{"x": 3}}\n'
    (tmp_path / "deep.jsonl").write_text(rows)
    points = "deep.jsonl" if how == "file" else "- --points-format jsonl < deep.jsonl"
    command = f"nanograd grad x --points {points} -o out.parquet"
    assert limited(command, cwd=str(tmp_path)) == (
        2,
        "",
        "error: --points row 2 is nested more than 100 deep\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep.jsonl"]


@pytest.mark.slow
def test_a_json_row_nested_100_deep_is_read(tmp_path):
    pytest.importorskip("pyarrow")
    objects = '{"b": ' * 99 + "1" + "}" * 99
    strings = '"' + "[" * 5000 + '\\"' + "{" * 5000 + '"'  # brackets in text do not count
    (tmp_path / "deep.jsonl").write_text(
        f'{{"x": 1, "a": {nested(99)}, "o": {objects}, "s": {strings}}}\n'
    )
    code, out, err = limited("nanograd grad x --points deep.jsonl -o out.parquet", cwd=tmp_path)
    assert (code, out, err) == (0, "", "")


@pytest.mark.slow
def test_csv_fields_and_headers_over_128_kb_are_read(tmp_path):
    pytest.importorskip("pyarrow")
    long_name, text = "y" * 200_000, "t" * (2 << 20)
    (tmp_path / "wide.csv").write_text(f'x,{long_name},note\n1,2,"{text}"\n3,4,{text}\n')
    code, out, err = limited("nanograd grad x --points wide.csv", cwd=str(tmp_path))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"x,{long_name},note,value,d_x",
        f"1,2,{text},1.0,1.0",
        f"3,4,{text},3.0,1.0",
    ]
    (tmp_path / "bad.csv").write_text(f"x,{long_name}\n1,2,3\n")
    assert limited("nanograd grad x --points bad.csv", cwd=str(tmp_path)) == (
        2,
        "",
        "error: --points row 1 has 3 fields, the header 2\n",
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, rows, message",
    [
        (
            "long.jsonl",
            '{"x": 1}\n{"x": 2, "s": "LONG"}\n{"x": 3}\n',
            "--points row 2 is longer than 64 MB (no line end?)",
        ),
        (
            "long.csv",
            "x,s\n1,a\n2,LONG\n3,b\n",
            "--points row 2 is longer than 64 MB (no line end, or a quote never closed?)",
        ),
        (
            "last.csv",
            'x,s\n1,a\n2,"LONG"',
            "--points row 2 is longer than 64 MB (no line end, or a quote never closed?)",
        ),
    ],
)
def test_a_row_over_64_mb_is_refused_even_with_a_line_end(tmp_path, name, rows, message):
    pytest.importorskip("pyarrow")
    (tmp_path / name).write_text(rows.replace("LONG", "a" * (70 << 20)))
    command = f"nanograd grad x --points {name} -o out.csv"
    assert limited(command, cwd=str(tmp_path)) == (2, "", f"error: {message}\n")
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.slow
@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_a_csv_line_of_spaces_is_a_blank_line(end):
    pytest.importorskip("pyarrow")
    rows = end.join(["x,y", "1,2", "   ", "3,4", " \t ", "5,6", ""])
    code, out, err = limited("nanograd grad 'x*y' --points - --format csv", stdin=rows.encode())
    assert (code, err) == (0, "")
    assert out == "x,y,value,d_x,d_y\n1,2,2.0,2.0,1.0\n3,4,12.0,4.0,3.0\n5,6,30.0,6.0,5.0\n"
    rows = "x,y\n1,2\n   \n3\n"
    assert limited("nanograd grad 'x*y' --points -", stdin=rows.encode()) == (
        2,
        "",
        "error: --points row 2 has 1 field, the header 2\n",
    )
    # Inside quotes, a line of spaces is text.
    rows = 'x,note\n1,"a\n   \nb"\n  \n3,c\n'
    code, out, err = limited("nanograd grad x --points -", stdin=rows.encode())
    assert (code, err) == (
        0,
        "",
    ) and out == 'x,note,value,d_x\n1,"a\n   \nb",1.0,1.0\n3,c,3.0,1.0\n'


@pytest.mark.slow
def test_dash_f_dash_is_the_file_named_dash(tmp_path):
    (tmp_path / "-").write_text("x*3")
    command = "echo 'x*2' | nanograd grad -f - --x 1 --format csv"
    assert limited(command, cwd=str(tmp_path)) == (0, "value,d_x\n3.0,3.0\n", "")
    (tmp_path / "-").unlink()
    assert limited(command, cwd=str(tmp_path)) == (
        1,
        "",
        "error: cannot read -: No such file or directory\n",
    )
    # A bare - is standard input.
    command = "echo 'x*2' | nanograd grad - --x 1 --format csv"
    assert limited(command, cwd=str(tmp_path)) == (0, "value,d_x\n2.0,2.0\n", "")


# Numbers at the edges of floats, in plot and minimize; a terminal said to be very wide.


@pytest.mark.slow
@pytest.mark.parametrize("span", ["5e-324:1e-323", "0:1e-322"])
def test_a_terminal_plot_of_a_range_too_narrow_to_label_asks_for_a_picture(tmp_path, span):
    # uniplot stepped through the labels of an axis a few of the smallest floats wide in more
    # steps than an array holds: "ValueError: Maximum allowed size exceeded"
    pytest.importorskip("matplotlib")
    low, high = (repr(float(t)) for t in span.split(":"))
    assert limited(f"nanograd plot 'x*x' --x {span}") == (
        2,
        "",
        f"error: a terminal plot cannot label an axis as narrow as x from {low} to {high}: "
        "write a picture instead, with -o plot.svg\n",
    )
    code, out, err = limited(f"nanograd plot 'x*x' --x {span} -o p.svg", cwd=str(tmp_path))
    assert (code, out, err) == (0, "", "") and (tmp_path / "p.svg").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "command, axis",
    [
        ("plot 'exp(x)' --x 0:709.7 -o p.svg", "f(x) from 0 to 1.65e+308"),
        ("plot 'x*1.5e308' --x 0:1 -o p.png", "f(x) from 0 to 1.5e+308"),
        ("plot 'x*y' --x -7e307:7e307 --y 0:1 -o p.svg", "x from -7e+307 to 7e+307"),
        ("plot 'x*y*1e308' --x -1:1 --y -1:1 -o p.pdf", "f(x, y) from -1e+308 to 1e+308"),
    ],
)
def test_a_picture_of_an_axis_too_wide_for_matplotlib_is_refused(tmp_path, command, axis):
    # Matplotlib's transforms overflowed: "LinAlgError: Singular matrix"
    pytest.importorskip("matplotlib")
    assert limited(f"nanograd {command}", cwd=str(tmp_path)) == (
        2,
        "",
        f"error: a picture cannot show {axis}: an axis spans at most 1.2e+308; plot a narrower "
        "range\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    # Up to that, it is drawn: exp(x) to 1e308 and more.
    code, out, err = limited("nanograd plot x --x 0:1.2e308:3 -o p.svg", cwd=str(tmp_path))
    assert (code, out, err) == (0, "", "") and (tmp_path / "p.svg").exists()


def test_a_terminal_plot_of_numbers_too_large_for_a_picture_says_so():
    assert limited("nanograd plot 'exp(x)' --x 0:709.7") == (
        2,
        "",
        "error: a terminal plot 80 columns wide cannot label numbers as large as 1.65e+308: "
        "plot a narrower range\n",
    )


@pytest.mark.slow
def test_minimize_with_a_gradient_norm_beyond_floats():
    # Each derivative is finite; the norm was summed of squares, which overflowed.
    code, out, err = limited("nanograd minimize '1e300*x*x' --x 1 --steps 5 --format csv")
    assert (code, err) == (
        0,
        "note: did not converge: after 5 steps the gradient's norm is 2e+300, more than --tol "
        "1e-08 (more --steps, or another --lr, may reach it)\n",
    )
    assert out.splitlines()[1].split(",")[:4] == ["1e+300", "1.0", "2e+300", "2e+300"]
    assert limited("nanograd minimize '1.5e308*(x - y)' --x 1 --y 1") == (
        2,
        "",
        "error: the gradient's norm is too large for a float (each derivative is finite) at "
        "the start: start from a point where it is smaller\n",
    )


@pytest.mark.parametrize("columns, width", [(1_000_000, 500), (100, 100), (1, 20)])
def test_a_terminal_plot_is_at_most_500_columns_wide(columns, width):
    code, out, err = limited(f"COLUMNS={columns} nanograd plot 'sin(x)' --x 0:1", seconds=10)
    assert (code, err) == (0, "")
    assert max(len(line) for line in out.splitlines()) == width


# Parquet and the Arrow file format from a pipe are read whole: held to the memory left.

WHOLE = re.compile(
    r"error: standard input is at least [\d,]+ MB of (Parquet|the Arrow file format), which is "
    r"read from its end, so whole: that needs at least [\d.]+ GB of memory, and [\d.]+ GB is "
    r"free; give the file's name to --points instead, which is read a batch at a time\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("magic, fmt", [("PAR1", "parquet"), ("ARROW1", "arrow")])
def test_an_endless_parquet_or_arrow_file_on_standard_input_is_refused(tmp_path, magic, fmt):
    pytest.importorskip("pyarrow")
    command = (
        f"(printf {magic}; head -c 6000000000 /dev/zero) | "
        f"nanograd grad x --points - --points-format {fmt} -o out.{fmt}"
    )
    code, out, err = limited(command, cwd=str(tmp_path), seconds=30, memory=3_000_000)
    assert (code, out) == (1, "") and WHOLE.fullmatch(err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_parquet_file_on_standard_input_is_read(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1.0, 2.0]}), tmp_path / "p.parquet")
    command = "nanograd grad x --points - --points-format parquet -o out.csv < p.parquet"
    assert limited(command, cwd=str(tmp_path), memory=3_000_000) == (0, "", "")
    assert (tmp_path / "out.csv").read_text() == "x,value,d_x\n1.0,1.0,1.0\n2.0,2.0,1.0\n"


def test_a_picture_of_a_fit_past_what_axes_show_is_refused():
    """fit --plot draws the data as they are: an axis too wide is refused as plot's is."""
    import numpy as np

    from nanograd_cli.errors import InputError
    from nanograd_cli.render.figures import FitCurve, fit_figure

    x = np.array([-1e308, 0.0, 1e308])
    fit = FitCurve("t", x, np.ones(3), np.zeros(3), x, np.ones(3), "a*t")
    with pytest.raises(InputError) as caught:
        fit_figure(fit, "svg")
    assert str(caught.value) == (
        "a picture cannot show t from -1e+308 to 1e+308: an axis spans at most 1.2e+308; plot "
        "a narrower range"
    )


@pytest.mark.parametrize("source", ["x**1e308*x**1e308", "sqrt(x)**1e308*sqrt(x)**1e308"])
def test_diff_never_writes_an_exponent_that_overflowed(source):
    """Exponents that would add up past the largest float stay apart: no `x**inf`, which
    reads back as an input named inf, and the derivative read back is the engine's."""
    for fmt in ("text", "latex"):
        done = in_process("diff", source, "--format", fmt)
        assert done.returncode == 0 and "inf" not in done.stdout and "nan" not in done.stdout
    text = in_process("diff", source).stdout
    for x in (0.5, 1.0):
        again = in_process("grad", "-e", text, "--x", str(x), "--format", "json")
        engine = in_process("grad", source, "--x", str(x), "--format", "json")
        assert json.loads(again.stdout)["value"] == json.loads(engine.stdout)["gradients"]["x"]


def test_latex_of_any_name_compiles(tmp_path):
    """Names of the language made of underscores, digits and letters in every arrangement
    (`_`, `x__`, `_1`, `d_x` beside `x__`): diff's LaTeX of each compiles."""
    import random

    rng = random.Random(7)
    names = ["_", "__", "x_", "x__", "_1", "d_x", "a_b_c", "x_1_", "d__", "alpha_", "_beta"]
    names += [
        rng.choice("ab_xd") + "".join(rng.choice("ab_1x") for _ in range(rng.randrange(4)))
        for _ in range(40)
    ]
    names = list(dict.fromkeys(n for n in names if not n.isdigit()))
    formulas = []
    for a, b in zip(names, names[1:] + names[:1], strict=True):
        done = in_process("diff", f"{a}*{b}**2 + sin({a})", "--format", "latex")
        assert done.returncode == 0, (a, b, done.stderr)
        formulas.append(f"\\[\n{done.stdout}\\]")
    pdflatex(tmp_path, "\n".join(formulas))


def test_a_formula_to_check_against_cannot_set_the_terminals_title():
    """A control sequence in --against's comment is shown escaped in the table and CSV, as
    --each-line shows a line (errors.md: no input can set the terminal's title)."""
    against = "2*x # \x1b]0;pwned\x07"
    for fmt, row in [
        ("table", "x      2*x # \\x1b]0;pwned\\x07  101"),
        ("csv", "x,2*x # \\x1b]0;pwned\\x07,101"),
    ]:
        done = in_process("check", "x**2", "--against", against, "--x", "0:1", "--format", fmt)
        assert done.returncode == 0 and "\x1b" not in done.stdout and "\x07" not in done.stdout
        assert row in done.stdout


@pytest.mark.parametrize(
    "command",
    [
        "minimize '(a*x - y)**2' --data d.svg --data-format csv --a 0 --steps 5 --plot d.svg",
        "grad 'x*y' --points d.csv -o d.csv",
        "grad 'x*y' --points d.csv -o link.csv",
        "draw m.dot --x 1 -o m.dot",
        "plot m.svg --x 0:1 -o m.svg",
    ],
)
def test_no_output_is_written_over_a_file_the_command_reads(tmp_path, command):
    """One rule for every output against every input file (a picture over its training rows
    was written, exit 0): bad input, and the file is left as it was."""
    rows = "x,y\n1,2\n2,3\n3,5\n"
    for name in ("d.csv", "d.svg"):
        (tmp_path / name).write_text(rows)
    for name in ("m.dot", "m.svg"):
        (tmp_path / name).write_text("x*2")
    (tmp_path / "link.csv").symlink_to(tmp_path / "d.csv")
    done = subprocess.run(
        ["bash", "-c", f'"$NANOGRAD" {command}'],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "NANOGRAD": NANOGRAD},
    )
    written = command.split()[-1]
    assert (done.returncode, done.stderr) == (
        2,
        f"error: {written} is a file this command reads: write to another file\n",
    )
    assert (tmp_path / "d.csv").read_text() == rows and (tmp_path / "d.svg").read_text() == rows
    assert (tmp_path / "m.dot").read_text() == (tmp_path / "m.svg").read_text() == "x*2"


@pytest.mark.slow
def test_the_signal_tests_pass_in_a_suite_started_with_signals_ignored():
    """As `nohup pytest &` starts it: SIGINT and SIGHUP ignored, and passed on to every child
    unless the test starts it with the default dispositions."""

    def ignoring() -> None:
        for sent in (signal.SIGINT, signal.SIGHUP):
            signal.signal(sent, signal.SIG_IGN)

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "signals"],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=900,
        preexec_fn=ignoring,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.search(r"\b(1[0-9]|[2-9][0-9]) passed", done.stdout), done.stdout[-500:]
