"""The computation graph of a program with arrays, as the source writes it: one node per
value the source makes (an input, a literal, the result of `@`, `sum`, `tanh`, ...) with its
shape and a few of its values and gradients, one per operation, as `draw` shows a scalar
graph. The values and gradients are read off the scalar graph the program is written out as
(`arrays.array_view`); `draw --scalars` draws that graph itself."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._array_ops import INDEX, LITERAL, SLICES, ArrayOp
from .._program import Apply, Const, Input, Program
from .graph import (
    ACROSS,
    ARRAY_NUMBERS,
    CONSTANT_COLOUR,
    FONT,
    INPUT_COLOUR,
    OPERAND_COLOUR,
    RESULT_COLOUR,
    TIMES,
    Drawing,
    Layout,
    _escape,
    _formula,
    constant,
    gradient_colour,
    gradient_scale,
    human,
    labels_operands,
    legend_table,
    numbered,
    roles,
    versioned,
)


def numbers(values: np.ndarray) -> str:
    """A few of an array's numbers, row-major: `1.0000, 2.0000, … (6 in all)`."""
    flat = values.ravel()
    shown = ", ".join(human(x) for x in flat[:ARRAY_NUMBERS].tolist())
    return shown if flat.size <= ARRAY_NUMBERS else f"{shown}, … ({flat.size:,} in all)"


def literal(value: np.ndarray) -> str:
    """A constant as the source writes it, `3`, `[1, 2]`, `[[1, 2], [3, 4]]`; one of more
    than ARRAY_NUMBERS numbers by its shape and its first numbers."""
    if value.size > ARRAY_NUMBERS:
        flat = ", ".join(constant(x) for x in value.ravel()[:ARRAY_NUMBERS].tolist())
        return f"{value.shape}: {flat}, … ({value.size:,} in all)"

    def written(v: np.ndarray) -> str:
        return constant(float(v)) if v.ndim == 0 else f"[{', '.join(map(written, v))}]"

    return written(value)


