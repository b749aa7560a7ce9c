"""Parse source text into a Program, with errors a person can act on.

The grammar is grammars/nanograd.lark; its LALR(1) tables come from `grammar`. The parser
below runs those tables directly, building the program's instructions as it reduces: no parse
tree, no recursion, so sources a million terms long or nested 100,000 deep are fine.
"""

from __future__ import annotations

import itertools
import keyword
import math
import re
import unicodedata
from typing import NamedTuple

from ._array_ops import (
    ARRAY_CALLS,
    ARRAY_FUNCTIONS,
    INDEX,
    LITERAL,
    MATMUL,
    SLICES,
    TRANSPOSE,
    ArrayOp,
)
from ._ops import CALLS, CONSTANTS, NEG, OPS
from ._ops import FUNCTIONS as SCALAR_FUNCTIONS
from ._prelude import DEFINED
from ._program import Apply, Const, Input, Instruction, Program
from .errors import InputError, NameProblem, NanogradError, SyntaxProblem, command, option
from .grammar import Tables, load_tables

_BINARY = {name: op for name, op in OPS.items() if op.syntax == "infix"}
_BINARY["^"] = _BINARY["**"]
_BINARY["@"] = MATMUL
# Every function's name, scalar or on arrays: reserved, and suggested for a misspelt one.
FUNCTIONS = {**SCALAR_FUNCTIONS, **ARRAY_FUNCTIONS}
_AUGMENTED = {"+=": OPS["+"], "-=": OPS["-"], "*=": OPS["*"], "/=": OPS["/"]}
_WORDS = {
    "NAME": "a name",
    "NUMBER": "a number",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "LSQB": "'['",
    "RSQB": "']'",
    "COLON": "':'",
}
_CLOSING = {"RPAR": "(", "RSQB": "["}


class _Parser:
    """The LALR(1) tables, compiled once per process."""

    def __init__(self, tables: Tables):
        self.tables = tables
        alternatives = [f"(?P<{name}>{regex})" for name, regex in tables.terminals]
        # The end of the text is a token too, so one loop does all the work.
        self.token = re.compile("|".join([*alternatives, r"(?P<_END>\Z)", r"(?P<_BAD>(?s:.))"]))
        self.ignore = frozenset(tables.ignore)

    def parse(self, source: str) -> Program:
        return self.run(_Builder(source)).program()

    def run(self, build: _Builder) -> _Builder:
        """Parse the builder's source, building as the rules are reduced."""
        source = build.source
        callbacks = [
            (origin, length, inline, getattr(build, alias) if alias else build.collect)
            for origin, length, alias, inline in self.tables.rules
        ]
        actions = self.tables.actions
        ignore = self.ignore
        end = self.tables.end
        states = [self.tables.start]
        values: list = []
        open_parens: list[int] = []
        previous = None
        for match in self.token.finditer(source):
            kind = match.lastgroup
            assert kind is not None  # every alternative of the pattern is a named group
            if kind in ignore:
                continue
            text = match.group()
            offset = match.start()
            if (
                kind == "_SEP"
                and text != ";"
                and (open_parens or (previous and previous[0] == "COMMA"))
            ):
                continue  # a newline inside brackets, or after a list's comma
            if kind in ("LPAR", "LSQB"):
                open_parens.append(offset)
            elif kind in _CLOSING and open_parens:
                opened = open_parens.pop()
                if source[opened] != _CLOSING[kind]:  # said at the bracket left open
                    raise SyntaxProblem(
                        f"'{source[opened]}' is not closed before the '{text}' "
                        f"{_below(source, opened, offset)}",
                        source,
                        opened,
                    )
            elif kind == "_END":
                kind = "$END"
                offset = len(source.rstrip())
            elif kind == "_BAD":
                raise SyntaxProblem(_bad_character(text, source, offset), source, offset)
            token = (kind, text, offset)
            while True:
                state = states[-1]
                action = actions[state].get(kind)
                if action is None:
                    if state == end:  # only the end of the text gets here: accept
                        return build
                    if kind == "$END" and open_parens:
                        opened = open_parens[-1]
                        raise SyntaxProblem(f"'{source[opened]}' is never closed", source, opened)
                    in_brackets = bool(open_parens) and source[open_parens[-1]] == "["
                    raise _syntax_error(self.tables, state, token, previous, source, in_brackets)
                if action >= 0:
                    states.append(action)
                    values.append(token)
                    break
                origin, length, inline, callback = callbacks[~action]
                if inline:
                    states.pop()
                else:
                    value = callback(*values[len(values) - length :]) if length else []
                    del values[len(values) - length :]
                    del states[len(states) - length :]
                    values.append(value)
                states.append(actions[states[-1]][origin])
            previous = token
        raise AssertionError("unreachable: the last token is the end of the text")


class _Function(NamedTuple):
    """A function the source defines (`f(a, b) = expr`), or the prelude does.

    `code` is its body's instructions, made once and copied at each call: the first, one per
    parameter, stand for the arguments, and those in `captured` for the instruction of the
    program that makes a name the body reads from outside it, as bound where the definition
    is. A function of the prelude's takes the offset of the call for every node it makes: its
    text is not the source's.
    """

    name: str
    parameters: tuple[str, ...]
    code: list[Instruction]
    captured: dict[int, int]
    result: int
    offset: int  # where its name is, in its definition
    built_in: bool


