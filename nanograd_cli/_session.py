"""`nanograd repl`: a session where inputs and definitions persist from one line to the next.

`Session` holds the state and turns one entry (a line, or several while parentheses are open)
into a `Reply`: what to print and whether it failed. It knows nothing of terminals, so it is
tested line by line. `main` runs it: with prompt_toolkit on a terminal (history, completion,
multi-line input), or over plain lines from a pipe, where it prints results and nothing else.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import sys
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple, TextIO, cast

from . import _api as api
from . import _io as io
from ._language import constant_value
from ._ops import CONSTANTS, FUNCTIONS
from ._output_files import write_atomically
from ._prelude import DEFINED
from ._program import Program
from ._sources import ARRAY_VALUE, RANDOM_CALL, array_value
from .errors import (
    Diverged,
    InputError,
    Interrupted,
    MissingInputs,
    NanogradError,
    NonFiniteResult,
    NotAnInput,
    SeveralOutputs,
    SourceError,
    command,
    nearest,
    option,
    printable,
    speaking,
    spell,
)
from .render._progress import FitProgress, StepsProgress
from .render._text import KINKS, kink_rows, mismatch_rows, table_rows, to_json
from .render.graph import format_of
from .results import Explanation, Fit, Fits, FormulaCheck, GradientCheck, Minimum, flattened

if TYPE_CHECKING:
    import numpy as np

    from .results import InputValue
    from .sampling import Curve, Range

ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*([-+*/]?=)\s*(.*)", re.S)
# A function's definition, `f(a, b) = expr`: its name and parameters (the grammar's DEFINE).
FUNCTION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(([^()#;]*)\)[ \t]*=(?![=<>!])")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# An input given a value the language does not write: an array file, `x = @w.csv`, or a random
# start, `W = normal(3, 2)`; the statement ends at `;`, and what follows it is the entry's rest.
INPUT_VALUE = re.compile(
    r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(@[^;]*?|[^;]*\b(?:normal|uniform)\s*\([^;]*?)\s*"
    r"(?:;(.*))?",
    re.S,
)
# An input's value: a number, or nan or inf spelled as `--x nan` takes them.
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?i:nan|inf|infinity)")

COMMANDS = {
    ":grad": ("EXPR", "the value and gradient of EXPR, keeping none of its assignments"),
    ":diff": ("EXPR [wrt NAME...]", "the derivative of EXPR as an expression"),
    ":hessian": ("EXPR [wrt NAME...]", "the value, gradient and matrix of second derivatives"),
    ":explain": ("EXPR", "the forward and backward passes written out, node by node"),
    ":draw": ("EXPR FILE", "the computation graph, to FILE (.svg .png .pdf .dot .html)"),
    ":check": ("EXPR", "the gradient against finite differences, or against a formula"),
    ":minimize": ("EXPR", "gradient descent from the inputs' values"),
    ":fit": ("EXPR data FILE", "a least-squares fit of the parameters to the rows of FILE"),
    ":plot": ("EXPR NAME LO:HI", "EXPR and its derivative over a range; to FILE, a picture"),
    ":taylor": ("EXPR wrt NAME", "the Taylor polynomial in NAME around its value"),
    ":inputs": ("", "the inputs and definitions, as lines that make them again"),
    ":reset": ("", "forget every input and definition"),
    ":help": ("", "this list"),
    ":quit": ("", "leave (so does Ctrl-D)"),
}


class Option(NamedTuple):
    """An option of a command, named as the command line names it without `--`. It `takes`
    nothing (a flag), a `word`, an `expr` (the words up to the next option), `names` (the
    names up to the next option) or `items` (the NAME=VALUE words that follow); `metavar`
    says what, in `:help`."""

    takes: str
    metavar: str = ""


FLAG = Option("flag")
STRICT = {"strict": FLAG}
WRT = Option("names", "NAME...")
DATA = {
    "data": Option("word", "FILE"),
    "data-format": Option("word", "csv|tsv|parquet|arrow|jsonl|json"),
}
DATA_FORMATS = tuple(DATA["data-format"].metavar.split("|"))
OPTIONS: dict[str, dict[str, Option]] = {
    ":grad": {"wrt": WRT, "mode": Option("word", "|".join(api.MODES)), **STRICT},
    ":diff": {
        "wrt": WRT,
        "format": Option("word", "|".join(api.DIFF_FORMATS)),
        "exact": FLAG,
        "order": Option("word", "N"),
        "mixed": FLAG,
        "shape": Option("items", "NAME=DIMS..."),
        "steps": FLAG,
        "implicit": Option("word", "NAME"),
        "notes": Option("word", "|".join(api.DIFF_NOTES)),
    },
    ":hessian": {"wrt": WRT, **STRICT},
    ":taylor": {
        "wrt": Option("names", "NAME"),
        "order": Option("word", "N"),
        "format": Option("word", "|".join(api.TAYLOR_FORMATS)),
        **STRICT,
    },
    ":explain": {
        "format": Option("word", "|".join(api.EXPLAIN_FORMATS)),
        "digits": Option("word", "N|full"),
        **STRICT,
    },
    ":draw": {
        "format": Option("word", "|".join(api.DRAW_FORMATS)),
        "rankdir": Option("word", "|".join(api.RANKDIRS)),
        "hide-constants": FLAG,
        "edge-grads": FLAG,
        "dpi": Option("word", "N"),
        "no-legend": FLAG,
        "no-statements": FLAG,
        "scalars": FLAG,
        "grad-of": Option("word", "NAME"),
        **STRICT,
    },
    ":check": {
        "against": Option("expr", "[NAME=]FORMULA"),
        "wrt": Option("names", "NAME"),
        "rtol": Option("word", "R"),
        "atol": Option("word", "A"),
        **STRICT,
    },
    ":minimize": {
        "steps": Option("word", "N"),
        "lr": Option("word", "R"),
        "method": Option("word", "|".join(api.METHODS)),
        "bound": Option("items", "NAME=LO:HI..."),
        "tol": Option("word", "T"),
        "wrt": WRT,
        "fix": WRT,
        **DATA,
        "drop-nan": FLAG,
        "batch": Option("word", "N"),
        "seed": Option("word", "S"),
        "weight-decay": Option("word", "W"),
        "lr-schedule": Option("word", "constant|step|cosine"),
        "lr-step-size": Option("word", "N"),
        "lr-gamma": Option("word", "G"),
        "lr-t-max": Option("word", "N"),
        "lr-min": Option("word", "LR"),
        **STRICT,
        "keep": FLAG,
    },
    ":fit": {
        **DATA,
        "target": Option("expr", "EXPR"),
        "sigma": Option("word", "COLUMN"),
        "fix": WRT,
        "steps": Option("word", "N"),
        "bound": Option("items", "NAME=LO:HI..."),
        "absolute-sigma": FLAG,
        "derive": Option("expr", "NAME=EXPR"),
        "drop-nan": FLAG,
        "restarts": Option("word", "N"),
        "seed": Option("word", "S"),
        "loss": Option("word", "LOSS"),
        "f-scale": Option("word", "F"),
        "ci": Option("word", "LEVEL"),
        "profile": FLAG,
        "stats": FLAG,
        "by": Option("word", "COLUMN"),
        "shared": Option("names", "NAME..."),
        "plot": Option("word", "FILE|-"),
        "band": Option("word", "LEVEL"),
        "logx": FLAG,
        "logy": FLAG,
        "save": Option("word", "FIT.json"),
        "predict": Option("word", "FILE"),
        "output": Option("word", "FILE"),
        "load": Option("word", "FIT.json"),
        "keep": FLAG,
    },
    ":plot": {
        "ylim": Option("word", "LO:HI|auto|full"),
        "title": Option("expr", "TEXT"),
        "logx": FLAG,
        "logy": FLAG,
        "size": Option("word", "W,H"),
        "tangent": Option("word", "A"),
        "second": FLAG,
    },
}
# The commands that take an input's range, `NAME LO:HI[:N]`, and those that take a FILE.
RANGES = (":check", ":plot")
FILES = (":draw", ":plot")
# The options a command takes in place of its expression: `:fit load FIT.json` shows a saved fit.
INSTEAD = {":fit": "load"}


def _usage(name: str, option: Option) -> str:
    return f"{name} {option.metavar}".strip()


def _help() -> str:
    lines = [
        "NAME = NUMBER (or a constant such as pi/2) gives an input its value;",
        "NAME = EXPR defines NAME for later lines; an expression prints its value",
        "and its gradient with respect to the inputs it reads.",
        "",
        "After EXPR, a command takes the options of its nanograd command, named without",
        "their dashes: a flag alone, any other with its value, as in",
        ":minimize (x - 3)**2 lr 0.1 steps 500.",
        "",
    ]
    for name, (args, text) in COMMANDS.items():
        lines.append(f"{f'{name} {args}'.strip():<28}{text}")
        usages = [_usage(n, o) for n, o in OPTIONS.get(name, {}).items()]
        if name in RANGES:
            usages.append("NAME LO:HI[:N]")
        if name == ":plot":
            usages.insert(0, "[FILE]")
        line = ""
        for usage in usages:
            if line and len(line) + len(usage) > 62:
                lines.append(f"{'':<30}{line}")
                line = ""
            line = f"{line}  {usage}" if line else usage
        if line:
            lines.append(f"{'':<30}{line}")
    return "\n".join(lines)


HELP = _help()
EVERY_OPTION = frozenset(name for options in OPTIONS.values() for name in options)

# A word that ends so goes on into the next one (`x *`, `f(`, `a = 1;`); one that begins with
# a letter after any other word may begin the options: in the language, no expression goes on
# with a name after a space.
GOES_ON = tuple("+-*/^%(,=;<>!&|@")
LETTER = re.compile(r"[A-Za-z_]")
# A name an option such as wrt takes: an input, or an element of an array input (W[1, 2]).
NAME = re.compile(r"[A-Za-z_]\w*(?:\[[^\]]*\])?")


class Arguments(NamedTuple):
    """A command's words after its name: the expression, each option's values (a flag's is
    ""), the ranges `NAME LO:HI` and the FILE."""

    expr: str
    options: dict[str, list[str]]
    ranges: dict[str, str]
    file: str | None

    def value(self, name: str) -> str | None:
        """The value of an option given once, or None."""
        return self.options.get(name, [None])[-1]

    def flag(self, name: str) -> bool:
        return name in self.options

    def names(self, name: str) -> list[str]:
        """The names an option was given, in order (`wrt x, y wrt z`, `wrt W[1,2]`)."""
        return [n for v in self.options.get(name, []) for n in NAME.findall(v)]

    def items(self, name: str) -> list[str]:
        """The NAME=VALUE words an option was given, in order (`shape A=3,2 x=2`)."""
        return [n for v in self.options.get(name, []) for n in v.split()]


def words(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each word of `text`: split at blanks outside brackets."""
    spans: list[tuple[int, int]] = []
    depth = 0
    start: int | None = None
    for i, c in enumerate(text):
        if c.isspace() and depth <= 0:
            if start is not None:
                spans.append((start, i))
                start = None
            continue
        if start is None:
            start = i
        depth += (c in "([") - (c in ")]")
    if start is not None:
        spans.append((start, len(text)))
    return spans


