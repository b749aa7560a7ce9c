"""Expressions as text: in the language (which parses back), in LaTeX, or in JavaScript.

Takes expressions already laid out with the ops of the language (`algebra.layout`, or
`algebra.Written` for a formula as the ops table writes it). In the language and in LaTeX, a
sub-expression that repeats and is large is bound once to a name (t1, t2, ...) before the
lines that use it. A node's text holds its operands' texts by reference (`_Rope`) and is
joined once, when written: expressions nested D deep take memory and time linear in D, where
a string per node would copy its operands' at every level (D**2). Nothing here recurses.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping
from typing import ClassVar, NamedTuple, TypeAlias, cast

from ._algebra import CALL, INPUT, NUMBER, Expr, reachable
from ._array_ops import INDEX, LITERAL, MATMUL, TRANSPOSE
from ._latex_lines import LINE, broken, continued, pieces, width
from ._ops import ADD, COMPARISONS, DIV, MOD, MUL, NEG, POW, SUB, Op

# A call whose value is AS_WRITTEN is written as the source has it (explain's nodes): the
# negation or the subtraction of a negative keeps its sign, in parentheses (-(-x), a - (-2)),
# where elsewhere it is folded into the sign (x, a + 2), an equal number.
AS_WRITTEN = "as written"
# The relation of a note that says where a textbook derivative loses digits the engine keeps.
LOSES = "loses"
# Inputs from 1/USUAL to USUAL in size (or 0) are those of everyday use, physical constants
# in SI units among them: `diff` says by default where a derivative loses digits for them,
# and only with `--notes all` where it loses them past (`x/(x**2 + 1)**2` overflows at 1e77).
USUAL = 1e30
_LOSES = "loses digits "  # how each such note begins
_KEPT = "diff --exact keeps them"  # and ends

# What derivatives are of (the function's name), whether they are partial, and the inputs
# each higher one is by in turn, by its name (see `write`).
By: TypeAlias = tuple[str, bool, Mapping[str, tuple[str, ...]]]

# A repeated sub-expression is bound to a name when it has at least this many operations.
BIND_SIZE = 4

# What each node's text binds as, loosest first; an operand looser than its place needs
# parentheses.
_COMPARISON, _SUM, _PRODUCT, _UNARY, _POWER, _ATOM = range(6)

_LATEX_NAMES = {
    "asin": r"\arcsin",
    "acos": r"\arccos",
    "atan": r"\arctan",
    "log2": r"\log_{2}",
    "log10": r"\log_{10}",
    **{
        f: "\\" + f
        for f in ("log", "sin", "cos", "tan", "sec", "csc", "cot", "sinh", "cosh", "tanh", "coth")
    },
    "min": r"\min",
    "max": r"\max",
    "gamma": r"\Gamma",
    "digamma": r"\psi",
    "erfinv": r"\operatorname{erf}^{-1}",
}
# The comparisons in LaTeX.
_RELATIONS = {"<": "<", "<=": r"\le", ">": ">", ">=": r"\ge", "==": "=", "!=": r"\ne"}
# A base that takes an exponent without braces: x^{2}, 10^{3}, \alpha^{2}, x_{1}^{2}
_SIMPLE = re.compile(r"[A-Za-z]|[0-9.]+|\\[A-Za-z]+|[A-Za-z]_\{[A-Za-z0-9]+\}")
_GREEK = set(
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi rho sigma tau "
    "upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Sigma Upsilon Phi Psi Omega".split()
)


# Marks of what a text contains, which the LaTeX printer tests.
_FRACTION, _MATHRM = 1, 2
# A joined text keeps this many of its first characters; the printers test at most 5.
_HEAD = 16
# Parts that are all strings and add up to at most this many characters are joined at once.
_SHORT = 64


# Whole numbers below this are written out in digits, as JavaScript writes them; larger ones
# in scientific notation (1e+21).
WHOLE_UP_TO = 1e21


class _Rope:
    """Text made of parts (strings and other ropes), joined only when written, less its first
    `skip` characters. It keeps its length, its first characters and what it contains."""

    __slots__ = ("head", "marks", "parts", "size", "skip")

    def __init__(self, parts: tuple[Text, ...], skip: int = 0):
        self.parts = parts
        self.skip = skip
        self.size = sum(map(_size, parts)) - skip
        self.marks = 0
        head, known = "", True
        for part in parts:
            self.marks |= _marks(part)
            if known and len(head) < _HEAD + skip:
                first = _head(part)
                head += first
                known = len(first) == _size(part)  # past a part's head, its text is not known
        # shorter by what it skips: a rope that skips is never first in another (it follows
        # -\frac{), so the heads the printers read are whole
        self.head = head[skip : skip + _HEAD]


Text = str | _Rope


def _size(text: Text) -> int:
    return len(text) if isinstance(text, str) else text.size


def _head(text: Text) -> str:
    return text[:_HEAD] if isinstance(text, str) else text.head


def _marks(text: Text) -> int:
    if isinstance(text, str):
        return (_FRACTION if r"\frac" in text else 0) | (_MATHRM if r"\mathrm" in text else 0)
    return text.marks


def _cat(*parts: Text) -> Text:
    """The parts one after another: a string when they are short strings, else a rope."""
    size = 0
    for part in parts:
        if type(part) is not str:
            return _Rope(parts)
        size += len(part)
    return "".join(cast("tuple[str, ...]", parts)) if size <= _SHORT else _Rope(parts)


def _listed(texts: list[Text], separator: str) -> tuple[Text, ...]:
    """The texts with `separator` between them, as parts."""
    parts: list[Text] = []
    for k, text in enumerate(texts):
        if k:
            parts.append(separator)
        parts.append(text)
    return tuple(parts)


def _join(text: Text) -> str:
    """A text as one string (iteratively: a rope can be nested as deep as the expression)."""
    if isinstance(text, str):
        return text
    out: list[str] = []
    skip = 0  # characters still to leave out, from the start of the ropes being entered
    stack: list[Text] = [text]
    while stack:
        part = stack.pop()
        if isinstance(part, str):
            if skip:
                cut = min(skip, len(part))
                part, skip = part[cut:], skip - cut
            out.append(part)
        else:
            skip += part.skip
            stack.extend(reversed(part.parts))
    return "".join(out)


def _bindings(roots: list[Expr]) -> tuple[list[Expr], set[int]]:
    """The nodes in order, and those to bind: used twice or more, BIND_SIZE operations or more
    (counting a bound part as none)."""
    order = reachable(roots)
    uses: dict[int, int] = {}
    for e in order:
        for a in e.args:
            uses[id(a)] = uses.get(id(a), 0) + 1
    size: dict[int, int] = {}
    bound: set[int] = set()
    for e in order:
        if e.kind != CALL:
            size[id(e)] = 0
            continue
        size[id(e)] = 1 + sum(0 if id(a) in bound else size[id(a)] for a in e.args)
        if uses.get(id(e), 0) > 1 and size[id(e)] >= BIND_SIZE:
            bound.add(id(e))
    return order, bound


class Note(NamedTuple):
    """A condition, `expr > 0` or `expr != 0`: where a textbook derivative is the engine's;
    or, with relation "loses", where it loses digits the engine keeps: `why`, its `{}` the
    text of expr (`loses digits for |{}| > 1e154 (its square overflows)`), where the
    derivative has `part`; `extreme` where it loses them only for inputs past USUAL in size
    (or below 1/USUAL)."""

    expr: Expr
    relation: str  # ">", "!=" or "loses"
    why: str = ""
    part: Expr | None = None  # (loses) the part of the derivative that loses them
    extreme: bool = False

    def holds(self, value: float) -> bool:
        return holds(self.relation, value)


def holds(relation: str, value: float) -> bool:
    """Whether `value` meets a note's relation to 0, ">" or "!="."""
    return value > 0.0 if relation == ">" else value != 0.0