class _Body:
    """A definition being read: its parameters, and the body's instructions so far."""

    def __init__(self, name: str, parameters: dict[str, int], offset: int):
        self.name = name
        self.parameters = parameters  # name -> its instruction in `code`
        self.offset = offset
        self.code: list[Instruction] = [Input(p, 0) for p in parameters]
        self.captured: dict[int, int] = {}  # instruction in code -> the program's
        self.capture: dict[int, int] = {}  # the program's instruction -> its stand-in in code


_HEADING = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*\((.*)\)[ \t]*=", re.S)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Builder:
    """The parser's callbacks, one per grammar alias: each appends instructions.

    An expression's value is the number of the instruction that makes its node.
    """

    def __init__(self, source: str):
        self.source = source
        self.code: list[Instruction] = []
        self.bound: dict[str, int] = {}  # name -> instruction
        self.first_read: dict[str, int] = {}  # input -> offset where it is first read
        self.labels: dict[int, str] = {}
        self.result: int | None = None
        self.output_slots: dict[str, int] = {}  # name -> instruction, for `u, v`
        self.listed_at: int | None = None  # where the list of outputs is
        self.functions: dict[str, _Function] = {}  # the functions the source defines
        self.body: _Body | None = None  # the definition being read, if any
        self.defined_last: _Function | None = None  # the last statement, if a definition
        self.unchecked = LARGE_SOURCE  # instructions up to which memory need not be checked
        self.arrays = False  # whether an array operation was read (in a definition too)

    def program(self) -> Program:
        if self.result is None and self.defined_last is not None:
            f = self.defined_last
            raise NameProblem(
                f"the source ends with the definition of {f.name}, which has no value: end it "
                f"with an expression that uses it, such as {f.name}({', '.join(f.parameters)})",
                self.source,
                f.offset,
            )
        if self.result is None:
            raise InputError("the source has no statements: there is nothing to evaluate")
        inputs = sorted(self.first_read, key=self.first_read.__getitem__)
        return Program(
            self.source,
            self.code,
            inputs,
            self.result,
            self.labels,
            self.output_slots,
            arrays=self.arrays,
        )

    def _emit(self, instruction: Instruction) -> int:
        code = self.code if self.body is None else self.body.code
        code.append(instruction)
        return len(code) - 1

    def _outer(self, index: int) -> int:
        """The program's instruction `index`, as the expression being read refers to it: in a
        definition's body, by a stand-in that each call replaces with it."""
        body = self.body
        if body is None:
            return index
        stand_in = body.capture.get(index)
        if stand_in is None:
            body.code.append(Input("", 0))
            stand_in = body.capture[index] = len(body.code) - 1
            body.captured[stand_in] = index
        return stand_in

    def collect(self, *values):
        """The rules with no alias (statement lists, argument lists): gather expressions."""
        gathered = values[0] if values and type(values[0]) is list else []
        for v in values[1:] if gathered is values[0] else values:
            if type(v) is int:
                gathered.append(v)
            elif type(v) is list:
                gathered.extend(v)
        return gathered

    # statements

    def expression(self, value: int) -> None:
        self._not_after_outputs()
        self.result = value
        self.defined_last = None

    def heading(self, token) -> _Body:
        """`f(a, b) =`: check the names, and read what follows as the body of f."""
        self._not_after_outputs()
        _, text, offset = token
        match = _HEADING.match(text)
        assert match is not None  # a DEFINE token of the grammar is text this pattern matches
        name = match.group(1)
        # a source may define a function the prelude has: its own, from here on
        problem = self._taken(name, prelude=False)
        if problem:
            raise NameProblem(
                f"{problem}: a function needs a name of its own, such as {self._spare(name)}",
                self.source,
                offset,
            )
        parameters: dict[str, int] = {}
        listed = match.group(2)
        at = offset + match.start(2)
        for part in listed.split(",") if listed.strip() else []:
            word = part.strip()
            where = at + (len(part) - len(part.lstrip()) if word else len(part))
            at += len(part) + 1
            if not word:
                raise SyntaxProblem(
                    f"a parameter of {name} is missing: define it as {name}(a, b) = ...",
                    self.source,
                    where,
                )
            if not _NAME.fullmatch(word):
                raise SyntaxProblem(
                    f"a parameter of {name} is a name, not '{word}': define it as "
                    f"{name}(a, b) = ...; to compare, write '=='",
                    self.source,
                    where,
                )
            if word in parameters:
                raise NameProblem(f"{name} has two parameters named {word}", self.source, where)
            if word == name or self._taken(word, bound=False):
                problem = self._taken(word, bound=False) or f"{word} is the function's own name"
                raise NameProblem(
                    f"{problem}, and cannot be a parameter of {name}: choose another name, such "
                    f"as {self._spare(word)}",
                    self.source,
                    where,
                )
            parameters[word] = len(parameters)
        self.body = _Body(name, parameters, offset)
        return self.body

    def _taken(self, name: str, bound: bool = True, prelude: bool = True) -> str | None:
        """What `name` already is, in words, if it is reserved, defined, (`bound`) bound, or
        (`prelude`) a function of the prelude."""
        known = ALIASES.get(name, name)
        if known in CONSTANTS:
            return f"{name} is a constant"
        if known in FUNCTIONS or (prelude and known in DEFINED):
            return f"{name} is a built-in function"
        if name in self.functions:
            return f"{name} is already a function, {self._heading(self.functions[name])}"
        if bound and name in self.first_read:
            return f"{name} is already an input of the source"
        if bound and name in self.bound:
            return f"{name} is already bound"
        return None

    @staticmethod
    def _heading(function: _Function) -> str:
        return f"{function.name}({', '.join(function.parameters)})"

    def define(self, body: _Body, value: int) -> None:
        """The end of a definition: keep its body, to copy at each call."""
        self.body = None
        function = _Function(
            body.name,
            tuple(body.parameters),
            body.code,
            body.captured,
            value,
            body.offset,
            built_in=False,
        )
        self.functions[body.name] = function
        self.result = None
        self.defined_last = function

    def listed(self, names, _comma, name) -> list:
        """`u, v`: the name tokens listed, in order."""
        if type(names) is not list:
            return [names, name]
        names.append(name)
        return names

    def outputs(self, names: list) -> None:
        self._not_after_outputs()
        for token in names:
            _, text, offset = token
            if text in self.output_slots:
                raise NameProblem(f"{text} is listed twice", self.source, offset)
            self.output_slots[text] = self._read(token)
        self.result = self.output_slots[names[0][1]]
        self.listed_at = names[0][2]
        self.defined_last = None

    def _not_after_outputs(self) -> None:
        if self.listed_at is not None:
            raise SyntaxProblem(
                "the list of outputs must be the last statement", self.source, self.listed_at
            )

    def assign(self, name, _equals, value: int) -> None:
        self._not_after_outputs()
        self._bind(name, value)
        self.defined_last = None

    def augmented(self, name, operator, value: int) -> None:
        self._not_after_outputs()
        _, text, offset = name
        if text in self.first_read:  # `v += u + v`: v is read first, before the right side
            self.first_read[text] = min(self.first_read[text], offset)
        current = self._read(name)
        self._bind(name, self._emit(Apply(_AUGMENTED[operator[1]], (current, value), operator[2])))
        self.defined_last = None

    def _bind(self, name, value: int) -> None:
        _, text, offset = name
        known = ALIASES.get(text, text)
        kind = "constant" if known in CONSTANTS else None
        if known in FUNCTIONS or known in DEFINED or text in self.functions:
            kind = "function"
        if kind:
            raise NameProblem(
                f"{text} is a {kind} and cannot be assigned: choose another name, such as "
                f"{self._spare(text)}",
                self.source,
                offset,
            )
        self.bound[text] = value
        self.labels.setdefault(value, text)
        self.result = value

    def _spare(self, text: str) -> str:
        """A name like `text` that the source does not use: e1 for e (the first of e1, e2, ...),
        pi1 for π, which is no name the language has."""
        used = set(re.findall(r"\w+", self.source))
        stem = text if text.isascii() else ALIASES[text]
        return next(f"{stem}{i}" for i in itertools.count(1) if f"{stem}{i}" not in used)

    def _read(self, name) -> int:
        _, text, offset = name
        if self.body is not None and text in self.body.parameters:
            return self.body.parameters[text]
        if text in self.bound:
            return self._outer(self.bound[text])
        known = ALIASES.get(text, text)
        if known in CONSTANTS:
            return self._emit(Const(CONSTANTS[known], offset))
        if known in FUNCTIONS or known in DEFINED or text in self.functions:
            message = f"{text} is a function: call it as {text}(...)"
            after = self.source[offset + len(text) :].lstrip()
            if text == "exp" and after.startswith(("^", "**")):  # exp^x
                message += "; for e to a power, write exp(x) or e**x"
            elif f"a{text}" in FUNCTIONS and re.match(
                r"(\^|\*\*)\s*(-\s*1|\(\s*-\s*1\s*\))(?![\w.])", after
            ):
                message += f"; for its inverse, write a{text}(...)"  # tan^-1(x)
            elif re.match(r"(\^|\*\*)\s*[0-9]", after):  # sin^2(x)
                message += f", and raise the call to a power: {text}(x)**2"
            raise NameProblem(message, self.source, offset)
        if text in _PYTHON_VALUES:  # x[:, None], x[True]: no input of those names
            raise NameProblem(_PYTHON_VALUES[text], self.source, offset)
        # an input; read in a definition's body, it is an input of the program there
        self.first_read[text] = offset
        self.code.append(Input(text, offset))
        self.bound[text] = len(self.code) - 1
        self.labels[self.bound[text]] = text
        return self._outer(self.bound[text])

    # expressions

    def name(self, token) -> int:
        return self._read(token)

    def number(self, token) -> int:
        _, text, offset = token
        value = float(text)
        if math.isinf(value):
            raise SyntaxProblem(f"the number {text} is too large for a float", self.source, offset)
        if value == 0.0 and any(digit in "123456789" for digit in text.lower().split("e")[0]):
            raise SyntaxProblem(
                f"the number {text} is too small for a float (it would be 0): write 0 if 0 is "
                "meant",
                self.source,
                offset,
            )
        return self._emit(Const(value, offset))

    def binary(self, left: int, operator, right: int) -> int:
        if operator[0] == "AT":
            self.arrays = True
        return self._emit(Apply(_BINARY[operator[1]], (left, right), operator[2]))

    def negate(self, minus, value: int) -> int:
        code = self.code if self.body is None else self.body.code
        ins = code[value]
        labelled = self.body is None and value in self.labels
        if type(ins) is Const and value == len(code) - 1 and not labelled:
            code[value] = Const(-ins.value, minus[2])  # -2 is the number -2
            return value
        return self._emit(Apply(NEG, (value,), minus[2]))

    def plus(self, _plus, value: int) -> int:
        return value

    def group(self, _open, value: int, _close) -> int:
        return value

    def literal(self, bracket, elements: list[int], *_closing) -> int:
        """`[a, b, c]`: an array of its elements (numbers, or arrays of one shape)."""
        self.arrays = True
        return self._emit(Apply(LITERAL, tuple(elements), bracket[2]))

    def index(self, value: int, bracket, subscripts: list[int], _close) -> int:
        """`x[i, j]`: the array, then an index or a slice per axis."""
        self.arrays = True
        return self._emit(Apply(INDEX, (value, *subscripts), bracket[2]))

    def span(self, *parts) -> int:
        """A slice, `a:b`, `a:`, `:b`, `:`, `a:b:c`, `::c`: the start, stop and step written."""
        self.arrays = True
        written = [False]
        for part in parts:
            if type(part) is int:
                written[-1] = True
            else:  # a colon
                written.append(False)
        written += [False] * (3 - len(written))
        bounds = tuple(p for p in parts if type(p) is int)
        colon = next(p for p in parts if type(p) is not int)
        start, stop, step = written
        return self._emit(Apply(SLICES[start, stop, step], bounds, colon[2]))

    def transpose(self, value: int, token) -> int:
        self.arrays = True
        return self._emit(Apply(TRANSPOSE, (value,), token[2]))

    def call(self, name, _open, *rest) -> int:
        _, text, offset = name
        arguments = rest[0] if len(rest) == 2 else []
        known = ALIASES.get(text, text)
        function = self.functions.get(text) or _prelude(known)
        if function is not None:
            if len(arguments) != len(function.parameters):
                n = len(function.parameters)
                raise NameProblem(
                    f"{text} takes {n} argument{'s' if n != 1 else ''}, "
                    f"{self._heading(function)}, not {len(arguments)}",
                    self.source,
                    rest[-1][2],
                )
            return self._expand(function, arguments, offset)
        op = CALLS.get((known, len(arguments))) or ARRAY_CALLS.get((known, len(arguments)))
        if op is None:
            if self.body is not None and text == self.body.name:
                raise NameProblem(
                    f"{text} calls itself: a function may call only the functions defined "
                    "before it, so it cannot be recursive",
                    self.source,
                    offset,
                )
            if known not in FUNCTIONS:
                if _defined_after(text, self.source, offset):
                    raise NameProblem(
                        f"{text} is defined after this call: define a function before the "
                        "first statement that calls it",
                        self.source,
                        offset,
                    )
                raise NameProblem(self._unknown_function(text, offset), self.source, offset)
            counts = sorted({str(arity) for name, arity in [*CALLS, *ARRAY_CALLS] if name == known})
            many = "s" if counts != ["1"] else ""
            raise NameProblem(
                f"{text} takes {' or '.join(counts)} argument{many}, not {len(arguments)}",
                self.source,
                rest[-1][2],
            )
        if type(op) is ArrayOp:
            self.arrays = True
        return self._emit(Apply(op, tuple(arguments), offset))

    def _expand(self, function: _Function, arguments: list[int], offset: int) -> int:
        """A call: the function's body, copied with the arguments for its parameters."""
        self._check_growth(function, offset)
        number = list(arguments)  # the body's instructions -> those made here
        captured = function.captured
        built_in = function.built_in
        code = function.code
        for k in range(len(number), len(code)):
            if k in captured:
                number.append(self._outer(captured[k]))
                continue
            ins = code[k]
            if type(ins) is Apply:
                ins = ins._replace(args=tuple([number[a] for a in ins.args]))
            if built_in:
                ins = ins._replace(offset=offset)
            number.append(self._emit(ins))
        return number[function.result]

    def _check_growth(self, function: _Function, offset: int) -> None:
        """Refuse a call whose copies would not fit in memory: each call copies the body, so
        a few lines whose functions call the one before twice make 2**30 operations. Checked
        as the program grows past each doubling, before the copy is made."""
        size = len(self.code) + len(function.code)
        if self.body is not None:
            size += len(self.body.code)
        if size <= self.unchecked:
            return
        self.unchecked = 2 * size
        from ._memory import available as memory_left
        from ._memory import gigabytes

        available = memory_left()
        needed = size * BYTES_PER_INSTRUCTION
        if available is not None and needed > available:
            raise NameProblem(
                f"with this call of {function.name}, the program has {size:,} operations: its "
                f"graph would need {gigabytes(needed)} of memory, and {gigabytes(available)} "
                "is free",
                self.source,
                offset,
            )

    def _unknown_function(self, text: str, offset: int) -> str:
        if text in self.bound or ALIASES.get(text, text) in CONSTANTS:
            return f"{text} is not a function; to multiply, write {text}*(...)"
        import difflib

        # arcsin is asin, arcsec is asec: the same hint
        if text in _ABSENT:
            return f"unknown function {text}: {_ABSENT[text]}"
        if _derivative_operator(text, self.source, offset):
            return _not_written(f"d/{text}(...)", text)
        hint = _meant(text)
        if hint:
            return f"unknown function {text}: did you mean {_applied(hint, self.source, offset)}?"
        if text[1:] in FUNCTIONS and text[0].isalpha():  # xsin(x): x times sin(x)
            argument = _call_argument(self.source, offset) or "..."
            return f"unknown function {text}: did you mean {text[0]}*{text[1:]}({argument})?"
        names = [*FUNCTIONS, *DEFINED, *self.functions]
        close = difflib.get_close_matches(text, names, n=3, cutoff=0.6)
        if close:
            return f"unknown function {text}: did you mean {' or '.join(close)}?"
        return f"unknown function {text}; functions are {', '.join(names)}"