def arguments(command: str, text: str) -> Arguments:
    """`text`, what follows `command`, split into the expression and the options. The
    expression ends at the first word that begins with a letter after a word that does not go
    on (`x*y lr`, not `x * lr`) and is an option of the command, a range, a FILE (for `:draw`
    and `:plot`) or nearly an option's name; an expression that reads a name spelled as an
    option puts it in parentheses: `x*(lr)`."""
    text = code(text)
    spans = words(text)
    said = [text[i:j] for i, j in spans]
    known = OPTIONS.get(command, {})
    if said and said[0] in known and said[0] != INSTEAD.get(command):
        raise InputError(
            f"{command} {COMMANDS[command][0]}: the expression comes first, then the options"
        )

    def begins(k: int) -> bool:  # whether the k-th word begins an option, not the expression
        return bool(LETTER.match(said[k])) and not said[k - 1].endswith(GOES_ON)

    def starts_options(k: int) -> bool:
        word = said[k]
        return (
            word in known
            or word in EVERY_OPTION  # another command's option: said to be none of this one
            or _value_at(said, k)  # said to be no option below
            or (command in RANGES and _range_at(said, k))
            or _file_like(word)  # a FILE, or one given to a command that writes none
            or bool(difflib.get_close_matches(word, known, n=1, cutoff=0.75))
        )

    first = next((k for k in range(1, len(said)) if begins(k) and starts_options(k)), len(said))
    if said and said[0] == INSTEAD.get(command):
        first = 0
    expr = text[: spans[first - 1][1]] if first else ""
    options: dict[str, list[str]] = {}
    ranges: dict[str, str] = {}
    file = None
    k = first
    while k < len(said):
        word = said[k]
        option = known.get(word)
        if option is not None:
            end = k + 1
            if option.takes == "word" and end < len(said) and said[end] not in known:
                end += 1
            elif option.takes == "expr":
                while end < len(said) and (end == k + 1 or not begins(end)):
                    end += 1
            elif option.takes == "names":
                while end < len(said) and said[end] not in known and not _range_at(said, end):
                    if not re.fullmatch(rf"(,|{NAME.pattern})+", said[end]) or _misspelt(
                        said[end], known, expr
                    ):
                        break
                    end += 1
            elif option.takes == "items":  # NAME=VALUE words
                while end < len(said) and re.fullmatch(r"[A-Za-z_]\w*=\S+", said[end]):
                    end += 1
            if option.takes != "flag" and end == k + 1:
                raise InputError(f"{word} needs a value: {_usage(word, option)}")
            if option.takes == "word" and word in options:
                raise InputError(f"{word} is given twice: give it once")
            value = text[spans[k + 1][0] : spans[end - 1][1]] if end > k + 1 else ""
            options.setdefault(word, []).append(value)
            k = end
        elif command in RANGES and _range_at(said, k):
            if word in ranges:
                raise InputError(f"a range for {word} is given twice")
            ranges[word] = said[k + 1]
            k += 2
        elif command in FILES and file is None and (k > first or _file_like(word)):
            file = word
            k += 1
        elif command not in FILES and _file_like(word) and not NUMBER.fullmatch(word):
            usage = " ".join(filter(None, (command, COMMANDS[command][0])))
            raise InputError(
                f"{command} writes no file ({word}): it takes {usage} and its options "
                f"({', '.join(known) or 'none'}); :draw EXPR FILE writes a picture"
            )
        elif (
            _value_at(said, k)
            and word not in EVERY_OPTION
            and not nearest(word, known, cutoff=0.75)
            and _reads(expr, word)  # (else, a word that is no option)
        ):
            ranged = f", or a range to {command} over: {word} LO:HI" if command in RANGES else ""
            raise InputError(
                f"{word} {said[k + 1]}: an input's value is not an option; give it on a line of "
                f"its own first ({word} = {said[k + 1]}){ranged}"
            )
        else:
            raise InputError(_unknown(command, word, known))
    return Arguments(expr.strip(), options, ranges, file)


