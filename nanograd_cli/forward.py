"""Forward mode: gradients by dual numbers, in one pass over the program.

Each node carries its value and its tangent: its derivative with respect to every input at
once. Reverse mode (the engine's backward) keeps the whole graph and walks it back once;
forward mode keeps no graph and costs, per node, one multiplication per input, so it is the
cheaper the fewer inputs there are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .ops import WHERE
from .results import Gradients, Jacobian

if TYPE_CHECKING:
    from .program import Program

# A dual number: a value and its tangent, one entry per input (None where all are 0).
Dual = tuple[float, list[float] | None]


def forward_gradients(program: Program, point: Mapping[str, float]) -> Gradients:
    """The value at `point` and its gradient with respect to every input, in forward mode."""
    nodes = duals(program, point)
    value, tangent = nodes[program.result]
    return Gradients(
        value,
        {name: float(point[name]) for name in program.inputs},
        _by_input(program, tangent),
        program.first_non_finite([v for v, _ in nodes]),
    )


def forward_jacobian(program: Program, point: Mapping[str, float]) -> Jacobian:
    """The value of every output at `point` and its gradient with respect to every input,
    from one forward pass."""
    nodes = duals(program, point)
    outputs = program.results
    return Jacobian(
        {name: nodes[slot][0] for name, slot in outputs.items()},
        {name: float(point[name]) for name in program.inputs},
        {name: _by_input(program, nodes[slot][1]) for name, slot in outputs.items()},
        program.first_non_finite([v for v, _ in nodes]),
    )


def duals(program: Program, point: Mapping[str, float]) -> list[Dual]:
    """Every instruction's value and tangent at `point`."""
    program.check_inputs(point)
    width = len(program.inputs)
    index = {name: k for k, name in enumerate(program.inputs)}

    def input(name: str) -> Dual:
        tangent = [0.0] * width
        tangent[index[name]] = 1.0
        return float(point[name]), tangent

    def const(value: float) -> Dual:
        return value, None

    def apply(op, *args: Dual) -> Dual:
        # One and two arguments, the commonest, unrolled: half the time of the general case.
        # A zero tangent contributes 0, even where the local derivative is inf or nan, and a
        # sum starts from 0.0 as in reverse mode (so that a derivative is never -0.0).
        if len(args) == 2:
            (a, ta), (b, tb) = args
            y = op.forward(a, b)
            if ta is None and tb is None:
                return y, None
            da, db = op.derivative(a, b, y)
            if tb is None:
                return y, [da * s + 0.0 if s else 0.0 for s in ta]
            if ta is None:
                return y, [db * t + 0.0 if t else 0.0 for t in tb]
            return y, [
                (da * s if s else 0.0) + (db * t if t else 0.0) + 0.0
                for s, t in zip(ta, tb, strict=True)
            ]
        if len(args) == 1:
            ((a, ta),) = args
            y = op.forward(a)
            if ta is None:
                return y, None
            (d,) = op.derivative(a, y)
            return y, [d * t + 0.0 if t else 0.0 for t in ta]
        values = [value for value, _ in args]
        y = op.forward(*values)
        if op is WHERE:  # the tangent of the argument taken: the other one adds nothing
            return y, args[1 if values[0] != 0.0 else 2][1]
        if all(tangent is None for _, tangent in args):
            return y, None
        out = [0.0] * width
        for d, (_, tangent) in zip(op.derivative(*values, y), args, strict=True):
            if tangent is not None:
                out = [o + d * t if t else o for o, t in zip(out, tangent, strict=True)]
        return y, out

    return program.interpret(input=input, const=const, apply=apply)


def _by_input(program: Program, tangent: list[float] | None) -> dict[str, float]:
    return dict(zip(program.inputs, tangent or [0.0] * len(program.inputs), strict=True))