def _derivative_operator(name: str, source: str, offset: int) -> bool:
    """Whether the name `name` at `offset` is the dx of a d/dx written before an expression."""
    return bool(re.fullmatch(r"d[A-Za-z]\w*", name)) and bool(
        re.search(r"\bd\s*/\s*$", source[:offset])
    )


def _not_written(written: str, name: str) -> str:
    return (
        f"{written} is not written in a source: give the expression alone and ask for its "
        f"derivative (diff EXPR --wrt {name[1:]})"
    )


def _call_argument(source: str, offset: int) -> str | None:
    """The one argument of the call at `offset` in `source`, as written; None where it has
    none or several."""
    opening = source.find("(", offset)
    depth, end = 0, opening
    for end in range(opening, len(source)):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(source[end], 0)
        if depth == 0 or (depth == 1 and source[end] == ","):
            break
    argument = source[opening + 1 : end].strip()
    return argument if source[end : end + 1] == ")" and argument else None


def _applied(hint: str, source: str, offset: int) -> str:
    """`hint`, a form of one argument written with x (`x.T`, `acos(1/x)`), applied to the
    argument of the call at `offset` in `source`: `A.T` for transpose(A); else `hint`."""
    argument = _call_argument(source, offset)
    if argument is None or re.search(r"\bn\b", hint):
        return hint  # not one argument, or a form of two (x**(1/n))

    def written(x: re.Match) -> str:
        alone = re.fullmatch(r"[A-Za-z_]\w*(\[[^\]]*\])*", argument)
        before, after = hint[: x.start()].rstrip()[-1:], hint[x.end() :].lstrip()[:1]
        whole = before and before in "(," and after and after in "),"  # an argument itself
        return argument if alone or whole else f"({argument})"

    return re.sub(r"\bx\b", written, hint)


