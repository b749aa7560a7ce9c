"""The same bad input says the same thing through the command line, the repl and Python: each
command's checks live once, in `api`, and each place only words its own names (an option, a
command) and adds its own hints."""

from __future__ import annotations

import pytest

import nanograd_cli
from nanograd_cli.errors import NanogradError
from nanograd_cli.repl import Session

from .helpers import in_process

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
# What the repl's command takes after the source.
REPL_TAIL = {"draw": " graph.svg"}


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
    done = in_process(command, source, *options)
    expected = f"error: {words(message, CLI, command, wrt)}{hints.get('cli', '')}"
    assert (done.returncode, done.stderr.splitlines()[0]) == (2, expected)

    session = Session()
    for name, value in inputs.items():
        assert session.run(f"{name} = {value!r}").status == 0
    entry = f":{command} {source}" + (f" wrt {' '.join(wrt)}" if wrt else "")
    entry += REPL_TAIL.get(command, "")
    if command == "grad":
        entry = source
    reply = session.run(entry)
    expected = f"error: {words(message, REPL, command, wrt)}{hints.get('repl', '')}"
    assert (reply.status, reply.err) == (2, [expected])

    if command in ("explain", "draw"):
        return  # no top-level Python name that takes a source and a point
    with pytest.raises(NanogradError) as raised:
        if command == "diff":
            nanograd_cli.diff(source, *wrt)
        else:
            getattr(nanograd_cli, command)(source, **inputs)
    assert (raised.value.exit_code, str(raised.value)) == (2, words(message, PYTHON, command, wrt))
