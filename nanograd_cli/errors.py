"""Typed errors. Each says what went wrong in words and, where it has one, where in the source.

The library names an option or a command as data (`option("wrt", "z")`, `command("hessian")`),
never as one door spells it: each door words a message for its user (`--wrt z` and `nanograd
hessian` on the command line, `wrt z` and `:hessian` in the repl, `wrt='z'` and `hessian()`
in Python). A message is worded for the door in effect (`speaking`): Python's unless the
command line or the repl said otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

Door = Literal["cli", "repl", "python"]

# An option or a command named in a message, as data: between two marks, its kind (o or c),
# its name, and its value as the command line and as Python write it.
_MARK, _SEP = "\x1f", "\x1e"
_NAMED = re.compile(f"{_MARK}([oc])([^{_SEP}]*){_SEP}([^{_SEP}]*){_SEP}([^{_MARK}]*){_MARK}")
_door: ContextVar[Door] = ContextVar("door", default="python")


def option(name: str, value: object = None, quoted: bool = False) -> str:
    """An option named in a message, with the value it was given if any; `quoted` writes
    the value as a literal on the command line too (`--against 'x**2'`)."""
    if value is None:
        return f"{_MARK}o{name}{_SEP}{_SEP}{_MARK}"
    shown = repr(value) if quoted else str(value)
    return f"{_MARK}o{name}{_SEP}{shown}{_SEP}{value!r}{_MARK}"


def command(name: str) -> str:
    """A command named in a message: `nanograd NAME`, `:NAME` or `NAME()` by the door."""
    return f"{_MARK}c{name}{_SEP}{_SEP}{_MARK}"


def spell(text: str, door: Door | None = None) -> str:
    """`text` with the options and commands it names written as `door` (by default the door
    in effect) writes them: `--hide-constants 1`, `hide-constants 1`, `hide_constants=1`."""
    if _MARK not in text:
        return text
    door = door or _door.get()
    return _NAMED.sub(lambda m: _spelled(m[1], m[2], m[3], m[4], door), text)


def _spelled(kind: str, name: str, shown: str, literal: str, door: Door) -> str:
    if kind == "c":
        return {"cli": f"nanograd {name}", "repl": f":{name}", "python": f"{name}()"}[door]
    if name == "var" and door != "cli" and "=" in shown:  # an input's value, x[0]=-3:3
        named, _, value = shown.partition("=")
        return f"inputs={{{named!r}: {value!r}}}" if door == "python" else f"{named} {value}"
    if name == "output" and door == "repl":  # the repl's :plot and :draw take a bare FILE
        return shown
    if name == "-o":  # fit's -o FILE: output FILE in the repl, output= in Python
        if door == "cli":
            return f"-o {shown}" if shown else "-o"
        name = "output"
    if door == "python":
        keyword = name.replace("-", "_")
        return f"{keyword}={literal}" if literal else keyword
    dashed = ("--" if door == "cli" else "") + name.replace("_", "-")
    return f"{dashed} {shown}" if shown else dashed


@contextmanager
def speaking(door: Door) -> Iterator[None]:
    """Messages made or shown inside are worded for `door`."""
    token = _door.set(door)
    try:
        yield
    finally:
        _door.reset(token)


# Words people use for a command or an option, and the name each means.
MEANT = {
    "derivative": "diff",
    "differentiate": "diff",
    "d": "diff",
    "gradient": "grad",
    "jacobian": "grad",
    "optimize": "minimize",
    "optimise": "minimize",
    "minimise": "minimize",
    "graph": "draw",
    "hess": "hessian",
    "gradcheck": "check",
    "with": "wrt",
    "by": "wrt",
    "respect": "wrt",
}


def nearest(word: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """Of the names `known` (of commands, or of options, without their dashes), the one
    `word` most likely meant: the one it is a word for (`with` for wrt), or one it is a typo
    of; None if none is near. Every door suggests with it."""
    import difflib  # only on the way to an error

    names = sorted(known)
    meant = MEANT.get(word)
    if meant in names:
        return meant
    close = difflib.get_close_matches(word, names, n=1, cutoff=cutoff)
    return close[0] if close else None


def file_name(path: str) -> str:
    """`path` as a file's name, which the system can open: bad input where it holds a NUL
    character (Python's open raises a ValueError)."""
    if "\0" in path:
        raise InputError(f"{printable(path)} is no file name: it holds a NUL character")
    return path


def printable(text: str, keep: str = "") -> str:
    """`text` from the user (a file name, a word typed) as a message shows it: each character
    that is not printable, but those in `keep`, written as its escape (ESC as \\x1b, a
    newline as \\n), so that no control character reaches the terminal, which would act on
    it (set its title, move the cursor, rewrite what is shown). A byte that was not UTF-8 (a
    name on the command line, read with surrogateescape) is written as that byte, \\xff."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _escape(c) for c in text)


def _escape(character: str) -> str:
    code = ord(character)
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else repr(character)[1:-1]


class NanogradError(Exception):
    """Anything that stops a run. `exit_code` is what the command line exits with."""

    exit_code = 1

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return spell(self.message)


class InputError(NanogradError):
    """Bad input from the user: the source, an input value or an option (exit code 2)."""

    exit_code = 2


class SourceError(InputError):
    """A problem at a place in the source: shown with its line and a caret under the spot."""

    def __init__(self, message: str, source: str, offset: int):
        super().__init__(message)
        self.source = source
        self.offset: int = max(0, min(offset, len(source)))
        line_start = source.rfind("\n", 0, self.offset) + 1
        line_end = source.find("\n", self.offset)
        self.line: int = source.count("\n", 0, self.offset) + 1
        self.column: int = self.offset - line_start + 1
        self.source_line: str = source[line_start : line_end if line_end >= 0 else len(source)]

    def __str__(self) -> str:
        return self.on_line(self.line)

    def at_line(self, line: int) -> SourceError:
        """The same error, its source read as the line numbered `line` of a longer input."""
        moved = type(self).__new__(type(self))
        moved.__dict__.update(self.__dict__)
        moved.args, moved.line = self.args, line
        return moved

    def on_line(self, line: int) -> str:
        """The message with the source line and a caret, the line numbered `line` (for a
        source that is one line of a longer input)."""
        # One printable character per source character, so the caret lines up.
        text = "".join(c if c.isprintable() else " " for c in self.source_line.rstrip("\r"))
        caret = " " * (self.column - 1) + "^"
        margin = f"{line} | "
        return (
            f"line {line}, column {self.column}: {spell(self.message)}\n"
            f"  {margin}{text}\n"
            f"  {' ' * len(margin)}{caret}"
        )


class SyntaxProblem(SourceError):
    """Text that is not in the language."""


class NameProblem(SourceError):
    """An unknown function, a call of something that is not a function, a reserved name."""


class ShapeProblem(SourceError):
    """Arrays whose shapes do not fit the operation, at the operation in the source
    (`diff("A @ x", shapes={"A": (3, 2), "x": 3})`)."""


class MissingInputs(InputError):
    """Inputs the source reads that were given no value. `hint` says how to give them, in the
    words of the door in effect: `pass --x VALUE` on the command line, `give x=VALUE` in
    Python (where an input named as one of the call's `options` goes in `inputs=`); the repl
    words its own."""

    def __init__(self, names: list[str], options: Iterable[str] = ()):
        self.names = names
        self.options: set[str] = set(options)
        # Another way to give them, if any: `a column x of points`; and the column meant.
        self.other = ""
        self.meant = ""
        plural = "s" if len(names) > 1 else ""
        super().__init__(f"missing value{plural} for input{plural} {', '.join(names)}")

    def or_columns_of(self, where: str, columns: Sequence[str] = ()) -> MissingInputs:
        """Said to be given as columns of `where` too (`--points`, `--data`): `give --data a
        column z or pass --z VALUE`; with the `columns` it has, the one a name was likely
        meant as."""
        names = self.names
        wanted = f"columns {', '.join(names)}" if len(names) > 1 else f"a column {names[0]}"
        self.other = f"{where} {wanted}"
        meant = near_column(names[0], columns) if len(names) == 1 else None
        if meant is not None:
            self.meant = column_hint(meant, "the source")
        return self

    @property
    def hint(self) -> str:
        given = self._given()
        return (f"give {spell(self.other)} or {given}" if self.other else given) + self.meant

    def _given(self) -> str:
        if _door.get() != "python":
            return "pass " + " ".join(f"--{n} VALUE" for n in self.names)
        keywords = [n for n in self.names if n not in self.options and n.isidentifier()]
        mapped = [n for n in self.names if n not in keywords]
        given = [f"{n}=VALUE" for n in keywords]
        if mapped:
            given.append("inputs={" + ", ".join(f"{n!r}: VALUE" for n in mapped) + "}")
        return "give " + ", ".join(given)


class UnknownInputs(InputError):
    """Values given for names that the source does not read as inputs."""

    def __init__(
        self, names: list[str], inputs: list[str], hint: str = "", columns: Sequence[str] = ()
    ):
        """`inputs`: those that take a value (a fit's parameters); `columns`: the others,
        which the data give."""
        self.names: list[str] = names
        self.meant: str = hint  # the option meant, said after the list
        listed = ", ".join(names)
        known = ", ".join(inputs) if inputs else "none"
        plural = "s" if len(names) > 1 else ""
        verb = "are not inputs" if plural else "is not an input"
        read = ""
        if columns:
            which = "is a column" if len(columns) == 1 else "are columns"
            read = f"; {', '.join(columns)} {which} of the data"
        if not hint and len(names) == 1:
            hint = _near_input(names[0], inputs)
        super().__init__(f"{listed} {verb} of this source (its inputs: {known}){read}{hint}")


def _near_input(name: str, inputs: Sequence[str]) -> str:
    """ "; did you mean x?" where one of `inputs` is `name` in another case (X for x), or a
    typo of it (alpah for alpha)."""
    same = [n for n in inputs if n.lower() == name.lower()]
    meant = same[0] if same else nearest(name, inputs, cutoff=0.75) if len(name) > 2 else None
    return f"; did you mean {meant}?" if meant else ""


def no_column(name: str, columns: Sequence[str], reader: str, why: str = "") -> str:
    """The message that `reader` (the target, sigma, the model) reads `name`, which is no
    column of the data: with the columns, and the one it was likely meant as, or `why`
    (what `reader` reads)."""
    meant = near_column(name, columns)
    listed = ", ".join(columns)
    said = f"{reader} reads {name}, which is no column of {option('data')} (its columns: {listed})"
    return said + (column_hint(meant, reader) if meant else why)


def near_column(name: str, columns: Sequence[str]) -> str | None:
    """The column of `columns` that `name` was likely meant as, if any: a typo of it, its
    header with units (err for `err (mV)`, not x for x[0]), or itself in another case."""
    import difflib  # only on the way to an error

    near = difflib.get_close_matches(name, list(columns), n=1, cutoff=0.6)
    near += [c for c in columns if re.match(re.escape(name) + r"[^\w\[]", c)]
    near += [c for c in columns if c.lower() == name.lower()]
    return near[-1] if near else None


def column_hint(column: str, where: str, aside: str = "") -> str:
    """The end of a message that a name was meant as `column`: did you mean it (then
    `aside`); or, where its header is no name (time (s)), how to rename it so that `where`
    can read it."""
    if re.fullmatch(r"[A-Za-z_]\w*", column):
        return f"; did you mean {column}?{aside}"
    renamed = re.sub(r"\W+", "_", column).strip("_")
    if not re.fullmatch(r"[A-Za-z_]\w*", renamed):
        renamed = f"_{renamed}"
    return (
        f"; the column {column!r} is read by its header, which is no name: rename it in the "
        f"file's first line (as {renamed}) and write that in {where}"
    )


class BadInputValue(InputError):
    """A value given for an input that is not a number."""

    def __init__(self, name: str, text: str):
        self.names: list[str] = [name]
        super().__init__(f"--{name} expects a number, got {text!r}{value_hint(name, text)}")


def value_hint(name: str, text: str) -> str:
    """What an input's value `text` that is no number may have meant, said after the
    message: `--x 0:1` is a range, which plot and check --against take; `--x 1, 2` an array
    without its brackets, `--x "{1,2}"` one in other brackets."""
    if text.count(":") in (1, 2):
        return "; a range LO:HI is for plot and check --against"
    braced = text.strip()[:1] in "({" and text.strip()[-1:] in ")}"  # (1, 2), {1,2}
    if ", " in text or text.count(",") > 1 or (braced and "," in text):  # not 1,5: a decimal
        listed = text.strip()[1:-1] if braced else text.strip()
        return f'; an array is written in brackets, {option(name)} "[{listed}]"'
    return ""


class NotAnInput(InputError):
    """A name given to an option that takes inputs (`--wrt` by default, `--fix`) that the
    source does not read; `kind` is what it should have been (an input, or a parameter of a
    fit to data). The message does not name the option: `named()` is the same error that
    does (as Python words it, `wrt='z': ...`), the command line and the repl add it as they
    write it."""

    def __init__(self, name: str, inputs: list[str], option: str = "wrt", kind: str = "input"):
        self.name: str = name
        self.option: str = option
        self.inputs: list[str] = inputs
        self.kind: str = kind
        article = "an" if kind[:1] in "aeiou" else "a"
        listed = ", ".join(inputs) or "none"
        hint = self._listed() or self._joined() or _near_input(name, inputs)
        super().__init__(f"{name} is not {article} {kind} ({kind}s: {listed}){hint}")

    def _joined(self) -> str:
        """Where an input is a function's name run into this one (sinx), how to call it."""
        from ._ops import OPS

        for joined in self.inputs:
            function = joined.removesuffix(self.name)
            if function != joined and function in OPS and OPS[function].syntax == "call":
                call = f"{function}({self.name})"
                return f"; {joined} is one name: write {call} to apply {function} to {self.name}"
        return ""

    def _listed(self) -> str:
        """Where the name is several of them joined by commas (x,y), how to give each."""
        parts = [part.strip() for part in self.name.split(",")]
        if len(parts) < 2 or not set(parts) <= set(self.inputs):
            return ""
        return "; give each on its own: " + " ".join(option(self.option, p) for p in parts)

    def named(self) -> NotAnInput:
        """This error, its message naming the option the name was given to."""
        named = NotAnInput(self.name, self.inputs, self.option, self.kind)
        named.message = f"{option(self.option, self.name)}: {self.message}"
        named.args = (named.message,)
        return named


class SeveralOutputs(InputError):
    """A source that lists several outputs (`u, v`), given to something that takes one.
    `taker` and `several` name, in the words of where it was called, what takes one and what
    takes several; `reworded` says it in another place's words."""

    def __init__(self, outputs: list[str], taker: str, several: str | None):
        self.outputs: list[str] = outputs
        self.taker: str = taker
        self.several: str | None = several
        instead = f" ({several} takes several)" if several else ""
        if all(name.startswith("result[") for name in outputs):  # an array written out
            super().__init__(
                f"the result is an array of {len(outputs)} element{'s' * (len(outputs) != 1)}, "
                f"and {taker} takes one "
                f"number: end the source with a number made of it, such as sum(...) or one "
                f"element [0]{instead}"
            )
            return
        super().__init__(
            f"the source lists {len(outputs)} outputs ({', '.join(outputs)}), and {taker} "
            f"takes one: end the source with one of them{instead}"
        )

    def reworded(self, taker: str, several: str | None) -> SeveralOutputs:
        """The same error, naming what takes one and what takes several in other words."""
        return SeveralOutputs(self.outputs, taker, several)


class NanogradWarning(UserWarning):
    """What Python's `warnings` shows for nanograd: the first nan or inf of a result (unless
    `strict=True` makes it an error), and notes on how a command went."""


class NonFiniteResult(NanogradError):
    """An operation produced nan or inf (an error only when asked to be strict); `where` is
    its place in the source, which the message names."""

    def __init__(self, message: str, where: SourceError | None = None):
        super().__init__(message)
        self.where = where


class Interrupted(NanogradError, KeyboardInterrupt):
    """A long computation stopped by Ctrl-C; `reached` is the result it had got to. A
    KeyboardInterrupt too, so that Python's `except KeyboardInterrupt` catches Ctrl-C."""

    exit_code = 130

    def __init__(self, message: str, reached: object):
        super().__init__(message)
        self.reached = reached


class Diverged(NanogradError):
    """A descent whose value or gradient became nan or inf on the way; `reached` is the last
    point where both were finite."""

    def __init__(self, message: str, reached: object):
        super().__init__(message)
        self.reached = reached


class StreamError(NanogradError):
    """A standard stream that cannot be read or written: closed (`<&-`, `>&-`), full, a
    directory."""
