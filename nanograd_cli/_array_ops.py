"""The operations on arrays, as the parser records them: `@`, `.T`, literals, indexing and
the array functions. None of them is ever evaluated: `arrays.written_out` writes each one as
the scalar operations it stands for, once the shapes of the inputs are known."""

from __future__ import annotations

from ._ops import Op


def _written_out_first(*args: float) -> float:
    raise AssertionError("an array operation is written out in scalars before it is evaluated")


class ArrayOp(Op):
    """An operation on arrays: `name` as the language writes it, taking any number of
    arguments in `arities`."""

    __slots__ = ("arities",)

    def __init__(self, name: str, arities: tuple[int, ...], doc: str, syntax: str = "call"):
        super().__init__(name, max(arities), _written_out_first, (), doc, syntax=syntax)
        self.arities = arities


MATMUL = ArrayOp("@", (2,), "the matrix product (of two vectors, their dot product)", "infix")
TRANSPOSE = ArrayOp(".T", (1,), "the transpose", "postfix")
LITERAL = ArrayOp("[]", (1,), "an array of its elements", "literal")
# x[i, j]: the array, then one argument per subscript (an index, or one of SLICES)
INDEX = ArrayOp("index", (1,), "an element, or a part, of an array", "postfix")
# a:b, a:, :b, :, a:b:c, ::c and the rest, by which of start, stop and step are written;
# their arguments are those written
SLICES = {
    (start, stop, step): ArrayOp("slice", (start + stop + step,), "a slice", "infix")
    for start in (False, True)
    for stop in (False, True)
    for step in (False, True)
}
# Which of start, stop and step each slice's arguments are, by the slice
SLICES_BY_OP: dict[Op, tuple[bool, bool, bool]] = {op: kind for kind, op in SLICES.items()}

# The functions on arrays, by name: the reductions take the axis second, as NumPy does.
_CALLED = [
    ArrayOp("sum", (1, 2), "the sum of the elements (along an axis)"),
    ArrayOp("mean", (1, 2), "the mean of the elements (along an axis)"),
    ArrayOp("prod", (1, 2), "the product of the elements (along an axis)"),
    ArrayOp("max", (1,), "the largest element; max(a, b) is element by element"),
    ArrayOp("min", (1,), "the smallest element; min(a, b) is element by element"),
    ArrayOp("amax", (1, 2), "the largest element (along an axis), as max(x) is"),
    ArrayOp("amin", (1, 2), "the smallest element (along an axis), as min(x) is"),
    ArrayOp("var", (1, 2), "the variance, mean((x - mean(x))**2), as NumPy's (along an axis)"),
    ArrayOp("std", (1, 2), "the standard deviation, sqrt(var(x)) (along an axis)"),
    ArrayOp("norm", (1, 2), "the Euclidean norm (along an axis)"),
    ArrayOp("softmax", (1, 2), "exp(x)/sum(exp(x)), computed without overflow (along an axis)"),
    ArrayOp("logsumexp", (1, 2), "log(sum(exp(x))), computed without overflow (along an axis)"),
    ArrayOp(
        "log_softmax", (1, 2), "x - logsumexp(x): log(softmax(x)) without underflow (along an axis)"
    ),
    ArrayOp("dot", (2,), "the dot product of two vectors (a @ b)"),
    ArrayOp("outer", (2,), "the outer product of two vectors"),
    ArrayOp("len", (1,), "the length of the first axis"),
    ArrayOp("zeros", (1, 2, 3), "an array of zeros of the shape given"),
    ArrayOp("ones", (1, 2, 3), "an array of ones of the shape given"),
    ArrayOp("eye", (1,), "the identity matrix of the size given"),
]
# Each by (name, number of arguments), as ops.CALLS has the scalar functions.
ARRAY_CALLS: dict[tuple[str, int], ArrayOp] = {
    (op.name, n): op for op in _CALLED for n in op.arities
}
ARRAY_FUNCTIONS: dict[str, ArrayOp] = {op.name: op for op in _CALLED}
