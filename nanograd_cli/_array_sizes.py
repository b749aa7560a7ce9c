"""How many scalar operations a program with arrays makes, told before any is made.

Written out in scalars (`_arrays.py`), `A @ B` of two nxn matrices is 2n^3 - n^2 operations, each
a node of the graph; the number follows from the shapes alone, which the inputs' values give.
This pass walks the source's instructions once with shapes only, so that a program whose
graph would not fit in memory is refused at once, not after minutes of writing it out. Where
the pass cannot tell a shape (shapes that do not fit, an index that reads an input), it stops
with what it has counted: the writer says what is wrong as it reaches it, and checks the room
of each operation again as it writes it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ._array_ops import INDEX, LITERAL, MATMUL, SLICES_BY_OP, TRANSPOSE, ArrayOp
from ._instructions import Apply, Const, Input
from ._program import Program
from .results import Shape

# Operations a reduction writes per element, at most (softmax: a max, a -, an exp, a + and
# a /; log_softmax the same, with a second - for the /; the largest: a max, an ==, two + and
# a where and a - to share ties), and per line it reduces (norm's ==, where and 0; the
# largest's 0, 1, /, -, and twice == and where).
LARGEST = ("max", "min", "amax", "amin")
# The functions of an array that keep its shape: a number per element, from its whole line.
SHAPED = ("softmax", "log_softmax")
PER_ELEMENT = {
    "softmax": 5,
    "log_softmax": 5,
    "logsumexp": 3,
    **dict.fromkeys(("var", "std"), 4),  # (a + for the mean, a -, a * and a + for the squares)
    **dict.fromkeys(LARGEST, 6),
}
PER_LINE = {**dict.fromkeys(LARGEST, 8), "std": 6}  # else 3 (std: /, sqrt, ==, where, 0)


class _Untold(Exception):
    """A shape or a number the pass cannot tell: the writer says why, as it writes."""


def operation_count(
    program: Program, shapes: Mapping[str, Shape], names: Mapping[str, float] = {}
) -> int:
    """The number of scalar operations `program` is written out as, for array inputs of
    `shapes` (the inputs of `names` are constants), counted as the writer makes room for
    them: each input's element three times (its node, name, value and gradient); up to the
    first shape the pass cannot tell."""
    return counted(program, shapes, names)[0]


def counted(
    program: Program, shapes: Mapping[str, Shape], names: Mapping[str, float] = {}
) -> tuple[int, Shape | None]:
    """`operation_count`, and the shape of the result (None where the pass cannot tell it)."""
    counter = _Counter(program, shapes, names)
    try:
        counter.walk()
    except _Untold:
        return counter.count, None
    result = counter.nodes[program.result]
    return counter.count, None if isinstance(result, slice) else result


class _Counter:
    def __init__(self, program: Program, shapes: Mapping[str, Shape], names: Mapping[str, float]):
        self.program = program
        self.shapes = shapes
        self.names = names
        self.count = 0
        self.nodes: list[Shape | slice] = []  # each instruction's shape, or its slice
        self.known: dict[int, float] = {}  # the value of each number that reads no input

    def walk(self) -> None:
        for i, ins in enumerate(self.program.code):
            node: Shape | slice = ()
            if type(ins) is Input and ins.name not in self.names:
                node = tuple(self.shapes.get(ins.name, ()))
                self.count += 3 * math.prod(node)
            elif type(ins) is Input or type(ins) is Const:
                self.known[i] = self.names[ins.name] if type(ins) is Input else ins.value
                self.count += 1
            elif type(ins.op) is ArrayOp:
                node = self.array_op(i, ins)
            else:
                node = self.elementwise(i, ins)
            self.nodes.append(node)

    def shape(self, arg: int) -> Shape:
        node = self.nodes[arg]
        if isinstance(node, slice):
            raise _Untold
        return node

    def whole(self, arg: int) -> int:
        value = self.known.get(arg)
        if value is None or not float(value).is_integer():
            raise _Untold
        return int(value)

    def elementwise(self, i: int, ins: Apply) -> Shape:
        try:
            shape = np.broadcast_shapes(*[self.shape(a) for a in ins.args])
        except ValueError:
            raise _Untold from None
        self.count += math.prod(shape)
        if not shape and all(a in self.known for a in ins.args):
            try:
                self.known[i] = ins.op.forward(*[self.known[a] for a in ins.args])
            except (ArithmeticError, ValueError):
                pass
        return shape

    def array_op(self, i: int, ins: Apply) -> Shape | slice:
        op, args = ins.op, ins.args
        if op in SLICES_BY_OP:
            bounds = iter(self.whole(a) for a in args)
            start, stop, step = (next(bounds) if w else None for w in SLICES_BY_OP[op])
            if step == 0:
                raise _Untold
            return slice(start, stop, step)
        if op is INDEX:
            return self.index(args)
        shapes = [self.shape(a) for a in args]
        if op is LITERAL:
            if any(s != shapes[0] for s in shapes):
                raise _Untold
            return (len(shapes), *shapes[0])
        if op is TRANSPOSE:
            return shapes[0][::-1]
        if op is MATMUL or op.name == "dot":
            return self.matmul(*shapes)
        name = op.name
        if name == "outer":
            if any(len(s) != 1 for s in shapes):
                raise _Untold
            self.count += shapes[0][0] * shapes[1][0]
            return (shapes[0][0], shapes[1][0])
        if name == "len":
            if not shapes[0]:
                raise _Untold
            self.known[i] = float(shapes[0][0])
            self.count += 1
            return ()
        if name in ("zeros", "ones", "eye"):
            sizes = tuple(self.whole(a) for a in args)
            if min(sizes) < 1:
                raise _Untold
            shape = sizes * 2 if name == "eye" else sizes
            self.count += 2 + math.prod(shape)  # two nodes; each element as an operand, once
            return shape
        return self.reduction(name, shapes, args)

    def index(self, args: tuple[int, ...]) -> Shape:
        shape = self.shape(args[0])
        key = []
        for sub in args[1:]:
            node = self.nodes[sub]
            key.append(node if isinstance(node, slice) else self.whole(sub))
        try:  # the shape of that part of an array of `shape`, none of it made
            return np.broadcast_to(np.empty((), np.int8), shape)[tuple(key)].shape
        except (IndexError, ValueError):
            raise _Untold from None

    def matmul(self, a: Shape, b: Shape) -> Shape:
        if not (1 <= len(a) <= 2 and 1 <= len(b) <= 2):
            raise _Untold
        left = a if len(a) == 2 else (1, *a)
        right = b if len(b) == 2 else (*b, 1)
        if left[1] != right[0]:
            raise _Untold
        self.count += left[0] * right[1] * (2 * left[1] - 1)
        return (*a[:-1], *b[1:])

    def reduction(self, name: str, shapes: list[Shape], args: tuple[int, ...]) -> Shape:
        shape = shapes[0] or (1,)
        size = math.prod(shape)
        if len(args) == 2:
            axis = self.whole(args[1])
            if not -len(shape) <= axis < len(shape) or not shapes[0]:
                raise _Untold
            axis %= len(shape)
            reduced = shape[:axis] + shape[axis + 1 :]
        else:
            reduced = ()
        self.count += PER_ELEMENT.get(name, 1) * size + PER_LINE.get(name, 3) * math.prod(reduced)
        return shapes[0] if name in SHAPED else reduced  # (softmax of a number: a number)