def _defined_after(name: str, source: str, offset: int) -> bool:
    """Whether the source defines the function `name` after `offset`."""
    heading = rf"(?<![A-Za-z0-9_]){re.escape(name)}[ \t]*\([^()#;]*\)[ \t]*=(?![=<>!])"
    return re.compile(heading).search(source, offset + 1) is not None


_PRELUDE: dict[str, _Function] = {}


def _prelude(name: str) -> _Function | None:
    """The prelude's function `name`, its definition read once per process."""
    if name not in DEFINED:
        return None
    function = _PRELUDE.get(name)
    if function is None:
        definition = DEFINED[name].definition
        global _parser
        if _parser is None:
            _parser = _Parser(load_tables())
        build = _parser.run(_Builder(definition))
        function = build.functions[name]._replace(built_in=True)
        _PRELUDE[name] = function
    return function


_LOOKALIKES = {
    "\u2212": "-",  # minus sign
    "\u2013": "-",  # en dash
    "\u00d7": "*",  # multiplication sign
    "\u00b7": "*",  # middle dot
    "\u22c5": "*",  # dot operator
    "\u00f7": "/",
    "\u00b2": "**2",
    "\u00b3": "**3",
    "\u221a": "sqrt(...)",  # square root sign
    "\u2264": "<=",
    "\u2265": ">=",
    "\u2260": "!=",
}

