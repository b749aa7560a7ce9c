"""`nanograd repl`: a session where inputs and definitions persist from one line to the next.

`Session` holds the state and turns one entry (a line, or several while parentheses are open)
into a `Reply`: what to print and whether it failed. It knows nothing of terminals, so it is
tested line by line. `main` runs it: with prompt_toolkit on a terminal (history, completion,
multi-line input), or over plain lines from a pipe, where it prints results and nothing else.
"""

from __future__ import annotations

import os
import re
import sys
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, NamedTuple, TextIO

from . import api
from .errors import (
    InputError,
    MissingInputs,
    NanogradError,
    NotAnInput,
    SeveralOutputs,
    SourceError,
    printable,
)
from .language import constant_value
from .ops import CONSTANTS, FUNCTIONS
from .output import write_atomically
from .program import Program
from .render.graph import format_of
from .render.text import table_rows
from .results import Explanation

ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*([-+*/]?=)\s*(.*)", re.S)
# A function's definition, `f(a, b) = expr`: its name and parameters (the grammar's DEFINE).
FUNCTION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(([^()#;]*)\)[ \t]*=(?![=<>!])")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# An input's value: a number, or nan or inf spelled as `--x nan` takes them.
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?i:nan|inf|infinity)")

COMMANDS = {
    ":grad": ("EXPR", "the value and gradient of EXPR, keeping none of its assignments"),
    ":diff": ("EXPR [wrt NAME...]", "the derivative of EXPR as an expression"),
    ":hessian": ("EXPR", "the value, gradient and matrix of second derivatives"),
    ":explain": ("EXPR", "the forward and backward passes written out, node by node"),
    ":draw": ("EXPR FILE", "the computation graph, to FILE (.svg .png .pdf .dot .html)"),
    ":inputs": ("", "the inputs and definitions, as lines that make them again"),
    ":reset": ("", "forget every input and definition"),
    ":help": ("", "this list"),
    ":quit": ("", "leave (so does Ctrl-D)"),
}

HELP = "\n".join(
    [
        "NAME = NUMBER (or a constant such as pi/2) gives an input its value;",
        "NAME = EXPR defines NAME for later lines; an expression prints its value",
        "and its gradient with respect to the inputs it reads.",
        "",
        *(f"{f'{name} {args}'.strip():<28}{text}" for name, (args, text) in COMMANDS.items()),
    ]
)


class Table(NamedTuple):
    """A table: `rows(number)` gives its cells with numbers formatted by `number`."""

    rows: Callable[[Callable[[float], str]], list[list[str]]]

    def plain(self) -> str:
        from .render.text import plain_table

        return plain_table(self.rows(repr))

    def show(self) -> None:
        from .render.table import print_table

        print_table(self.rows)


class Explained(NamedTuple):
    """`:explain`'s two tables."""

    result: Explanation

    def plain(self) -> str:
        from .render.explain import plain

        return plain(self.result)

    def show(self) -> None:
        from .render.explain import print_tables

        print_tables(self.result, None)


Part = str | Table | Explained


@dataclass
class Reply:
    """What one entry prints: `out` on standard output, `err` (errors and warnings) on
    standard error, and the exit code of a failure (0 when none)."""

    out: list[Part] = field(default_factory=list)
    err: list[str | SourceError] = field(default_factory=list)
    status: int = 0
    quit: bool = False

    def text(self) -> str:
        """Standard output as plain text."""
        return "\n".join(p if isinstance(p, str) else p.plain() for p in self.out)


class Definition(NamedTuple):
    """A statement that assigns `name`, and the names it reads before it assigns any; or
    one that defines the function `name`, and the names its body reads from outside it and
    the functions it calls."""

    name: str
    text: str
    reads: list[str]


def unclosed(text: str) -> bool:
    """Whether a parenthesis of `text` is still open (so the entry goes on, on the next line)."""
    return sum(map(opened, text.split("\n"))) > 0


def opened(line: str) -> int:
    """The parentheses `line` opens, less those it closes, outside its comment."""
    code = line.partition("#")[0]
    return code.count("(") - code.count(")")


def statements(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each statement of a source that parses: split at `;` and at
    newlines outside parentheses."""
    depth = 0
    start = 0
    for match in re.finditer(r"#[^\n]*|[();\n]", text):
        c = match.group()
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == ";" or (c == "\n" and depth == 0):
            if code(text[start : match.start()]):
                yield start, match.start()
            start = match.end()
    if code(text[start:]):
        yield start, len(text)


def code(text: str) -> str:
    """A statement without its comments and surrounding blanks."""
    return re.sub(r"#[^\n]*", "", text).strip()


class Session:
    """The state of a session: input values and definitions, in the order they were made."""

    def __init__(self) -> None:
        self.inputs: dict[str, float] = {}
        self.definitions: list[Definition] = []
        # Where each name is defined: its definitions' places in the list, in order.
        self.defined: dict[str, list[int]] = {}

    def names(self) -> list[str]:
        """Every name in scope: inputs, then defined names."""
        return list(dict.fromkeys([*self.inputs, *(d.name for d in self.definitions)]))

    def run(self, entry: str, line: int | None = None) -> Reply:
        """Carry out one entry. `line` is where it starts in a script, for error messages;
        without it, they count lines within the entry."""
        reply = Reply()
        failure = None
        try:
            self._run(entry.strip("\n"), reply)
        except NanogradError as error:
            failure = error
        # Warnings at a place in the entry are said as errors are.
        reply.err = [
            f"warning: {_message(w, line)}" if isinstance(w, SourceError) else w for w in reply.err
        ]
        if failure is not None:
            reply.err.append(f"error: {_message(failure, line)}")
            reply.status = failure.exit_code
        # Whatever a reply quotes of what was typed, no control character reaches the terminal.
        reply.err = [printable(message, keep="\n\t") for message in reply.err]
        reply.out = [printable(p, keep="\n\t") if isinstance(p, str) else p for p in reply.out]
        return reply

    def _run(self, entry: str, reply: Reply) -> None:
        command, _, rest = entry.strip().partition(" ")
        if not entry.strip() or entry.lstrip().startswith("#"):
            return
        if not command.startswith(":"):
            self._statements(entry, reply)
            return
        rest = rest.strip()
        if command in (":quit", ":q"):
            reply.quit = True
        elif command == ":help":
            reply.out.append(HELP)
        elif command == ":reset":
            self.inputs.clear()
            self.definitions.clear()
            self.defined.clear()
        elif command == ":inputs":
            lines = [f"{name} = {value!r}" for name, value in self.inputs.items()]
            lines += [d.text for d in self.definitions]
            reply.out.append("\n".join(lines) or "no inputs or definitions yet")
        elif command in COMMANDS:
            if not rest:
                raise InputError(f"{command} needs {COMMANDS[command][0]}: see :help")
            try:
                getattr(self, command[1:])(rest, reply)
            except SeveralOutputs as error:
                raise error.reworded(command, "a plain line") from None
        else:
            raise InputError(
                f"unknown command {printable(command)}; commands are {', '.join(COMMANDS)}"
            )

    # entries

    def _statements(self, entry: str, reply: Reply) -> None:
        """Assignments and expressions: validate, keep inputs and definitions, evaluate."""
        self._check(entry)
        evaluated = list(entry)
        last_is_expression = False
        kept: list[Definition] = []
        for start, end in statements(entry):
            text = code(entry[start:end])
            function = FUNCTION.match(text)
            if function is not None:
                last_is_expression = False
                name = function.group(1)
                kept.append(Definition(name, text, self._reads(text, kept, defines=name)))
                continue
            assignment = ASSIGNMENT.fullmatch(text)
            last_is_expression = assignment is None
            if assignment is None:
                continue
            name, operator, value = assignment.groups()
            number = _constant(value) if operator == "=" else None
            if number is not None:
                self.inputs[name] = number
                if self.defined.pop(name, None):
                    self.definitions = [d for d in self.definitions if d.name != name]
                    self._index()
                evaluated[start:end] = " " * (end - start)  # same offsets for the rest
                continue
            reads = self._reads(text, kept)
            if operator == "=" and name not in reads:  # `x = x + 1` builds on the input x
                self.inputs.pop(name, None)
            kept.append(Definition(name, text, reads))
        if last_is_expression:
            self.grad("".join(evaluated), reply)
        for d in kept:
            self.defined.setdefault(d.name, []).append(len(self.definitions))
            self.definitions.append(d)

    def grad(self, expr: str, reply: Reply) -> None:
        source, program = self._program(expr)
        result = api.grad(program, self._point(program), warn=self._warner(source, reply))
        reply.out.append(Table(lambda number: table_rows(result, number)))

    def diff(self, expr: str, reply: Reply) -> None:
        words = expr.split()
        if words[-1:] == ["wrt"] or words[:1] == ["wrt"]:
            raise InputError(":diff EXPR wrt NAME: give both the expression and the input")
        expr, wrt_word, names = expr.rpartition(" wrt ") if " wrt " in expr else (expr, "", "")
        wrt = names.replace(",", " ").split()
        if wrt_word and not wrt:
            raise InputError(":diff EXPR wrt NAME: name an input after wrt")
        _, program = self._program(expr)
        reply.out.append(api.diff(program, wrt))

    def hessian(self, expr: str, reply: Reply) -> None:
        source, program = self._program(expr)
        result = api.hessian(program, self._point(program), warn=self._warner(source, reply))
        reply.out.append(Table(lambda number: table_rows(result, number)))

    def explain(self, expr: str, reply: Reply) -> None:
        source, program = self._program(expr)
        result = api.explain(program, self._point(program), warn=self._warner(source, reply))
        reply.out.append(Explained(result))

    def draw(self, rest: str, reply: Reply) -> None:
        expr, _, path = rest.rpartition(" ")
        if not expr.strip():
            raise InputError(":draw needs EXPR FILE, as in :draw x*y graph.svg")
        fmt = format_of(path)
        source, program = self._program(expr)
        point = self._point(program)
        write_atomically(path, api.draw(program, point, fmt, warn=self._warner(source, reply)))
        reply.out.append(f"wrote {printable(path)}")

    # helpers

    def _program(self, expr: str) -> tuple[_Source, Program]:
        """`expr` parsed after the definitions it needs (and no others, so that only the
        inputs it depends on are asked for); errors point into `expr`."""
        needed = self._reads(expr, []) if expr.strip() else []
        # Each name read, from the last definition of it before the reader: found by its
        # place, so that the cost is that of the definitions used, not of all of them.
        chosen: set[int] = set()
        wanted = [(name, len(self.definitions)) for name in needed]
        while wanted:
            name, before = wanted.pop()
            places = self.defined.get(name, [])
            k = bisect_left(places, before) - 1
            if k >= 0 and places[k] not in chosen:
                chosen.add(places[k])
                wanted.extend((read, places[k]) for read in self.definitions[places[k]].reads)
        return self._parse_after(expr, [self.definitions[i] for i in sorted(chosen)])

    def _index(self) -> None:
        self.defined = {}
        for i, d in enumerate(self.definitions):
            self.defined.setdefault(d.name, []).append(i)

    def _check(self, entry: str) -> None:
        """Raise the error of `entry` after every definition, if it has one. A definition
        can change only how a name reads (`q(2)`: q is not a function, or an unknown one), so
        the entry is parsed after one stand-in per defined name it has: each line costs its
        own length, not that of every definition before it."""
        own = {m.group(1) for m in FUNCTION.finditer(entry)}  # a function defined again
        names = [n for n in dict.fromkeys(NAME.findall(entry)) if n in self.defined]
        stand_ins = [
            self._stand_in(n, []) for n in names if n not in own or self._parameters(n) is None
        ]
        last = [code(entry[start:end]) for start, end in statements(entry)][-1:]
        if last and FUNCTION.match(last[0]):
            entry += "\n0"  # a definition has no value of its own, and needs none here
        self._parse_after(entry, [Definition("", text, []) for text in stand_ins])

    def _parameters(self, name: str, pending: list[Definition] | None = None) -> list[str] | None:
        """The parameters of the function `name` as last defined (in `pending`, the
        definitions of the entry so far, or before), or None if it is no function."""
        last = [d for d in pending or [] if d.name == name][-1:]
        if not last and name in self.defined:
            last = [self.definitions[self.defined[name][-1]]]
        function = FUNCTION.match(last[0].text) if last else None
        if function is None:
            return None
        return [p.strip() for p in function.group(2).split(",") if p.strip()]

    def _stand_in(self, name: str, pending: list[Definition]) -> str:
        """A definition that makes `name` what it is, in one short statement."""
        parameters = self._parameters(name, pending)
        if parameters is None:
            return f"{name} = 0"
        return f"{name}({', '.join(parameters)}) = 0"

    def _reads(self, text: str, pending: list[Definition], defines: str | None = None) -> list[str]:
        """The names `text` (statements of an entry) reads from before it: the inputs and
        defined names it reads, and the functions it calls, but those it defines itself."""
        own = {m.group(1) for m in FUNCTION.finditer(text)} | {defines}
        called = [
            n
            for n in dict.fromkeys(NAME.findall(text))
            if n not in own and self._parameters(n, pending) is not None
        ]
        source = [self._stand_in(n, pending) for n in called]
        source.append(text)
        if defines is not None:
            source.append("0")  # a definition has no value of its own
        return [*_parse("\n".join(source)).inputs, *called]

    def _parse_after(self, entry: str, definitions: list[Definition]) -> tuple[_Source, Program]:
        source = _Source([d.text for d in definitions], entry)
        try:
            return source, _parse(source.text)
        except SourceError as error:
            located = source.locate(error)
            raise (InputError(located) if isinstance(located, str) else located) from None

    def _point(self, program: Program) -> dict[str, float]:
        missing = [name for name in program.inputs if name not in self.inputs]
        if missing:
            raise MissingInputs(missing)
        return {name: self.inputs[name] for name in program.inputs}

    def _warner(self, source: _Source, reply: Reply) -> api.Warn:
        """What the api warns of, said as the reply's warnings: a place in the source traced
        back to the line the user typed."""

        def warn(where: SourceError | str) -> None:
            if isinstance(where, str):
                reply.err.append(where)
                return
            located = source.locate(where)
            reply.err.append(located if isinstance(located, SourceError) else f"warning: {located}")

        return warn


class _Source:
    """Definitions, one per line, then the entry: offsets in it are traced back to one of
    them, so a message shows the line the user typed."""

    def __init__(self, definitions: list[str], entry: str):
        self.chunks = [*definitions, entry]
        self.text = "\n".join(self.chunks)

    def locate(self, error: SourceError) -> SourceError | str:
        """The error in the entry, with its offset there; or, for one in a definition, a
        message that shows the definition (it was typed on an earlier line)."""
        start = 0
        for chunk in self.chunks[:-1]:
            end = start + len(chunk)
            if error.offset <= end:
                where = SourceError(error.message, chunk, error.offset - start)
                caret = " " * (where.column - 1) + "^"
                return f"{error.message}, in a definition:\n  {where.source_line}\n  {caret}"
            start = end + 1
        return type(error)(error.message, self.chunks[-1], error.offset - start)


def _constant(text: str) -> float | None:
    """The value of an input's right side: a number (nan and inf too) or a constant
    expression (`pi/2`); None for anything that reads a name."""
    return float(text) if NUMBER.fullmatch(text) else constant_value(text)


def _parse(text: str) -> Program:
    from .language import parse

    return parse(text)


def _message(error: Exception, line: int | None) -> str:
    if isinstance(error, SourceError):
        return error.on_line(line + error.line - 1) if line is not None else str(error)
    if isinstance(error, NotAnInput):
        text = f"{error.option} {error.name}: {error}"
    elif isinstance(error, MissingInputs):
        them = "it" if len(error.names) == 1 else "them"
        example = "; ".join(f"{name} = VALUE" for name in error.names)
        text = f"{error}: give {them} a value first: {example}"
    else:
        text = str(error)
    return f"line {line}: {text}" if line is not None else text


# Running a session


def main(rich: bool | None = None) -> int:
    """Run a session on the terminal, or over standard input when it is not one; tables are
    Rich's where `rich` (by default: on a terminal unless NO_COLOR is set). The exit code: 0,
    or for a script, the highest exit code of its failed lines."""
    if sys.stdin.isatty() and sys.stdout.isatty():
        return interactive(Session(), rich)
    return scripted(Session(), _lines(sys.stdin.buffer), sys.stdout, sys.stderr, bool(rich))


def _lines(stream: BinaryIO) -> Iterator[str | InputError]:
    """The lines of a script, decoded one by one (a line that is not UTF-8 fails alone); each
    read as other sources are, so that an endless line (/dev/zero) is refused before memory
    runs out. A byte order mark before the first line is dropped."""
    from .sources import decode, read_bounded, without_bom

    raws = iter(lambda: read_bounded(stream, line=True), b"")
    for number, raw in enumerate(raws, 1):
        try:
            raw = without_bom(raw) if number == 1 else raw
            yield decode(raw, f"line {number}").rstrip("\r\n")
        except InputError as error:
            yield error


# The most characters an entry spans while a parenthesis holds it open over several lines.
ENTRY_LIMIT = 1 << 20


def entries(lines: Iterable[str | InputError]) -> Iterator[tuple[int, str] | InputError]:
    """A script's entries, each with the number of its first line: an entry goes on over the
    next lines while a parenthesis is open, until a line that is a command. Each line is
    looked at once; an entry whose parenthesis is still open past ENTRY_LIMIT characters ends
    the script with an error, so that one that never closes cannot run on until memory does."""
    entry: list[str] = []
    first = depth = size = 0
    for number, line in enumerate(lines, 1):
        if entry and (isinstance(line, InputError) or line.lstrip().startswith(":")):
            yield first, "\n".join(entry)
            entry = []
        if isinstance(line, InputError):
            yield line
            continue
        if not entry:
            first, depth, size = number, 0, 0
        entry.append(line)
        depth += opened(line)
        size += len(line) + 1
        if depth > 0 and size > ENTRY_LIMIT:
            raise NanogradError(
                f"line {first}: the entry that starts here is longer than {ENTRY_LIMIT >> 20} MB "
                "with a parenthesis still open; an entry is at most that (nanograd grad -f FILE "
                "takes a longer source)"
            )
        if depth <= 0:
            yield first, "\n".join(entry)
            entry = []
    if entry:
        yield first, "\n".join(entry)


def scripted(
    session: Session,
    lines: Iterable[str | InputError],
    out: TextIO,
    err: TextIO,
    rich: bool = False,
) -> int:
    """Run a script's entries. Output is plain, or Rich's tables where `rich` (on standard
    output); errors and warnings name the script's line. The exit code is the highest of the
    failed entries', or 0."""
    status = 0
    for entry in entries(lines):
        if isinstance(entry, InputError):
            print(printable(f"error: {entry}", keep="\n\t"), file=err, flush=True)
            status = max(status, entry.exit_code)
            continue
        reply = session.run(entry[1], entry[0])
        for message in reply.err:
            print(message, file=err, flush=True)
        if reply.out and rich:
            show(reply.out, rich)
        elif reply.out:
            print(reply.text(), file=out, flush=True)
        status = max(status, reply.status)
        if reply.quit:
            break
    return status


def history_path() -> Path:
    """Where the history is kept: $XDG_DATA_HOME/nanograd/history, by default under
    ~/.local/share."""
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return Path(data) / "nanograd" / "history"


def show(parts: list[Part], rich: bool) -> None:
    """A reply's output on standard output: its tables Rich's where `rich`, else plain."""
    for part in parts:
        if isinstance(part, str) or not rich:
            print(part if isinstance(part, str) else part.plain())
        else:
            part.show()
    sys.stdout.flush()


def interactive(session: Session, rich: bool | None = None) -> int:
    """The session on a terminal, with prompt_toolkit: history, completion, and an entry
    that goes on over several lines while a parenthesis is open. Tables are Rich's where
    `rich` (by default, unless NO_COLOR is set)."""
    try:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import Completer, Completion
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings
    except ImportError:
        from .extras import install_command

        raise NanogradError(
            "nanograd repl on a terminal needs prompt_toolkit: install it with: "
            f"{install_command('repl')} (or pipe the lines in: nanograd repl < FILE)"
        ) from None

    from . import __version__

    class Names(Completer):
        def get_completions(self, document, complete_event):
            before = document.text_before_cursor
            word = re.search(r"(?:^\s*:\w*|[A-Za-z_]\w*)$", before)
            if word is None:
                return
            typed = word.group().strip()
            if typed.startswith(":"):
                choices = list(COMMANDS)
            else:
                choices = [*session.names(), *FUNCTIONS, *CONSTANTS]
            for choice in dict.fromkeys(choices):
                if choice.startswith(typed) and choice != typed:
                    yield Completion(choice, start_position=-len(typed))

    keys = KeyBindings()

    @keys.add("enter")
    def _(event) -> None:
        buffer = event.current_buffer
        if unclosed(buffer.text):
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    try:
        path = history_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        history = FileHistory(str(path))
    except OSError:  # a read-only home: a session without saved history still works
        history = InMemoryHistory()
    prompt = PromptSession(
        history=history,
        completer=Names(),
        complete_while_typing=False,
        multiline=True,
        key_bindings=keys,
        prompt_continuation="... ",
    )
    if rich is None:
        rich = not os.environ.get("NO_COLOR")
    print(f"nanograd {__version__}: type an expression, :help for commands, Ctrl-D to leave")
    while True:
        try:
            entry = prompt.prompt("> ")
        except KeyboardInterrupt:
            continue  # Ctrl-C: the line is dropped
        except EOFError:
            return 0
        try:
            reply = session.run(entry)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            continue
        for message in reply.err:
            print(message, file=sys.stderr, flush=True)
        show(reply.out, rich)
        if reply.quit:
            return 0
