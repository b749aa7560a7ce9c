"""Forward mode: gradients by dual numbers, one pass over the program per input.

Reverse mode (the engine's backward) costs one pass per output, whatever the number of inputs;
forward mode costs one pass per input. For a program with one result, reverse mode is the
cheaper the more inputs there are; forward mode needs no graph in memory.
"""

from __future__ import annotations

from .ops import CONST
from .program import Program


def tangents(program: Program, data: list[float]) -> dict[str, float]:
    """d(result)/d(input) for every input, given every instruction's value (Program.values)."""
    code = program.code
    gradients = {}
    for name in program.inputs:
        tangent: list[float] = []
        for i, (op, args, _) in enumerate(code):
            if op is None:
                tangent.append(1.0 if args == name else 0.0)
            elif op is CONST:
                tangent.append(0.0)
            elif op.arity == 1:
                (a,) = args
                t = tangent[a]
                tangent.append(op.derivative(data[a], data[i]) * t if t else 0.0)
            else:
                a, b = args
                ta, tb = tangent[a], tangent[b]
                if ta or tb:
                    da, db = op.derivative(data[a], data[b], data[i])
                    tangent.append((da * ta if ta else 0.0) + (db * tb if tb else 0.0))
                else:
                    tangent.append(0.0)
        gradients[name] = tangent[program.result]
    return gradients