# Names people type from habit that the language takes as its own: ln(x) is log(x), π is pi.
ALIASES = {"ln": "log", "\u03c0": "pi"}
# Other names people type from habit, and what the language calls them.
_HINTS = {
    "variance": "var",
    "stddev": "std",
    "gammaln": "lgamma",
    "loggamma": "lgamma",
    "tgamma": "gamma",
    "psi": "digamma",
    "mod": "a % b",
    "fmod": "a % b (the sign of b; C's fmod has the sign of a)",
    "asec": "acos(1/x)",
    "acsc": "asin(1/x)",
    "acot": "atan(1/x) (a jump at 0, as SymPy's acot) or pi/2 - atan(x) (continuous)",
    "asech": "acosh(1/x)",
    "acsch": "asinh(1/x)",
    "acoth": "atanh(1/x)",
    "trigamma": "polygamma(1, x)",
    "tetragamma": "polygamma(2, x)",
    "inverf": "erfinv",
    "erfcinv": "erfinv(1 - x)",
    "inverfc": "erfinv(1 - x)",
    "expit": "sigmoid",
    "logistic": "sigmoid",
    "heaviside": "step",
    "sgn": "sign",
    "ln1p": "log1p",
    "lb": "log2",
    "lg": "log10",
    "exp2": "2**x",
    "root": "x**(1/n)",
    "nthroot": "x**(1/n), or cbrt(x)",
    "transpose": "x.T",
    "matmul": "a @ b",
}
# Functions of NumPy's that the language does not have, and what it has instead.
_INVERSE = "the language has no matrix inverse: for x = inv(A) @ b, minimize norm(A@x - b)**2"
_ABSENT = {
    "inv": _INVERSE,
    "pinv": _INVERSE,
    "solve": _INVERSE,
    "det": "the language has no determinant: write it out, A[0,0]*A[1,1] - A[0,1]*A[1,0]",
}
# A random start is an input's value, drawn on the command line: never in a source, which
# stays deterministic.
_ABSENT.update(
    (
        kind,
        f"a random start is an input's value, never part of a source: give the input one, "
        f"{option('W', f'{kind}(16, 2)', quoted=True)} {option('seed', 1)}, to "
        f"{command('minimize')}",
    )
    for kind in ("normal", "uniform")
)
# The prefixes of libraries, which the language's functions go without: np.exp(x) is exp(x).
_MODULES = frozenset(("np", "numpy", "jnp", "torch", "math", "scipy", "linalg", "F"))


