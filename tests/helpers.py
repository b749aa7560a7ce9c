"""Helpers the tests share: running the command line (in process, or the installed command
in a pipe, on a pseudo-terminal, or under limits), the worked example, random expressions.
Fixtures, when tests come to share one, go in conftest.py."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from contextlib import chdir
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import strategies as st

from nanograd_cli._cli import main

DATA = Path(__file__).resolve().parent / "data"
ROOT = DATA.parents[1]
WORKED = str(DATA / "worked_example.txt")


def run(*args: str, stdin: str | bytes | None = None):
    """Run the command line as `main` does; returns (exit code, stdout, stderr)."""
    runner = CliRunner()
    result = runner.invoke(_entry, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def in_process(
    *args: str, stdin: str | bytes = "", env: dict[str, str] | None = None, cwd=None
) -> subprocess.CompletedProcess:
    """The command line run as `main` runs it, in this process, where the process itself does
    not matter: what `nanograd` gives for the same arguments, standard input, environment
    (`env` replaces it whole, as for a subprocess) and working directory. Standard input is in
    memory, not a pipe's descriptor: rows read from a pipe (--points -) need `nanograd`. An
    exception that `main` lets out, which the installed command would show as a traceback, or
    an internal error, fails the test."""
    changes = None
    if env is not None:
        changes = {name: None for name in os.environ if name not in env}
        changes.update(env)
    with chdir(cwd or os.getcwd()):
        result = CliRunner().invoke(_entry, list(args), input=stdin, env=changes)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert "error: internal error" not in result.stderr, result.stderr
    return subprocess.CompletedProcess(
        ["nanograd", *args], result.exit_code, result.stdout, result.stderr
    )


class _Entry:
    """Adapt `main` (which maps errors to exit codes) to CliRunner."""

    name = "nanograd"

    def main(self, args, prog_name=None, **extra):
        main(args)


_entry = _Entry()

SMOOTH = ["tanh", "sin", "cos", "sigmoid", "exp", "atan", "softplus"]


def expressions(depth: int = 4) -> st.SearchStrategy[str]:
    """Random expressions in x, y and z of smooth functions and arithmetic."""
    leaves = st.sampled_from(["x", "y", "z", "0.5", "2", "1.5", "pi"])

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*"]), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            st.tuples(st.sampled_from(SMOOTH), inner).map(lambda t: f"{t[0]}({t[1]})"),
            inner.map(lambda e: f"-{e}"),
            inner.map(lambda e: f"({e})**2"),
            st.tuples(inner, inner).map(lambda t: f"{t[0]} / (1 + ({t[1]})**2)"),
        )

    return st.recursive(leaves, extend, max_leaves=12)


POINT = {"x": 0.3, "y": -0.7, "z": 1.1}


NANOGRAD = str(Path(sys.executable).parent / "nanograd")

# The environment with no virtualenv active, as when the command is run by its path.
NOT_ACTIVE = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}


def pip_hint(extra: str) -> str:
    """The command that a missing extra's message names in the virtualenv the tests run in,
    installed from this tree (`pip install -e`), for a process of NOT_ACTIVE."""
    return f"{sys.executable} -m pip install -e '{ROOT}[{extra}]'"


# The signals a test sends. A suite started with them ignored (`nohup`, some CI runners) passes
# the ignore on to every child, which nanograd rightly keeps: a child the test signals is
# started with their default dispositions, as from a terminal.
SENT = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def default_signals() -> None:
    """For preexec_fn: the child starts with SENT at their default dispositions."""
    for sent in SENT:
        signal.signal(sent, signal.SIG_DFL)


def nanograd(*args: str, stdin: str = "", **kwargs) -> subprocess.CompletedProcess:
    """The installed command in a subprocess, its output through pipes."""
    return subprocess.run(
        [NANOGRAD, *args], input=stdin, capture_output=True, text=True, timeout=60, **kwargs
    )


def limited(
    command: str, stdin: bytes = b"", cwd=None, seconds: int = 60, memory: int = 4_000_000
) -> tuple[int, str, str]:
    """Run shell `command`, where `nanograd` is the installed command, under `ulimit -t
    seconds` (CPU time, so that a loaded machine cannot fail it) and `ulimit -v memory` (kB):
    its exit code, standard output and standard error. It must stay within them and never end
    with a traceback. A wall-clock limit well beyond `seconds` only catches a hang."""
    script = (
        f'ulimit -v {memory}; ulimit -t {seconds}; nanograd() {{ "$NANOGRAD" "$@"; }}; {command}'
    )
    done = subprocess.run(
        ["timeout", str(HANG_FACTOR * seconds), "bash", "-c", script],
        input=stdin,
        capture_output=True,
        timeout=HANG_FACTOR * seconds + 30,
        cwd=cwd,
        env={**os.environ, "NANOGRAD": NANOGRAD},
    )
    out, err = (stream.decode(errors="replace") for stream in (done.stdout, done.stderr))
    assert done.returncode != CPU_LIMIT_EXCEEDED, f"{command[:100]} took over {seconds} s of CPU"
    assert done.returncode != 124, f"{command[:100]} hung"
    assert "Traceback" not in err and "internal error" not in err, err
    return done.returncode, out, err


def as_typed(command: str, stdin: bytes = b"", cwd=None) -> tuple[int, str, str]:
    """What shell `command` gives, as `limited` returns it: the command line in process where
    `command` is nanograd alone on a few short words (split as a shell splits them) and reads
    no standard input; in a shell under `limited` where it needs one (a pipe, a redirection, a
    variable), reads standard input (-, or `stdin` given) or is long."""
    words = shlex.split(command)
    alone = words[0] == "nanograd" and not re.search(r"[|;&<>$`]", command)
    if alone and "-" not in words and not stdin and len(command) < 200:
        done = in_process(*words[1:], cwd=cwd)
        return done.returncode, done.stdout, done.stderr
    return limited(command, stdin=stdin, cwd=cwd)


# What bash gives for a process that SIGXCPU ended (ulimit -t), and how many times a command's
# CPU limit it may take in wall time before it counts as hung.
CPU_LIMIT_EXCEEDED = 128 + signal.SIGXCPU
HANG_FACTOR = 10


def pdflatex(tmp_path: Path, body: str) -> Path:
    """`body` as an amsmath article compiled by pdflatex in `tmp_path` (which must compile):
    the PDF. Skips the test where pdflatex is not installed."""
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (apt-get install texlive-latex-base)")
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{amsmath}\n\\allowdisplaybreaks\n"
        f"\\begin{{document}}\n{body}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    return tmp_path / "doc.pdf"


def overfull(tmp_path: Path) -> list[str]:
    """The overfull boxes pdflatex reported for the document `pdflatex` compiled last."""
    log = (tmp_path / "doc.log").read_text(encoding="utf-8", errors="replace")
    return [line for line in log.splitlines() if line.startswith("Overfull")]


def on_terminal(*args: str, columns: int = 80) -> str:
    """What the installed command shows on a pseudo-terminal `columns` wide (both streams)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    process = subprocess.Popen(
        [NANOGRAD, *args], stdin=child, stdout=child, stderr=child, env=env, close_fds=True
    )
    os.close(child)
    screen = b""
    while True:
        ready, _, _ = select.select([main], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        screen += data
    process.wait(timeout=30)
    os.close(main)
    return screen.decode()


def visible(screen: str) -> list[str]:
    """The lines of a terminal screen without colour codes."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen).replace("\r", "").splitlines()


def cpu_seconds(pid: int) -> float:
    """The CPU time a running process has used (user and system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for_cpu(process: subprocess.Popen, seconds: float, timeout: float = 120) -> None:
    """Wait until `process` has used `seconds` of CPU time: on a loaded machine, a wall-clock
    sleep may end before it has even started up."""
    deadline = time.monotonic() + timeout
    while cpu_seconds(process.pid) < seconds:
        assert process.poll() is None, "the process ended first"
        assert time.monotonic() < deadline, f"{seconds} s of CPU not used in {timeout} s"
        time.sleep(0.05)


def wait_until_reading(process: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until `process` waits to read from a pipe (its standard input, or a named pipe),
    in any of its threads (PyArrow reads a file in one of its own)."""
    deadline = time.monotonic() + timeout
    while not any("pipe_read" in waits for waits in _waits(process.pid)):
        assert process.poll() is None, "the process ended first"
        assert time.monotonic() < deadline, f"not reading a pipe in {timeout} s"
        time.sleep(0.05)


def _waits(pid: int) -> list[str]:
    """Where each thread of the process `pid` waits in the kernel."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.append((task / "wchan").read_text())
        except OSError:  # a thread that ended meanwhile
            pass
    return found


def graphviz_with_its_input(process: subprocess.Popen, timeout: float = 120) -> int:
    """The process id of the Graphviz child of `process`, once that child runs Graphviz and
    has its whole graph (`process` has closed its end of the child's standard input): from
    then on, Graphviz ends early only if it is killed. Before, a child may still be Python
    between fork and exec, or Graphviz cut off mid-graph, which ends by itself."""
    dot = Path(shutil.which("dot") or "dot").resolve()
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, "nanograd ended before Graphviz had its graph"
        assert time.monotonic() < deadline, f"Graphviz did not get its graph in {timeout} s"
        listed = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text()
        for child in map(int, listed.split()):
            try:
                if Path(f"/proc/{child}/exe").resolve() != dot:
                    continue
                pipe = os.readlink(f"/proc/{child}/fd/0")
                held = {os.readlink(fd) for fd in Path(f"/proc/{process.pid}/fd").iterdir()}
            except FileNotFoundError:  # one of them ended, or closed a descriptor just now
                continue
            if pipe not in held:
                return child
        time.sleep(0.005)
