"""Expressions as text: in the language (which parses back), in LaTeX, or in JavaScript.

Takes expressions already laid out with the ops of the language (`algebra.layout`, or
`algebra.Written` for a formula as the ops table writes it). In the language and in LaTeX, a
sub-expression that repeats and is large is bound once to a name (t1, t2, ...) before the
lines that use it. A node's text holds its operands' texts by reference (`_Rope`) and is
joined once, when written: expressions nested D deep take memory and time linear in D, where
a string per node would copy its operands' at every level (D**2). Nothing here recurses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from .algebra import CALL, INPUT, NUMBER, Expr, reachable
from .ops import ADD, DIV, MOD, MUL, NEG, POW, SUB, Op

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
    if all(isinstance(p, str) for p in parts) and sum(map(len, parts)) <= _SHORT:
        return "".join(parts)
    return _Rope(parts)


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


def write(roots: dict[str, Expr], latex: bool = False) -> str:
    """Statements that compute the roots: each bound sub-expression once (t1 = ...), then,
    for one root, its expression; for several, one `NAME = expression` line each."""
    order, bound = _bindings(list(roots.values()))
    taken = {e.value for e in order if e.kind == INPUT}
    printer = _Latex() if latex else _Text()
    text: dict[int, tuple[Text, int]] = {}  # node -> (its text, its precedence)
    lines: list[str] = []
    counter = 0
    for e in order:
        text[id(e)] = printer.node(e, text)
        if id(e) in bound:
            counter += 1
            while f"t{counter}" in taken:
                counter += 1
            name = f"t_{{{counter}}}" if latex else f"t{counter}"
            lines.append(f"{name} = {_join(text[id(e)][0])}")
            text[id(e)] = (name, _ATOM)
    if len(roots) == 1:  # one root: the last line is the expression itself
        (root,) = roots.values()
        return "\n".join([*lines, _join(text[id(root)][0])])
    lines += [f"{printer.name(name)} = {_join(text[id(root)][0])}" for name, root in roots.items()]
    return "\n".join(lines)


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

    def wrap(self, operand: tuple[Text, int], needed: int) -> Text:
        text, level = operand
        return text if level >= needed else self.parenthesised(text)

    def parenthesised(self, text: Text) -> Text:
        return _cat("(", text, ")")

    def name(self, name: str) -> str:
        return name

    def number(self, x: float) -> str:
        if x == math.pi:
            return "pi"
        if x == math.e:
            return "e"
        text = repr(x)
        return text[:-2] if text.endswith(".0") else text

    def node(self, e: Expr, text: dict[int, tuple[Text, int]]) -> tuple[Text, int]:
        if e.kind == NUMBER:
            return self.number(e.value), (_UNARY if math.copysign(1.0, e.value) < 0 else _ATOM)
        if e.kind == INPUT:
            return self.name(e.value), _ATOM
        op = e.op
        args = [text[id(a)] for a in e.args]
        if op is NEG:
            # -(2*x) is (-2)*x exactly, so the product needs no parentheses; but -(x % 2) is
            # not (-x) % 2
            (operand,) = args
            if operand[1] == _PRODUCT and not _leftmost_modulo(e.args[0]):
                return _cat("-", operand[0]), _PRODUCT
            return _cat("-", self.wrap(operand, _UNARY)), _UNARY
        if op.syntax == "call":
            return self.call(op, [t for t, _ in args]), _ATOM
        a, b = args
        if op is POW:
            return self.power(self.wrap(a, _ATOM), b), _POWER
        if op is DIV:
            return self.divide(a, b), _PRODUCT
        if op is MUL:
            return self.multiply(a, b), _PRODUCT
        if op is ADD or op is SUB:
            return _cat(self.wrap(a, _SUM), f" {op.name} ", self.wrap(b, _PRODUCT)), _SUM
        if op is MOD:
            return self.modulo(a, b), _PRODUCT
        # a comparison: they do not chain, so an operand that is one is parenthesised
        return self.compare(op, self.wrap(a, _SUM), self.wrap(b, _SUM)), _COMPARISON

    def modulo(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        return _cat(self.wrap(a, _PRODUCT), " % ", self.wrap(b, _POWER))

    def compare(self, op: Op, a: Text, b: Text) -> Text:
        return _cat(a, f" {op.name} ", b)

    def call(self, op, args: list[Text]) -> Text:
        return _cat(f"{op.name}(", *_listed(args, ", "), ")")

    def power(self, base: Text, exponent: tuple[Text, int]) -> Text:
        return _cat(base, "**", self.wrap(exponent, _UNARY))

    def divide(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        return _cat(self.wrap(a, _PRODUCT), "/", self.wrap(b, _POWER))

    def multiply(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        return _cat(self.wrap(a, _PRODUCT), "*", self.wrap(b, _POWER))


def _leftmost_modulo(e: Expr) -> bool:
    """Whether a product or quotient is written beginning with a %: x % y*z."""
    while e.kind == CALL and (e.op is MUL or e.op is DIV):
        e = e.args[0]
    return e.kind == CALL and e.op is MOD


class _Latex(_Text):
    r"""LaTeX as on a slide: `6 x + 2`, `\frac{1}{2 \sqrt{x}}`, `\operatorname{sigmoid}(x)`."""

    def __init__(self):
        # per node: the sign of the number a product is written beginning with, else 0
        self._leading: dict[int, float] = {}

    def parenthesised(self, text: Text) -> Text:
        return _cat(r"\left(", text, r"\right)")

    def name(self, name: str) -> str:
        if name in _GREEK:
            return "\\" + name
        match = re.fullmatch(r"([A-Za-z])(?:_([A-Za-z0-9]+)|([0-9]+))", name)
        if match:  # x1, x_1, d_x, d_alpha: subscripts
            subscript = match[2] or match[3]
            return f"{match[1]}_{{{self.name(subscript) if subscript in _GREEK else subscript}}}"
        if len(name) == 1:
            return name
        return r"\mathrm{" + name.replace("_", r"\_") + "}"

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
            a, b = (text[id(x)][0] for x in e.args)
            if self._leading[id(e.args[0])] < 0:  # -\frac{2}{x}, not \frac{-2}{x}
                return _cat(r"-\frac{", _Rope((a,), skip=1), "}{", b, "}"), _UNARY
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
        return super().node(e, text)

    def call(self, op, args: list[Text]) -> Text:
        if op.name == "sqrt":
            return _cat(r"\sqrt{", args[0], "}")
        if op.name == "abs":
            return _cat(r"\left|", args[0], r"\right|")
        if op.name == "log" and op.arity == 2:
            return _cat(r"\log_{", args[1], "}", self.arguments(args[:1]))
        name = _LATEX_NAMES.get(op.name, rf"\operatorname{{{op.name}}}")
        return _cat(name, self.arguments(args))

    def modulo(self, a: tuple[Text, int], b: tuple[Text, int]) -> Text:
        return _cat(self.wrap(a, _PRODUCT), r" \bmod ", self.wrap(b, _POWER))

    def compare(self, op: Op, a: Text, b: Text) -> Text:
        return _cat(a, f" {_RELATIONS[op.name]} ", b)

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
        if e.kind == CALL and e.op is NEG and _head(text[id(e.args[0])][0]).startswith("-"):
            return _cat("-", self.parenthesised(text[id(e.args[0])][0])), _UNARY
        return super().node(e, text)

    def call(self, op, args: list[Text]) -> Text:
        return _cat(f"{self.functions[op]}(", *_listed(args, ", "), ")")