def _meant(text: str) -> str | None:
    """What a function name from habit means in the language: arcsin is asin, arcsec is
    asec's acos(1/x), LOG is log, trigamma is polygamma(1, x)."""
    usual = text.lower()
    usual = "a" + usual.removeprefix("arc") if usual.startswith("arc") else usual
    return _HINTS.get(usual, usual if usual in FUNCTIONS and usual != text else None)


def _bad_character(text: str, source: str, offset: int) -> str:
    """The message for the character `text` at `offset`, which no token begins with."""
    if "\udc80" <= text <= "\udcff":  # a byte of the command line that was not UTF-8
        return f"the source is not valid UTF-8 (byte 0x{ord(text) - 0xDC00:02x})"
    if text == ".":
        return f"unexpected character '.'{_dotted(source, offset)}"
    if text in _LOOKALIKES:
        return f"unexpected character {text!r}: write {_LOOKALIKES[text]!r}"
    if text in "'\"":
        return f"unexpected character {text!r}: the language has no strings"
    if _greek(text):
        return f"unexpected character {text!r}: write {_greek(text)}"
    if text in "{}":
        return f"unexpected character {text!r}: the language has no sets; an array is [1, 2, 3]"
    if text == "!":
        before, after = source[:offset].rstrip()[-1:], source[offset + 1 :].lstrip()[:1]
        factorial = before.isalnum() or before in tuple(")]_")
        if factorial and not (after.isalnum() or after in tuple("(_")):  # 5!, (n + 1)!; not x ! y
            return "unexpected character '!': the language has no factorial: n! is gamma(n + 1)"
        return "unexpected character '!': write x != y for not equal, and x == 0 for not x"
    if text == "|":
        return (
            "unexpected character '|': for |x|, write abs(x); the language has no 'or': take "
            "max(...) of comparisons"
        )
    if text == "&":
        return (
            f"unexpected character {text!r}: the language has no 'and' or 'or'; multiply "
            "comparisons for and, (a < b)*(b < c), and take max(...) of them for or"
        )
    return f"unexpected character {text!r}"


def _greek(text: str) -> str | None:
    """The ASCII name of a Greek letter, as a name of the language: rho, Sigma for the
    capital, gamma1 for gamma (a function), lambda1 for lambda (a keyword of Python's)."""
    found = re.fullmatch(r"GREEK (SMALL|CAPITAL) LETTER (?:FINAL )?(\w+)", _unicode_name(text))
    if not found:
        return None
    case, letter = found.groups()
    name = {"LAMDA": "lambda"}.get(letter, letter.lower())
    name = name.capitalize() if case == "CAPITAL" else name
    if keyword.iskeyword(name):
        return f"{name}1 ({name} is a keyword)"
    return f"{name}1 ({name} is a function)" if name in FUNCTIONS or name in DEFINED else name


def _unicode_name(text: str) -> str:
    """The Unicode name of a character, as NFKC reads it (µ, the micro sign, is μ)."""
    return unicodedata.name(unicodedata.normalize("NFKC", text)[:1] or text, "")


def _below(source: str, start: int, offset: int) -> str:
    """Where `offset` is, said from `start` (a line or an entry of the repl may begin
    anywhere): `at column 13`, or `2 lines below, at column 4`."""
    column = offset - source.rfind("\n", 0, offset)
    lines = source.count("\n", start, offset)
    if not lines:
        return f"at column {column}"
    return f"{lines} line{'s' if lines > 1 else ''} below, at column {column}"


