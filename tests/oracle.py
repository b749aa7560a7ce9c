"""SymPy as an independent reference: a program as a SymPy expression, with nanograd's functions
and their conventions (step(0) = 0, relu = max(x, 0)), and a printed derivative held to grad
and to SymPy. Used by the tests and by benchmarks/diff_size.py."""

from __future__ import annotations

import ast
import math

import pytest
import sympy

from nanograd_cli import parse
from nanograd_cli._algebra import fraction


class sigmoid(sympy.Function):
    @classmethod
    def eval(cls, a):
        if a.is_Number:  # a number, as nanograd folds it (else SymPy's diff crawls)
            return (1 / (1 + sympy.exp(-a))).evalf()
        return None

    def fdiff(self, argindex=1):
        return sigmoid(self.args[0]) * (1 - sigmoid(self.args[0]))


class softplus(sympy.Function):
    @classmethod
    def eval(cls, a):
        if a.is_Number:
            return sympy.log(1 + sympy.exp(a)).evalf()
        return None

    def fdiff(self, argindex=1):
        return sigmoid(self.args[0])


FUNCTIONS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "**": lambda a, b: a**b,
    "pow": lambda a, b: a**b,
    "neg": lambda a: -a,
    "sigmoid": sigmoid,
    "softplus": softplus,
    "abs": sympy.Abs,
    "relu": lambda a: sympy.Max(a, 0),
    "step": lambda a: sympy.Heaviside(a, 0),
    "log2": lambda a: sympy.log(a, 2),
    "log10": lambda a: sympy.log(a, 10),
    "log1p": lambda a: sympy.log(1 + a),
    "expm1": lambda a: sympy.exp(a) - 1,
    "hypot": lambda a, b: sympy.sqrt(a**2 + b**2),
    "powlog": lambda a, b: a**b * sympy.log(a),
    "min": sympy.Min,
    "max": sympy.Max,
    "clamp": lambda a, lo, hi: sympy.Min(sympy.Max(a, lo), hi),
    "ceil": sympy.ceiling,
    "lgamma": lambda a: sympy.log(sympy.Abs(sympy.gamma(a))),
    "cbrt": sympy.cbrt,
}


def symbol(name: str) -> sympy.Symbol:
    """An input: a real number (without the assumption SymPy's diff can take minutes proving
    that tanh of something is real)."""
    return sympy.Symbol(name, real=True)


def to_sympy(program, exact: bool = False):
    """The program's result as a SymPy expression, through the walker every interpretation of
    a program uses. Its numbers are integers and floats, so that SymPy folds them as nanograd
    does (with pi exact, `pi/(1 + pi**2)` keeps SymPy's `diff` busy for minutes); `exact`, as
    a textbook has them: pi and e, and fractions (2/3) exact."""

    def number(value: float):
        if value.is_integer():
            return sympy.Integer(int(value))
        if exact and value in (math.pi, math.e):
            return sympy.pi if value == math.pi else sympy.E
        ratio = fraction(value) if exact else None
        return sympy.Rational(*ratio) if ratio else sympy.Float(value)

    def call(op, *args):
        f = FUNCTIONS.get(op.name) or getattr(sympy, op.name, None) or sympy.Function(op.name)
        return f(*args)

    nodes = program.interpret(input=symbol, const=number, apply=call)
    return nodes[program.result]


def derivative_at(program, name: str, point: dict[str, float], digits: int = 30) -> float:
    """d(result)/d(name) at the point, by SymPy, to `digits` digits."""
    expr = sympy.diff(to_sympy(program), symbol(name))
    expr = expr.replace(sigmoid, lambda a: 1 / (1 + sympy.exp(-a)))
    expr = expr.replace(softplus, lambda a: sympy.log(1 + sympy.exp(a)))
    subs = {symbol(n): sympy.Float(v, digits) for n, v in point.items()}
    return float(expr.evalf(digits, subs=subs))


def value_of(text: str, point: dict[str, float]) -> float:
    """A printed derivative, parsed back and evaluated (plain floats, as grad's ops)."""
    program = parse(text)
    return program.values({n: point[n] for n in program.inputs})[program.result]


def same(a: float, b: float, rel: float = 1e-12) -> bool:
    """Equal to `rel` relative, or both nan."""
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=rel, abs=1e-300)


def agrees_with_grad(program, text: str, name: str, point: dict[str, float]) -> bool:
    """The printed derivative `text` gives grad's number to 1e-12 relative; or, where the
    expression amplifies rounding (sin(t) near a zero with t large, terms that cancel to about
    0), it is at most twice as far from SymPy's 30-digit value as grad's is, or within 1e-14
    of it (grad's may be exact by luck where both round terms that cancel)."""
    expected = program.grad(point).gradients[name]
    got = value_of(text, point)
    if same(got, expected):
        return True
    exact = derivative_at(program, name, point)
    allowed = 2 * abs(expected - exact) + 1e-14 * max(1.0, abs(exact))
    return math.isfinite(got) and abs(got - exact) <= allowed


# Names that are numbers, in a printed derivative and in SymPy's.
CONSTANT_NAMES = {"pi", "E", "e"}


def is_constant(node: ast.AST) -> bool:
    names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
    calls = {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call)}
    return all(name in CONSTANT_NAMES or name in calls for name in names)


def operations(text: str) -> int:
    """Operators and calls in the printed text (a bound sub-expression's once, a comment's
    none), none for a part that is a number (`3/2`, `-1`, `sqrt(2)`)."""
    count = 0
    for node in ast.walk(ast.parse(text.replace("^", "**"))):
        if isinstance(node, ast.BinOp | ast.UnaryOp | ast.Call) and not is_constant(node):
            count += 1
    return count
