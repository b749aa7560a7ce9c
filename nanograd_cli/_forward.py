"""Forward mode: gradients by dual numbers, in one pass over the program.

Each node carries its value and its tangent: its derivative with respect to every input at
once. Reverse mode (the engine's backward) keeps the whole graph and walks it back once;
forward mode keeps no graph: a tangent holds only the inputs a node depends on, and is let go
(or handed on to the node that reads it last, and updated there) once no later node reads it.
Memory grows with the program, not with the program times the inputs, and a node costs the
inputs its operands depend on, so forward mode is the cheaper the fewer inputs there are.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ._ops import WHERE
from .results import Gradients, Jacobian

if TYPE_CHECKING:
    from ._instructions import Code

# Forward-mode evaluations of each program so far: from the COMPILE_FROM-th on, the program's
# forward pass is compiled to straight-line code (compiled.forward_source), which gives these
# functions' results bit for bit, for programs up to compiled.MAX_INSTRUCTIONS long. Measured
# by `python benchmarks/modes.py --compiled` (Jacobians of 7 to 1,000 instructions, 1 to 8
# inputs, 2 to 32 outputs): the compiled pass takes 0.04x to 0.10x the duals' time, and
# compiling it pays after 23 to 77 evaluations; so a program is compiled after about as many
# evaluations as its compiling costs.
COMPILE_FROM = 50
_evaluations: weakref.WeakKeyDictionary[Code, int] = weakref.WeakKeyDictionary()

# A dual number: a value and its tangent, the nonzero derivatives by input number (None where
# all are 0), and how many more times a later node reads it (the tangent is let go at 0).
Tangent = dict[int, float]
Dual = list  # [value, tangent or None, reads left]


def forward_gradients(program: Code, point: Mapping[str, float]) -> Gradients:
    """The value at `point` and its gradient with respect to every input, in forward mode."""
    fast = _compiled_pass(program, point)
    if fast is not None:
        (value,), (gradients,) = fast
        return Gradients(value, _inputs(program, point), gradients, None)
    nodes = duals(program, point)
    value, tangent, _ = nodes[program.result]
    return Gradients(
        value,
        {name: float(point[name]) for name in program.inputs},
        _by_input(program, tangent),
        program.first_non_finite([node[0] for node in nodes]),
    )


def forward_jacobian(program: Code, point: Mapping[str, float]) -> Jacobian:
    """The value of every output at `point` and its gradient with respect to every input,
    from one forward pass."""
    outputs = program.results
    fast = _compiled_pass(program, point)
    if fast is not None:
        values, rows = fast
        return Jacobian(
            dict(zip(outputs, values, strict=True)),
            _inputs(program, point),
            dict(zip(outputs, rows, strict=True)),
            None,
        )
    nodes = duals(program, point)
    return Jacobian(
        {name: nodes[slot][0] for name, slot in outputs.items()},
        {name: float(point[name]) for name in program.inputs},
        {name: _by_input(program, nodes[slot][1]) for name, slot in outputs.items()},
        program.first_non_finite([node[0] for node in nodes]),
    )


def _compiled_pass(
    program: Code, point: Mapping[str, float]
) -> tuple[list[float], list[dict[str, float]]] | None:
    """Each output's value and gradient from the compiled forward pass, once the program has
    been evaluated often enough for compiling to pay; None before, or where a value is not
    finite (`duals` then says where the first nan or inf came from)."""
    count = _evaluations[program] = _evaluations.get(program, 0) + 1
    if count < COMPILE_FROM:
        return None
    from ._compiled import MAX_INSTRUCTIONS, compiled

    if len(program.code) > MAX_INSTRUCTIONS:
        return None
    program.check_inputs(point)
    out = compiled(program).forward(*[float(point[name]) for name in program.inputs])
    if not math.isfinite(out[0]):
        return None
    names, m = program.inputs, len(program.results)
    n = len(names)
    rows = [
        dict(zip(names, out[1 + m + k * n : 1 + m + (k + 1) * n], strict=True)) for k in range(m)
    ]
    return list(out[1 : 1 + m]), rows


def _inputs(program: Code, point: Mapping[str, float]) -> dict[str, float]:
    return {name: float(point[name]) for name in program.inputs}


def duals(program: Code, point: Mapping[str, float]) -> list[Dual]:
    """Every instruction's dual at `point`. Only the results' (and outputs') tangents are
    kept to the end: every other is let go when the last node that reads it is made."""
    program.check_inputs(point)
    index = {name: k for k, name in enumerate(program.inputs)}
    reads = [0] * len(program.code)
    for ins in program.code:
        for a in getattr(ins, "args", ()):
            reads[a] += 1
    for slot in program.results.values():
        reads[slot] += 1  # read at the end: never let go
    left = iter(reads)

    def input(name: str) -> Dual:
        return [float(point[name]), {index[name]: 1.0}, next(left)]

    def const(value: float) -> Dual:
        return [value, None, next(left)]

    def apply(op, *args: Dual) -> Dual:
        # One and two arguments, the commonest, unrolled. A zero tangent contributes 0, even
        # where the local derivative is inf or nan, and a sum starts from 0.0 as in reverse
        # mode (so that a derivative is never -0.0). A tangent read for the last time is
        # updated in place, not copied: a sum of many terms costs each term's inputs.
        for arg in args:
            arg[2] -= 1
        if len(args) == 2:
            a, b = args
            y = op.forward(a[0], b[0])
            ta, tb = a[1], b[1]
            if ta is None and tb is None:
                tangent = None
            else:
                da, db = op.derivative(a[0], b[0], y)
                apart = a is not b
                tangent = _two(da, ta, apart and not a[2], db, tb, apart and not b[2])
        elif len(args) == 1:
            (a,) = args
            y = op.forward(a[0])
            if a[1] is None:
                tangent = None
            else:
                (d,) = op.derivative(a[0], y)
                tangent = _times(d, a[1], not a[2])
        else:
            values = [arg[0] for arg in args]
            y = op.forward(*values)
            tangents = [arg[1] for arg in args]
            if op is WHERE:  # the tangent of the argument taken: the other one adds nothing
                taken = args[1 if values[0] != 0.0 else 2]
                tangent = taken[1] if taken[1] is None or not taken[2] else dict(taken[1])
            elif all(t is None for t in tangents):
                tangent = None
            else:
                tangent = _sum(op.derivative(*values, y), tangents)
        for arg in args:
            if not arg[2]:
                arg[1] = None  # read for the last time: let it go (or it is `tangent` now)
        return [y, tangent, next(left)]

    return program.interpret(input=input, const=const, apply=apply)


def _times(d: float, tangent: Tangent, own: bool) -> Tangent:
    """d times `tangent`: in place when it is `own` (read for the last time)."""
    if not own:
        return {k: d * s + 0.0 if s else 0.0 for k, s in tangent.items()}
    if d != 1.0:  # times 1.0 is the tangent itself: it never holds -0.0
        for k, s in tangent.items():
            tangent[k] = d * s + 0.0 if s else 0.0
    return tangent


def _two(
    da: float, ta: Tangent | None, own_a: bool, db: float, tb: Tangent | None, own_b: bool
) -> Tangent:
    """da times `ta` plus db times `tb`, each term 0 where its tangent is (either may be
    None), built on the larger tangent that is read for the last time, if one is."""
    if tb is None:
        assert ta is not None  # (never both: the caller checks)
        return _times(da, ta, own_a)
    if ta is None:
        return _times(db, tb, own_b)
    # (da*s) + (db*t) + 0.0 is (db*t) + (da*s) + 0.0: two terms add up alike in either order.
    if (own_b and (not own_a or len(tb) > len(ta))) or (not own_a and len(tb) > len(ta)):
        da, ta, own_a, db, tb, own_b = db, tb, own_b, da, ta, own_a
    out = _times(da, ta, own_a)
    for k, t in tb.items():
        out[k] = out.get(k, 0.0) + (db * t if t else 0.0) + 0.0
    return out


def _sum(derivatives: tuple[float, ...], tangents: list[Tangent | None]) -> Tangent:
    """The sum of each derivative times its tangent, in the operands' order."""
    out: Tangent = {}
    for d, tangent in zip(derivatives, tangents, strict=True):
        if tangent is not None:
            for k, t in tangent.items():
                o = out.get(k, 0.0)
                out[k] = o + d * t if t else o
    return out


def _by_input(program: Code, tangent: Tangent | None) -> dict[str, float]:
    tangent = tangent or {}
    return {name: tangent.get(k, 0.0) for k, name in enumerate(program.inputs)}