def _dotted(source: str, offset: int) -> str:
    """What a '.' written as NumPy is written means, said after the message: x.t or
    x.transpose() is x.T, np.exp(x) is exp(x), x.sum() is sum(x); else nothing."""
    owner = re.search(r"([A-Za-z_][A-Za-z0-9_]*)?(\)?)\s*$", source[:offset])
    after = re.match(r"\s*([A-Za-z_][A-Za-z0-9_.]*)", source[offset + 1 :])
    if owner is None or after is None:
        return ""
    name = after[1].split(".")[-1]  # np.linalg.inv is inv
    written = owner[1] if owner[1] and not owner[2] else "(...)"
    if owner[1] in _MODULES and not owner[2]:
        if name in _ABSENT:
            return f": {_ABSENT[name]}"
        if name in FUNCTIONS or name in DEFINED:
            return f": the language's functions go without {owner[1]}., write {name}(...)"
        return f": the language's functions go without {owner[1]}."
    if name in ("t", "transpose"):
        return f": did you mean {written}.T?"
    if name in FUNCTIONS:
        return f": write {name}({written}), not {written}.{name}()"
    return ""


# Comparisons written as other languages or habit write them, and the language's own.
_COMPARISONS = {"<>": "!=", "=<": "<=", "=>": ">=", "=!": "!=", "!==": "!=", "===": "=="}


# Python's values, which a source may borrow from NumPy's or PyTorch's code
_PYTHON_VALUES = {
    "None": (
        "None is Python's, not the language's: an array gains no new axis (x[:, None]); "
        "arrays broadcast from their last axes, as NumPy's do, and .T turns a matrix"
    ),
    "True": "True is Python's, not the language's: a comparison is 1 or 0 (x > 0)",
    "False": "False is Python's, not the language's: a comparison is 1 or 0 (x > 0)",
}

# An argument given by name after another, up to its `=`: `sum(W, axis` of sum(W, axis=0)
# (where(x = 2, 1, 0) is a comparison meant)
_KEYWORD = re.compile(r"(?P<call>[A-Za-z_]\w*)\([^()]*,\s*(?P<name>[A-Za-z_]\w*)\s*$")


def _unknown_comparison(written: str) -> str:
    return f"unknown comparison '{written}': write '{_COMPARISONS[written]}'"


def _touching(token, offset: int) -> bool:
    """Whether the token ends where `offset` begins."""
    return token[2] + len(token[1]) == offset


def _describe(token) -> str:
    kind, text, _ = token
    if kind == "$END":
        return "end of input"
    if kind == "_SEP":
        return "';'" if text == ";" else "end of line"
    return f"'{text}'"


