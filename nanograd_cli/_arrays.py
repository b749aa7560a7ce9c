"""Arrays, written out in scalars.

An array is an array of the engine's scalar nodes, as micrograd's MLP is lists of Values: a
program with array operations, once the shapes of its array inputs are known, is written out
as the program of scalar operations it stands for, and every command runs that program as it
runs any other. Its values and derivatives are those of the same computation typed out
element by element: `x @ y` is x[0]*y[0] + x[1]*y[1] + ..., left to right. Where that
write-out would overflow, it is written as a careful person would: `softmax` and
`logsumexp` subtract the largest element first, `norm` is a chain of hypot.

An array input `x` of shape (3,) becomes the inputs x[0], x[1], x[2]; a result that is an
array becomes the outputs result[0], ... (or u[0], ... for a listed output u). `Layout`
keeps the shapes, to give results back as arrays.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ._array_ops import (
    INDEX,
    LITERAL,
    MATMUL,
    SLICES_BY_OP,
    TRANSPOSE,
    ArrayOp,
)
from ._array_sizes import PER_ELEMENT, SHAPED
from ._ops import ADD, DIV, MUL, OPS, SUB, WHERE, Op
from ._program import Apply, Const, Input, Instruction, Place, Program
from .errors import InputError, NanogradError, ShapeProblem, UnknownInputs
from .results import Layout, Shape, by_element, element_names

if TYPE_CHECKING:
    from .results import InputValue

# A node as the writer holds it: one scalar instruction's number, an array of them (dtype
# object), or a slice (of a subscript). Any, as NumPy's types do not follow object arrays.
Node: TypeAlias = Any

# Why true and false are no numbers, whatever file holds them (JSON, .npy): one rule.
BOOLEANS = "write 1 for true and 0 for false"

# Arrays have at most this many axes.
MAX_AXES = 32


class TooLarge(NanogradError):
    """Arrays whose program, written out in scalars, would not fit in the memory left."""

    def of_value(self, typed: str) -> TooLarge:
        """The same refusal, of the value of an input as typed (`--W zeros(3000, 3000)`)."""
        return TooLarge(f"{typed}: {self.message}")


# What an array of another kind than numbers holds, by NumPy's dtype kind, as a message says it.
DTYPE_KINDS = {
    "b": "booleans",
    "U": "text",
    "S": "bytes",
    "c": "complex numbers",
    "O": "Python objects",
    "M": "dates",
    "m": "time spans",
    "V": "records",
}


def array_inputs(point: Mapping[str, InputValue]) -> dict[str, np.ndarray]:
    """The values of `point` that are arrays (of one element or more axes), as floats."""
    return {
        name: numbers_array(value, name)
        for name, value in point.items()
        if isinstance(value, np.ndarray) and value.ndim > 0
    }


def numbers_array(value: object, given: str) -> np.ndarray:
    """`value` as an array of floats; bad input, said of `given`, where it is no array of
    real numbers, is empty or has more than MAX_AXES axes."""
    try:
        array = np.asarray(value)
    except ValueError:  # [[1, 2], [3]]
        raise InputError(f"{given}: a ragged array, its rows of different lengths") from None
    if array.dtype.kind not in "iuf":
        held = DTYPE_KINDS.get(array.dtype.kind, "another kind of value")
        hint = f": {BOOLEANS}" if array.dtype.kind == "b" else ""
        raise InputError(f"{given}: an array of real numbers, not of {held}{hint}")
    if array.ndim > MAX_AXES:
        raise InputError(f"{given}: an array has at most {MAX_AXES} axes, not {array.ndim}")
    if array.size == 0:
        raise InputError(f"{given}: the array is empty, of shape {array.shape}")
    return array.astype(float)


def scalarized(
    program: Program, point: Mapping[str, InputValue], shapes: Mapping[str, Shape] = {}
) -> tuple[Program, dict[str, float], Layout]:
    """`program` written out in scalars for the array values of `point` (and the arrays of
    `shapes`, whose values are given elsewhere, as columns), the point by element (`x[0]`,
    `W[1,2]`), and the layout."""
    arrays = array_inputs(point)
    unknown = [name for name in point if name not in program.input_slots]
    if unknown:  # by the names the source reads, before they are written out
        raise UnknownInputs(unknown, program.inputs)
    shapes = {**shapes, **{name: a.shape for name, a in arrays.items()}}
    written, layout = written_out(program, shapes)
    return written, _by_element(point, arrays), layout


def column_shapes(names: Sequence[str], columns: Sequence[str], where: str) -> dict[str, Shape]:
    """The shape of each input of `names` that no column names but columns x[0], x[1], ...
    (W[0,0], W[0,1], ...) do: every element, row-major, from 0. `where` names the table in
    a message (`--points`) where the columns make no array."""
    named = set(columns)
    wanted = {n for n in names if n not in named}
    indexes: dict[str, list[tuple[int, ...]]] = {}
    for column in columns:
        match = _ELEMENT.fullmatch(column)
        if match and match.group(1) in wanted:
            index = tuple(int(k) for k in match.group(2).split(","))
            indexes.setdefault(match.group(1), []).append(index)
    shapes = {}
    for name, found in indexes.items():
        axes = {len(i) for i in found}
        shape = tuple(max(i[a] for i in found) + 1 for a in range(max(axes)))
        missing = sorted(set(np.ndindex(shape)) - set(found)) if len(axes) == 1 else [()]
        if missing:
            example = f"{name}[{','.join(map(str, missing[0]))}]" if missing[0] else ""
            raise InputError(
                f"{where}: the columns {name}[...] make no array"
                + (f": {example} is missing" if example else ": their numbers of axes differ")
            )
        shapes[name] = shape
    return shapes


_ELEMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[([0-9]+(?:,[0-9]+)*)\]")


def _by_element(point: Mapping[str, InputValue], arrays: Mapping[str, np.ndarray]) -> dict:
    """`point` by element (`x[0]`, `W[1,2]`): its `arrays` as their elements, its numbers as
    floats."""
    return by_element({n: arrays[n] if n in arrays else float(v) for n, v in point.items()})


def written_out(program: Program, shapes: Mapping[str, Shape]) -> tuple[Program, Layout]:
    """`program` as scalar operations only, for array inputs of `shapes` (the other inputs
    are numbers)."""
    return _Writer(program, shapes).write()


def written_out_with_shapes(
    program: Program, shapes: Mapping[str, Shape]
) -> tuple[Program, Layout, list[Shape]]:
    """`written_out`, and the shape of each of `program`'s instructions' values (a slice's
    is ())."""
    writer = _Writer(program, shapes)
    written, layout = writer.write()
    return written, layout, [() if isinstance(n, slice) else np.shape(n) for n in writer.nodes]


def result_elements(written: Program, layout: Layout) -> list[Program]:
    """A program written out, once per element of its result (row-major), with that
    element as its one result: itself for a result that is a number."""
    if not layout.results["result"]:
        return [written]
    return [written.with_result(i) for i in written.results.values()]


def array_view(
    program: Program, point: Mapping[str, InputValue]
) -> tuple[Program, dict[str, float], list[Node], dict[int, float]]:
    """For a picture of the arrays: `program` in scalars at `point` as `scalarized` gives
    it, but numbered as written; the node of each of the source's instructions (a number,
    an array of numbers or a slice); and the values known without the inputs."""
    arrays = array_inputs(point)
    writer = _Writer(program, {name: a.shape for name, a in arrays.items()})
    written, _ = writer.write(prune=False)
    return written, _by_element(point, arrays), writer.nodes, writer.known


def constant_array(program: Program, names: Mapping[str, float] | None = None) -> np.ndarray | None:
    """The value of a program with no inputs whose result is an array (`[1, 2]`,
    `eye(3)`), else None; the inputs it reads that `names` gives values to are those
    values (`[1, nan]`)."""
    names = names or {}
    if not set(program.inputs) <= set(names) or program.outputs or not program.arrays:
        return None
    writer = _Writer(program, {}, names)
    nodes, _ = writer.walk()
    result = nodes[program.result]
    if not isinstance(result, np.ndarray):
        return None
    writer.room(result.size, 0)  # each element an input's node: refused now, if too many
    known = writer.known  # every node's value: none reads an input
    values = np.fromiter(map(known.__getitem__, result.flat), float, result.size)
    return values.reshape(result.shape)


class _Writer:
    """Writes a program's instructions out in scalars, one at a time."""

    def __init__(
        self, program: Program, shapes: Mapping[str, Shape], names: Mapping[str, float] = {}
    ):
        self.program = program
        self.names = names  # inputs that are constants
        self.source = program.source
        self.shapes = shapes
        self.code: list[Instruction] = []
        self.known: dict[int, float] = {}  # instruction -> its value, where it reads no input
        self.spent = False  # whether an index, a size or an axis was read: its nodes go unused
        self.places: list[Place] = []  # the runs of instructions that are an array's elements
        from ._language import BYTES_PER_INSTRUCTION
        from ._memory import available

        free = available()
        self.free = free
        self.limit = math.inf if free is None else free // BYTES_PER_INSTRUCTION
        self.result_shape: Shape | None = None  # told by the count, before any node

    # building

    def problem(self, message: str, offset: int) -> ShapeProblem:
        return ShapeProblem(message, self.source, offset)

    def room(self, count: int, offset: int) -> None:
        """Refuse to write `count` more operations where their graph would not fit."""
        size = len(self.code) + count
        if size > self.limit:
            from ._language import BYTES_PER_INSTRUCTION
            from ._memory import gigabytes

            need, free = size * BYTES_PER_INSTRUCTION, self.free or 0
            shown = gigabytes(need), gigabytes(free)
            if shown[0] == shown[1]:  # just over: the digits that tell them apart
                shown = f"{need / 1e9:,.3f} GB", f"{free / 1e9:,.3f} GB"
            raise TooLarge(
                f"written out in scalars, the arrays make {size:,} operations{self.sizes()}: "
                f"their graph would need {shown[0]} of memory, and {shown[1]} is free: about "
                f"{int(self.limit):,} fit"
            )

    def sizes(self) -> str:
        """The arrays' numbers of elements, as a refusal says them: those of the array inputs
        (` (W: 9,000,000 elements)`), or of a value that reads none."""
        counts = [(n, math.prod(s)) for n, s in self.shapes.items() if s]
        if counts:
            listed = ", ".join(f"{n}: {c:,} element{'s' * (c != 1)}" for n, c in counts)
            return f" ({listed})"
        shape = self.result_shape
        if shape and not self.program.inputs:
            return f" (an array of shape {shape}: {math.prod(shape):,} elements)"
        return ""

    def emit(self, instruction: Instruction) -> int:
        self.code.append(instruction)
        return len(self.code) - 1

    def const(self, value: float, offset: int) -> int:
        i = self.emit(Const(value, offset))
        self.known[i] = value
        return i

    def apply(self, op: Op, args: tuple[int, ...], offset: int) -> int:
        i = self.emit(Apply(op, args, offset))
        known = self.known
        if all(a in known for a in args):
            with contextlib.suppress(ArithmeticError, ValueError):
                known[i] = op.forward(*[known[a] for a in args])
        return i

    def chain(self, op: Op, nodes: Sequence[int], offset: int) -> int:
        """nodes[0] op nodes[1] op ..., left to right."""
        total = nodes[0]
        for node in nodes[1:]:
            total = self.apply(op, (total, node), offset)
        return total

    def each(self, shape: Shape, make: Callable[[tuple[int, ...]], int]) -> Node:
        """An array of `shape` whose element at each index is `make(index)`."""
        if not shape:
            return make(())
        out = np.empty(shape, dtype=object)
        for index in np.ndindex(shape):
            out[index] = make(index)
        return out

    # the walk

    def write(self, prune: bool = True) -> tuple[Program, Layout]:
        """The program in scalars, and its layout; with `prune` false, its instructions are
        numbered as `nodes` (each of the source's instructions' nodes, kept) numbers them."""
        program = self.program
        nodes, inputs = self.walk()
        self.nodes = nodes
        labels: dict[int, str] = {}
        for i, name in program.labels.items():
            for element, instruction in _elements(name, nodes[i]):
                labels.setdefault(instruction, element)
        outputs: dict[str, int] = {}
        results: dict[str, Shape] = {}
        for name, i in program.results.items():
            results[name] = np.shape(nodes[i])
            outputs.update(
                (element, instruction) for element, instruction in _elements(name, nodes[i])
            )
        layout = Layout({n: tuple(self.shapes.get(n, ())) for n in program.inputs}, results)
        first = next(iter(outputs.values()))
        listed = outputs if program.outputs or results.get("result") else {}
        written = Program(
            program.source, self.code, inputs, first, labels, listed, places=self.places
        )
        return (written.pruned() if self.spent and prune else written), layout

    def walk(self) -> tuple[list[Node], list[str]]:
        """Each instruction's node, and the scalar inputs, in order."""
        from ._array_sizes import counted

        # Refused before any node is made, where the whole would not fit.
        count, self.result_shape = counted(self.program, self.shapes, self.names)
        self.room(count, 0)
        nodes: list[Node] = []
        inputs: list[str] = []
        for ins in self.program.code:
            node: Node
            if type(ins) is Input and ins.name in self.names:
                node = self.const(self.names[ins.name], ins.offset)
            elif type(ins) is Input:
                shape = tuple(self.shapes.get(ins.name, ()))
                self.room(3 * math.prod(shape), ins.offset)  # a node, its name, value, gradient
                names = element_names(ins.name, shape)
                made = [self.emit(Input(name, ins.offset)) for name in names]
                inputs.extend(names)
                node = np.array(made, dtype=object).reshape(shape) if shape else made[0]
            elif type(ins) is Const:
                node = self.const(ins.value, ins.offset)
            elif type(ins.op) is ArrayOp:
                node = self.array_op(ins, [nodes[a] for a in ins.args])
            else:
                node = self.elementwise(ins.op, [nodes[a] for a in ins.args], ins.offset)
            nodes.append(node)
        return nodes, inputs

    def elementwise(self, op: Op, args: list[Node], offset: int) -> Node:
        """A scalar operation on arrays: element by element, with NumPy's broadcasting."""
        if all(type(a) is int for a in args):
            return self.apply(op, tuple(args), offset)  # type: ignore[arg-type]
        shape = self.broadcast([self.shape_of(a, offset) for a in args], offset)
        spread = [np.broadcast_to(np.asarray(a, dtype=object), shape) for a in args]
        self.room(math.prod(shape), offset)
        start = len(self.code)
        out = self.each(shape, lambda i: self.apply(op, tuple(s[i] for s in spread), offset))
        self.places.append((start, len(self.code), shape, 0))  # an instruction per element
        return out

    def shape_of(self, node: Node, offset: int) -> Shape:
        if isinstance(node, slice):
            raise self.problem("a slice is only for indexing, as in x[1:3]", offset)
        return np.shape(node)

    def broadcast(self, shapes: list[Shape], offset: int) -> Shape:
        try:
            return np.broadcast_shapes(*shapes)
        except ValueError:
            why = f"shapes {_listed(shapes)} do not broadcast{_by_rows(shapes)}"
            raise self.problem(why, offset) from None

    # array operations

    def array_op(self, ins: Apply, args: list[Node]) -> Node:
        op, offset = ins.op, ins.offset
        if op is LITERAL:
            return self.literal(ins, args)
        if op is INDEX:
            return self.index(ins, args)
        if op in SLICES_BY_OP:
            bounds = iter(
                self.whole(a, self.program.code[i].offset)
                for a, i in zip(args, ins.args, strict=True)
            )
            start, stop, step = (next(bounds) if w else None for w in SLICES_BY_OP[op])
            if step == 0:
                raise self.problem("a slice's step is not 0", ins.offset)
            return slice(start, stop, step)
        for arg in args:
            self.shape_of(arg, offset)
        if op is TRANSPOSE:
            return args[0].T if isinstance(args[0], np.ndarray) else args[0]
        if op is MATMUL:
            return self.matmul(args[0], args[1], offset, "@")
        name = op.name
        if name == "dot":
            a, b = args
            if np.ndim(a) != 1 or np.shape(a) != np.shape(b):
                raise self.problem(
                    "dot takes two vectors of one length, not shapes "
                    + _listed([np.shape(a), np.shape(b)]),
                    offset,
                )
            return self.matmul(a, b, offset, "dot")
        if name == "outer":
            a, b = (self.vector(arg, "outer", offset) for arg in args)
            self.room(len(a) * len(b), offset)
            return self.each(
                (len(a), len(b)), lambda i: self.apply(MUL, (a[i[0]], b[i[1]]), offset)
            )
        if name == "len":
            if not isinstance(args[0], np.ndarray):
                raise self.problem("len takes an array: a number has no length", offset)
            return self.const(float(len(args[0])), offset)
        if name in ("zeros", "ones", "eye"):
            return self.filled(name, ins, args)
        return self.reduction(name, ins, args)

    def vector(self, node: Node, name: str, offset: int) -> np.ndarray:
        if np.ndim(node) != 1:
            raise self.problem(f"{name} takes vectors, not shape {np.shape(node)}", offset)
        return node  # type: ignore[return-value]

    def whole(self, node: Node, offset: int) -> int:
        """The value of an index, a size or an axis: a whole number that reads no input."""
        self.spent = True
        if type(node) is not int:
            raise self.problem("an index, a size or an axis is a number, not an array", offset)
        value = self.known.get(node)
        if value is None:
            raise self.problem(
                "an index, a size or an axis cannot depend on an input: write a number", offset
            )
        if not float(value).is_integer():
            raise self.problem(
                f"an index, a size or an axis is a whole number, not {value!r}", offset
            )
        return int(value)

    def literal(self, ins: Apply, args: list[Node]) -> Node:
        shapes = [self.shape_of(a, ins.offset) for a in args]
        for arg, shape in zip(ins.args, shapes, strict=True):
            if shape != shapes[0]:
                raise self.problem(
                    "the elements of an array have one shape: "
                    f"{_listed([shapes[0], shape])} differ",
                    self.program.code[arg].offset,
                )
        if len(shapes[0]) + 1 > MAX_AXES:
            raise self.problem(f"an array has at most {MAX_AXES} axes", ins.offset)
        out = np.empty((len(args), *shapes[0]), dtype=object)
        for k, arg in enumerate(args):
            out[k] = arg
        return out

    def index(self, ins: Apply, args: list[Node]) -> Node:
        array, subscripts = args[0], args[1:]
        if not isinstance(array, np.ndarray):
            raise self.problem("a number cannot be indexed: only an array can", ins.offset)
        if len(subscripts) > array.ndim:
            raise self.problem(
                f"{len(subscripts)} subscripts for an array of shape {array.shape}", ins.offset
            )
        key: list[int | slice] = []
        for axis, (sub, at) in enumerate(zip(subscripts, ins.args[1:], strict=True)):
            offset = self.program.code[at].offset
            if isinstance(sub, slice):
                if not len(range(*sub.indices(array.shape[axis]))):
                    raise self.problem(
                        f"the slice {_written_slice(sub)} takes no element of axis {axis} of "
                        f"shape {array.shape}: an array holds one element or more",
                        offset,
                    )
                key.append(sub)
                continue
            k = self.whole(sub, offset)
            size = array.shape[axis]
            if not -size <= k < size:
                shown = k if abs(k) < 10**16 else f"{float(k):g}"  # 1e+300, not 301 digits
                raise self.problem(
                    f"index {shown} is out of range for axis {axis} of shape {array.shape}", offset
                )
            key.append(k)
        return array[tuple(key)]

    def matmul(self, a: Node, b: Node, offset: int, name: str) -> Node:
        """a @ b: each element a sum of products, left to right."""
        for side in (a, b):
            if not isinstance(side, np.ndarray):
                raise self.problem(f"{name} multiplies arrays; for a number, write *", offset)
            if side.ndim > 2:
                raise self.problem(
                    f"{name} takes vectors and matrices, not shape {side.shape}", offset
                )
        left = a if a.ndim == 2 else a[None, :]  # type: ignore[union-attr]
        right = b if b.ndim == 2 else b[:, None]  # type: ignore[union-attr]
        if left.shape[1] != right.shape[0]:
            raise self.problem(
                f"shapes {_listed([a.shape, b.shape])} do not match for {name}: "  # type: ignore[union-attr]
                f"{left.shape[1]} and {right.shape[0]} differ",
                offset,
            )
        inner = left.shape[1]
        self.room(left.shape[0] * right.shape[1] * (2 * inner - 1), offset)

        def element(i: tuple[int, ...]) -> int:
            products = [
                self.apply(MUL, (left[i[0], k], right[k, i[1]]), offset) for k in range(inner)
            ]
            return self.chain(ADD, products, offset)

        out = self.each((left.shape[0], right.shape[1]), element)
        assert isinstance(out, np.ndarray)
        if a.ndim == 1:  # type: ignore[union-attr]
            out = out[0]
        if b.ndim == 1:  # type: ignore[union-attr]
            out = out[..., 0]
        return out if out.ndim else out.item()

    def filled(self, name: str, ins: Apply, args: list[Node]) -> Node:
        sizes = tuple(
            self.whole(a, self.program.code[i].offset) for a, i in zip(args, ins.args, strict=True)
        )
        for size, at in zip(sizes, ins.args, strict=True):
            if size < 1:
                raise self.problem(
                    f"{name} takes sizes of 1 or more, not {size}", self.program.code[at].offset
                )
        if name == "eye":
            sizes = (sizes[0], sizes[0])
        self.room(2, ins.offset)
        zero, one = self.const(0.0, ins.offset), self.const(1.0, ins.offset)
        if name == "eye":
            out = np.full(sizes, zero, dtype=object)
            np.fill_diagonal(out, one)
            return out
        return np.full(sizes, one if name == "ones" else zero, dtype=object)

    def reduction(self, name: str, ins: Apply, args: list[Node]) -> Node:
        """sum, mean, var, std, prod, max, min, norm, softmax, log_softmax, logsumexp: of every
        element, or along the axis given second."""
        offset = ins.offset
        array = args[0]
        of_number = not isinstance(array, np.ndarray)
        if of_number:
            array = np.array([array], dtype=object)
            if len(args) == 2:
                raise self.problem(f"{name} of a number has no axis", offset)
        if len(args) == 2:
            axis = self.whole(args[1], self.program.code[ins.args[1]].offset)
            if not -array.ndim <= axis < array.ndim:
                raise self.problem(
                    f"axis {axis} is out of range for shape {array.shape}",
                    self.program.code[ins.args[1]].offset,
                )
            lines = np.moveaxis(array, axis, -1)
        else:
            lines = array.reshape(1, -1)
            axis = None
        self.room(max(4, PER_ELEMENT.get(name, 1)) * array.size, offset)
        combine = getattr(self, f"_{name}")
        if name in SHAPED:
            out = np.empty(lines.shape, dtype=object)
            for index in np.ndindex(lines.shape[:-1]):
                out[index] = combine(lines[index].tolist(), offset)
            if of_number:  # a number, as NumPy's
                return out.item()
            return np.moveaxis(out, -1, axis) if axis is not None else out.reshape(array.shape)
        reduced = np.empty(lines.shape[:-1], dtype=object)
        for index in np.ndindex(lines.shape[:-1]):
            reduced[index] = combine(lines[index].tolist(), offset)
        return reduced.item() if axis is None else (reduced if reduced.ndim else reduced.item())

    def _sum(self, xs: list[int], offset: int) -> int:
        return self.chain(ADD, xs, offset)

    def _mean(self, xs: list[int], offset: int) -> int:
        return self.apply(DIV, (self._sum(xs, offset), self.const(float(len(xs)), offset)), offset)

    def _var(self, xs: list[int], offset: int) -> int:
        """The mean of the squared deviations from the mean (NumPy's var, PyTorch's with
        correction=0): two passes, exact for data far from 0, where the mean of the
        squares less the square of the mean cancels."""
        mean = self._mean(xs, offset)
        deviations = [self.apply(SUB, (x, mean), offset) for x in xs]
        squares = [self.apply(MUL, (d, d), offset) for d in deviations]
        return self._mean(squares, offset)

    def _std(self, xs: list[int], offset: int) -> int:
        """sqrt(var), and at var = 0, where sqrt's derivative is inf, 0 through where, as
        PyTorch's std (its gradient there is 0, not nan)."""
        var = self._var(xs, offset)
        return self._zero_where_zero(var, self.apply(OPS["sqrt"], (var,), offset), offset)

    def _prod(self, xs: list[int], offset: int) -> int:
        return self.chain(MUL, xs, offset)

    def _max(self, xs: list[int], offset: int) -> int:
        return self._largest(OPS["max"], xs, offset)

    def _min(self, xs: list[int], offset: int) -> int:
        return self._largest(OPS["min"], xs, offset)

    _amax, _amin = _max, _min

    def _largest(self, pick: Op, xs: list[int], offset: int) -> int:
        """The largest (`pick` max) or smallest element, its gradient shared equally by the
        elements that tie for it, as PyTorch's and JAX's max and amax share it. One element
        alone is the chain of `pick`, which passes it the whole gradient; tied ones are
        top - sum(where(x == top, top - x, 0))/ties, whose value is top and whose derivative
        by each tie is 1/ties (to rounding: by top, 1 - 1/ties - ... is 0 within an ulp).
        Where that is not top (an infinite top makes inf - inf), it is top itself."""
        top = self.chain(pick, xs, offset)
        if len(xs) == 1:
            return top
        zero, one = self.const(0.0, offset), self.const(1.0, offset)
        equal = OPS["=="]
        ties = [self.apply(equal, (x, top), offset) for x in xs]
        gaps = [
            self.apply(WHERE, (tie, self.apply(SUB, (top, x), offset), zero), offset)
            for tie, x in zip(ties, xs, strict=True)
        ]
        count = self.chain(ADD, ties, offset)
        share = self.apply(DIV, (self.chain(ADD, gaps, offset), count), offset)
        shared = self.apply(SUB, (top, share), offset)
        kept = self.apply(WHERE, (self.apply(equal, (shared, top), offset), shared, top), offset)
        return self.apply(WHERE, (self.apply(equal, (count, one), offset), top, kept), offset)

    def _top(self, xs: list[int], offset: int) -> int:
        """The largest element, for a shift whose gradient cancels out: the chain of max."""
        return self.chain(OPS["max"], xs, offset)

    def _norm(self, xs: list[int], offset: int) -> int:
        """A chain of hypot, which neither overflows nor underflows; at 0, where hypot's
        derivatives are nan, 0 (as PyTorch's norm), through where."""
        if len(xs) == 1:
            return self.apply(OPS["abs"], (xs[0],), offset)
        norm = self.chain(OPS["hypot"], xs, offset)
        return self._zero_where_zero(norm, norm, offset)

    def _zero_where_zero(self, test: int, value: int, offset: int) -> int:
        """where(test == 0, 0, value): 0, and no gradient through `value`, where `test` is 0
        (the norm or the variance, where a root's derivative is inf)."""
        zero = self.const(0.0, offset)
        at_zero = self.apply(OPS["=="], (test, zero), offset)
        return self.apply(WHERE, (at_zero, zero, value), offset)

    def _shifted_exps(self, xs: list[int], offset: int) -> tuple[int, list[int]]:
        """The largest element, and exp(x - largest) of each."""
        top = self._top(xs, offset)
        return top, [
            self.apply(OPS["exp"], (self.apply(SUB, (x, top), offset),), offset) for x in xs
        ]

    def _softmax(self, xs: list[int], offset: int) -> list[int]:
        _, exps = self._shifted_exps(xs, offset)
        total = self._sum(exps, offset)
        return [self.apply(DIV, (e, total), offset) for e in exps]

    def _log_softmax(self, xs: list[int], offset: int) -> list[int]:
        """(x - largest) - log(sum(exp(x - largest))) of each: finite where softmax rounds
        to 0 and its log would be -inf."""
        top, exps = self._shifted_exps(xs, offset)
        log = self.apply(OPS["log"], (self._sum(exps, offset),), offset)
        return [self.apply(SUB, (self.apply(SUB, (x, top), offset), log), offset) for x in xs]

    def _logsumexp(self, xs: list[int], offset: int) -> int:
        top, exps = self._shifted_exps(xs, offset)
        log = self.apply(OPS["log"], (self._sum(exps, offset),), offset)
        return self.apply(ADD, (top, log), offset)