def _misspelt(word: str, known: dict[str, Option], expr: str) -> bool:
    """Whether `word`, after the names of an option such as wrt, is nearly one of the
    command's options (`wrt x stps`) rather than a name the expression reads."""
    return bool(nearest(word, known, cutoff=0.75)) and not _reads(expr, word)


def _reads(expr: str, name: str) -> bool:
    """Whether the expression's text has `name` as a word of its own."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", expr) is not None


def _range_at(said: list[str], k: int) -> bool:
    """Whether the k-th word and the next are a range: a name, then LO:HI or LO:HI:N."""
    return k + 1 < len(said) and NAME.fullmatch(said[k]) is not None and ":" in said[k + 1]


def _value_at(said: list[str], k: int) -> bool:
    """Whether the k-th word and the next are a name and a number (`x 3`): an input's value
    typed as the command line gives it, which no expression has."""
    return (
        k + 1 < len(said)
        and re.fullmatch(r"[A-Za-z_]\w*", said[k]) is not None
        and NUMBER.fullmatch(said[k + 1]) is not None
    )


def _file_like(word: str) -> bool:
    return "." in word or "/" in word or os.sep in word


def _unknown(command: str, word: str, known: dict[str, Option]) -> str:
    near = difflib.get_close_matches(word, known, n=1)
    guess = f"; did you mean {near[0]}?" if near else ""
    listed = ", ".join(known) or "none"
    return f"{command} has no option {word}{guess} (its options: {listed})"


class Table(NamedTuple):
    """A table: `rows(number)` gives its cells with numbers formatted by `number`."""

    rows: Callable[[Callable[[float], str]], list[list[str]]]

    def plain(self) -> str:
        from .render._text import plain_table

        return plain_table(self.rows(repr))

    def show(self) -> None:
        from .render._table import print_table

        print_table(self.rows)


class Explained(NamedTuple):
    """`:explain`'s two tables."""

    result: Explanation
    digits: str | None = None

    def plain(self) -> str:
        from .render._explanation import plain
        from .render._table import number_formats

        return plain(self.result, number_formats(self.digits)[0])

    def show(self) -> None:
        from .render._explanation import print_tables

        print_tables(self.result, self.digits)


class Plot(NamedTuple):
    """`:plot`'s curve, in text `columns` wide."""

    curve: Curve
    columns: int

    def plain(self) -> str:
        from .render.figures import curve_text

        return curve_text(self.curve, self.columns, False)

    def show(self) -> None:
        from .render.figures import curve_text

        print(curve_text(self.curve, self.columns, True))


Part = str | Table | Explained | Plot


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
    """Whether a bracket of `text` is still open (so the entry goes on, on the next line)."""
    return sum(map(opened, text.split("\n"))) > 0


def opened(line: str) -> int:
    """The brackets `line` opens, less those it closes, outside its comment."""
    code = line.partition("#")[0]
    return code.count("(") + code.count("[") - code.count(")") - code.count("]")


