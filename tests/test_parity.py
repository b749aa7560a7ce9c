"""The same bad input says the same thing through the command line, the repl and Python: each
command's checks live once, in `api`, and each place only words its own names (an option, a
command) and adds its own hints."""

from __future__ import annotations

import re

import pytest

import nanograd_cli
from nanograd_cli._session import Session
from nanograd_cli.errors import InputError, NanogradError, NonFiniteResult

from .helpers import in_process

# Each place's words for the command that takes one output, and for what takes several.
CLI = {"cmd": "nanograd {}", "several": "nanograd grad", "wrt": "--wrt {}: "}
REPL = {"cmd": ":{}", "several": "a plain line", "wrt": "wrt {}: "}
PYTHON = {"cmd": "{}()", "several": "jacobian()", "wrt": "wrt='{}': "}

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
        {
            "cli": ": pass --y VALUE",
            "repl": ": give it a value first: y = VALUE",
            "python": ": give y=VALUE",
        },
    ),
    (
        "grad",
        "x*y",
        {"y": 2.0},
        [],
        "missing value for input x",
        {
            "cli": ": pass --x VALUE",
            "repl": ": give it a value first: x = VALUE",
            "python": ": give x=VALUE",
        },
    ),
    (
        "explain",
        "x*y",
        {"x": 1.0},
        [],
        "missing value for input y",
        {
            "cli": ": pass --y VALUE",
            "repl": ": give it a value first: y = VALUE",
            "python": ": give y=VALUE",
        },
    ),
    (
        "draw",
        "x*y",
        {"x": 1.0},
        [],
        "missing value for input y",
        {
            "cli": ": pass --y VALUE",
            "repl": ": give it a value first: y = VALUE",
            "python": ": give y=VALUE",
        },
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
        {
            "cli": ": pass --y VALUE",
            "repl": ": give it a value first: y = VALUE",
            "python": ": give y=VALUE",
        },
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
        {
            "cli": ": pass --y VALUE",
            "repl": ": give it a value first: y = VALUE",
            "python": ": give y=VALUE",
        },
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
    done = in_process(command, source, *options)
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

    keywords = {**inputs, **({"wrt": wrt[0]} if wrt and command != "diff" else {})}
    if command == "plot" and named:
        keywords["x"] = "0:1"
    with pytest.raises(NanogradError) as raised:
        if command == "diff":
            nanograd_cli.diff(source, *wrt)
        elif command == "draw":
            nanograd_cli.draw(source, format="dot", **keywords)
        else:
            getattr(nanograd_cli, command)(source, **keywords)
    expected = words(message, PYTHON, command, wrt) + hints.get("python", "")
    assert (raised.value.exit_code, str(raised.value)) == (2, expected)


# Bad input and warnings of every command, through the command line, the repl and Python: the
# same words but for how each door writes an option (--wrt z, wrt z, wrt='z') or a command.
# Each case: the command line's arguments (which the repl is given as it takes them), the
# Python call, and the words of each (a warning's or an error's first line, without the
# command line's `error: ` or `warning: `).
def rows(tmp_path):
    data = tmp_path / "rows.csv"
    data.write_text("x,y\n0,1\n1,3\n2,5\n3,7.1\n")
    return str(data)


DOORS = [
    (
        ["grad", "x*y", "--x", "1", "--y", "2", "--wrt", "z"],
        lambda d: nanograd_cli.grad("x*y", x=1, y=2, wrt="z"),
        ("--wrt z: ", "wrt='z': ", "z is not an input (inputs: x, y)"),
    ),
    (
        ["grad", "u = x; v = 2*x; u, v", "--x", "1", "--wrt", "q"],
        lambda d: nanograd_cli.jacobian("u = x; v = 2*x; u, v", x=1, wrt="q"),
        ("--wrt q: ", "wrt='q': ", "q is not an input (inputs: x)"),
    ),
    (
        ["check", "x**3", "--x", "1", "--against", "3*y**2"],
        lambda d: nanograd_cli.check("x**3", x=1, against="3*y**2"),
        ("", "", "the formula for d/dx reads y, which is no input of the source"),
    ),
    (
        ["check", "x*y", "--x", "1", "--y", "1", "--against", "y"],
        lambda d: nanograd_cli.check("x*y", x=1, y=1, against="y"),
        ("", "", "say which derivative 'y' is: {wrt NAME}, or NAME=FORMULA (the inputs are x, y)"),
    ),
    (
        ["check", "x*y", "--x", "1", "--y", "1", "--wrt", "x[0]"],
        lambda d: nanograd_cli.check("x*y", x=1, y=1, wrt="x[0]"),
        ("--wrt x[0]: ", "wrt='x[0]': ", "x is a number, not an array: differentiate by {wrt x}"),
    ),
    (
        ["plot", "sin(x)", "--x", "3:-3"],
        lambda d: nanograd_cli.plot("sin(x)", x="3:-3"),
        ("--x 3:-3", "x='3:-3'", ": a range goes from low to high (LO < HI)"),
    ),
    (
        ["plot", "sin(x)", "--x", "-3:3", "--ylim", "1"],
        lambda d: nanograd_cli.plot("sin(x)", x="-3:3", ylim="1"),  # type: ignore[arg-type]
        ("", "", "{ylim 1}: give LO:HI (e.g. {ylim -10:10}), auto or full"),
    ),
    (
        ["draw", "x", "--x", "1", "-o", "g.svg", "--dpi", "100"],
        lambda d: nanograd_cli.draw("x", x=1, format="svg", dpi=100),
        ("", "", "{dpi} is for png; svg is not made of pixels"),
    ),
    (
        ["draw", "u = x; v = 2*x; u, v", "--x", "1", "-o", "g.svg", "--grad-of", "w"],
        lambda d: nanograd_cli.draw("u = x; v = 2*x; u, v", x=1, grad_of="w"),
        ("", "", "{grad_of w}: the outputs are u, v; w is none of them"),
    ),
    (
        ["draw", "x*2", "--x", "1", "-o", "g.svg", "--grad-of", "x"],
        lambda d: nanograd_cli.draw("x*2", x=1, grad_of="x"),
        ("", "", "{grad_of x} chooses one of several outputs, and the source has one result"),
    ),
    (
        ["draw", "x", "--x", "1", "-o", "g.html", "--edge-grads"],
        lambda d: nanograd_cli.draw("x", x=1, format="html", edge_grads=True),
        ("", "", "{edge_grads} is for pictures; the live page shows local derivatives on hover"),
    ),
    (
        ["minimize", "x**2 + y**2", "--x", "1", "--y", "1", "--fix", "q"],
        lambda d: nanograd_cli.minimize("x**2 + y**2", x=1, y=1, fix="q"),
        ("--fix q: ", "fix='q': ", "q is not an input (inputs: x, y)"),
    ),
    (
        ["minimize", "x**2 + y**2", "--x", "1", "--y", "1", "--fix", "x", "--wrt", "y"],
        lambda d: nanograd_cli.minimize("x**2 + y**2", x=1, y=1, fix="x", wrt="y"),
        ("", "", "give the inputs to move ({wrt}) or those to hold ({fix}), not both"),
    ),
    (
        ["minimize", "x**2", "--x", "1", "--fix", "x"],
        lambda d: nanograd_cli.minimize("x**2", x=1, fix="x"),
        ("", "", "every input is held by {fix}: there is nothing to move"),
    ),
    (
        ["fit", "a*x + b", "--data", "{data}", "--a", "1", "--b", "0", "--fix", "q"],
        lambda d: nanograd_cli.fit("a*x + b", d, a=1, b=0, fix="q"),
        ("--fix q: ", "fix='q': ", "q is not a parameter (parameters: a, b)"),
    ),
    (
        ["fit", "a*x + b", "--data", "{data}", "--a", "1"],
        lambda d: nanograd_cli.fit("a*x + b", d, a=1),
        (
            "",
            "",
            "no start for parameter b: give a start value for each input that is not a "
            "column of the data",
        ),
    ),
    (
        ["explain", "x*y", "--x", "1"],
        lambda d: nanograd_cli.explain("x*y", x=1),
        ("", "", "missing value for input y: {give y}"),
    ),
]
# How each door writes what the cases above write in braces.
SPELLED = {
    "cli": {
        "wrt": "--wrt",
        "against": "--against",
        "wrt NAME": "--wrt NAME",
        "wrt x": "--wrt x",
        "ylim 1": "--ylim 1",
        "ylim -10:10": "--ylim -10:10",
        "dpi": "--dpi",
        "edge_grads": "--edge-grads",
        "grad_of w": "--grad-of w",
        "grad_of x": "--grad-of x",
        "fix": "--fix",
        "give y": "pass --y VALUE",
    },
    "repl": {
        "wrt": "wrt",
        "against": "against",
        "wrt NAME": "wrt NAME",
        "wrt x": "wrt x",
        "ylim 1": "ylim 1",
        "ylim -10:10": "ylim -10:10",
        "dpi": "dpi",
        "edge_grads": "edge-grads",
        "grad_of w": "grad-of w",
        "grad_of x": "grad-of x",
        "fix": "fix",
        "give y": "give it a value first: y = VALUE",
    },
    "python": {
        "wrt": "wrt",
        "against": "against",
        "wrt NAME": "wrt='NAME'",
        "wrt x": "wrt='x'",
        "ylim 1": "ylim='1'",
        "ylim -10:10": "ylim='-10:10'",
        "dpi": "dpi",
        "edge_grads": "edge_grads",
        "grad_of w": "grad_of='w'",
        "grad_of x": "grad_of='x'",
        "fix": "fix",
        "give y": "give y=VALUE",
    },
}


def spelled(text: str, door: str) -> str:
    return re.sub(r"\{([^}]*)\}", lambda m: SPELLED[door][m[1]], text)


def in_the_repl(args: list[str], *more: str) -> tuple[int, list[str]]:
    """The command line's arguments as the repl takes them: each input's value a line of its
    own, then `:COMMAND SOURCE` with the options named without dashes (a range after its
    input's name, -o's FILE alone); the entry's status and what it said on standard error."""
    command, source, *rest = [*args, *more]
    inputs = nanograd_cli.parse(source).inputs
    session, words, i = Session(), [], 0
    while i < len(rest):
        name = rest[i].lstrip("-")
        value = rest[i + 1] if i + 1 < len(rest) and not rest[i + 1].startswith("--") else None
        i += 1 if value is None else 2
        if name in inputs and value is not None and ":" not in value:
            assert session.run(f"{name} = {value}").status == 0
        else:
            words += [value] if name == "o" else [name, *([value] if value else [])]
    reply = session.run(f":{command} {source} {' '.join(words)}")
    return reply.status, reply.err


@pytest.mark.parametrize(("args", "call", "words"), DOORS, ids=lambda v: None)
def test_every_command_says_the_same_through_every_door(args, call, words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = rows(tmp_path)
    cli_prefix, python_prefix, message = words
    args = [a.replace("{data}", data) for a in args]
    done = in_process(*args)
    first = done.stderr.splitlines()[0]
    assert (done.returncode, first) == (2, f"error: {cli_prefix}{spelled(message, 'cli')}")
    status, said = in_the_repl(args)
    repl_prefix = cli_prefix.replace("--", "", 1)
    assert (status, said[0].splitlines()[0]) == (
        2,
        f"error: {repl_prefix}{spelled(message, 'repl')}",
    )
    with pytest.raises(NanogradError) as raised:
        call(data)
    assert raised.value.exit_code == 2
    assert str(raised.value).splitlines()[0] == f"{python_prefix}{spelled(message, 'python')}"


# Warnings: the command line and the repl print them, Python warns with NanogradWarning; with
# --strict (strict in the repl, strict=True in Python) each is an error with the same words.
WARNINGS = [
    (["grad", "log(x)", "--x", "-1"], lambda **o: nanograd_cli.grad("log(x)", x=-1, **o)),
    (
        ["grad", "u = log(x); v = x; u, v", "--x", "-1"],
        lambda **o: nanograd_cli.jacobian("u = log(x); v = x; u, v", x=-1, **o),
    ),
    (["hessian", "log(x)", "--x", "-1"], lambda **o: nanograd_cli.hessian("log(x)", x=-1, **o)),
    (["explain", "log(x)", "--x", "-1"], lambda **o: nanograd_cli.explain("log(x)", x=-1, **o)),
    (["check", "log(x)", "--x", "-1"], lambda **o: nanograd_cli.check("log(x)", x=-1, **o)),
    (
        ["draw", "log(x)", "--x", "-1", "-o", "g.dot"],
        lambda **o: nanograd_cli.draw("log(x)", x=-1, format="dot", **o),
    ),
]


@pytest.mark.parametrize(("args", "call"), WARNINGS, ids=lambda v: None)
def test_a_nan_is_a_warning_or_with_strict_an_error_through_every_door(
    args, call, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    done = in_process(*args)
    first = done.stderr.splitlines()[0]
    assert first.startswith("warning: line 1, column ") and first.endswith(": log gave nan")
    where = first.removeprefix("warning: ")
    with pytest.warns(nanograd_cli.NanogradWarning) as caught:
        call()
    warned = "\n".join(done.stderr.splitlines()[:3])  # the message, the line, the caret
    assert [str(w.message) for w in caught] == [warned.removeprefix("warning: ")]
    assert caught[0].filename == __file__  # the caller's line, not the library's

    strict = in_process(*args, "--strict")
    assert (strict.returncode, strict.stderr.splitlines()[0]) == (1, f"error: {where}")
    status, said = in_the_repl(args)
    assert (status, said[0].splitlines()[0]) == (done.returncode, first)
    status, said = in_the_repl(args, "--strict")
    assert (status, said[0].splitlines()[0]) == (1, f"error: {where}")
    with pytest.raises(NonFiniteResult) as raised:
        call(strict=True)
    assert str(raised.value).splitlines()[0] == where


def test_notes_are_worded_for_each_door(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    note = "dy and dx are inputs here; for the derivative of y by x, give y itself and {}"
    done = in_process("diff", "dy/dx")
    assert done.stderr == f"note: {note.format('--wrt x')}\n"
    with pytest.warns(nanograd_cli.NanogradWarning) as caught:
        nanograd_cli.diff("dy/dx")
    assert [str(w.message) for w in caught] == [note.format("wrt='x'")]

    assert in_the_repl(["diff", "dy/dx"]) == (0, [f"note: {note.format('wrt x')}"])

    gaps = "f is nan or inf at"
    done = in_process("plot", "log(x)", "--x", "-1:1:11", "-o", "p.svg")
    assert done.stderr.startswith(f"warning: {gaps}")
    with pytest.warns(nanograd_cli.NanogradWarning) as caught:
        nanograd_cli.plot("log(x)", x="-1:1:11")
    assert str(caught[0].message).startswith(gaps)
    assert done.stderr == f"warning: {caught[0].message}\n"


def test_every_command_has_a_door_of_each_kind():
    """Each command of the command line is a command of the repl, with its options there,
    and a function of the package: a new command is reached through all three doors."""
    from nanograd_cli._cli import COMMANDS
    from nanograd_cli._session import COMMANDS as REPL_COMMANDS
    from nanograd_cli._session import OPTIONS

    commands = [c for c in COMMANDS if c not in ("repl", "completion")]  # (no computations)
    assert [c for c in commands if f":{c}" not in REPL_COMMANDS or f":{c}" not in OPTIONS] == []
    assert [c for c in commands if not callable(getattr(Session, f"{c}_command", None))] == []
    assert [c for c in commands if c not in nanograd_cli.__all__] == []


# Options' values that the command line's parsing refuses: Python (and the repl, through the
# same checks in `api`) refuses them with the same words after the option's name.
VALUES = [
    (
        ["draw", "x", "--x", "1", "--format", "jpg"],
        lambda: nanograd_cli.draw("x", x=1, format="jpg"),
    ),
    (["check", "x*x", "--x", "1", "--rtol", "-1"], lambda: nanograd_cli.check("x*x", x=1, rtol=-1)),
    (
        ["check", "x*x", "--x", "1", "--atol", "nan"],
        lambda: nanograd_cli.check("x*x", x=1, atol=float("nan")),
    ),
    (["check", "x*x", "--x", "1", "--rtol", "a"], lambda: nanograd_cli.check("x*x", x=1, rtol="a")),
    (
        ["minimize", "x*x", "--x", "1", "--lr", "-1"],
        lambda: nanograd_cli.minimize("x*x", x=1, lr=-1),
    ),
    (
        ["minimize", "x*x", "--x", "1", "--steps", "0"],
        lambda: nanograd_cli.minimize("x*x", x=1, steps=0),
    ),
    (
        ["minimize", "x*x", "--x", "1", "--steps", "10.5"],
        lambda: nanograd_cli.minimize("x*x", x=1, steps="10.5"),
    ),
    (
        ["minimize", "x*x", "--x", "1", "--method", "adamw"],
        lambda: nanograd_cli.minimize("x*x", x=1, method="adamw"),
    ),
    (["grad", "x", "--x", "1", "--mode", "fwd"], lambda: nanograd_cli.grad("x", x=1, mode="fwd")),
    (
        ["grad", "u = x; v = x; u, v", "--x", "1", "--mode", "fwd"],
        lambda: nanograd_cli.jacobian("u = x; v = x; u, v", x=1, mode="fwd"),
    ),
    (["diff", "x", "--format", "tex"], lambda: nanograd_cli.diff("x", format="tex")),
    (
        ["explain", "x", "--x", "1", "--format", "csv"],
        lambda: nanograd_cli.explain("x", x=1, format="csv"),
    ),
]


def test_rankdir_is_checked_alike_in_any_case():
    """--rankdir is read in any case (api.draw checks it, for every door): tb is TB."""
    done = in_process("draw", "x", "--x", "1", "--rankdir", "XX")
    message = "invalid value for {}: 'XX' is not one of 'LR', 'TB', 'RL', 'BT'"
    assert (done.returncode, done.stderr) == (2, f"error: {message.format('--rankdir')}\n")
    with pytest.raises(InputError) as raised:
        nanograd_cli.draw("x", x=1, rankdir="XX")
    assert str(raised.value) == message.format("rankdir")


def test_a_whole_number_out_of_range_is_refused_alike():
    """--dpi and --order are checked by api (for every door), in one wording."""
    done = in_process("draw", "x", "--x", "1", "--format", "png", "--dpi", "-5")
    assert (done.returncode, done.stderr) == (2, "error: --dpi must be from 1 to 2400, not -5\n")
    with pytest.raises(InputError) as raised:
        nanograd_cli.draw("x", x=1, format="png", dpi=-5)
    assert str(raised.value) == "dpi must be from 1 to 2400, not -5"
    with pytest.raises(InputError) as raised:
        nanograd_cli.diff("x**3", order=21)
    assert str(raised.value) == "order must be from 1 to 20, not 21"


@pytest.mark.parametrize(("args", "call"), VALUES, ids=lambda v: None)
def test_python_checks_an_option_as_the_command_line_does(args, call):
    done = in_process(*args)
    name = args[-2]  # the option whose value is refused
    prefix = f"error: Invalid value for '{name}': "
    first = done.stderr.splitlines()[0]
    assert done.returncode == 2 and first.startswith(prefix), first
    with pytest.raises(InputError) as raised:
        call()
    assert (
        str(raised.value)
        == f"invalid value for {name[2:]}: {first.removeprefix(prefix).rstrip('.')}"
    )


def test_an_equation_differentiated_without_implicit_is_0_and_says_how_to_get_dy_dx():
    compares = "== compares its sides (1 where they are equal, else 0): its derivative is 0"
    hint = "{compares}; for dy/dx along the curve the equation makes, use {implicit} {wrt}"
    done = in_process("diff", "x**2 + y**2 == 25")
    assert (done.returncode, done.stdout) == (0, "d_x = 0\nd_y = 0\n")
    said = hint.format(compares=compares, implicit="--implicit y", wrt="--wrt x")
    assert done.stderr == f"note: {said}\n"
    assert in_the_repl(["diff", "x**2 + y**2 == 25", "--wrt", "x"]) == (
        0,
        ["note: " + hint.format(compares=compares, implicit="implicit y", wrt="wrt x")],
    )
    with pytest.warns(nanograd_cli.NanogradWarning) as caught:
        assert str(nanograd_cli.diff("x**2 + y**2 == 25", wrt="x")) == "0"
    said = hint.format(compares=compares, implicit="implicit='y'", wrt="wrt='x'")
    assert [str(w.message) for w in caught] == [said]
    alone = in_process("diff", "t**2 == 25")  # one name: no curve to follow
    assert (alone.stdout, alone.stderr) == ("0\n", f"note: {compares}\n")
    assert in_process("diff", "x**2 + y**2 == 25", "--implicit", "y", "--wrt", "x").stderr == ""
    assert in_process("diff", "(x == 1) + y", "--wrt", "y").stderr == ""  # no equation at the end