def occurrences(roots: list[Expr]) -> dict[str, int]:
    """How many times each name (an input, or a name of the source) is printed in the roots,
    a bound sub-expression counted once."""
    order, bound = _bindings(roots)
    times: dict[int, int] = {}
    for root in roots:
        times[id(root)] = times.get(id(root), 0) + 1
    for e in reversed(order):
        printed = times.get(id(e), 0)
        if id(e) in bound:
            printed = min(printed, 1)
        for a in e.args:
            times[id(a)] = times.get(id(a), 0) + printed
    return {e.value: times.get(id(e), 0) for e in order if e.kind == INPUT}


def shown(notes: list[Note], which: str) -> list[Note]:
    """The notes `diff --notes` shows: `which` is all; usual (all but where it loses digits
    the engine keeps only for inputs of extreme size); domain (where it holds, not where it
    loses digits) or none."""
    if which == "all":
        return notes
    if which == "usual":
        return [n for n in notes if not n.extreme]
    return [n for n in notes if n.relation != LOSES] if which == "domain" else []


def write(
    roots: dict[str, Expr],
    latex: bool = False,
    definitions: Mapping[str, Expr] | None = None,
    notes: Mapping[str, list[Note]] | None = None,
    is_array: Callable[[Expr], bool] | None = None,
    by: By = ("f", False, {}),
    digits_below: float = WHOLE_UP_TO,
) -> str:
    r"""Statements that compute the roots: each of `definitions` (the names the roots use,
    in order), each bound sub-expression once (t1 = ...) before the first line that uses it,
    then, for one root, its expression; for several, one `NAME = expression` line each; under
    a root, a comment with its notes (`# x > 0`). In LaTeX, several lines are one `aligned`
    environment, and a product of two arrays (as `is_array` says) is `\odot`, element by
    element, not read as a matrix product. `by`: the name of the function the roots are
    derivatives of, whether they are partial ones (LaTeX's ∂f/∂x, else df/dx), and the
    inputs each higher one is by in turn (d2_x_y: x, then y: ∂²f/∂y∂x). Whole
    numbers from `digits_below` are written as floats (1.2e+17), not in digits they may not
    have (a float past 2**53 is a rounding of the whole number it stands for)."""
    definitions = definitions or {}
    notes = notes or {}
    note_parts = [n.expr for name in roots for n in notes.get(name, [])]
    order, bound = _bindings([*definitions.values(), *roots.values(), *note_parts])
    taken = {e.value for e in order if e.kind == INPUT}
    # the bound parts in the order they are printed: those a definition uses before it
    placed: set[int] = set()

    def first_used(parts: list[Expr]) -> list[Expr]:
        found = [e for e in reachable(parts) if id(e) in bound and id(e) not in placed]
        placed.update(map(id, found))
        return found

    before = {name: first_used([d]) for name, d in definitions.items()}
    after = first_used([*roots.values(), *note_parts])
    names: dict[int, str] = {}
    counter = 0
    for e in [*(e for group in before.values() for e in group), *after]:
        counter += 1
        while f"t{counter}" in taken:
            counter += 1
        names[id(e)] = f"t_{{{counter}}}" if latex else f"t{counter}"
    printer: _Text = _Latex(is_array, by) if latex else _Text()
    printer.digits_below = digits_below
    printer.bound = bound
    text: dict[int, tuple[Text, int]] = {}  # node -> (its text, its precedence)
    lines: dict[int, tuple[str, str]] = {}
    for e in order:
        text[id(e)] = printer.node(e, text)
        if id(e) in bound:
            lines[id(e)] = (names[id(e)], _join(text[id(e)][0]))
            text[id(e)] = (names[id(e)], _ATOM)
    rows: list[tuple[str, str]] = []  # (name, expression); a note's name is "#"
    for name, d in definitions.items():
        rows += [lines[id(e)] for e in before[name]]
        rows.append((printer.name(name), _join(text[id(d)][0])))
    rows += [lines[id(e)] for e in after]
    for name, root in roots.items():
        rows.append((printer.label(name), _join(text[id(root)][0])))
        if notes.get(name):
            rows.append(("#", printer.conditions(notes[name], text)))
    if latex:
        return _aligned(rows, len(roots) == 1)
    if len(roots) == 1:  # one root: the last line (but a note) is the expression itself
        k = len(rows) - 1 - (rows[-1][0] == "#")
        rows[k] = ("", rows[k][1])
    return "\n".join(
        f"# {e}" if name == "#" else (f"{name} = {e}" if name else e) for name, e in rows
    )


