"""A parsed source: a flat list of instructions, evaluated into a Value graph at any point."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .engine import Value, apply
from .errors import MissingInputs, SourceError, UnknownInputs
from .ops import CONST, Op

# An instruction makes one node, numbered by its place in `Program.code`:
#   (None, name, offset)      the input `name`
#   (CONST, number, offset)   a constant
#   (op, (i, j), offset)      `op` applied to the nodes made by instructions i (and j)
# `offset` is where in the source the instruction comes from.
Instruction = tuple[Op | None, object, int]


class Program:
    """A source parsed once, to be evaluated at as many points as needed.

    `inputs` are in the order they are first read; `result` is the instruction whose node is
    the result; `labels` maps an instruction to the name it was bound to; `input_slots` maps
    an input to the instruction that reads it.
    """

    def __init__(
        self,
        source: str,
        code: list[Instruction],
        inputs: list[str],
        result: int,
        labels: dict[int, str],
    ):
        self.source = source
        self.code = code
        self.inputs = inputs
        self.result = result
        self.labels = labels
        self.input_slots = {args: i for i, (op, args, _) in enumerate(code) if op is None}

    def varying(self) -> list[bool]:
        """Per instruction: does it depend on an input (so that it has a derivative)?"""
        varies = [False] * len(self.code)
        for i, (op, args, _) in enumerate(self.code):
            varies[i] = op is None or (op is not CONST and any(varies[a] for a in args))
        return varies

    def evaluate(self, values: Mapping[str, float]) -> Evaluation:
        """The graph at the point `values` (one value per input), not yet differentiated."""
        self.check_inputs(values)
        nodes: list[Value] = []
        append = nodes.append
        for op, args, _ in self.code:
            if op is None:
                append(Value(values[args]))
            elif op is CONST:
                append(Value.constant(args))
            else:
                append(apply(op, *[nodes[i] for i in args]))
        return Evaluation(self, nodes)

    def values(self, point: Mapping[str, float]) -> list[float]:
        """Every instruction's value at `point`, as plain floats: no graph is built."""
        self.check_inputs(point)
        data: list[float] = []
        for op, args, _ in self.code:
            if op is None:
                data.append(float(point[args]))
            elif op is CONST:
                data.append(args)
            else:
                data.append(op.forward(*(data[i] for i in args)))
        return data

    def first_non_finite(self, data: Sequence[float]) -> SourceError | None:
        """Where the first operation that made nan or inf out of finite operands is, if any,
        given every instruction's value."""
        for i, (op, args, offset) in enumerate(self.code):
            if op is None or op is CONST or math.isfinite(data[i]):
                continue
            if all(math.isfinite(data[j]) for j in args):
                name = op.name if op.arity == 1 else f"'{op.name}'"  # neg never gets here
                return SourceError(f"{name} gave {data[i]}", self.source, offset)
        return None

    def check_inputs(self, values: Mapping[str, float]) -> None:
        """Raise if an input has no value, or a value is given for a name that is no input."""
        unknown = [name for name in values if name not in self.inputs]
        if unknown:
            raise UnknownInputs(unknown, self.inputs)
        missing = [name for name in self.inputs if name not in values]
        if missing:
            raise MissingInputs(missing)

    def gradients(self, values: Mapping[str, float]) -> Evaluation:
        """Evaluate at `values` and differentiate the result."""
        evaluation = self.evaluate(values)
        evaluation.result.backward()
        return evaluation


class Evaluation:
    """A program's graph at one point: one node per instruction."""

    def __init__(self, program: Program, nodes: list[Value]):
        self.program = program
        self.nodes = nodes

    def _repr_svg_(self) -> str | None:
        """The graph as SVG, for Jupyter, nodes named as the program binds them."""
        from .render.graph import draw_evaluation, svg_or_none

        return svg_or_none(draw_evaluation(self))

    @property
    def result(self) -> Value:
        return self.nodes[self.program.result]

    @property
    def inputs(self) -> dict[str, Value]:
        """Each input's node, in the program's input order."""
        slots = self.program.input_slots
        return {name: self.nodes[slots[name]] for name in self.program.inputs}

    def first_non_finite(self) -> SourceError | None:
        """Where the first operation that made nan or inf out of finite operands is, if any."""
        return self.program.first_non_finite([node.data for node in self.nodes])