def _syntax_error(
    tables: Tables, state: int, token, previous, source: str, in_brackets: bool = False
) -> SyntaxProblem:
    """A syntax error in words, not in grammar symbols, at the token that did not fit."""
    kind, text, offset = token
    if kind == "_SEP":  # point just past the end of the line's text
        offset = len(source[:offset].rstrip(" \t\r"))
    expected = {symbol for symbol in tables.actions[state] if symbol.isupper()}
    after = f" after {_describe(previous)}" if previous else ""
    if previous and previous[0] == "NAME" and keyword.iskeyword(previous[1]):
        kind, text, offset = previous
    if kind == "NAME" and keyword.iskeyword(text):
        message = f"unexpected '{text}': Python's keywords are not part of the language"
    elif kind == "DEFINE":  # y = f(x) = ...
        message = (
            f"unexpected '{' '.join(text.split())}'{after}: a function is defined by a "
            "statement of its own, f(a, b) = expr"
        )
    elif "COMMA" in expected and expected <= {"COMMA", "_SEP", "$END"}:  # in a list of outputs
        message = (
            f"unexpected {_describe(token)} in a list of outputs: list names only, and bind "
            "an expression to a name first (w = ...; u, w)"
        )
    elif (
        previous
        and previous[0] == "NAME"
        and _derivative_operator(previous[1], source, previous[2])
    ):
        message = _not_written(f"d/{previous[1]}", previous[1])  # d/dx x**2
    elif previous and previous[0] in ("NUMBER", "RPAR", "NAME") and kind in ("NAME", "NUMBER"):
        called = ALIASES.get(text, text) in FUNCTIONS and source[offset + len(text) :][:1] == "("
        argument = f"({_call_argument(source, offset) or '...'})" if called else ""
        hint = f"write {previous[1]}*{text}{argument}"  # 2sin(x): 2*sin(x)
        if previous[0] == "NUMBER" and source[: previous[2]].rstrip().endswith("/"):  # 1/2x
            hint = (
                f"write ({previous[1]}*{text}): after /, {previous[1]}*{text} divides by "
                f"{previous[1]} alone"
            )
        elif previous[0] == "NAME" and ALIASES.get(previous[1], previous[1]) in FUNCTIONS:
            hint = f"write {previous[1]}({text})"
        elif previous[0] == "NAME" and (meant := _meant(previous[1]) or "").isidentifier():
            hint = f"write {meant}({text})"  # arcsin x
        message = f"missing operator between {_describe(previous)} and '{text}': {hint}"
        if in_brackets:
            message += f", or {previous[1]}, {text} for two elements"
    elif previous and previous[1] + text in _COMPARISONS and _touching(previous, offset):
        message = _unknown_comparison(previous[1] + text)  # x <> y, x =< y
        offset = previous[2]
    elif previous and previous[0] in ("NUMBER", "RPAR") and kind == "LPAR":
        message = f"missing operator before '(': write {previous[1]}*(...)"
    elif expected == {"NAME"}:  # after the ',' of a list of outputs
        message = f"expected a name{after}" + (
            "" if kind == "$END" else f", found {_describe(token)}"
        )
    elif "NAME" in expected and not expected & {"STAR", "SLASH", "POW", "RPAR"}:
        message = f"expected an expression{after}" if previous else "expected an expression"
        if kind != "$END":
            message += f", found {_describe(token)}"
    elif kind == "COMPARE":  # after a comparison: a < b < c
        message = (
            f"unexpected '{text}': comparisons do not chain; for a < b < c write "
            "(a < b)*(b < c), or put one comparison in parentheses"
        )
    elif kind == "COMMA":
        message = (
            f"unexpected ','{after}: several outputs are listed by name, as the last statement "
            "(u = ...; v = ...; u, v)"
        )
    elif text == "=" and source[offset : offset + 2] in _COMPARISONS:  # where(x =< 0, ...)
        message = _unknown_comparison(source[offset : offset + 2])
    elif kind == "EQUAL" and (named := _KEYWORD.search(source[:offset])):  # sum(W, axis=0)
        value = re.match(r"\s*([^,()]*?)\s*(?:[,)]|$)", source[offset + 1 :])
        given = f"{value[1]}, not {named['name']}={value[1]}" if value and value[1] else "a value"
        message = f"{named['call']} takes its arguments in order, not by name: write {given}"
        if named["call"] in ("var", "std") and named["name"] != "axis":  # ddof, correction
            sample = "var(x)*len(x)/(len(x) - 1)"
            message = (
                f"{named['call']} takes no {named['name']}: it divides by the number of "
                "elements; for n - 1, write "
                + (sample if named["call"] == "var" else f"sqrt({sample})")
            )
    elif kind in ("EQUAL", "AUGMENTED"):
        message = f"only a name can be assigned to, with '{text}'"
        if text == "=":  # (x**2 + y**2 = 25: an equation, for diff --implicit)
            message += (
                "; to compare, or to write an equation (for "
                f"{option('implicit', 'y')} of {command('diff')}), write '=='"
            )
    elif kind in _CLOSING:
        message = f"unmatched '{text}'"
    elif kind == "COLON":
        message = "unexpected ':': a colon is for slices, inside brackets, as in x[1:3]"
    else:
        words = {_WORDS.get(s, "an operator") for s in expected if s != "$END"}
        if previous and previous[0] in ("NAME", "NUMBER", "RPAR"):
            words.add("an operator")  # an operand can always go on with one: (x; y)
        choices = sorted(words)
        message = f"unexpected {_describe(token)}{after}"
        if choices:
            message += f"; expected {' or '.join(choices)}"
    return SyntaxProblem(message, source, offset)


# Parsing and evaluating take up to about this many bytes of memory per byte of source (370
# measured for `1+1+...`, the worst case for `grad`); larger sources are checked against the
# memory the process can still use. The check reads a few files in /proc and /sys: 0.2 ms,
# under 0.1% of the time parsing 64 KB takes (`python -m timeit`).
BYTES_PER_SOURCE_BYTE = 400
LARGE_SOURCE = 1 << 16
# That source makes an instruction per byte: the same bytes per instruction that a call makes.
BYTES_PER_INSTRUCTION = BYTES_PER_SOURCE_BYTE

_parser: _Parser | None = None


def parse(source: str) -> Program:
    """Parse `source` (the language of docs/language.md) into a Program; raises a
    SourceError subclass if it is bad."""
    global _parser
    if len(source) > LARGE_SOURCE:
        check_memory(len(source))
    if _parser is None:
        _parser = _Parser(load_tables())
    return _parser.parse(source)


def constant_value(text: str) -> float | None:
    """The value of `text` if it is a constant expression of the language (`2.5`, `pi/2`,
    `1e-3`, `-2*e`: no inputs, one result), else None."""
    if len(text) > 1000:  # an input's value, not a program
        return None
    try:
        program = parse(text)
    except NanogradError:
        return None
    if program.inputs or program.outputs or program.arrays:
        return None
    return program.values({})[program.result]


def check_memory(size: int, meminfo: str = "/proc/meminfo", so_far: bool = False) -> None:
    """Refuse, with a clear message, a source of `size` bytes (`so_far`: read so far, of one
    that may go on) whose graph would not fit in the memory this process can still use: free
    memory, and what `ulimit -v` and the cgroup's limit leave (see `memory.available`)."""
    from ._memory import available as memory_left
    from ._memory import gigabytes

    available = memory_left(meminfo)
    needed = size * BYTES_PER_SOURCE_BYTE
    if available is not None and needed > available:
        at_least = "at least " if so_far else ""
        megabytes = f"{size / 1e6:.1f}".removesuffix(".0")
        raise NanogradError(
            f"the source is {at_least}{megabytes} MB: its graph would need "
            f"{at_least or 'about '}{gigabytes(needed)} of memory, and "
            f"{gigabytes(available)} is free"
        )