def draw_arrays(
    program: Program,
    nodes: Sequence[object],
    data: Sequence[float],
    grads: Sequence[float],
    known: dict[int, float],
    rankdir: str | None = None,
    legend: bool = True,
    scalar_code: Sequence[object] | None = None,
    hide_constants: bool = False,
) -> Drawing:
    """The graph of `program`'s result: `nodes` holds each instruction's node in the scalar
    program (a number, an array of them, or a slice), whose values are `data` and gradients
    `grads`; `known` the values of the nodes that read no input (indices and axes); with
    `legend`, a table that explains the picture. As a scalar graph's, the edges into an
    operation of several operands say which is which (`a`, `b`); with `scalar_code`, the
    scalar program's instructions, an operation element by element has its local
    derivatives on its edges (times 0.5000, 0.2500); an array operation's are Jacobians,
    not drawn. With `hide_constants`, a constant is written into its operation's label on its
    own side (`2 * ·`), as in a scalar graph, and has no node."""
    import graphviz  # type: ignore[import-untyped]  # graphviz ships no types

    code = program.code
    drawn = _drawn(program)
    names = versioned(program.labels)
    taken = set(names.values())

    def values_of(i: int, of: Sequence[float]) -> np.ndarray:
        return np.vectorize(lambda k: of[k], otypes=[float])(np.asarray(nodes[i], dtype=object))

    def size(grad: np.ndarray) -> float:
        """The 2-norm of a node's gradient, which colours it (inf where it overflows)."""
        with np.errstate(over="ignore", invalid="ignore"):
            return float(np.linalg.norm(grad))

    views = _views(drawn, code, nodes)
    norms = [
        size(values_of(i, grads)) for i in drawn if type(code[i]) is not Const and i not in views
    ]
    scale = gradient_scale(norms)
    layout = Layout("dot", rankdir or "LR", len(drawn))
    dot = graphviz.Digraph("nanograd", graph_attr={"rankdir": layout.rankdir})
    dot.attr("node", fontname=FONT, fontsize="11")
    dot.attr("edge", fontname=FONT, fontsize="10", arrowsize="0.7")
    count = 0

    def constant_of(i: int) -> str:
        """The text of the constant that instruction i is (a number, an array literal)."""
        return literal(values_of(i, data))

    constants = {
        i: constant_of(i) for i in drawn if type(code[i]) is Const or _literal(code[i], code)
    }

    if legend:
        shows = not hide_constants and bool(constants)
        operations = [  # (as each operation's label is, below: a literal's is [ ])
            (ins.op, len(_operands(ins)))
            for i in drawn
            if isinstance(ins := code[i], Apply) and ins.op is not LITERAL
        ]
        table = legend_table(
            scale,
            norms,
            scalar_code is not None,
            arrays=True,
            constants=shows,
            numbered=numbered(operations, taken),
        )
        dot.node("legend", table, shape="plaintext", fontsize="10")
    for i in drawn:
        ins = code[i]
        value = values_of(i, data)
        text = constants.get(i)
        if text is not None:
            if not hide_constants:
                dot.node(f"v{i}", _escape(text), shape="plaintext", fontcolor=CONSTANT_COLOUR)
                count += 1
            continue
        grad = values_of(i, grads)
        fields = [names[i]] if i in names else []
        if value.ndim:
            fields.append(f"shape {value.shape}")
        fields.append(f"data {numbers(value)}")
        attrs = {"shape": "record"}
        if i not in views:  # (a view's elements are another node's: their gradient is its)
            fields.append(f"grad {numbers(grad)}")
            attrs.update(style="filled", fillcolor=gradient_colour(size(grad), scale))
        if i == program.result:
            attrs.update(color=RESULT_COLOUR, penwidth="3")
        elif type(ins) is Input:
            attrs.update(color=INPUT_COLOUR, penwidth="2")
        # record fields run across a rank, so down the picture left to right; braces turn them
        label = " | ".join(_escape(f) for f in fields)
        dot.node(f"v{i}", label if layout.rankdir in ACROSS else "{ " + label + " }", **attrs)
        count += 1
        if type(ins) is not Apply:
            continue
        operands = _operands(ins)
        labelled = labels_operands(ins.op, len(operands)) and ins.op is not LITERAL
        parameters = roles(ins.op, taken)
        symbol = _operation(ins, nodes, known)
        hidden = [constants.get(a) if hide_constants else None for a in operands]
        folded = any(t is not None for t in hidden) and ins.op is not LITERAL
        placeholder = folded and len(operands) - sum(t is not None for t in hidden) == 1
        if folded:  # 2 * ·, · / 10: the constant on its own side
            texts = [
                t if t is not None else "·" if placeholder else p
                for t, p in zip(hidden, parameters, strict=False)
            ]
            symbol = _formula(ins.op, texts)
        elif labelled:
            symbol = _formula(ins.op, parameters)
        dot.node(f"op{i}", _escape(symbol), shape="ellipse", fontsize="10")
        count += 1
        elementwise = scalar_code is not None and type(ins.op) is not ArrayOp
        for j, a in enumerate(operands):
            if hidden[j] is not None:
                continue
            role = parameters[j] if labelled and not placeholder else ""
            edge: dict[str, str] = {}
            if elementwise and type(code[a]) is not Const and not _literal(code[a], code):
                local = _local(ins.op, j, nodes[i], scalar_code, data)  # type: ignore[arg-type]
                edge["label"] = _escape(f"{role} {TIMES}{numbers(local)}".strip())
                if role:
                    edge["fontcolor"] = OPERAND_COLOUR
            elif role:  # (a constant's edge has no derivative: no gradient flows to it)
                edge.update(headlabel=role, fontcolor=OPERAND_COLOUR, labeldistance="1.6")
            dot.edge(f"v{a}", f"op{i}", **edge)
        dot.edge(f"op{i}", f"v{i}")
    return Drawing(dot, count, layout)


