"""A parsed source: a flat list of typed instructions, and the one walker that interprets it."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from ._instructions import Apply, Const, Input, Instruction
from ._ops import CONSTANTS, WHERE
from .engine import Value, apply
from .errors import MissingInputs, SeveralOutputs, SourceError, UnknownInputs
from .results import Gradients, Jacobian

T = TypeVar("T")

# A run of instructions that are elements of one array, for messages: the first and past the
# last instruction, the array's shape, and the first one's place in it (row-major).
Place = tuple[int, int, tuple[int, ...], int]

__all__ = ["Apply", "Const", "Input", "Instruction", "Program"]


class Program:
    """A source parsed once, to be evaluated at as many points as needed.

    `code` makes one node per instruction, numbered by its place; `inputs` are in the order
    they are first read; `result` is the instruction whose node is the result; `labels` maps
    an instruction to the name it was bound to; `input_slots` maps an input to the
    instruction that reads it. A source that ends with a list of names (`u, v`) has several
    outputs: `outputs` maps each name to its instruction (empty for one result), and `result`
    is the first. A program with `arrays` is written out in scalars (`arrays.scalarized`)
    before it is evaluated. A program written out in scalars has `places`: the runs of its
    instructions that are the elements of an array, so that a message names the element.
    """

    def __init__(
        self,
        source: str,
        code: list[Instruction],
        inputs: list[str],
        result: int,
        labels: dict[int, str],
        outputs: dict[str, int] | None = None,
        arrays: bool = False,
        places: Sequence[Place] = (),
    ):
        self.source = source
        self.code = code
        self.inputs = inputs
        self.result = result
        self.labels = labels
        self.outputs: dict[str, int] = outputs or {}
        self.arrays = arrays  # whether it has operations on arrays, to write out in scalars
        self.places = places  # in the order of their instructions
        self.input_slots: dict[str, int] = {
            ins.name: i for i, ins in enumerate(code) if type(ins) is Input
        }

    @property
    def results(self) -> dict[str, int]:
        """Each output's instruction by name; a program with one result has one, `result`."""
        return self.outputs or {"result": self.result}

    def __repr__(self) -> str:
        inputs = ", ".join(self.inputs) or "none"
        return f"<Program {len(self.code)} instructions, inputs: {inputs}>"

    def interpret(
        self,
        input: Callable[[str], T],
        const: Callable[[float], T],
        apply: Callable[..., T],
    ) -> list[T]:
        """Every instruction's node, in order: `input(name)`, `const(value)` or
        `apply(op, *nodes of its arguments)`. Every interpretation of a program (Value graphs,
        floats, duals, expressions, tapes) is this walk with its own three functions."""
        nodes: list[T] = []
        append = nodes.append
        # `type(ins) is`, not isinstance, which makes the walk 5% slower or more; mypy narrows
        # it as well (the instructions are final), the else branch to Const.
        for ins in self.code:
            if type(ins) is Apply:
                append(apply(ins.op, *[nodes[i] for i in ins.args]))
            elif type(ins) is Input:
                append(input(ins.name))
            else:
                append(const(ins.value))
        return nodes

    def varying(self) -> list[bool]:
        """Per instruction: does it depend on an input (so that it has a derivative)?"""
        return self.interpret(
            input=lambda name: True, const=lambda value: False, apply=lambda op, *a: any(a)
        )

    def needed(self) -> list[bool]:
        """Per instruction: does the result (or an output) depend on it?"""
        return self._reached(lambda ins: ins.args)

    def _reached(self, arguments: Callable[[Apply], Sequence[int]]) -> list[bool]:
        """Per instruction: is it reached from the outputs, going from each instruction
        reached to its `arguments`?"""
        reached = [False] * len(self.code)
        roots = list(self.results.values())
        for root in roots:
            reached[root] = True
        for i in range(max(roots), -1, -1):
            ins = self.code[i]
            if reached[i] and type(ins) is Apply:
                for a in arguments(ins):
                    reached[a] = True
        return reached

    def constants_by_name(self) -> list[str]:
        """The constants the source writes by name (`e`, `pi`), each once, in order: a column
        of data with such a name is not what the source reads."""
        import re

        by_value = {value: name for name, value in CONSTANTS.items()}  # (π is pi)
        found: list[str] = []
        for ins in self.code:
            if type(ins) is Const and re.match(r"-?\s*[^\W\d]", self.source[ins.offset :]):
                name = by_value[abs(ins.value)]  # a word that is a number (-e: negated)
                if name not in found:
                    found.append(name)
        return found

    def pruned(self) -> Program:
        """The same program without the instructions that neither the result depends on nor
        read an input, renumbered."""
        keep = [n or type(ins) is Input for n, ins in zip(self.needed(), self.code, strict=True)]
        number: dict[int, int] = {}
        code: list[Instruction] = []
        for i, ins in enumerate(self.code):
            if keep[i]:
                number[i] = len(code)
                if type(ins) is Apply:
                    ins = ins._replace(args=tuple(number[a] for a in ins.args))
                code.append(ins)
        labels = {number[i]: name for i, name in self.labels.items() if i in number}
        outputs = {name: number[i] for name, i in self.outputs.items()}
        places = []
        for start, stop, shape, first in self.places:  # each kept run of a run, renumbered
            run = None
            for i in range(start, stop + 1):
                if i < stop and i in number:
                    run = i if run is None else run
                elif run is not None:
                    places.append((number[run], number[i - 1] + 1, shape, first + run - start))
                    run = None
        return Program(
            self.source,
            code,
            self.inputs,
            number[self.result],
            labels,
            outputs,
            self.arrays,
            places,
        )

    def single(self, taker: str = "this", several: str | None = "grad") -> Program:
        """This program, if it has one result; a program that lists several outputs is bad
        input to `taker`, which takes one (`several` names what takes several)."""
        if self.outputs:
            raise SeveralOutputs(list(self.outputs), taker, several)
        return self

    def with_result(self, result: int) -> Program:
        """This program with the instruction numbered `result` as its one result (one of
        several outputs, an element of an array written out)."""
        if result == self.result and not self.outputs:
            return self
        return Program(self.source, self.code, self.inputs, result, self.labels, places=self.places)

    def evaluate(self, values: Mapping[str, float]) -> Evaluation:
        """The graph at the point `values` (one value per input), not yet differentiated."""
        self.check_inputs(values)
        nodes = self.interpret(
            input=lambda name: Value(values[name]), const=Value.constant, apply=apply
        )
        return Evaluation(self, nodes)

    def values(self, point: Mapping[str, float]) -> list[float]:
        """Every instruction's value at `point`, as plain floats: no graph is built."""
        self.check_inputs(point)
        return self.interpret(
            input=lambda name: float(point[name]),
            const=float,
            apply=lambda op, *args: op.forward(*args),
        )

    def first_non_finite(self, data: Sequence[float]) -> SourceError | None:
        """Where the first nan or inf came from, if any, given every instruction's value: an
        input given as nan or inf (at its first read), or an operation that made one out of
        finite operands, unless its value is used only in a branch that a `where` does not
        take (where(x > 0, log(x), 0) at x = -1 makes no nan that counts)."""
        untaken = None
        for i, ins in enumerate(self.code):
            if type(ins) is Const or math.isfinite(data[i]):
                continue
            if type(ins) is Input:
                return SourceError(f"input {ins.name} is {data[i]}", self.source, ins.offset)
            if untaken is None:
                untaken = self.untaken(data)
            if not untaken[i] and all(math.isfinite(data[j]) for j in ins.args):
                op = ins.op
                name = f"'{op.name}'" if op.syntax == "infix" else op.name
                return SourceError(
                    f"{name} gave {data[i]}{self.element_at(i)}", self.source, ins.offset
                )
        return None

    def element_at(self, i: int) -> str:
        """` at [2]` (` at [1,0]`), where the instruction numbered `i` is that element of an
        array; else nothing."""
        k = bisect_right(self.places, i, key=lambda place: place[0]) - 1
        if k < 0 or i >= self.places[k][1]:
            return ""
        start, _, shape, first = self.places[k]
        flat, index = first + i - start, []
        for size in reversed(shape):
            flat, j = divmod(flat, size)
            index.append(j)
        return f" at [{','.join(map(str, reversed(index)))}]"

    def untaken(self, data: Sequence[float]) -> list[bool]:
        """Per instruction, given every instruction's value: do the outputs depend on it only
        through branches that a `where` does not take?"""
        if not any(type(ins) is Apply and ins.op is WHERE for ins in self.code):
            return [False] * len(self.code)

        def taken(ins: Apply) -> Sequence[int]:
            if ins.op is not WHERE:
                return ins.args
            c, a, b = ins.args
            return (c, a if data[c] != 0.0 else b)

        used = self._reached(taken)
        return [n and not u for n, u in zip(self.needed(), used, strict=True)]

    def check_inputs(self, values: Mapping[str, float]) -> None:
        """Raise if an input has no value, or a value is given for a name that is no input."""
        unknown = [name for name in values if name not in self.input_slots]
        if unknown:
            raise UnknownInputs(unknown, self.inputs)
        missing = [name for name in self.inputs if name not in values]
        if missing:
            raise MissingInputs(missing)

    def gradients(self, values: Mapping[str, float]) -> Evaluation:
        """Evaluate at `values` and differentiate the result (of a program with one)."""
        self.single("gradients()", "jacobian()")
        evaluation = self.evaluate(values)
        evaluation.result.backward()
        return evaluation

    def grad(self, values: Mapping[str, float], mode: str = "reverse") -> Gradients:
        """The value at `values` and its gradient with respect to every input, in reverse
        mode (one pass back over the graph) or forward mode (dual numbers, no graph); `auto`
        is reverse mode, as it is for a Jacobian of one output."""
        if mode == "forward":
            from ._forward import forward_gradients

            return forward_gradients(self.single("grad()", "jacobian()"), values)
        if mode not in ("auto", "reverse"):
            raise ValueError(f"mode is auto, reverse or forward, not {mode!r}")
        return self.gradients(values).summary()

    def jacobian(self, values: Mapping[str, float], mode: str = "auto") -> Jacobian:
        """The value of every output at `values` and its gradient with respect to every
        input: one reverse pass per output, or one forward pass carrying a derivative per
        input; `auto` picks forward where outputs outnumber inputs (benchmarks/modes.py
        measures both)."""
        if mode not in ("auto", "reverse", "forward"):
            raise ValueError(f"mode is auto, reverse or forward, not {mode!r}")
        outputs = self.results
        if mode == "auto":
            mode = "forward" if len(outputs) > len(self.inputs) else "reverse"
        if mode == "forward":
            from ._forward import forward_jacobian

            return forward_jacobian(self, values)
        evaluation = self.evaluate(values)
        nodes, inputs = evaluation.nodes, evaluation.inputs
        rows = {}
        for name, slot in outputs.items():
            for node in inputs.values():  # backward adds to the leaves' gradients
                node.grad = 0.0
            nodes[slot].backward()
            rows[name] = {name: node.grad for name, node in inputs.items()}
        return Jacobian(
            {name: nodes[slot].data for name, slot in outputs.items()},
            {name: node.data for name, node in inputs.items()},
            rows,
            evaluation.first_non_finite(),
        )


class Evaluation:
    """A program's graph at one point: one node per instruction."""

    def __init__(self, program: Program, nodes: list[Value]):
        self.program = program
        self.nodes = nodes

    def __repr__(self) -> str:
        inputs = ", ".join(f"{name}={node.data!r}" for name, node in self.inputs.items())
        return f"<Evaluation at {inputs or 'no inputs'}: {self.result!r}>"

    def _repr_svg_(self) -> str | None:
        """The graph as SVG, for Jupyter, nodes named as the program binds them."""
        from .render.graph import draw_evaluation, svg_or_none

        return svg_or_none(draw_evaluation(self).dot)

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

    def summary(self) -> Gradients:
        """The value, the inputs and their gradients, as plain numbers."""
        nodes = self.inputs
        return Gradients(
            self.result.data,
            {name: node.data for name, node in nodes.items()},
            {name: node.grad for name, node in nodes.items()},
            self.first_non_finite(),
        )
