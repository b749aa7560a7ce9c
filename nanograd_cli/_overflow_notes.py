"""Where a textbook derivative, as printed, loses digits the engine keeps because a part of it
overflows or underflows while the whole is an ordinary number: `x**3/(x**2 + y**2)` (the
derivative of `x**2*atan2(y, x)` by y) is inf at (1e120, 1e100), where x**3 overflows, and 0 at
(1e-110, 1e-100), where it underflows, while the engine gives 1e120 and 1e-130.

The printed form is evaluated at points whose inputs run over the magnitudes of doubles, all at
once on the tape (_tape.py), against the engine's gradient at the same points. Where it is
off, it is looked into a point at a time: where the engine is not off, and the form's parts
computed again with an exponent without bounds (_wide.py) agree with the engine,
a part that overflows (to inf) or underflows (below the normal range) from finite, non-zero
operands is named in a note if, left alone as the doubles have it, it puts the form off
again. A rule of thumb cannot see this: the same quotient loses nothing where its numerator
is a number (`2/(x + 1)**2` underflows only where its value does).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np

from ._algebra import INPUT, NAMED, NUMBER, Expr, known_number, layout, reachable
from ._formula import LOSES, USUAL, Note, write
from ._jets import series
from ._language import parse
from ._ops import ADD, DIV, SMALLEST_NORMAL, SUB
from ._program import Program
from ._tape import batch_gradients, batch_values
from ._wide import Wide, to_float, wide
from ._wide import apply as wide_apply

# Each input's values: both signs of every tenth power of ten, to the ends of doubles, and of
# where the squares of sinh and cosh (355.6), they and exp (709.7) and exp(-x) (745) overflow
# or underflow.
MAGNITUDES = (
    *(10.0**k for k in range(-300, 301, 10)),
    *(20.0, 40.0, 100.0, 300.0, 355.6, 700.0, 709.7, 745.0, 1.5e308),
)
VALUES = (*MAGNITUDES, *(-m for m in MAGNITUDES))
# The points of one input: each of VALUES; of more: each input through VALUES with the others
# at 1, and the rest of this many combinations of VALUES drawn with a fixed seed (for a
# higher order, about HIGHER_POINTS of them, spread over all: each is a Taylor series).
POINTS, HIGHER_POINTS = 1500, 300
# At most about this many of the points where the printed form is off are looked into, spread
# over them (each is the engine's derivative and the form's parts, in Python, at a point).
SUSPECTS = 100
# Off by more than this, relative to the engine, is digits lost (not the rounding of another
# order of operations).
OFF = 1e-6

OVERFLOWS, UNDERFLOWS = "overflows", "underflows"
# Probed only for a source of at most this many instructions (the engine runs at every point).
MAX_SOURCE = 200


class Probe(NamedTuple):
    """A derivative's source, the input each printed derivative is by (by label), and the
    order of the derivatives."""

    program: Program
    by: Mapping[str, str]
    order: int = 1


def points(inputs: list[str]) -> list[dict[str, float]]:
    """The points probed: each input through VALUES, the others at 1; for several inputs,
    then combinations of VALUES drawn with a fixed seed (the same notes on every run), up
    to POINTS in all."""
    axes = [{**dict.fromkeys(inputs, 1.0), name: v} for name in inputs for v in VALUES]
    chosen = random.Random(0)
    drawn = POINTS - len(axes) if len(inputs) > 1 else 0
    return axes + [{name: chosen.choice(VALUES) for name in inputs} for _ in range(drawn)]


def add_notes(probe: Probe, roots: Mapping[str, Expr], notes: dict[str, list[Note]]) -> None:
    """To `notes` (each label's list, extended in place), under each printed derivative
    (`roots`, by label) of `probe`'s source, where it loses digits by a part overflowing or
    underflowing, unless a note already says that part overflows or underflows."""
    program = probe.program
    probed = [label for label, root in roots.items() if quotient_of_inputs(root, program.inputs)]
    if not probed or len(program.code) > MAX_SOURCE:
        return
    at = points(program.inputs)
    if probe.order > 1:  # a Taylor series at each: fewer, spread over them
        at = at[:: max(1, len(at) // HIGHER_POINTS)]
    columns = {name: np.array([point[name] for point in at]) for name in program.inputs}
    if probe.order == 1:
        _, gradients = batch_gradients(program, columns)
    for label in probed:
        said = [
            (_text(e), _says(n.why))
            for n in notes.get(label, [])
            if n.relation == LOSES
            for e in _parts(n)
        ]
        wrt = probe.by[label]
        form = parse(_text(roots[label]))
        printed = batch_values(form, {name: columns[name] for name in form.inputs})
        if probe.order == 1:
            # where the form printed is off from the tape's gradient (all rows at once), the
            # engine's own at that point
            off = ~np.isclose(printed, gradients[wrt], rtol=OFF, atol=0.0, equal_nan=True)
            found = np.flatnonzero(off)
            suspects = [at[i] for i in found[:: max(1, len(found) // SUSPECTS)]]
        else:
            suspects = at
        engine = functools.partial(_derivative, program, wrt, probe.order)
        for part, does, extreme in overflowing(roots[label], suspects, engine):
            shown = _text(part)
            for text, says in said:  # what a note names already need not be said again
                if shown in text:
                    does -= says
            if does:
                what = " or ".join(w for w in (OVERFLOWS, UNDERFLOWS) if w in does)
                why = f"loses digits where {{}} {what}"
                notes.setdefault(label, []).append(Note(part, LOSES, why, part, extreme))


def rare(program: Program, notes: Mapping[str, list[Note]]) -> dict[str, list[Note]]:
    """The notes, each that says a part is below the normal range (`x**(y - 1)`) marked as of
    extreme inputs where the part is never so at the points of `program`'s inputs of usual
    size (`x**(sin(x) - 1)`, which is 1e-60 at the least there); as they are for a source
    of more than MAX_SOURCE instructions."""
    if len(program.code) > MAX_SOURCE or not any(
        _underflows(note) for found in notes.values() for note in found
    ):
        return dict(notes)
    usual = [point for point in points(program.inputs) if _usual(point)]
    columns = {name: np.array([point[name] for point in usual]) for name in program.inputs}
    return {label: [_marked(note, columns) for note in found] for label, found in notes.items()}


def _underflows(note: Note) -> bool:
    """Whether the note says that its part is below the normal range, and only that."""
    said = _says(note.why)
    return note.relation == LOSES and note.part is not None and said == {UNDERFLOWS}


def _marked(note: Note, columns: Mapping[str, np.ndarray]) -> Note:
    if note.extreme or not _underflows(note):
        return note
    assert note.part is not None
    form = parse(_text(layout([note.part], True)[0]))
    if not set(form.inputs) <= columns.keys():
        return note  # (in names of the source)
    with np.errstate(all="ignore"):
        values = batch_values(form, {name: columns[name] for name in form.inputs})
    below = np.abs(np.broadcast_to(values, next(iter(columns.values())).shape)) < SMALLEST_NORMAL
    return note if below.any() else note._replace(extreme=True)


def _says(why: str) -> set[str]:
    """What a note's words say its part does: overflow, underflow (or round to the
    subnormals), both or neither (`1 - its square cancels`)."""
    said = {OVERFLOWS} if "overflow" in why else set()
    if any(word in why for word in ("underflow", "subnormal", "below 2.2e-308")):
        said.add(UNDERFLOWS)
    return said


def _parts(note: Note) -> list[Expr]:
    """What a note of lost digits names: its subject, and the part that loses them (x and
    x**2 in `for |x| > 1e154 (its square overflows)`)."""
    return [note.expr] if note.part is None else [note.expr, *layout([note.part], True)]


def _text(e: Expr) -> str:
    return write({"": e})


def _derivative(program: Program, wrt: str, order: int, point: dict[str, float]) -> float:
    """The engine's derivative by `wrt` at `point`: the gradient's; of a higher order,
    taylor's coefficient times order! (nan where the series cannot be had)."""
    if order == 1:
        evaluation = program.evaluate(point)
        evaluation.result.backward()
        return evaluation.summary().gradients[wrt]
    try:
        return series(program, wrt, point, order)[0][order] * math.factorial(order)
    except (ArithmeticError, ValueError):
        return math.nan