class Printer:
    """Expressions written a node at a time, each node once, so that many small expressions
    built on the same parts (explain's, one per step) cost their new nodes alone. An
    expression is written as `write` writes it, but that a part used twice is written out
    each time, never bound to a name (t1 = ...)."""

    def __init__(self, latex: bool = False, names: Mapping[str, str] | None = None):
        """`names` maps a name to the one written in its place (q₁ to LaTeX's q_1)."""
        self._printer = _Latex() if latex else _Text()
        self._printer.renamed = {} if names is None else names
        self._text: dict[int, tuple[Text, int]] = {}  # node -> (its text, its precedence)
        self._nodes: list[Expr] = []  # every node written, kept alive so that no id is reused

    def __call__(self, e: Expr) -> str:
        """The text of `e`, writing the nodes of it not written yet."""
        text = self._text
        if id(e) in text:
            return _join(text[id(e)][0])
        for a in e.args:
            if id(a) not in text:
                break
        else:  # as when built up a node at a time
            written = text[id(e)] = self._printer.node(e, text)
            self._nodes.append(e)
            return _join(written[0])
        new, stack = {id(e): e}, [e]
        while stack:
            for a in stack.pop().args:
                if id(a) not in text and id(a) not in new:
                    new[id(a)] = a
                    stack.append(a)
        for node in sorted(new.values(), key=lambda n: n.serial):  # arguments first
            text[id(node)] = self._printer.node(node, text)
            self._nodes.append(node)
        return _join(text[id(e)][0])

    def write_as(self, e: Expr, text: str, level: int = _ATOM) -> None:
        """Write `e` as `text`, of precedence `level` (by default one that needs no
        parentheses anywhere), wherever it is used."""
        self._printer.given(e)
        self._text[id(e)] = (text, level)
        self._nodes.append(e)

    def conditions(self, notes: list[Note], code: bool = False) -> str:
        """Where a derivative holds, as `write` puts it under one: `x > 0 and y != 0`; with
        `code`, its formulas as Markdown's code."""
        for n in notes:
            self(n.expr)
        return self._printer.conditions(notes, self._text, code)

    def shape(self, e: Expr) -> tuple[int, bool] | None:
        """What the text of a written node shows the nodes written on it: its precedence and
        whether it begins with a minus; None where they look further (at a product that
        begins with a %)."""
        text, level = self._text[id(e)]
        if level == _PRODUCT and _leftmost_modulo(e):
            return None
        return level, _head(text).startswith("-")