def _elements(name: str, node: Node) -> list[tuple[str, int]]:
    """Each element's name and instruction: one, for a number."""
    if isinstance(node, np.ndarray):
        return list(zip(element_names(name, node.shape), node.flat, strict=True))
    return [(name, node)]  # type: ignore[list-item]


def _written_slice(part: slice) -> str:
    """A slice as a subscript writes it: `2:2`, `5:`, `::-1`."""
    bounds = ["" if b is None else str(b) for b in (part.start, part.stop, part.step)]
    return ":".join(bounds if bounds[2] else bounds[:2])


def _by_rows(shapes: Sequence[Shape]) -> str:
    """How to pair a matrix's rows with a vector's elements, which NumPy's rule does not
    (it pairs the last axes): through the transpose, as `(Z.T - mean(Z, 1)).T`."""
    matrices = [s for s in shapes if len(s) == 2]
    vectors = [s for s in shapes if len(s) == 1]
    if len(shapes) == 2 and matrices and vectors and vectors[0][0] == matrices[0][0]:
        return (
            " (the last axes are paired): to pair each row with an element, work on the "
            "transpose, as (Z.T - mean(Z, 1)).T does"
        )
    return ""


def _listed(shapes: Sequence[Shape]) -> str:
    texts = [str(tuple(s)) for s in shapes]
    return " and ".join(texts) if len(texts) <= 2 else ", ".join(texts[:-1]) + f" and {texts[-1]}"
