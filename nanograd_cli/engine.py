"""Value: a scalar node of a computation graph, and reverse-mode differentiation over it.

Unlike micrograd, a node holds no closure: its op (a row of the table in `ops`) says how
gradient flows back, so a graph has no reference cycles and is freed as soon as it is dropped.
Children are an ordered tuple, so `x * x` has two edges and every run gives the same bits.
No graph walk recurses: graphs a million nodes deep are fine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ._ops import ADD, CONST, DIV, FUNCTIONS, MOD, MUL, NEG, POW, SUB, WHERE, Op

Number = int | float


class Value:
    """A scalar with its gradient, the nodes it was computed from and the op that did it."""

    __slots__ = ("_op", "_prev", "data", "grad")
    data: float
    grad: float
    _prev: tuple[Value, ...]
    _op: Op | None

    def __init__(self, data: Number, _children: tuple[Value, ...] = (), _op: Op | None = None):
        self.data = _float(data)
        self.grad = 0.0
        self._prev = tuple(_children)
        self._op = _op

    @classmethod
    def constant(cls, data: Number) -> Value:
        """A number of the source: a leaf that is never differentiated with respect to."""
        return _node(_float(data), (), CONST)

    @property
    def op(self) -> Op | None:
        """The op that computed this node; None for an input, `ops.CONST` for a constant."""
        return self._op

    @property
    def children(self) -> tuple[Value, ...]:
        """The operands this node was computed from, in order."""
        return self._prev

    def __repr__(self) -> str:
        return f"Value(data={self.data!r}, grad={self.grad!r})"

    def _repr_svg_(self) -> str | None:
        """The graph as SVG, for Jupyter (Graphviz is imported only now)."""
        from .render.graph import draw_dot, svg_or_none

        return svg_or_none(draw_dot(self))

    if TYPE_CHECKING:
        # Made from the table of ops below the class (_binary, _unary); declared here for type
        # checkers. tests/test_engine.py holds the two lists to each other.
        def __add__(self, other: Value | Number) -> Value: ...
        def __radd__(self, other: Value | Number) -> Value: ...
        def __sub__(self, other: Value | Number) -> Value: ...
        def __rsub__(self, other: Value | Number) -> Value: ...
        def __mul__(self, other: Value | Number) -> Value: ...
        def __rmul__(self, other: Value | Number) -> Value: ...
        def __truediv__(self, other: Value | Number) -> Value: ...
        def __rtruediv__(self, other: Value | Number) -> Value: ...
        def __pow__(self, other: Value | Number) -> Value: ...
        def __rpow__(self, other: Value | Number) -> Value: ...
        def __mod__(self, other: Value | Number) -> Value: ...
        def __rmod__(self, other: Value | Number) -> Value: ...
        def __neg__(self) -> Value: ...
        def __abs__(self) -> Value: ...
        def exp(self) -> Value:
            """e to the power x"""

        def expm1(self) -> Value:
            """exp(x) - 1, accurate near x = 0"""

        def log(self) -> Value:
            """natural logarithm"""

        def log1p(self) -> Value:
            """log(1 + x), accurate near x = 0"""

        def log2(self) -> Value:
            """base-2 logarithm"""

        def log10(self) -> Value:
            """base-10 logarithm"""

        def sqrt(self) -> Value:
            """square root"""

        def cbrt(self) -> Value:
            """cube root, real for x < 0 too (cbrt(-8) is -2, where (-8)**(1/3) is nan)"""

        def sin(self) -> Value:
            """sine (radians)"""

        def cos(self) -> Value:
            """cosine (radians)"""

        def tan(self) -> Value:
            """tangent (radians)"""

        def sec(self) -> Value:
            """secant, 1/cos(x)"""

        def csc(self) -> Value:
            """cosecant, 1/sin(x)"""

        def cot(self) -> Value:
            """cotangent, 1/tan(x)"""

        def sinc(self) -> Value:
            """sin(pi*x)/(pi*x), 1 at 0 (normalized, as NumPy's); 0 at every other integer"""

        def dsinc(self) -> Value:
            """the derivative of sinc, (cos(pi*x) - sinc(x))/x, without its cancellation near 0"""

        def asin(self) -> Value:
            """inverse sine"""

        def acos(self) -> Value:
            """inverse cosine"""

        def atan(self) -> Value:
            """inverse tangent"""

        def sinh(self) -> Value:
            """hyperbolic sine"""

        def cosh(self) -> Value:
            """hyperbolic cosine"""

        def tanh(self) -> Value:
            """hyperbolic tangent"""

        def asinh(self) -> Value:
            """inverse hyperbolic sine"""

        def acosh(self) -> Value:
            """inverse hyperbolic cosine, for x >= 1"""

        def atanh(self) -> Value:
            """inverse hyperbolic tangent, for -1 <= x <= 1"""

        def sech(self) -> Value:
            """hyperbolic secant, 1/cosh(x), without overflow"""

        def csch(self) -> Value:
            """hyperbolic cosecant, 1/sinh(x), without overflow"""

        def coth(self) -> Value:
            """hyperbolic cotangent, 1/tanh(x)"""

        def erf(self) -> Value:
            """error function"""

        def erfc(self) -> Value:
            """1 - erf(x), accurate where erf(x) is near 1"""

        def erfinv(self) -> Value:
            """inverse error function, for -1 <= x <= 1"""

        def gamma(self) -> Value:
            """gamma function, (x - 1)! at the integers"""

        def lgamma(self) -> Value:
            """log(abs(gamma(x))), without overflow, accurate near its zeros at 1 and 2"""

        def digamma(self) -> Value:
            """d/dx lgamma(x), also called psi"""

        def sigmoid(self) -> Value:
            """logistic function 1/(1 + exp(-x))"""

        def softplus(self) -> Value:
            """log(1 + exp(x)), computed without overflow"""

        def relu(self) -> Value:
            """max(x, 0); relu'(0) = 0"""

        def abs(self) -> Value:
            """absolute value; abs'(0) = 0"""

        def step(self) -> Value:
            """1 for x > 0, else 0 (the derivative of relu)"""

        def sign(self) -> Value:
            """1, 0 or -1 as x is positive, 0 or negative"""

        def floor(self) -> Value:
            """the largest integer <= x; derivative 0"""

        def ceil(self) -> Value:
            """the smallest integer >= x; derivative 0"""

        def round(self) -> Value:
            """the nearest integer, halves to even (round(2.5) is 2); derivative 0"""

    def __pos__(self) -> Value:
        return self

    def backward(self) -> None:
        """Differentiate this node with respect to every node it depends on.

        Afterwards each intermediate node's `grad` is d(self)/d(node) for this call, while each
        leaf's `grad` has d(self)/d(leaf) *added* to it: calling backward twice doubles the
        leaves' gradients, as in PyTorch and micrograd. `zero_grad()` starts afresh.

        A `where` passes its gradient on to the argument it takes and to nothing else, so
        the nodes that only the other argument (or the condition) depends on pass nothing on
        either: a branch not taken adds nothing, not 0 times its derivative (nan where the
        branch is nan, as sqrt(x) is for x < 0).
        """
        order = self._order(reset=True)
        self.grad += 1.0
        for v in order:
            prev = v._prev
            if not prev:
                continue
            g = v.grad
            op = v._op
            assert op is not None  # a node computed from others has the op that did it
            if op is ADD:  # the two commonest ops, inlined: a third of the backward time
                a, b = prev
                a.grad += g
                b.grad += g
            elif op is MUL:
                a, b = prev
                a.grad += b.data * g
                b.grad += a.data * g
            elif len(prev) == 1:
                a = prev[0]
                (d,) = op.derivative(a.data, v.data)
                a.grad += d * g
            else:
                try:  # costs the binary path nothing, where testing len(prev) would not
                    a, b = prev
                except ValueError:  # three arguments or more (clamp, where)
                    if op is WHERE:  # the rest of the pass follows the branches taken
                        _selecting(order, order.index(v))
                        return
                    local = op.derivative(*[c.data for c in prev], v.data)
                    for c, d in zip(prev, local, strict=True):
                        c.grad += d * g
                    continue
                da, db = op.derivative(a.data, b.data, v.data)
                a.grad += da * g
                b.grad += db * g

    def topological_order(self) -> list[Value]:
        """This node and every node it depends on, each before the nodes it was computed from:
        the order in which `backward` visits them, and so adds up each node's gradient."""
        return self._order(reset=False)

    def _order(self, reset: bool) -> list[Value]:
        """The topological order; with `reset`, the intermediate nodes' gradients are set to 0
        on the way (for backward, which would otherwise need a pass of its own)."""
        order: list[Value] = []
        visited: set[Value] = set()
        stack: list[Value | None] = [self]
        while stack:
            v = stack.pop()
            if v is None:  # all of the next node's operands are in `order` now
                done = stack.pop()
                assert done is not None  # the marker is pushed right after its node
                order.append(done)
            elif v not in visited:
                visited.add(v)
                prev = v._prev
                if prev:
                    if reset:
                        v.grad = 0.0
                    stack.append(v)
                    stack.append(None)
                    stack.extend(prev)
                else:
                    order.append(v)
        order.reverse()
        return order

    def zero_grad(self) -> None:
        """Set the gradient of this node and of every node it depends on to 0."""
        for v in self.walk():
            v.grad = 0.0

    def walk(self) -> Iterator[Value]:
        """Every node this one depends on, itself included, each once, without recursion."""
        seen = {self}
        stack = [self]
        while stack:
            v = stack.pop()
            yield v
            for c in v._prev:
                if c not in seen:
                    seen.add(c)
                    stack.append(c)


def _selecting(order: list[Value], start: int) -> None:
    """Backward from `order[start]`, the first `where` of the pass, on: only the nodes that a
    node already passed on to pass on, and a `where` passes on to the argument it takes only.
    (The nodes before `start` depend on no `where`, so each passed on to all its operands.)"""
    live = {c for v in order[:start] for c in v._prev}
    live.add(order[start])
    for v in order[start:]:
        prev = v._prev
        if not prev or v not in live:
            continue
        g = v.grad
        op = v._op
        assert op is not None  # a node computed from others has the op that did it
        if op is WHERE:
            c, a, b = prev
            taken = a if c.data != 0.0 else b
            taken.grad += g
            live.add(taken)
            continue
        local = op.derivative(*[c.data for c in prev], v.data)
        for c, d in zip(prev, local, strict=True):
            c.grad += d * g
        live.update(prev)


def live_nodes(root: Value, order: list[Value] | None = None) -> set[Value]:
    """The nodes `root.backward()` passes gradient on to: every node `root` depends on but
    those that only a branch a `where` does not take (or its condition) depends on. `order`
    may give root's topological order, if known."""
    live = {root}
    for v in order or root.topological_order():
        if v in live and v._prev:
            if v._op is WHERE:
                c, a, b = v._prev
                live.add(a if c.data != 0.0 else b)
            else:
                live.update(v._prev)
    return live


_new = object.__new__


def _node(data: float, prev: tuple[Value, ...], op: Op | None) -> Value:
    v = _new(Value)
    v.data = data
    v.grad = 0.0
    v._prev = prev
    v._op = op
    return v


def _float(number: Number) -> float:
    """`number` as a float; an int too large for one is bad input (the package's error), not
    Python's OverflowError, and what is no number a TypeError that says so."""
    try:
        return float(number)
    except (TypeError, ValueError):
        raise TypeError(f"a Value's data is a number, not {type(number).__name__}") from None
    except OverflowError:
        import math

        from .errors import InputError

        digits = int(math.log10(abs(int(number)))) + 1  # (str() of it may be refused)
        raise InputError(f"a number of {digits:,} digits is too large for a float") from None


def _lift(other: object) -> Value:
    """A number as a constant node; a Value as it is; NotImplemented for anything else."""
    if isinstance(other, (int, float)):  # checked first: numbers are what get here most
        out = _new(Value)
        out.data = _float(other)
        out.grad = 0.0
        out._prev = ()
        out._op = CONST
        return out
    return other if isinstance(other, Value) else NotImplemented


def apply(op: Op, *args: Value) -> Value:
    """The node computing `op` on `args`."""
    return _node(op.forward(*(a.data for a in args)), args, op)


# Operators and methods are made from the table by these factories; each builds its node
# inline, since a call to `_node` would cost a fifth of the forward time.


def _binary(op: Op, reflected: bool) -> Callable[[Value, Value | Number], Value]:
    forward = op.forward

    def method(self: Value, other: Value | Number) -> Value:
        if other.__class__ is not Value and (other := _lift(other)) is NotImplemented:
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        out = _new(Value)
        out.data = forward(a.data, b.data)
        out.grad = 0.0
        out._prev = (a, b)
        out._op = op
        return out

    method.__doc__ = f"{op.doc} ({op.name}); derivatives {', '.join(op.formulas)}"
    return method


def _unary(op: Op) -> Callable[[Value], Value]:
    forward = op.forward

    def method(self: Value) -> Value:
        out = _new(Value)
        out.data = forward(self.data)
        out.grad = 0.0
        out._prev = (self,)
        out._op = op
        return out

    method.__name__ = op.name
    method.__doc__ = f"{op.doc}; derivative {op.formulas[0]}"
    return method


for _dunder, _op in (
    ("add", ADD),
    ("sub", SUB),
    ("mul", MUL),
    ("truediv", DIV),
    ("pow", POW),
    ("mod", MOD),
):
    setattr(Value, f"__{_dunder}__", _binary(_op, reflected=False))
    setattr(Value, f"__r{_dunder}__", _binary(_op, reflected=True))
for _name, _op in FUNCTIONS.items():
    if _op.arity == 1:
        setattr(Value, _name, _unary(_op))
setattr(Value, "__neg__", _unary(NEG))  # noqa: B010 (declared for type checkers above)
setattr(Value, "__abs__", Value.abs)  # noqa: B010
