"""`diff` of a program on arrays, once the shapes of its array inputs are known.

In vector form where one exists, as a person writes it: the reverse pass of `symbolic.derive`
run on the array operations themselves, each passing its adjoint back as matrix calculus does
(`A@x` passes A.T@g to x and outer(g, x) to A; a sum passes g to every element; broadcasting
is undone by summing), so that `norm(A@x - b)**2` gives `2*A.T@(A@x - b)`. Else (indexing,
literals, max, an axis of a higher rank) element by element: the derivative as an array
literal of the program written out in scalars, `[2*x[0], 2*x[1]]`, as the engine computes it.

A vector form is kept only if it has the input's shape and agrees with the element-by-element
derivative at three points drawn at random (the same every run): the canonical algebra was
made for numbers, and this is what shows that a form is also right for arrays.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ._algebra import CALL, INPUT, NUMBER, PRODUCT, SUM, Builder, Expr, reachable
from ._array_ops import ARRAY_FUNCTIONS, INDEX, LITERAL, MATMUL, TRANSPOSE, ArrayOp
from ._arrays import result_elements, written_out, written_out_with_shapes
from ._formula import Note
from ._ops import DIV, MUL, SUB
from ._program import Apply, Program
from ._symbolic import (
    Derivatives,
    derivative_names,
    derive,
    function_name,
    to_source,
    whole_numbers,
    written,
)
from .errors import NanogradError
from .results import Layout, Shape, array_of, element_name, element_names

_SUM = ARRAY_FUNCTIONS["sum"]
_ONES, _ZEROS, _OUTER, _SOFTMAX, _MEAN = (
    ARRAY_FUNCTIONS[n] for n in ("ones", "zeros", "outer", "softmax", "mean")
)
_REDUCTIONS = frozenset(
    ("sum", "mean", "var", "std", "prod", "max", "min", "amax", "amin", "norm", "logsumexp")
)

# The points the vector form is checked at (the same every run), each element drawn from
# one of these ranges: away from the kinks at 0 and 1, one inside every function's domain.
_SEED = 20261205
_RANGES = ((0.5, 0.95), (1.5, 3.0), (-2.0, -0.5))
_RTOL, _ATOL = 1e-9, 1e-12


class NoVectorForm(Exception):
    """An operation whose adjoint the language cannot write on whole arrays."""


class ArrayAdjoints:
    """The array operations' adjoints for `symbolic.derive`, and the shapes they need: of
    the inputs, of each instruction of `program` (`instruction_shapes`) and of each
    expression made."""

    def __init__(
        self,
        builder: Builder,
        program: Program,
        shapes: Mapping[str, Shape],
        instruction_shapes: list[Shape],
    ):
        self.b = builder
        self.exact = not builder.textbook  # x/norm(x) is nan at 0, where the engine has 0
        self.code = program.code
        self.inputs = dict(shapes)
        self.instruction_shapes = instruction_shapes
        self._shapes: dict[int, Shape] = {}
        self.noted: set[int] = set()  # the conditions of the adjoints' own textbook forms

    # shapes

    def shape(self, e: Expr) -> Shape:
        """The shape of the array `e` stands for."""
        known = self._shapes.get(id(e))
        if known is not None:
            return known
        for node in reachable([e]):
            if id(node) not in self._shapes:
                self._shapes[id(node)] = self._shape_of(node)
        return self._shapes[id(e)]

    def is_array(self, e: Expr) -> bool:
        """Whether `e` stands for an array (not a number), as far as its shape is known."""
        try:
            return bool(self.shape(e))
        except NoVectorForm:
            return False

    def _shape_of(self, e: Expr) -> Shape:
        if e.kind == INPUT:
            return tuple(self.inputs.get(e.value, ()))
        if e.kind == NUMBER:
            return ()
        args = [self._shapes[id(a)] for a in e.args]
        if e.kind != CALL or type(e.op) is not ArrayOp:  # element by element
            try:
                return np.broadcast_shapes(*args)
            except ValueError:
                raise NoVectorForm from None
        return self._array_shape(e, args)

    def _array_shape(self, e: Expr, args: list[Shape]) -> Shape:
        name = e.op.name
        if e.op is MATMUL:
            return _matmul_shape(*args)
        if e.op is TRANSPOSE:
            return args[0][::-1]
        if e.op is LITERAL:
            return (len(args), *args[0])
        if e.op is INDEX:
            return args[0][len(_indices(e.args[1:], args[0])) :]
        if name in _REDUCTIONS:
            return _without_axis(args[0], e.args[1:])
        if name in ("softmax", "log_softmax"):
            return args[0]
        if name == "outer":
            return (math.prod(args[0]), math.prod(args[1]))
        if name in ("ones", "zeros"):
            return tuple(int(a.value) for a in e.args)
        if name == "eye":
            return (int(e.args[0].value),) * 2
        if name in ("dot", "len"):
            return ()
        raise NoVectorForm

    # the adjoints

    def adjoints(
        self,
        ins: Apply,
        args: list[Expr],
        out: Expr,
        g: Expr,
        conditions: list[tuple[int, Note]],
    ) -> list[tuple[int, Expr]]:
        """What the array operation `ins` (of arguments `args`, value `out`) passes back to
        each argument from its adjoint `g`; where a textbook form is not the engine's
        everywhere, its condition is added to `conditions` (x/norm(x): norm(x) != 0). Where
        that needs g whole and g is one number for every element, g multiplies what ones
        would pass back: 2*s*(A.T@ones(3)), not A.T@(2*s*ones(3))."""
        shape = self.shape(out)
        if shape and not self.shape(g) and _needs_whole(ins, self.instruction_shapes):
            ones = self.ones(shape)
            return [
                (a, self.times(g, c)) for a, c in self.adjoints(ins, args, out, ones, conditions)
            ]
        op, shapes = ins.op, [self.instruction_shapes[a] for a in ins.args]
        b = self.b
        if op is MATMUL:
            (ia, ib), (a, m) = ins.args, args
            if len(shapes[0]) == len(shapes[1]) == 1:
                return [(ia, self.times(g, m)), (ib, self.times(g, a))]
            g = self.expanded(g, self.shape(out))
            if len(shapes[0]) == 2 and len(shapes[1]) == 1:
                return [(ia, b.apply(_OUTER, g, m)), (ib, self.matmul(self.t(a), g))]
            if len(shapes[0]) == 1 and len(shapes[1]) == 2:
                return [(ia, self.matmul(m, g)), (ib, b.apply(_OUTER, a, g))]
            return [(ia, self.matmul(g, self.t(m))), (ib, self.matmul(self.t(a), g))]
        if op is TRANSPOSE:
            return [(ins.args[0], self.t(g))]
        if op is INDEX:  # x[1] passes g*[0, 1, 0]; W[1] outer([0, 1], g)
            shape = shapes[0]
            at = _indices(args[1:], shape)
            if len(at) == len(shape):
                return [(ins.args[0], self.times(g, self.one_hot(shape, at)))]
            if len(at) == 1 and len(shape) == 2:
                row = self.expanded(g, shape[1:])
                return [(ins.args[0], b.apply(_OUTER, self.one_hot(shape[:1], at), row))]
            raise NoVectorForm
        name = op.name
        (x, *axis), (shape, *_) = args, shapes
        if name in ("sum", "mean") and (not axis or len(shape) == 2):
            spread = g if name == "sum" else b.apply(DIV, g, b.const(_count(shape, axis)))
            if axis and _axis(axis[0], shape) == 1:  # sum(W, 1): g down each row
                spread = b.apply(_OUTER, self.expanded(spread, (shape[0],)), self.ones(shape[1:]))
            return [(ins.args[0], spread)]
        if name == "norm" and not axis and not self.exact:  # the engine has 0 at x = 0
            self.where_nonzero(out, ins.args[0], conditions)
            return [(ins.args[0], b.apply(DIV, self.times(g, x), out))]
        if name == "dot":
            a, m = args
            return [(ins.args[0], self.times(g, m)), (ins.args[1], self.times(g, a))]
        if name == "outer":
            a, m = args
            g = self.expanded(g, (shapes[0][0], shapes[1][0]))
            return [(ins.args[0], self.matmul(g, m)), (ins.args[1], self.matmul(self.t(g), a))]
        if name == "softmax" and not axis and len(shape) == 1:  # s*g - s*sum(g*s)
            g = self.expanded(g, shape)  # sum(g*s), not g@s: -y/s*s is -y, as it cancels
            spread = self.times(out, self.summed(self.times(g, out)))
            return [(ins.args[0], b.apply(SUB, self.times(out, g), spread))]
        if name == "log_softmax" and not axis and len(shape) == 1:  # g - softmax(x)*sum(g)
            g = self.expanded(g, shape)
            spread = self.times(b.apply(_SOFTMAX, x), self.summed(g))
            return [(ins.args[0], b.apply(SUB, g, spread))]
        if name == "var" or (name == "std" and not self.exact):  # (std: the engine has 0 at 0)
            if axis and len(shape) != 2:
                raise NoVectorForm
            # 2*g*(x - mean(x))/n, std's over 2*std; along the rows of W, each row's
            mean, share = b.apply(_MEAN, *args), g
            if name == "std":
                self.where_nonzero(out, ins.args[0], conditions)
                share = b.apply(DIV, share, out)
            if axis and _axis(axis[0], shape) == 1:  # var(W, 1): down each row
                mean = b.apply(_OUTER, mean, self.ones(shape[1:]))
                if self.shape(share):  # (one number broadcasts as it is)
                    share = b.apply(_OUTER, share, self.ones(shape[1:]))
            count = float(_count(shape, axis))
            share = b.apply(
                DIV, b.apply(MUL, b.const(2.0 if name == "var" else 1.0), share), b.const(count)
            )
            return [(ins.args[0], self.times(share, b.apply(SUB, x, mean)))]
        if name == "len":  # a length: the same for every value
            return []
        if name == "logsumexp" and not axis:
            return [(ins.args[0], self.times(g, b.apply(_SOFTMAX, x)))]
        raise NoVectorForm

    def where_nonzero(self, out: Expr, arg: int, conditions: list[tuple[int, Note]]) -> None:
        """Add to `conditions` that the adjoint to `arg` holds where `out` is not 0 (the
        engine's is 0 there: norm's and std's)."""
        note = Note(out, "!=")
        self.noted.add(id(note))
        conditions.append((arg, note))

    def reduced(self, contribution: Expr, arg: int, value: int) -> Expr:
        """What an element-by-element operation (instruction `value`) passes back to its
        argument `arg`: `contribution` stands for itself broadcast to the value's shape,
        summed down to the argument's (x + W, x of shape (3,) and W (2, 3): g summed over
        the rows, or 2*g where g is one number). An array operation's adjoints have their
        arguments' shapes already."""
        made = self.code[value]
        if type(made) is Apply and type(made.op) is ArrayOp:
            return contribution
        full, target = self.instruction_shapes[value], self.instruction_shapes[arg]
        shape = self.shape(contribution)
        if not target and full:  # to one number: the sum of every copy
            summed = self.summed(contribution) if shape else contribution
            return self.scaled(math.prod(full) // math.prod(shape), summed)
        copies = 1
        for k in range(len(full) - len(target)):  # the axes the argument lacks
            if len(shape) + k >= len(full) and shape[0] > 1:  # the contribution has it
                contribution = self.summed(contribution, 0)
                shape = shape[1:]
            else:  # g broadcast along it: as many copies as it is long
                copies *= full[k]
                shape = shape[1:] if len(shape) + k >= len(full) else shape
        for f, t in zip(full[len(full) - len(target) :], target, strict=True):
            if t == 1 and f > 1:
                raise NoVectorForm  # an axis of 1 broadcast: no sum keeps it
        return self.scaled(copies, contribution)

    def expanded(self, e: Expr, shape: Shape | int) -> Expr:
        """`e` spread over `shape` (or the shape of the instruction numbered so)."""
        if isinstance(shape, int):
            shape = self.instruction_shapes[shape]
        if self.shape(e) == shape:
            return e
        if e.kind == NUMBER and e.value == 0.0:
            return self.b.apply(_ZEROS, *map(self.b.const, shape))
        return self.times(e, self.ones(shape))

    # the pieces

    def ones(self, shape: Shape) -> Expr:
        if not 1 <= len(shape) <= 3:
            raise NoVectorForm
        return self.b.apply(_ONES, *map(self.b.const, shape))

    def summed(self, e: Expr, *axis: int) -> Expr:
        """sum(e) (along `axis`), a number that multiplies e taken out: 2*sum(x); of an array
        of numbers (ones(3), [0, 1, 0]), the number."""
        k, rest = self._split(e)
        total = None if axis else _constant_sum(rest)
        if total is not None:
            return self.b.const(k * total)
        return self.scaled(k, self.b.apply(_SUM, rest, *map(self.b.const, axis)))

    def one_hot(self, shape: Shape, at: tuple[int, ...]) -> Expr:
        """The array of `shape` that is 1 at `at`, 0 elsewhere, as a literal."""
        hot = np.zeros(shape)
        hot[at] = 1.0
        return _literal(self.b, np.vectorize(self.b.const, otypes=[object])(hot))

    def times(self, a: Expr, c: Expr) -> Expr:
        return self.b.apply(MUL, a, c)

    def scaled(self, k: float, e: Expr) -> Expr:
        """k*e, or e itself for k 1."""
        return e if k == 1 else self.times(self.b.const(float(k)), e)

    def t(self, e: Expr) -> Expr:
        """The transpose of e: e itself for a vector, x for x.T."""
        if len(self.shape(e)) < 2:
            return e
        if e.kind == CALL and e.op is TRANSPOSE:
            return e.args[0]
        return self.b.apply(TRANSPOSE, e)

    def matmul(self, a: Expr, m: Expr) -> Expr:
        """a@m, a number that multiplies either taken out: 2*(A.T@r), not A.T@(2*r)."""
        ka, a = self._split(a)
        km, m = self._split(m)
        return self.scaled(ka * km, self.b.apply(MATMUL, a, m))

    def _split(self, e: Expr) -> tuple[float, Expr]:
        """e as a number times the rest."""
        if e.kind == PRODUCT and e.value != 1.0:
            rest = self.b.multiply(1.0, list(zip(e.args, e.weights, strict=True)))
            if rest is not None and e.value < 0.0 and rest.kind == SUM:  # 2*A.T@(A@x - b)
                rest = self.b.multiply(-1.0, [(rest, 1.0)])
                return (-e.value, rest) if rest is not None else (1.0, e)
            if rest is not None:
                return e.value, rest
        return 1.0, e


def _needs_whole(ins: Apply, shapes: list[Shape]) -> bool:
    """Whether the adjoint of `ins` uses the adjoint of its value whole, not element by
    element: a matrix product, outer, softmax and log_softmax, a row taken or a sum along
    rows."""
    first = shapes[ins.args[0]]
    if ins.op is MATMUL:
        return not len(first) == len(shapes[ins.args[1]]) == 1
    if ins.op is INDEX:
        return len(ins.args) - 1 < len(first)
    return ins.op.name in ("outer", "softmax", "log_softmax") or (
        ins.op.name in ("sum", "mean") and len(ins.args) == 2
    )


def _indices(subscripts, shape: Shape) -> tuple[int, ...]:
    """The whole-number subscripts of an indexing, each within its axis; else no vector
    form (a slice, an index that is computed)."""
    if not all(s.kind == NUMBER for s in subscripts) or len(subscripts) > len(shape):
        raise NoVectorForm
    return tuple(int(s.value) % n for s, n in zip(subscripts, shape, strict=False))


def _matmul_shape(a: Shape, m: Shape) -> Shape:
    if len(a) > 2 or len(m) > 2 or not a or not m or a[-1] != m[0]:
        raise NoVectorForm
    return (*a[:-1], *m[1:])


def _axis(axis: Expr, shape: Shape) -> int:
    if axis.kind != NUMBER:
        raise NoVectorForm
    return int(axis.value) % len(shape)


def _without_axis(shape: Shape, axis: list[Expr] | tuple[Expr, ...]) -> Shape:
    if not axis:
        return ()
    k = _axis(axis[0], shape)
    return shape[:k] + shape[k + 1 :]


def _count(shape: Shape, axis: list[Expr]) -> int:
    return shape[_axis(axis[0], shape)] if axis else math.prod(shape)


def derivatives_text(
    program: Program,
    shapes: Mapping[str, Shape],
    wrt: list[str],
    latex: bool = False,
    exact: bool = False,
    notes: str = "usual",
) -> str:
    """The derivative by each input in `wrt` (all when empty) as `diff` prints it, for array
    inputs of `shapes`: in vector form where one exists, else as an array literal (for an
    array result, the Jacobian: of the result's shape, then the input's). By an element,
    `x[0]`, element by element. `notes`: which are shown (diff's notes)."""
    wrt = [n if n in program.inputs else element_name(n, shapes.get(array_of(n), ())) for n in wrt]
    wrt = wrt or program.inputs
    textbook = not exact
    # a source of whole numbers: its fractions as fractions (2*(x - mean(x))/27, not 0.074...)
    whole_source = textbook and whole_numbers(program)
    builder = Builder(textbook, whole_source)
    scalar, layout, instruction_shapes = written_out_with_shapes(program, shapes)
    result_shape = layout.results["result"]
    found = Derivatives({}, {}, {}, textbook, partial=True, function=function_name(program))
    found.whole = whole_source
    if not result_shape:  # a Jacobian is written element by element
        plain = _without_vector_transposes(program, instruction_shapes)
        adjoints = ArrayAdjoints(builder, plain, shapes, instruction_shapes)
        whole = list(dict.fromkeys(map(array_of, wrt)))  # x for x[0]: its vector form indexed
        vector = _vector_form(builder, plain, whole, textbook, adjoints)
        for name, root in vector.roots.items():
            if _agrees(root, scalar, shapes, name):
                found.roots[name] = root
                found.notes[name] = vector.notes.get(name, [])
    rest = [name for name in wrt if name not in found.roots]
    if rest:
        by_element = _by_element(builder, scalar, layout, shapes, rest, textbook)
        found.roots.update(by_element.roots)
        found.notes.update(by_element.notes)
    for name in rest:  # an element, x[1]: that of the vector form where it is shorter
        array = array_of(name)
        if name not in program.inputs and array in found.roots:
            element = _element(builder, found.roots[array], name)
            if len(to_source({"": element})) < len(to_source({"": found.roots[name]})):
                found.roots[name], found.notes[name] = element, found.notes[array]
    labels = derivative_names(wrt, set(program.inputs) | set(program.labels.values()))
    found.roots = {labels[n]: found.roots[n] for n in wrt}
    found.notes = {labels[n]: found.notes[n] for n in wrt}
    is_array = ArrayAdjoints(builder, program, shapes, instruction_shapes).is_array
    return written(found, latex, is_array, notes=notes)


def _by_element(
    builder: Builder,
    scalar: Program,
    layout: Layout,
    shapes: Mapping[str, Shape],
    wrt: list[str],
    textbook: bool,
) -> Derivatives:
    """The derivatives of `scalar` (the program written out, as `layout` says) by each
    input's elements (or by an element, `x[0]`), as array literals of the result's shape
    then the input's."""
    elements = {name: element_names(name, tuple(shapes.get(name, ()))) for name in wrt}
    every = [e for names in elements.values() for e in names]
    found = [
        derive(element, every, textbook, builder=builder)
        for element in result_elements(scalar, layout)
    ]
    roots: dict[str, Expr] = {}
    notes: dict[str, list[Note]] = {}
    for name, names in elements.items():
        shape = (*layout.results["result"], *shapes.get(name, ()))
        parts = np.empty((len(found), len(names)), dtype=object)
        for k, derivatives in enumerate(found):
            parts[k] = [derivatives.roots[e] for e in names]
        roots[name] = _literal(builder, parts.reshape(shape)) if shape else parts[0, 0]
        notes[name] = _merged(n for d in found for e in names for n in d.notes.get(e, []))
    return Derivatives(roots, {}, notes, textbook)


def _element(builder: Builder, root: Expr, name: str) -> Expr:
    """The element `name` (`W[1,2]`) of the array `root`: root[1, 2]."""
    index = name[name.index("[") + 1 : -1].split(",")
    return builder.apply(INDEX, root, *(builder.const(float(i)) for i in index))


def _constant_sum(e: Expr) -> float | None:
    """The sum of the elements of `e` where it is an array of numbers: ones, zeros, or a
    literal of numbers; else None."""
    if e.kind != CALL:
        return None
    if e.op in (_ONES, _ZEROS):
        return math.prod(a.value for a in e.args) if e.op is _ONES else 0.0
    if e.op is not LITERAL:
        return None
    total = 0.0
    for part in e.args:
        value = part.value if part.kind == NUMBER else _constant_sum(part)
        if value is None:
            return None
        total += value
    return total


def _literal(builder: Builder, parts: np.ndarray) -> Expr:
    if parts.ndim == 1:
        return builder.apply(LITERAL, *parts)
    return builder.apply(LITERAL, *(_literal(builder, p) for p in parts))


def _merged(notes) -> list[Note]:
    """Each note once."""
    seen: dict[tuple[int, str, str], Note] = {}
    for n in notes:
        seen.setdefault((id(n.expr), n.relation, n.why), n)
    return list(seen.values())


def _without_vector_transposes(program: Program, shapes: list[Shape]) -> Program:
    """`program` with `x.T` read as `x` where x is a vector or a number (the transpose does
    nothing to it), so that a derivative says `x@A`, not `x.T@A`, and `x@x` has 2*x."""
    same = list(range(len(program.code)))
    for i, ins in enumerate(program.code):
        if type(ins) is Apply and ins.op is TRANSPOSE and len(shapes[ins.args[0]]) < 2:
            same[i] = same[ins.args[0]]
    if same == list(range(len(program.code))):
        return program
    code = [
        ins._replace(args=tuple(same[a] for a in ins.args)) if type(ins) is Apply else ins
        for ins in program.code
    ]
    outputs = {name: same[i] for name, i in program.outputs.items()}
    return Program(
        program.source, code, program.inputs, same[program.result], program.labels, outputs, True
    )


def _vector_form(
    builder: Builder, program: Program, wrt: list[str], textbook: bool, adjoints: ArrayAdjoints
) -> Derivatives:
    """The derivatives in vector form, of the inputs that have one. A condition of an array
    operation's textbook form is kept where the form's divisor is still in the derivative
    (x/norm(x), not 2*A.T@(A@x - b), where norm(A@x - b)**2 cancelled it)."""
    try:
        found = derive(program, wrt, textbook, builder=builder, arrays=adjoints)
    except NoVectorForm:
        return Derivatives({})
    for name, root in found.roots.items():
        inside = {id(e) for e in reachable([root])}
        found.notes[name] = [
            n
            for n in found.notes.get(name, [])
            if id(n) not in adjoints.noted or id(n.expr) in inside
        ]
    return found


def _agrees(root: Expr, scalar: Program, shapes: Mapping[str, Shape], name: str) -> bool:
    """Whether `root`, a derivative by `name` in vector form, has its shape and the values
    of `scalar`'s gradient (to rounding) at the points of the check where those are
    numbers, and there is one."""
    from ._language import parse

    shape = tuple(shapes.get(name, ()))
    try:
        form, layout = written_out(parse(to_source({"": root})), shapes)
    except NanogradError:
        return False
    if layout.results["result"] != shape:
        return False
    rng = np.random.default_rng(_SEED)
    checked = False
    for low, high in _RANGES:
        point = dict(
            zip(scalar.inputs, rng.uniform(low, high, len(scalar.inputs)).tolist(), strict=True)
        )
        expected = scalar.grad(point).gradients
        wanted = np.array([expected[e] for e in element_names(name, shape)])
        if not np.isfinite(wanted).all():
            continue
        values = form.values({n: point[n] for n in form.inputs})
        got = [values[i] for i in form.results.values()]
        if not np.allclose(got, wanted, rtol=_RTOL, atol=_ATOL):
            return False
        checked = True
    return checked