def statements(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each statement of a source that parses: split at `;` and at
    newlines outside brackets."""
    depth = 0
    start = 0
    for match in re.finditer(r"#[^\n]*|[()\[\];\n]", text):
        c = match.group()
        if c in "([":
            depth += 1
        elif c in ")]":
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

    # Whether a long :minimize or :fit shows its progress on standard error (a terminal's),
    # and whether in colour.
    progress = False
    progress_color = True

    def __init__(self) -> None:
        self.inputs: dict[str, InputValue] = {}
        self.definitions: list[Definition] = []
        # Where each name is defined: its definitions' places in the list, in order.
        self.defined: dict[str, list[int]] = {}
        # The source of the command running, for an error at a place in it.
        self._source: _Source | None = None

    def names(self) -> list[str]:
        """Every name in scope: inputs, then defined names."""
        return list(dict.fromkeys([*self.inputs, *(d.name for d in self.definitions)]))

    def run(self, entry: str, line: int | None = None) -> Reply:
        """Carry out one entry. `line` is where it starts in a script, for error messages;
        without it, they count lines within the entry."""
        from ._output_files import new_run

        new_run()
        reply = Reply()
        failure = None
        with speaking("repl"):
            try:
                self._run(entry.strip("\n"), reply)
            except NanogradError as error:
                failure = error
            # Warnings at a place in the entry are said as errors are.
            said = [
                f"warning: {_message(w, line)}" if isinstance(w, SourceError) else spell(w)
                for w in reply.err
            ]
            if failure is not None:
                said.append(f"error: {_message(failure, line)}")
                reply.status = failure.exit_code
        # Whatever a reply quotes of what was typed, no control character reaches the terminal.
        reply.err = [printable(message, keep="\n\t") for message in said]
        reply.out = [printable(p, keep="\n\t") if isinstance(p, str) else p for p in reply.out]
        return reply

    def _run(self, entry: str, reply: Reply) -> None:
        command, _, rest = entry.strip().partition(" ")
        if not entry.strip() or entry.lstrip().startswith("#"):
            return
        if not command.startswith(":"):
            value = INPUT_VALUE.fullmatch(entry)
            if value is None:
                self._statements(entry, reply)
            else:
                name, text, rest = value.groups()
                self._read_value(name, text)
                self._run(rest or "", reply)
            return
        rest = rest.strip()
        if rest and command in (":quit", ":q", ":help", ":reset", ":inputs"):
            raise InputError(f"{command} takes nothing after it: {printable(rest)!r} is extra")
        if command in (":quit", ":q"):
            reply.quit = True
        elif command == ":help":
            reply.out.append(HELP)
        elif command == ":reset":
            self.inputs.clear()
            self.definitions.clear()
            self.defined.clear()
        elif command == ":inputs":
            lines = [f"{name} = {_written(value)}" for name, value in self.inputs.items()]
            lines += [d.text for d in self.definitions]
            reply.out.append("\n".join(lines) or "no inputs or definitions yet")
        elif command in COMMANDS:
            if not rest:
                raise InputError(f"{command} needs {COMMANDS[command][0]}: see :help")
            if command == ":diff":
                typed = rest.split()
                if typed[-1:] == ["wrt"] or typed[:1] == ["wrt"]:
                    raise InputError(":diff EXPR wrt NAME: give both the expression and the input")
            try:
                getattr(self, command[1:] + "_command")(arguments(command, rest), reply)
            except SeveralOutputs as error:
                raise error.reworded(command, "a plain line") from None
            except NonFiniteResult as error:  # strict: its place traced back to what was typed
                if error.where is None or self._source is None:
                    raise
                located = self._source.locate(error.where)
                where = located if isinstance(located, SourceError) else None
                raise NonFiniteResult(str(located), where) from None
        else:
            close = nearest(command[1:], [c[1:] for c in COMMANDS])
            listed = ", ".join(COMMANDS)
            said = (
                f"did you mean :{close}? (commands: {listed})"
                if close
                else f"commands are {listed}"
            )
            raise InputError(f"unknown command {printable(command)}; {said}")

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
                self._hold(name, number)
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

    def _hold(self, name: str, value: InputValue) -> None:
        """Give the input `name` the value `value`, in place of a definition of that name."""
        self.inputs[name] = value
        if self.defined.pop(name, None):
            self.definitions = [d for d in self.definitions if d.name != name]
            self._index()

    def _read_value(self, name: str, text: str) -> None:
        """`name = @FILE`: the array in the file, as `--name @FILE` reads it; a random start
        is the command line's, drawn with --seed."""
        typed = f"{name} = {text}"
        if RANDOM_CALL.search(text):
            raise InputError(
                f"{printable(typed)}: a random start is drawn on the command line, with a seed "
                f"(nanograd minimize ... --{name} '{printable(text)}' --seed N): here, give "
                f"its values ({name} = [0.5, -1, 2]) or read them from a file ({name} = @FILE)"
            )
        self._hold(name, array_value(text, printable(typed)))

    def grad(
        self,
        expr: str,
        reply: Reply,
        wrt: Sequence[str] = (),
        mode: str = "auto",
        strict: bool = False,
    ) -> None:
        source, program = self._program(expr)
        result = api.grad(
            program,
            self._point(program),
            wrt=wrt,
            mode=mode,
            strict=strict,
            warn=self._warner(source, reply),
        )
        reply.out.append(Table(lambda number: table_rows(flattened(result), number)))

    # commands: each takes its Arguments and the reply

    def grad_command(self, args: Arguments, reply: Reply) -> None:
        mode = args.value("mode") or "auto"
        self.grad(args.expr, reply, args.names("wrt"), mode, args.flag("strict"))

    def diff_command(self, args: Arguments, reply: Reply) -> None:
        _, program = self._program(args.expr)
        fmt = args.value("format") or "text"
        held = {  # the arrays the session holds, unless `shape` says otherwise
            name: getattr(value, "shape", ())
            for name, value in self.inputs.items()
            if getattr(value, "ndim", 0) and name in program.input_slots
        }
        shapes = {**held, **api.named_shapes(args.items("shape"))}
        if (args.flag("steps") or args.value("implicit")) and held:
            name, shape = next(iter(held.items()))  # not given by `shape`: the session's
            asked = (
                option("steps")
                if args.flag("steps")
                else option("implicit", args.value("implicit"))
            )
            raise InputError(f"{asked} is for numbers, and {name} holds an array of shape {shape}")
        order = args.value("order") or 1
        text = api.diff(
            program,
            args.names("wrt"),
            fmt,
            args.flag("exact"),
            shapes,
            order,
            args.flag("steps"),
            args.value("implicit"),
            args.value("notes") or "usual",
            args.flag("mixed"),
        )
        reply.out.append(str(text))
        remark = api.diff_note(program, args.value("implicit"))
        if remark:
            reply.err.append(remark)

    def hessian_command(self, args: Arguments, reply: Reply) -> None:
        source, program = self._program(args.expr)
        result = api.hessian(
            program,
            self._point(program),
            args.names("wrt"),
            strict=args.flag("strict"),
            warn=self._warner(source, reply),
        )
        reply.out.append(Table(lambda number: table_rows(flattened(result), number)))

    def taylor_command(self, args: Arguments, reply: Reply) -> None:
        fmt = api.choice(
            "format", args.value("format") or "table", api.TAYLOR_FORMATS, any_case=True
        )
        source, program = self._program(args.expr)
        wrt = args.names("wrt")
        if len(wrt) > 1:
            raise InputError(f"{option('wrt', 'NAME')}: give one input to expand in")
        result = api.taylor(
            program,
            self._point(program),
            wrt[0] if wrt else None,
            args.value("order") or 5,
            strict=args.flag("strict"),
            warn=self._warner(source, reply),
        )
        if fmt == "json":
            reply.out.append(to_json(result))
        elif fmt == "latex":
            reply.out.append(result.latex)
        else:
            reply.out.append(Table(lambda number: table_rows(result, number)))
            reply.out.append("\n" + result.polynomial)  # a blank line, as `taylor` prints

    def explain_command(self, args: Arguments, reply: Reply) -> None:
        source, program = self._program(args.expr)
        fmt = api.choice(
            "format", args.value("format") or "table", api.EXPLAIN_FORMATS, any_case=True
        )
        digits = api.digits(args.value("digits"))
        result = api.explain(
            program,
            self._point(program),
            strict=args.flag("strict"),
            warn=self._warner(source, reply),
        )
        if fmt == "table":
            reply.out.append(Explained(result, digits))
        else:
            from .render._explanation import written
            from .render._table import number_formats

            reply.out.append(written(result, fmt, number_formats(digits)[0]))

    def draw_command(self, args: Arguments, reply: Reply) -> None:
        expr, path = args.expr, args.file
        if path is None:  # `:draw EXPR FILE`: the last word is the file
            expr, _, path = expr.rpartition(" ")
        if not expr.strip():
            raise InputError(":draw needs EXPR FILE, as in :draw x*y graph.svg")
        fmt = args.value("format") or format_of(path)
        dpi = args.value("dpi")
        source, program = self._program(expr)
        point = self._point(program)
        data = api.draw(
            program,
            point,
            fmt,
            rankdir=args.value("rankdir"),
            hide_constants=args.flag("hide-constants"),
            edge_grads=args.flag("edge-grads"),
            dpi=None if dpi is None else api.whole("dpi", dpi, None),
            legend=not args.flag("no-legend"),
            statements=not args.flag("no-statements"),
            strict=args.flag("strict"),
            warn=self._warner(source, reply),
            scalars=args.flag("scalars"),
            grad_of=args.value("grad-of"),
        )
        write_atomically(path, data)
        reply.out.append(f"wrote {printable(path)}")

    def check_command(self, args: Arguments, reply: Reply) -> None:
        against = args.options.get("against", [])
        source, program = self._program(args.expr)
        warn = self._warner(source, reply)
        strict = args.flag("strict")
        rtol, atol = (
            api.number(n, text, None) if (text := args.value(n)) else None for n in ("rtol", "atol")
        )
        result: GradientCheck | FormulaCheck
        if not against:
            if args.ranges:
                raise InputError(
                    f"a range is for {command('check')} with {option('against')}, and for "
                    f"{command('plot')}: give each input a value"
                )
            result = api.check(
                program,
                self._point(program),
                rtol=rtol,
                atol=atol,
                strict=strict,
                warn=warn,
                wrt=args.names("wrt"),
            )
            reply.out.append(Table(lambda number: table_rows(flattened(result), number)))
        else:
            ranges = _ranges(program, args.ranges, self.inputs)
            result = api.check_against(
                program,
                against=against,
                fixed=self._point(program, without=ranges),
                ranges=ranges,
                wrt=args.names("wrt"),
                rtol=rtol,
                atol=atol,
                strict=strict,
                warn=warn,
            )
            formulas = result
            reply.out.append(Table(lambda number: table_rows(formulas, number)))
            if any(c.first for c in formulas.checks.values()):
                reply.out.append("\nfirst points where they differ:")
                reply.out.append(Table(lambda number: mismatch_rows(formulas, number)))
            if any(c.kinks for c in formulas.checks.values()):
                reply.out.append(f"\n{KINKS}")
                reply.out.append(Table(lambda number: kink_rows(formulas, number)))
        failure = api.failure(result)
        if failure:
            raise NanogradError(failure)

    def minimize_command(self, args: Arguments, reply: Reply) -> None:
        steps, lr, tol, batch, seed = map(args.value, ("steps", "lr", "tol", "batch", "seed"))
        path = args.value("data")
        drop_nan = args.flag("drop-nan")
        api.check_data_options(path, batch, drop_nan, seed, None, args.value("data-format"))
        tolerance = 1e-8 if tol is None else api.number("tol", tol, None)
        method = args.value("method") or "adam"
        most = 10000 if steps is None else api.whole("steps", steps, None)
        source, program = self._program(args.expr)
        needed = api.data_reads(program)
        table = None if path is None else self._data(args, path, needed, drop_nan=drop_nan)
        columns = None if table is None else table.columns
        bar = StepsProgress(most, self.progress_color) if self.progress else None
        size, t_max = (args.value(n) for n in ("lr-step-size", "lr-t-max"))
        gamma, low, decay = (args.value(n) for n in ("lr-gamma", "lr-min", "weight-decay"))
        schedule = api.lr_schedule(
            args.value("lr-schedule") or "constant",
            most,
            None if size is None else api.whole("lr_step_size", size, None),
            None if gamma is None else api.number("lr_gamma", gamma, None),
            None if t_max is None else api.whole("lr_t_max", t_max, None),
            None if low is None else api.number("lr_min", low, None),
        )
        try:
            result = api.minimize(
                program,
                self._point(program, without=columns or ()),
                steps=most,
                lr=api.LR if lr is None else api.number("lr", lr, None),
                method=method,
                tol=tolerance,
                strict=args.flag("strict"),
                warn=self._warner(source, reply),
                wrt=args.names("wrt"),
                fix=args.names("fix"),
                data=columns,
                drop_nan=drop_nan,
                batch=None if batch is None else api.whole("batch", batch, None),
                seed=None if seed is None else api.whole("seed", seed, None),
                on_step=bar.update if bar else None,
                weight_decay=0.0 if decay is None else api.number("weight_decay", decay, None),
                schedule=schedule,
                bounds=api.named_bounds(args.items("bound")),
            )
        except (Interrupted, Diverged) as stop:  # Ctrl-C or nan: the point reached, and why
            reached = cast(Minimum, stop.reached)
            self._reached(args, reached.inputs, Table(_rows(reached)), reply)
            raise
        finally:
            if bar:
                bar.stop()
        self._reached(args, result.inputs, Table(_rows(result)), reply)
        unconverged = api.failure(result, tolerance, method)
        if unconverged:  # a result: the steps ran out first
            reply.err.append(f"note: {unconverged}")

    def fit_command(self, args: Arguments, reply: Reply) -> None:
        from . import _fit_outputs as fit_outputs

        path, load, by = args.value("data"), args.value("load"), args.value("by")
        predict, output = args.value("predict"), args.value("output")
        files = fit_outputs.Files.asked(
            predict, output, args.value("plot"), args.value("save"), args.value("band"),
            args.flag("logx"), args.flag("logy"),
        )  # fmt: skip
        alone = load if not args.expr and path is None else None  # a saved fit alone
        if alone is not None:  # what would make another fit first: by, shared among them
            given = [option(name) for name in fit_outputs.FITTING if name in args.options]
            fit_outputs.refuse_with_load(given, files, "EXPR")
        api.check_grouping(by, args.names("shared"))
        if by is not None and args.flag("keep"):
            raise InputError(
                f"{option('keep')} makes one fit's parameters the inputs' values; "
                f"{option('by', 'COLUMN')} fits each group: leave out {option('keep')}"
            )
        if predict == "-":  # a script's lines come from standard input
            raise InputError(
                f"{option('predict', '-')}: the session reads its lines from standard input; "
                "give the rows to predict at as a file"
            )
        files.check(load, bool(args.expr), path, "EXPR", by)
        table = interrupted = None
        if alone is not None:
            result: Fit | Fits = api.load_fit(alone)
            if args.flag("keep") and result.by is not None:
                raise InputError(
                    f"{option('keep')} makes one fit's parameters the inputs' values; "
                    f"{printable(alone)} holds the fits of the groups of {result.by}: leave out "
                    f"{option('keep')}"
                )
        else:
            result, interrupted, table = self._fit(args, path, load)
        shown = _FitShown(reply)
        try:
            fit_outputs.finish(result, interrupted, table, files, shown, by, args.flag("stats"))
        finally:  # whether or not the fit's table is shown (predict shows the rows instead)
            if args.flag("keep") and isinstance(result, Fit) and result.by is None:
                self.inputs.update(result.parameters)

    def _fit(
        self, args: Arguments, path: str | None, load: str | None
    ) -> tuple[Fit | Fits, Interrupted | None, io.Table]:
        """The fit of `:fit EXPR data FILE` from the session's values of its parameters (and
        those saved in `load FIT.json`, which win), or the point an interrupted one reached
        and the interruption; and the table of the data."""
        from . import _fit_outputs as fit_outputs
        from .fitting import require_solver

        if path is None:
            raise InputError(
                f"{command('fit')} needs the data: {option('data', 'FILE')}, as in "
                ":fit a*x + b data points.csv"
            )
        target_text, sigma, steps, by = map(args.value, ("target", "sigma", "steps", "by"))
        _, program = self._program(args.expr)
        target = None
        if target_text is not None:
            try:
                target = _parse(target_text)
            except SourceError as error:
                raise InputError(f"{option('target')}: {error}") from None
        require_solver()  # a missing SciPy said before the data is read
        needed = api.fit_reads(program, target, sigma)
        table = self._data(args, path, needed, "fit", args.flag("drop-nan"))
        columns = table.columns
        # the session's values; a parameter without one is the fit's to name
        starts = {
            n: self.inputs[n] for n in program.inputs if n in self.inputs and n not in columns
        }
        if load is not None:  # the saved values start the parameters they hold
            starts = {**starts, **fit_outputs.saved_starts(load, program, columns, starts)}
        groups = None if by is None else api.group_column(by, table, needed)
        if args.value("plot"):
            api.fit_predictor(program, columns)
        counter = FitProgress(self.progress_color) if self.progress else None
        try:
            result = api.fit(
                program,
                columns=columns,
                starts=starts,
                target=target,
                sigma=sigma,
                fix=args.names("fix"),
                steps=None if steps is None else api.whole("steps", steps, None),
                progress=counter.update if counter else None,
                ci=None if args.value("ci") is None else api.number("ci", args.value("ci")),
                bounds=api.named_bounds(args.items("bound")),
                absolute_sigma=args.flag("absolute-sigma"),
                derive=args.options.get("derive", []),
                drop_nan=args.flag("drop-nan"),
                restarts=api.whole("restarts", args.value("restarts") or 0, 0),
                seed=None
                if args.value("seed") is None
                else api.whole("seed", args.value("seed"), 0),
                loss=args.value("loss") or "linear",
                f_scale=None
                if args.value("f-scale") is None
                else api.number("f_scale", args.value("f-scale"), None),
                profile=args.flag("profile"),
                by=groups,
                shared=args.names("shared"),
            )
        except Interrupted as stop:  # Ctrl-C: the best point reached, and where it stopped
            return cast("Fit | Fits", stop.reached), stop, table
        finally:
            if counter:
                counter.stop()
        return result, None, table

    def plot_command(self, args: Arguments, reply: Reply) -> None:
        from .render import figures as drawing
        from .sampling import CURVE_POINTS

        fmt = drawing.format_of(args.file) if args.file else None  # a bad name fails at once
        source, program = self._program(args.expr)
        if program.inputs and not args.ranges:
            name = program.inputs[0]
            if getattr(self.inputs.get(name), "ndim", 0):  # an array: one of its elements
                name += "[0]"
            raise InputError(
                f"give an input a range to plot over, as in :plot {args.expr} {name} -3:3"
            )
        ranges = _ranges(program, args.ranges, self.inputs)
        if len(ranges) == 2 and not args.file:
            raise InputError(
                "a contour plot of two ranges is a picture: add a FILE, as in "
                f":plot {args.expr} {' '.join(f'{n} {t}' for n, t in args.ranges.items())} "
                "plot.png"
            )
        columns = drawing.terminal_width(shutil.get_terminal_size((80, 24)).columns)
        result = api.plot(
            program,
            fixed=self._point(program, without=ranges),
            ranges=ranges,
            points=CURVE_POINTS if args.file else drawing.terminal_points(columns),
            picture=bool(args.file),
            warn=self._warner(source, reply),
            ylim=args.value("ylim") or "auto",
            tangent=args.value("tangent"),
            second=args.flag("second"),
            title=args.value("title"),
            logx=args.flag("logx"),
            logy=args.flag("logy"),
            size=args.value("size"),
        )
        if args.file and fmt:
            write_atomically(args.file, drawing.figure(result, fmt))
            reply.out.append(f"wrote {printable(args.file)}")
        else:
            reply.out.append(Plot(cast("Curve", result), columns))  # one range

    def _data(
        self,
        args: Arguments,
        path: str,
        needed: Iterable[str],
        extra: str = "points",
        drop_nan: bool = False,
    ) -> io.Table:
        """The rows of `data FILE`, read as the command line reads `--data FILE`: a missing
        value is nan with `drop-nan`, else an error that names its row and `drop-nan`."""
        if path == "-":  # a script's lines come from standard input
            raise InputError(
                f"{option('data', '-')}: the session reads its lines from standard input; "
                "give the data as a file"
            )
        given = args.value("data-format")
        fmt = (
            io.input_format(path, None, "data", None)
            if given is None
            else api.choice("data-format", given, DATA_FORMATS)
        )
        return io.read_rows(path, fmt, needed, option("data"), extra, drop_nan)

    def _reached(
        self, args: Arguments, point: Mapping[str, float], table: Table, reply: Reply
    ) -> None:
        """Show the point a descent or a fit reached; with `keep`, make it the inputs'
        values."""
        reply.out.append(table)
        if args.flag("keep"):
            self.inputs.update(point)

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
        used = [self.definitions[i] for i in sorted(chosen)]
        self._one_version(used)
        self._source, program = self._parse_after(expr, used)
        return self._source, program

    def _one_version(self, used: list[Definition]) -> None:
        """Refuse definitions that need two versions of a function (one called by an earlier
        definition, and the one defined again after it): a program, as a source, holds one."""
        last: dict[str, int] = {}  # each name's version so far, by its place in `used`
        for i, d in enumerate(used):
            if d.name in last and FUNCTION.match(d.text):
                old = used[last[d.name]]
                # the old version is used because a definition between the two calls it
                reader = next(r for r in used[last[d.name] + 1 : i] if d.name in r.reads)
                raise InputError(
                    f"{self._heading(reader)} was defined with the {self._heading(old)} before "
                    f"{d.name} was redefined, and a line cannot use both: define {reader.name} "
                    "again, or :reset"
                )
            last[d.name] = i

    @staticmethod
    def _heading(definition: Definition) -> str:
        """A function's name and parameters, f(a, b); a defined name alone."""
        function = FUNCTION.match(definition.text)
        if function is None:
            return definition.name
        parameters = [p.strip() for p in function.group(2).split(",") if p.strip()]
        return f"{definition.name}({', '.join(parameters)})"

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
        # an input too, for a function named as one: bound, as in a source
        names = [
            n
            for n in dict.fromkeys(NAME.findall(entry))
            if n in self.defined or (n in own and n in self.inputs)
        ]
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
        stand_ins = [Definition("", self._stand_in(n, pending), []) for n in called]
        if defines is not None:
            text += "\n0"  # a definition has no value of its own
        # parsed as the line, after the stand-ins: an error is at its place in what was typed
        return [*self._parse_after(text, stand_ins)[1].inputs, *called]

    def _parse_after(
        self, entry: str, definitions: list[Definition], listed: bool = False
    ) -> tuple[_Source, Program]:
        source = _Source([d.text for d in definitions], entry)
        try:
            return source, _parse(source.text)
        except SourceError as error:
            if not listed and error.message.startswith("unknown function "):
                # said again after a stand-in for each of the session's functions, so that
                # they are among the functions it lists and suggests
                written = set(NAME.findall(source.text))
                others = [
                    Definition("", self._stand_in(n, []), [])
                    for n in self.defined
                    if n not in written and self._parameters(n) is not None
                ]
                if others:
                    return self._parse_after(entry, [*others, *definitions], listed=True)
            located = source.locate(error)
            raise (InputError(located) if isinstance(located, str) else located) from None

    def _point(self, program: Program, without: Iterable[str] = ()) -> dict[str, InputValue]:
        """The session's values of the program's inputs, but those `without` names (a range's,
        a column's)."""
        left = set(without)
        wanted = [name for name in program.inputs if name not in left]
        missing = [name for name in wanted if name not in self.inputs]
        if missing:
            raise MissingInputs(missing)
        return {name: self.inputs[name] for name in wanted}

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


class _FitShown:
    """What `:fit` shows of a fit, as `nanograd fit` does (fit_outputs.Door): the fit's
    table, notes, the rows predicted and plots in text in the reply; a file written, and
    said so."""

    def __init__(self, reply: Reply):
        self.reply = reply

    def fit(self, result: Fit | Fits) -> None:
        self.reply.out.append(Table(_rows(result)))

    def note(self, text: str) -> None:
        self.reply.err.append(f"note: {text}")

    def report(self, text: str) -> None:
        self.reply.err.append(text)

    def write(self, path: str, data: bytes) -> None:
        if path == "-":  # the rows predicted, as the command line prints them
            self.reply.out.append(data.decode("utf-8").removesuffix("\n"))
            return
        write_atomically(path, data)
        self.reply.out.append(f"wrote {printable(path)}")

    def table(self, columns: Mapping[str, np.ndarray]) -> None:
        from .render._text import columns_table

        self.reply.out.append(Table(lambda number: columns_table(columns, number)))

    def plot(self, text: str) -> None:
        self.reply.out.append(text)


def _rows(result: object) -> Callable[[Callable[[float], str]], list[list[str]]]:
    return lambda number: table_rows(flattened(result), number)


def _ranges(
    program: Program, texts: Mapping[str, str], values: Mapping[str, InputValue]
) -> dict[str, Range]:
    """Each `NAME LO:HI[:N]` typed, as a Range of an input of `program`, or of an element
    (`x[0]`) of one whose value in the session, `values`, is an array."""
    from .results import array_of, element_name
    from .sampling import parse_range

    ranges = {}
    for name, text in texts.items():
        base = array_of(name)
        if base not in program.inputs:
            known = ", ".join(program.inputs) or "none"
            raise InputError(f"{name} {text}: {name} is not an input (inputs: {known})")
        shape = getattr(values.get(base), "shape", ())
        if name == base and shape:
            raise InputError(
                f"{name} {text}: {name} holds an array of shape {shape}: sweep one of its "
                f"elements, as in {name}[0] {text}"
            )
        if name != base:
            name = element_name(name, shape)
        ranges[name] = parse_range(name, text)
    return ranges


def _constant(text: str) -> InputValue | None:
    """The value of an input's right side: a number (nan and inf too), a constant
    expression (`pi/2`), or an array of them (`[1, 2]`, `eye(3)`); None for anything that
    reads a name."""
    if NUMBER.fullmatch(text):
        return float(text)
    number = constant_value(text)
    if number is not None or not ARRAY_VALUE.search(text):
        return number
    from ._sources import literal_array

    try:
        return literal_array(_parse(text))
    except SourceError as error:  # [[1, 2], [3]]: said of the value as typed
        raise InputError(f"{text.strip()}: {error.message}") from None


def _written(value: InputValue) -> str:
    """An input's value as a line of the session writes it: 2.5, nan, [1.0, 2.0]."""
    return str(value.tolist()) if hasattr(value, "tolist") else repr(value)


def _parse(text: str) -> Program:
    from ._language import parse

    return parse(text)


def _message(error: Exception, line: int | None) -> str:
    if isinstance(error, NonFiniteResult) and error.where is not None:
        error = error.where  # a place in the entry, said as a syntax error's is
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
    session = Session()
    session.progress = sys.stderr.isatty()  # as the command line shows it
    session.progress_color = rich is not False  # (--color never: none)
    if sys.stdin.isatty() and sys.stdout.isatty():
        return interactive(session, rich)
    return scripted(session, _lines(sys.stdin.buffer), sys.stdout, sys.stderr, bool(rich))


def _lines(stream: BinaryIO) -> Iterator[str | InputError]:
    """The lines of a script, decoded one by one (a line that is not UTF-8 fails alone); each
    read as other sources are, so that an endless line (/dev/zero) is refused before memory
    runs out. A byte order mark before the first line is dropped."""
    from ._sources import decode, read_bounded, without_bom

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
        try:
            reply = session.run(entry[1], entry[0])
        except KeyboardInterrupt:  # Ctrl-C stops the entry, as it stops :minimize's descent
            print(f"error: line {entry[0]}: interrupted", file=err, flush=True)
            status = max(status, 130)
            continue
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


def completions(session: Session, before: str) -> Iterator[tuple[str, str]]:
    """What Tab offers at the end of `before`: (the word typed, a word that completes it).
    After `:`, the commands; after a command and a word, its options too (`hide-c`: an
    option's name may hold a dash); else the names in scope, the functions and constants."""
    word = re.search(r"(?:^\s*:\w*|[A-Za-z_]\w*)$", before)
    if word is None:
        return
    typed = word.group().strip()
    if typed.startswith(":"):
        choices = [(typed, c) for c in COMMANDS]
    else:
        names = [*session.names(), *FUNCTIONS, *DEFINED, *CONSTANTS]
        choices = [(typed, n) for n in dict.fromkeys(names)]
        used = re.match(r"\s*(:\w+)\s+\S", before)
        dashed = re.search(r"(?<!\S)[A-Za-z_][\w-]*$", before)
        if used and dashed:
            options = [(dashed.group(), o) for o in OPTIONS.get(used.group(1), {})]
            if "-" in dashed.group():  # `hide-c`: an option's name, not `hide - cos`
                choices = options
            else:
                choices = options + choices
    for typed, choice in choices:
        if choice.startswith(typed) and choice != typed:
            yield typed, choice


def interactive(session: Session, rich: bool | None = None) -> int:
    """The session on a terminal, with prompt_toolkit: history, completion, and an entry
    that goes on over several lines while a parenthesis is open. Tables are Rich's where
    `rich` (by default, unless NO_COLOR is set)."""
    try:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import Completer, Completion
        from prompt_toolkit.history import FileHistory, History, InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings
    except ImportError:
        from ._extras import install_command

        raise NanogradError(
            "nanograd repl on a terminal needs prompt_toolkit: install it with: "
            f"{install_command('repl')} (or pipe the lines in: nanograd repl < FILE)"
        ) from None

    from . import __version__

    class Names(Completer):
        def get_completions(self, document, complete_event):
            for typed, choice in completions(session, document.text_before_cursor):
                yield Completion(choice, start_position=-len(typed))

    keys = KeyBindings()

    @keys.add("enter")
    def _(event) -> None:
        buffer = event.current_buffer
        if unclosed(buffer.text):
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    history: History
    try:
        path = history_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        history = FileHistory(str(path))
    except OSError:  # a read-only home: a session without saved history still works
        history = InMemoryHistory()
    prompt: PromptSession[str] = PromptSession(
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