def quotient_of_inputs(root: Expr, inputs: list[str]) -> bool:
    """Whether the printed form, in the source's `inputs` alone (no name bound), divides by
    an expression of the inputs something that depends on them too: only then can a part
    overflow while the whole does not."""
    parts = reachable([root])
    names = set(inputs)
    if any(e.kind == NAMED or (_unknown(e) and e.value not in names) for e in parts):
        return False
    varies: dict[int, bool] = {}
    for e in parts:
        varies[id(e)] = _unknown(e) or any(varies[id(a)] for a in e.args)
        if e.op is DIV and all(varies[id(a)] for a in e.args):
            return True
    return False


def _unknown(e: Expr) -> bool:
    """Whether e is an input (not pi or e by name)."""
    return e.kind == INPUT and known_number(e) is None


def overflowing(
    root: Expr, at: list[dict[str, float]], engine: Callable[[dict[str, float]], float]
) -> list[tuple[Expr, set[str], bool]]:
    """The parts of the printed `root` (in its inputs alone) that make it lose the engine's
    digits (`engine`: its value at a point) at some of the points `at` by overflowing or
    underflowing, each with what it does (OVERFLOWS, UNDERFLOWS or both) and whether it
    does so only at points of extreme size (not _usual), in the order they are printed.

    At a point where the printed form is off, its parts are computed again with an exponent
    without bounds (_wide.py); where that agrees with the engine, the loss is over- or
    underflow, and a part is named that, left as the doubles have it, puts the form off."""
    order = reachable([root])
    found: dict[int, set[str]] = {}
    usual: set[int] = set()  # the parts found at a point of usual size
    for point in at:
        values, origins = _values(order, point)
        # a part found to overflow (or underflow) already need not be found again, but at
        # a point of usual size where it was found only at extreme ones
        again = _usual(point)
        origins = [
            (e, what)
            for e, what in origins
            if what not in found.get(id(e), ()) or (again and id(e) not in usual)
        ]
        if not origins:
            continue
        reference = engine(point)
        if not math.isfinite(reference) or abs(reference) < SMALLEST_NORMAL:
            continue  # no ordinary number to lose digits of
        if _close(values[id(root)], reference):
            continue
        if not _close(_wide_root(order, point), reference):
            continue  # not (only) over- or underflow
        for e, what in origins:
            if not _close(_wide_root(order, point, {id(e): wide(values[id(e)])}), reference):
                found.setdefault(id(e), set()).add(what)
                if again:
                    usual.add(id(e))
    return [(e, found[id(e)], id(e) not in usual) for e in order if id(e) in found]