class Template:
    """A formula's text with a hole per argument, written once for arguments of given shapes
    (`Printer.shape`) and then filled per use with their texts: the text the printer writes
    for the formula on those arguments, as it reads no more of them than their shapes."""

    def __init__(self, tree: Expr, holes: list[Expr], shapes: tuple[tuple[int, bool] | str, ...]):
        """`holes` stand for the arguments, those of a shape (level, minus) as holes; the
        others (numbers, their shapes their values) are written as they are."""
        printer = Printer()
        for k, (hole, shape) in enumerate(zip(holes, shapes, strict=True)):
            if isinstance(shape, tuple):
                # an argument written beginning with - is held as - and the rest of its text,
                # so that a + -b (and --b) drop its minus as they would
                printer.write_as(hole, f"{'-' if shape[1] else ''}\x00{k}\x01", shape[0])
        pieces = _HOLE.split(printer(tree))
        self._literals = pieces[::2]
        self._holes = [(int(k), shapes[int(k)][1]) for k in pieces[1::2]]

    def fill(self, texts: list[str]) -> str:
        """The formula on arguments of the template's shapes, written `texts`."""
        out = [self._literals[0]]
        for (k, minus), literal in zip(self._holes, self._literals[1:], strict=True):
            out.append(texts[k][1:] if minus else texts[k])
            out.append(literal)
        return "".join(out)


_HOLE = re.compile("\x00([0-9]+)\x01")


def _aligned(rows: list[tuple[str, str]], one: bool) -> str:
    """LaTeX rows: one expression alone as it is, several lines as one `aligned`
    environment (amsmath), a note as a row of its own; a row wider than an article page's
    text is broken over lines before a `+`, `-` or `=` outside brackets, as explain's are."""
    if one and len(rows) == 1:
        if width(rows[0][1]) <= LINE:
            return rows[0][1]
        rows = [("", rows[0][1])]
    shown = []
    for name, e in rows:
        if name == "#":
            said = e if e.startswith(r"\text{loses") else rf"\text{{for }} {e}"
            shown += [rf"&\qquad {line}" for line in _note_lines(said)]
            continue
        right = f"= {e}" if name else e  # one expression alone, too wide: no name, no =
        if width(name) + width(right) <= LINE:
            shown.append(f"{name} &{right}")
            continue
        lines = [" ".join(line) for line in broken(pieces(right), width(name))]
        first = f"{name} &{lines[0]}" if name else f"&{lines[0]}"
        shown += [first, *map(continued, lines[1:])]
    return "\n".join([r"\begin{aligned}", " \\\\\n".join(shown), r"\end{aligned}"])


# A note's words are narrower than math: this many of `width`'s letters fit an article page
# (pdflatex: 66.8 fitted, 66.9 was 9 pt too wide, as width counts a square as a letter; 60 keeps
# a margin).
NOTE_LINE = 60
_NOTE_BREAKS = (r";\ ", r" \text{ and } ")


def _note_lines(said: str) -> list[str]:
    """A LaTeX note as lines that fit a page, broken after a `;` or before an `and` between
    its parts, and a part wider than a line between the words of its last `\\text`."""
    parts = [said]
    for mark in _NOTE_BREAKS:
        parts = [p for part in parts for p in _split_keeping(part, mark)]
    parts = [p for part in parts for p in _between_words(part)]
    lines: list[str] = []
    for part in parts:
        if lines and width(lines[-1] + part) <= NOTE_LINE:
            lines[-1] += part
        else:
            lines.append(part)
    return [line.strip().removesuffix("\\") for line in lines]  # (a line ends `;`, not `;\ `)


def _between_words(part: str) -> list[str]:
    """A part of a note as lines that fit, broken between the words of its last `\\text`,
    before an `and` where one fits (`\\text{ = 1 (its square - 1 cancels)}`, `\\text{and past
    1e154 (it overflows)}`)."""
    lines = []
    while width(part) > NOTE_LINE:
        start = part.rfind(r"\text{")
        end = part.find("}", start)
        if start < 0 or end < 0:
            break
        words = part[start + len(r"\text{") : end].split(" ")
        k = len(words) - 1
        while k > 1 and width(part[:start] + r"\text{" + " ".join(words[:k]) + "}") > NOTE_LINE:
            k -= 1
        if k <= 1:
            break
        k = next((j for j in range(k, 1, -1) if words[j] == "and"), k)  # before an `and`
        lines.append(part[:start] + r"\text{" + " ".join(words[:k]) + "}")
        part = r"\text{" + " ".join(words[k:]) + part[end:]
    return [*lines, part]


def _split_keeping(text: str, mark: str) -> list[str]:
    """text split at `mark`: `;` ends the part before it, `and` begins the part after it."""
    pieces = text.split(mark)
    if mark.startswith(";"):
        return [p + mark for p in pieces[:-1]] + pieces[-1:]
    return pieces[:1] + [mark + p for p in pieces[1:]]


def javascript(
    roots: list[Expr], functions: Mapping[Op, str], named: Mapping[Expr, str] | None = None
) -> list[str]:
    """Each root as one JavaScript expression, nothing bound: +, -, *, / and negation as
    JavaScript's operators (which give IEEE results, as the ops do), every other op as a call
    of its function in `functions` (a KeyError names an op that has none), and the nodes in
    `named` by their names."""
    named = named or {}
    printer = _JavaScript(functions)
    text: dict[int, tuple[Text, int]] = {}
    for e in reachable(roots):
        text[id(e)] = (named[e], _ATOM) if e in named else printer.node(e, text)
    return [_join(text[id(root)][0]) for root in roots]