def _views(drawn: list[int], code: Sequence[object], nodes: Sequence[object]) -> set[int]:
    """The drawn operations whose elements are all elements of a node drawn before them (x[0],
    x[0:2], W.T): the scalar program has no node of their own, so the gradient it holds for
    their elements is the whole of the other node's, not what flows through them."""
    seen: set[object] = set()
    views = set()
    for i in drawn:
        node = nodes[i]
        elements = (
            set(np.asarray(node, dtype=object).ravel().tolist())
            if isinstance(node, (int, np.ndarray))
            else set()
        )
        if type(code[i]) is Apply and elements and elements <= seen:
            views.add(i)
        seen |= elements
    return views


def _local(op, j: int, node: object, code: Sequence[object], data: Sequence[float]) -> np.ndarray:
    """The local derivative of an operation element by element with respect to its operand
    `j`, at each element of its value `node` (the scalar program's instructions `code`,
    their values `data`)."""

    def at(k: int) -> float:
        args = code[k].args  # type: ignore[attr-defined]  # an Apply of op
        return op.derivative(*(data[a] for a in args), data[k])[j]

    return np.vectorize(at, otypes=[float])(np.asarray(node, dtype=object))


def _operands(ins: Apply) -> tuple[int, ...]:
    """The instructions an operation takes as operands: not those it reads as indices,
    slices, sizes or axes, which its own label shows."""
    op = ins.op
    if op is INDEX or (type(op) is ArrayOp and op.name in AXIS_SECOND):
        return ins.args[:1]
    if op in SLICES.values() or (type(op) is ArrayOp and op.name in ("zeros", "ones", "eye")):
        return ()
    return ins.args


# The operations whose second argument, if any, is an axis.
AXIS_SECOND = ("sum", "mean", "prod", "amax", "amin", "norm", "softmax", "logsumexp")


def _drawn(program: Program) -> list[int]:
    """The instructions that make the results' values, in order, reached through operands
    (an array literal of numbers is one, its numbers are not)."""
    reached = [False] * len(program.code)
    for root in program.results.values():
        reached[root] = True
    for i in range(len(program.code) - 1, -1, -1):
        ins = program.code[i]
        if reached[i] and type(ins) is Apply and not _literal(ins, program.code):
            for a in _operands(ins):
                reached[a] = True
    return [i for i, r in enumerate(reached) if r]


def _literal(ins: object, code: Sequence) -> bool:
    """Whether `ins` is an array literal of numbers the source writes (or of such literals:
    a matrix's rows)."""
    return (
        type(ins) is Apply
        and ins.op is LITERAL
        and all(type(code[a]) is Const or _literal(code[a], code) for a in ins.args)
    )


def _operation(ins: Apply, nodes: Sequence[object], known: dict[int, float]) -> str:
    """An operation as the drawing names it: `@`, `tanh`, `[1, :]`, `sum(axis 0)`."""
    op = ins.op
    if op is INDEX:
        return "[" + ", ".join(_subscript(nodes[a], known) for a in ins.args[1:]) + "]"
    if op is LITERAL:
        return "[…]"
    if type(op) is ArrayOp and len(ins.args) == 2 and op.name in AXIS_SECOND:
        axis = known.get(nodes[ins.args[1]])  # type: ignore[call-overload]
        return f"{op.name} (axis {axis:g})" if axis is not None and math.isfinite(axis) else op.name
    return op.name


def _subscript(node: object, known: dict[int, float]) -> str:
    if isinstance(node, slice):
        step = "" if node.step is None else f":{node.step}"
        start = "" if node.start is None else node.start
        stop = "" if node.stop is None else node.stop
        return f"{start}:{stop}{step}"
    return f"{known[node]:g}"  # type: ignore[index]