def _usual(point: Mapping[str, float]) -> bool:
    """Whether every input at `point` is 0 or from 1/USUAL to USUAL in size."""
    return all(v == 0.0 or 1.0 / USUAL <= abs(v) <= USUAL for v in point.values())


def _close(value: float, reference: float) -> bool:
    return math.isfinite(value) and abs(value - reference) <= OFF * abs(reference)


def _wide_root(
    order: list[Expr], point: Mapping[str, float], kept: Mapping[int, Wide] | None = None
) -> float:
    """The value of the last of `order` (the root) at `point`, each part computed with an
    exponent without bounds but those in `kept`, rounded to a double at the end; nan where
    that cannot be had."""
    try:
        return to_float(_wide_values(order, point, kept)[id(order[-1])])
    except (ArithmeticError, ValueError):
        return math.nan


def _wide_values(
    order: list[Expr], point: Mapping[str, float], kept: Mapping[int, Wide] | None = None
) -> dict[int, Wide]:
    """Each part's value at `point` with an exponent without bounds, but those in `kept`."""
    values: dict[int, Wide] = {}
    for e in order:
        if kept and id(e) in kept:
            values[id(e)] = kept[id(e)]
        elif e.kind in (INPUT, NUMBER):
            values[id(e)] = wide(_leaf(e, point))
        else:
            values[id(e)] = wide_apply(e.op, *(values[id(a)] for a in e.args))
    return values


def _leaf(e: Expr, point: Mapping[str, float]) -> float:
    """A number's value (pi and e by name too), or an input's at `point`."""
    known = known_number(e)
    return point[e.value] if known is None else known


def _values(
    order: list[Expr], point: Mapping[str, float]
) -> tuple[dict[int, float], list[tuple[Expr, str]]]:
    """Each part's value at `point`, and the parts that overflow or underflow there from
    finite, non-zero operands (a sum that cancels to 0 does not underflow)."""
    values: dict[int, float] = {}
    origins = []
    for e in order:
        if e.kind in (INPUT, NUMBER):
            values[id(e)] = _leaf(e, point)
        else:
            args = [values[id(a)] for a in e.args]
            try:
                value = e.op.forward(*args)
            except (OverflowError, ValueError, ZeroDivisionError):
                value = math.nan
            values[id(e)] = value
            if not all(math.isfinite(a) and a != 0.0 for a in args):
                continue
            if math.isinf(value):
                origins.append((e, OVERFLOWS))
            elif abs(value) < SMALLEST_NORMAL and e.op not in (ADD, SUB):
                origins.append((e, UNDERFLOWS))
    return values, origins