class _Text:
    """The language, as SymPy prints: `6*x + 2`, `1/(2*sqrt(x))`."""

    # a + -b written a - b (and a - -b, a + b): the same numbers, exactly
    flips = True
    # whole numbers below this are written in digits (`write`'s `digits_below`)
    digits_below = WHOLE_UP_TO
    # a name -> the one to write in its place
    renamed: Mapping[str, str] = {}
    # nodes written by a name they are bound to (set per use; _Latex reads it)
    bound: set[int]

    def wrap(self, operand: tuple[Text, int], needed: int) -> Text:
        text, level = operand
        return text if level >= needed else self.parenthesised(text)

    def parenthesised(self, text: Text) -> Text:
        return _cat("(", text, ")")

    def name(self, name: str) -> str:
        return name

    def label(self, name: str) -> str:
        """The name of a line of several: a derivative's (`d_x`, `d2_x`, `dy/dx`) as it is."""
        return name

    def number(self, x: float) -> str:
        if x == math.pi:
            return "pi"
        if x == math.e:
            return "e"
        text = repr(x)
        if x.is_integer() and abs(x) >= self.digits_below:  # a float's: 7.9792266297612e+16
            if "e" in text:
                return text
            sign, digits = "-" * (x < 0), text.removesuffix(".0").lstrip("-")  # (below 1e16)
            shown = f"{digits[0]}.{digits[1:]}".rstrip("0").rstrip(".")
            return f"{sign}{shown}e+{len(digits) - 1}"
        if text.endswith(".0"):
            return text[:-2]
        if x.is_integer() and abs(x) < WHOLE_UP_TO:
            return str(int(x))  # 121645100408832000 (19!), exactly, not 1.21645100408832e+17
        return text

    def node(self, e: Expr, text: dict[int, tuple[Text, int]]) -> tuple[Text, int]:
        if e.kind == NUMBER:
            return self.number(e.value), (_UNARY if math.copysign(1.0, e.value) < 0 else _ATOM)
        if e.kind == INPUT:
            return self.name(self.renamed.get(e.value, e.value)), _ATOM
        op = e.op
        args = [text[id(a)] for a in e.args]
        if op is NEG:
            # -(2*x) is (-2)*x exactly, so the product needs no parentheses; but -(x % 2) is
            # not (-x) % 2
            (operand,) = args
            written, level = operand
            if e.value is AS_WRITTEN and _head(written).startswith("-"):
                return _cat("-", self.parenthesised(written)), _UNARY
            if self.flips and level >= _UNARY and _head(written).startswith("-"):
                # -(-x/y**2) is x/y**2, exactly: no --
                return (
                    written[1:] if isinstance(written, str) else _Rope((written,), skip=1)
                ), level
            if _head(written).startswith("-"):  # -(-x/y/y), never -- (read as an option)
                return _cat("-", self.parenthesised(written)), _UNARY
            if operand[1] == _PRODUCT and not _leftmost_modulo(e.args[0]):
                return _cat("-", operand[0]), _PRODUCT
            return _cat("-", self.wrap(operand, _UNARY)), _UNARY
        if op.syntax == "call":
            return self.call(op, [t for t, _ in args]), _ATOM
        if op is TRANSPOSE:
            return self.transpose(self.wrap(args[0], _ATOM)), _ATOM
        if op is LITERAL:
            return self.literal(e, text), _ATOM
        if op is INDEX:
            return self.index(self.wrap(args[0], _ATOM), [t for t, _ in args[1:]]), _ATOM
        a, b = args
        if op is MATMUL:
            return self.matmul(a, b), _PRODUCT
        if op is MUL and e.args[0].kind == NUMBER and e.args[1].op is MATMUL:
            return _cat(self.wrap(a, _PRODUCT), self.times, b[0]), _PRODUCT  # 2*A@x is 2*(A@x)
        if op is POW:
            return self.power(self.wrap(a, _ATOM), b), _POWER
        if op is DIV:
            return self.divide(a, b), _PRODUCT
        if op is MUL:
            return self.multiply(a, b), _PRODUCT
        if op is ADD or op is SUB:
            right, sign = self.wrap(b, _PRODUCT), op.name
            if e.value is AS_WRITTEN and _head(right).startswith("-"):
                right = self.parenthesised(right)
            elif self.flips and _head(right).startswith("-"):  # a + -b is a - b, exactly
                sign = "-" if op is ADD else "+"
                right = right[1:] if isinstance(right, str) else _Rope((right,), skip=1)
            return _cat(self.wrap(a, _SUM), f" {sign} ", right), _SUM
        if op is MOD:
            return self.modulo(a, b), _PRODUCT
        # a comparison: they do not chain, so an operand that is one is parenthesised
        return self.compare(op, self.wrap(a, _SUM), self.wrap(b, _SUM)), _COMPARISON

    def modulo(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        return _cat(self.wrap(a, _PRODUCT), " % ", self.wrap(b, _POWER))

    times = "*"

    def matmul(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        return _cat(self.wrap(a, _PRODUCT), "@", self.wrap(b, _POWER))

    def transpose(self, a: Text) -> Text:
        return _cat(a, ".T")

    def index(self, a: Text, subscripts: list[Text]) -> Text:
        return _cat(a, "[", *_listed(subscripts, ", "), "]")

    def literal(self, e: Expr, text: dict[int, tuple[Text, int]]) -> Text:
        return _cat("[", *_listed([text[id(a)][0] for a in e.args], ", "), "]")

    def compare(self, op: Op, a: Text, b: Text) -> Text:
        return _cat(a, f" {op.name} ", b)

    def call(self, op, args: list[Text]) -> Text:
        return _cat(f"{op.name}(", *_listed(args, ", "), ")")

    relations: ClassVar[dict[str, str]] = {">": ">", "!=": "!="}
    joined = " and "

    def given(self, e: Expr) -> None:
        """`e` is written as a text given for it (`Printer.write_as`)."""

    def conditions(self, notes: list, text: dict[int, tuple[Text, int]], code: bool = False) -> str:
        """`x > 0 and y != 0`, then where it loses digits: `; loses digits for |x| > 1e154
        (its square overflows); diff --exact keeps them`; with `code`, the formulas and the
        option as Markdown's code, the words not."""
        said = [
            self.code(f"{_join(text[id(n.expr)][0])} {self.relations[n.relation]} 0", code)
            for n in notes
            if n.relation != LOSES
        ]
        lost = [n for n in notes if n.relation == LOSES]
        if not lost:
            return self.joined.join(said)
        # loses digits near |x| = 1 (...) and for |y| > 1e154 (...)
        losses = self.joined.join(
            self.loss(
                n.why if k == 0 else n.why.removeprefix(_LOSES), _join(text[id(n.expr)][0]), code
            )
            for k, n in enumerate(lost)
        )
        kept = f"{self.code('diff --exact', code)} keeps them" if code else self.words(_KEPT)
        return self.separated.join([*([self.joined.join(said)] if said else []), losses, kept])

    separated = "; "

    def loss(self, why: str, expr: str, code: bool = False) -> str:
        """A note of lost digits, its `{}` the expression's text (`|{}|` its absolute value)."""
        return why.replace("|{}|", self.code(f"|{expr}|", code)).replace(
            "{}", self.code(expr, code)
        )

    @staticmethod
    def code(text: str, code: bool) -> str:
        return f"`{text}`" if code else text

    def words(self, text: str) -> str:
        return text

    def power(self, base: Text, exponent: tuple[Text, int]) -> Text:
        return _cat(base, "**", self.wrap(exponent, _POWER))  # e**(-x**2), not e**-x**2

    def divide(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        return _cat(self.wrap(a, _PRODUCT), "/", self.wrap(b, _POWER))

    def multiply(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        return _cat(self.wrap(a, _PRODUCT), "*", self.wrap(b, _POWER))


def _is_literal(e: Expr) -> bool:
    return e.kind == CALL and e.op is LITERAL


def _leftmost_modulo(e: Expr) -> bool:
    """Whether a product or quotient is written beginning with a %: x % y*z."""
    while e.kind == CALL and (e.op is MUL or e.op is DIV):
        e = e.args[0]
    return e.kind == CALL and e.op is MOD


# The characters LaTeX's \text{...} does not print as they are (`>` is ¿ in its default
# encoding), and how it prints them.
_TEXT_SPECIAL = {
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "_": r"\_",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def latex_text(words: str) -> str:
    """Words for LaTeX's \\text{...}: its special characters escaped, and `--` kept two
    hyphens (not a dash)."""
    return "".join(_TEXT_SPECIAL.get(c, c) for c in words).replace("--", "-{}-")


class _Latex(_Text):
    r"""LaTeX as on a slide: `6 x + 2`, `\frac{1}{2 \sqrt{x}}`, `\operatorname{sigmoid}(x)`."""

    relations: ClassVar[dict[str, str]] = {">": ">", "!=": r"\neq"}
    joined = r" \text{ and } "
    separated = r";\ "

    def loss(self, why: str, expr: str, code: bool = False) -> str:
        parts = why.split("{}")
        shown = []
        for k, part in enumerate(parts):
            if k:
                shown.append(expr)
            before, bar_after = (
                k > 0 and part.startswith("|"),
                part.endswith("|") and k < len(parts) - 1,
            )
            words = part[1 if before else 0 : len(part) - 1 if bar_after else len(part)]
            shown += [r"\rvert" if before else "", self.words(words) if words else ""]
            shown.append(r"\lvert" if bar_after else "")
        return " ".join(s for s in shown if s)

    def words(self, text: str) -> str:
        return rf"\text{{{latex_text(text)}}}"

    def __init__(
        self, is_array: Callable[[Expr], bool] | None = None, by: By = ("f", False, {})
    ) -> None:
        # per node: the sign of the number a product is written beginning with, else 0
        self._leading: dict[int, float] = {}
        self.bound: set[int] = set()  # nodes written by a name they are bound to
        self.is_array = is_array or (lambda e: False)
        # a derivative's name: ∂f/∂x, or df/dx; ∂²f/∂y∂x for d2_x_y, by x then y
        self.function, self.partial, self.sequences = by

    def parenthesised(self, text: Text) -> Text:
        return _cat(r"\left(", text, r"\right)")

    def given(self, e: Expr) -> None:
        self._leading[id(e)] = 0.0

    def name(self, name: str) -> str:
        element = re.fullmatch(r"(\w+)\[([0-9,]+)\]", name)
        if element:  # W[1,2] is W_{1,2}; d_W[1,2] is d_{W_{1,2}}
            base = self.name(element[1])
            if base.endswith("}") and "_{" in base:
                return f"{base[:-1]}_{{{element[2]}}}}}"
            return f"{base}_{{{element[2]}}}"
        if name in _GREEK or name == "pi":  # pi: the constant, by name in a textbook form
            return "\\" + name
        if len(name) == 1:
            return name if name != "_" else r"\mathrm{\_}"
        head, _, subscript = name.partition("_")
        digits = re.fullmatch(r"([A-Za-z]+?)([0-9]+)", name)
        if digits and not subscript:  # x1, beta2
            head, subscript = digits[1], digits[2]
        if subscript and (len(head) == 1 or head in _GREEK):  # x_1, d_x, beta_2, d_x_1
            inner = self.name(subscript) if subscript in _GREEK or "_" in subscript else subscript
            return f"{self.name(head)}_{{{inner}}}"
        return r"\mathrm{" + name.replace("_", r"\_") + "}"

    def label(self, name: str) -> str:
        """A derivative's name as a course writes it: d_x is df/dx, d2_x d²f/dx², and by one
        of several inputs ∂f/∂x, ∂²f/∂x², ∂f/∂W_{1,2} (d_W[1,2]); diff --implicit's dy/dx
        and d2y/dx are dy/dx and d²y/dx²."""
        sequence = self.sequences.get(name)
        if sequence is not None and len(set(sequence)) > 1:  # d2_x_y: ∂²f/∂y∂x
            runs = [(n, len(list(same))) for n, same in itertools.groupby(reversed(sequence))]
            under = " ".join(
                rf"\partial {self.name(n)}" + (f"^{{{k}}}" if k > 1 else "") for n, k in runs
            )
            f = self.name(self.function)
            return rf"\frac{{\partial^{{{len(sequence)}}} {f}}}{{{under}}}"
        by_name = re.fullmatch(r"d([0-9]*)_(.+?)_*", name)  # (d_x_ where d_x is taken)
        if by_name:
            n, by = by_name[1], self.name(by_name[2])
            power = f"^{{{n}}}" if n else ""
            f = self.name(self.function)
            if self.partial:
                return rf"\frac{{\partial{power} {f}}}{{\partial {by}{power}}}"
            return rf"\frac{{d{power}{f}}}{{d{by}{power}}}"
        implicit = re.fullmatch(r"d([0-9]*)([A-Za-z]\w*)/d([A-Za-z]\w*)", name)
        if implicit:
            n, y, x = implicit[1], self.name(implicit[2]), self.name(implicit[3])
            power = f"^{{{n}}}" if n else ""
            return rf"\frac{{d{power}{y}}}{{d{x}{power}}}"
        return self.name(name)

    times = " "

    def matmul(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        return self.multiply(a, b)

    def transpose(self, a: Text) -> Text:
        return _cat(a, r"^{\top}")

    def index(self, a: Text, subscripts: list[Text]) -> Text:
        return _cat(a, "_{", *_listed(subscripts, ","), "}")

    def literal(self, e: Expr, text: dict[int, tuple[Text, int]]) -> Text:
        """A vector as a column, a matrix as its rows; more axes as nested brackets."""
        if not _is_literal(e.args[0]):
            column = [text[id(a)][0] for a in e.args]
            return _cat(r"\begin{bmatrix}", *_listed(column, r" \\ "), r"\end{bmatrix}")
        if any(_is_literal(a) for r in e.args for a in r.args):
            return super().literal(e, text)
        rows = [_cat(*_listed([text[id(a)][0] for a in r.args], " & ")) for r in e.args]
        return _cat(r"\begin{bmatrix}", *_listed(rows, r" \\ "), r"\end{bmatrix}")

    def number(self, x: float) -> str:
        if x == math.pi:
            return r"\pi"
        text = super().number(x)
        mantissa, e, exponent = text.partition("e")
        if e and text != "e":
            return rf"{mantissa} \cdot 10^{{{int(exponent)}}}"
        return text

    def node(self, e: Expr, text: dict[int, tuple[Text, int]]) -> tuple[Text, int]:
        product = e.kind == CALL and e.op is MUL
        number = math.copysign(1.0, e.value) if e.kind == NUMBER else 0.0
        self._leading[id(e)] = self._leading[id(e.args[0])] if product else number
        if e.kind == CALL and e.op is DIV:
            top, bottom = e.args
            outside = ""
            if self._shown_as(top, NEG):  # -a/b is -\frac{a}{b}, -(a/b)/c -\frac{a}{b c}
                outside, top = "-", top.args[0]
            if self._shown_as(top, DIV):  # (a/b)/c is \frac{a}{b c}
                top, bottom = top.args[0], (top.args[1], bottom)
            elif self._shown_as(top, MUL) and self._shown_as(top.args[0], DIV):
                (a, b), c = top.args[0].args, top.args[1]  # (a/b*c)/d is \frac{a c}{b d}
                top, bottom = (a, c), (b, bottom)
            elif self._shown_as(bottom, DIV):  # a/(b/c) is \frac{a c}{b}
                top, bottom = (top, bottom.args[1]), bottom.args[0]
            a, b = (self._times(x, text) for x in (top, bottom))
            leading = self._leading[id(top[0] if isinstance(top, tuple) else top)]
            if not leading and _head(a).startswith("-"):  # a negated argument: -x
                leading = -1.0
            if leading < 0:  # -\frac{2}{x}, not \frac{-2}{x}
                outside = "" if outside else "-"
                a = _Rope((a,), skip=1)
            if outside:
                return _cat(outside, r"\frac{", a, "}{", b, "}"), _UNARY
            return _cat(r"\frac{", a, "}{", b, "}"), _ATOM
        if e.kind == CALL and e.op is POW:
            base, (exponent, _) = (text[id(x)] for x in e.args)
            # a fraction or a power as a base is parenthesised: (1/x)^2, not \frac{1}{x}^2
            tall = base[1] < _ATOM or _head(base[0]).startswith((r"\frac", "e^"))
            shown = self.parenthesised(base[0]) if tall else base[0]
            # (a text joined from parts always has an operator or a bracket: never simple)
            if not (isinstance(shown, str) and _SIMPLE.fullmatch(shown)):
                shown = _cat("{", shown, "}")
            return _cat(shown, "^{", exponent, "}"), _POWER
        if e.kind == CALL and e.op.name == "exp" and e.op.arity == 1:
            return _cat("e^{", text[id(e.args[0])][0], "}"), _POWER
        if product and self.is_array(e.args[0]) and self.is_array(e.args[1]):
            return self._times(tuple(e.args), text), _PRODUCT
        if e.kind == CALL and e.op in COMPARISONS:  # a 0 or 1: an Iverson bracket, [x > 0]
            a, b = (text[id(x)][0] for x in e.args)
            return _cat("[", a, f" {_RELATIONS[e.op.name]} ", b, "]"), _ATOM
        return super().node(e, text)

    def _shown_as(self, e: Expr, op: Op) -> bool:
        """Whether e is written as op here (not by a name it is bound to)."""
        return e.kind == CALL and e.op is op and id(e) not in self.bound

    def _times(self, part, text: dict[int, tuple[Text, int]]) -> Text:
        """The text of a node, or of the product of two (in a fraction, so unwrapped)."""
        if not isinstance(part, tuple):
            return text[id(part)][0]
        left, right = part
        if self.is_array(left) and self.is_array(right):  # x \odot y, element by element
            a, b = text[id(left)], text[id(right)]
            return _cat(self.wrap(a, _PRODUCT), r" \odot ", self.wrap(b, _POWER))
        return self.multiply(text[id(left)], text[id(right)])

    def call(self, op, args: list[Text]) -> Text:
        if op.name == "sqrt":
            return _cat(r"\sqrt{", args[0], "}")
        if op.name == "cbrt":
            return _cat(r"\sqrt[3]{", args[0], "}")
        if op.name == "abs":
            return _cat(r"\left|", args[0], r"\right|")
        if op.name == "polygamma":  # the n-th derivative of digamma, psi
            return _cat(r"\psi^{(", args[0], ")}", self.arguments(args[1:]))
        if op.name == "lgamma":
            return _cat(r"\log\left|\Gamma", self.arguments(args), r"\right|")
        if op.name == "log" and op.arity == 2:
            return _cat(r"\log_{", args[1], "}", self.arguments(args[:1]))
        name = _LATEX_NAMES.get(op.name, rf"\operatorname{{{op.name}}}")
        return _cat(name, self.arguments(args))

    def modulo(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        return _cat(self.wrap(a, _PRODUCT), r" \bmod ", self.wrap(b, _POWER))

    def arguments(self, args: list[Text]) -> Text:
        inner = _cat(*_listed(args, ", "))
        return self.parenthesised(inner) if _marks(inner) & _FRACTION else _cat("(", inner, ")")

    def multiply(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        left, right = self.wrap(a, _PRODUCT), self.wrap(b, _POWER)
        # juxtaposed where that cannot be misread: 6 x, 2 \sin(x); not 2 3 or x \frac{}{}
        first = _head(right)
        ambiguous = first[:1].isdigit() or first.startswith(("-", ".", r"\frac"))
        ambiguous = ambiguous or bool((_marks(left) | _marks(right)) & _MATHRM)
        return _cat(left, r" \cdot ", right) if ambiguous else _cat(left, " ", right)


class _JavaScript(_Text):
    """JavaScript, for the live page: `1/(2*out)`, `power(x, 2)`, `-(-x)` (never `--`)."""

    _OPERATORS = frozenset((ADD, SUB, MUL, DIV, NEG))
    flips = False  # the formula as it is written

    def __init__(self, functions: Mapping[Op, str]):
        self.functions = functions

    def number(self, x: float) -> str:
        if x != x:
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        if x == math.pi:
            return "Math.PI"
        if x == math.e:
            return "Math.E"
        return super().number(x)

    def node(self, e: Expr, text: dict[int, tuple[Text, int]]) -> tuple[Text, int]:
        if e.kind == CALL and e.op not in self._OPERATORS:
            return self.call(e.op, [text[id(a)][0] for a in e.args]), _ATOM
        return super().node(e, text)

    def call(self, op, args: list[Text]) -> Text:
        return _cat(f"{self.functions[op]}(", *_listed(args, ", "), ")")
