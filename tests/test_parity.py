"""The same bad input says the same thing through the command line, the repl and Python: each
command's checks live once, in `api`, and each place only words its own names (an option, a
command) and adds its own hints."""

from __future__ import annotations

import pytest

import nanograd_cli
from nanograd_cli.errors import NanogradError
from nanograd_cli.repl import Session

from .helpers import nanograd

# Each place's words for the command that takes one output, and for what takes several.
CLI = {"cmd": "nanograd {}", "several": "nanograd grad", "wrt": "--wrt {}: "}
REPL = {"cmd": ":{}", "several": "a plain line", "wrt": "wrt {}: "}
PYTHON = {"cmd": "{}()", "several": "jacobian()", "wrt": ""}

SEVERAL = (
    "the source lists 2 outputs (u, v), and {cmd} takes one: end the source with one of them "
    "({several} takes several)"
)

# command, source, inputs, --wrt names, the message in each place's words, and each place's
# hint after it (None: that place cannot be given this input)
CASES = [
    ("hessian", "u = x; v = 2*x; u, v", {"x": 1.0}, [], SEVERAL, {}),
    ("diff", "u = x; v = 2*x; u, v", {}, [], SEVERAL, {}),
    (
        "explain",
        "u = x; v = 2*x; u, v",
        {"x": 1.0},
        [],
        SEVERAL,
        {},
    ),
    ("diff", "x*y", {}, ["z"], "{wrt}z is not an input (inputs: x, y)", {}),
    ("diff", "2*3", {}, [], "the source has no inputs: its derivative is 0 by every name", {}),
    (
        "hessian",
        "x*y",
        {"x": 1.0},
        [],
        "missing value for input y",
        {"cli": ": pass --y VALUE", "repl": ": give it a value first: y = VALUE"},
    ),
    (
        "grad",
        "x*y",
        {"y": 2.0},
        [],
        "missing value for input x",
        {"cli": ": pass --x VALUE", "repl": ": give it a value first: x = VALUE"},
    ),
    (
        "explain",
        "x*y",
        {"x": 1.0},
        [],
        "missing value for input y",
        {"cli": ": pass --y VALUE", "repl": ": give it a value first: y = VALUE"},
    ),
    ("draw", "u = x; v = 2*x; u, v", {"x": 1.0}, [], SEVERAL, {}),
    (
        "draw",
        "x*y",
        {"x": 1.0},
        [],
        "missing value for input y",
        {"cli": ": pass --y VALUE", "repl": ": give it a value first: y = VALUE"},
    ),
]
# The commands the repl reached later: the same messages, from its commands' options.
CASES += [
    ("check", "u = x; v = 2*x; u, v", {"x": 1.0}, [], SEVERAL, {}),
    ("check", "2*3", {}, [], "the source has no inputs: there is nothing to check", {}),
    (
        "check",
        "x*y",
        {"x": 1.0},
        [],
        "missing value for input y",
        {"cli": ": pass --y VALUE", "repl": ": give it a value first: y = VALUE"},
    ),
    ("minimize", "u = x; v = 2*x; u, v", {"x": 1.0}, [], SEVERAL, {}),
    ("minimize", "x*y", {"x": 1.0, "y": 2.0}, ["z"], "{wrt}z is not an input (inputs: x, y)", {}),
    ("minimize", "2*3", {}, [], "the source has no inputs: there is nothing to move", {}),
    (
        "minimize",
        "x*y",
        {"x": 1.0},
        [],
        "missing value for input y",
        {"cli": ": pass --y VALUE", "repl": ": give it a value first: y = VALUE"},
    ),
    ("plot", "u = x; v = 2*x; u, v", {}, [], SEVERAL, {}),
    ("plot", "2*3", {}, [], "the source has no inputs: there is nothing to plot it over", {}),
]
# What each door's command takes after the source and the inputs.
REPL_TAIL = {"draw": " graph.svg", "plot": " x 0:1"}
CLI_TAIL = {"plot": ["--x", "0:1"]}


def words(template: str, place: dict, command: str, wrt: list[str]) -> str:
    return template.format(
        cmd=place["cmd"].format(command),
        several=place["several"],
        wrt=place["wrt"].format(wrt[0]) if wrt else "",
    )


@pytest.mark.parametrize(("command", "source", "inputs", "wrt", "message", "hints"), CASES)
def test_the_command_line_the_repl_and_python_say_the_same(
    command, source, inputs, wrt, message, hints, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # where nothing is written
    options = [a for n, v in inputs.items() for a in (f"--{n}", repr(v))]
    options += [a for n in wrt for a in ("--wrt", n)]
    named = any(c.isalpha() for c in source)  # a source with no names is given no range
    options += CLI_TAIL.get(command, []) if named else []
    done = nanograd(command, source, *options)
    expected = f"error: {words(message, CLI, command, wrt)}{hints.get('cli', '')}"
    assert (done.returncode, done.stderr.splitlines()[0]) == (2, expected)

    session = Session()
    for name, value in inputs.items():
        assert session.run(f"{name} = {value!r}").status == 0
    entry = f":{command} {source}" + (f" wrt {' '.join(wrt)}" if wrt else "")
    entry += REPL_TAIL.get(command, "") if named else ""
    if command == "grad":
        entry = source
    reply = session.run(entry)
    expected = f"error: {words(message, REPL, command, wrt)}{hints.get('repl', '')}"
    assert (reply.status, reply.err) == (2, [expected])

    if command in ("explain", "draw", "minimize", "plot"):
        return  # no top-level Python name that takes a source and a point
    with pytest.raises(NanogradError) as raised:
        if command == "diff":
            nanograd_cli.diff(source, *wrt)
        else:
            getattr(nanograd_cli, command)(source, **inputs)
    assert (raised.value.exit_code, str(raised.value)) == (2, words(message, PYTHON, command, wrt))
