"""What `nanograd plot` draws: f and its gradient sampled over ranges of inputs, with the tape.

`--x LO:HI[:N]` sweeps an input, `--y 2` fixes one. One range gives a Curve (f and df/dx
along x), two a Surface (f and its gradient on a grid). Points where f is nan or inf stay in
the arrays, as nan, and the drawings leave gaps there. Drawing is `render.figures`'s job.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, cast, final

import numpy as np

from ._program import Program
from ._sources import input_values
from ._tape import batch_gradients
from .errors import InputError, option, spell

if TYPE_CHECKING:
    from .results import InputValue

CURVE_POINTS = 400  # along a range, in a picture file
GRID_POINTS = 101  # along each of two ranges: 10,201 points, a smooth contour in well under 1 s
MAX_POINTS = 1_000_000  # in all: about 100 MB of arrays, and matplotlib still draws it


class Range(NamedTuple):
    """`--NAME LO:HI[:N]`: N points from LO to HI, both included; N None takes a default."""

    low: float
    high: float
    points: int | None = None

    def samples(self, default: int) -> np.ndarray:
        """The range's points, evenly spaced: `points` of them, or `default`."""
        return np.linspace(self.low, self.high, self.points or default)


def parse_inputs(
    pairs: Iterable[tuple[str, str]], var: Iterable[str]
) -> tuple[dict[str, InputValue], dict[str, Range]]:
    """`--NAME VALUE` pairs and `--var NAME=VALUE` items split into fixed values and ranges
    (a value with a colon is a range), each checked."""
    pairs = list(pairs)
    var = list(var)
    texts = [(n, v) for n, v in pairs if ":" in v]
    for item in var:
        name, equals, value = item.partition("=")
        if equals and ":" in value:
            texts.append((name, value))
    ranges: dict[str, Range] = {}
    for name, text in texts:
        if name in ranges:
            raise InputError(f"a range for {name} is given twice")
        ranges[name] = parse_range(name, text)
    fixed = input_values(
        [(n, v) for n, v in pairs if ":" not in v],
        [item for item in var if ":" not in item.partition("=")[2]],
    )
    both = [name for name in fixed if name in ranges]
    if both:
        raise InputError(f"--{both[0]} is given a value and a range: give one of them")
    return fixed, ranges


def parse_range(name: str, text: str) -> Range:
    """`LO:HI` or `LO:HI:N` for the input `name`: finite numbers LO < HI with HI - LO finite,
    an integer N >= 2."""

    def typed(value: str) -> str:  # an element, x[0], has no option of its own: --var's
        return option("var", f"{name}={value}") if "[" in name else option(name, value)

    given, example = typed(text), (typed("-3:3"), typed("0:1:50"))
    usage = f"{given}: a range is LO:HI or LO:HI:N, e.g. {example[0]} or {example[1]}"
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise InputError(usage)
    try:
        low, high = (float(input_values([(name, part)], ())[name]) for part in parts[:2])
    except (InputError, TypeError):  # not a number: an array
        raise InputError(usage) from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise InputError(f"{given}: the ends of a range must be finite numbers")
    if not low < high:
        raise InputError(f"{given}: a range goes from low to high (LO < HI)")
    if not math.isfinite(high - low):  # its points would be nan
        raise InputError(
            f"{given}: the range is too wide: HI - LO must be a finite number "
            f"(at most {sys.float_info.max:.4g})"
        )
    if len(parts) == 2:
        return Range(low, high)
    count = _whole(parts[2].strip())  # 50, or 1e3
    if count is None or count < 2:
        raise InputError(f"{given}: N, the number of points, is a whole number >= 2")
    if count > MAX_POINTS:
        raise InputError(f"{given}: at most {MAX_POINTS:,} points")
    return Range(low, high, count)


def _whole(text: str) -> int | None:
    """The whole number `text` writes (`50`, `1e3`, `1000.0`), or None."""
    if not (text.isascii() and re.fullmatch(r"[0-9]+(\.0*)?([eE]\+?[0-9]+)?", text)):
        return None
    value = float(text)
    return int(value) if value.is_integer() and value <= 2**53 else None


# A y axis leaves out poles: a value more than FAR_OUT interquartile ranges beyond the
# quartiles is far out (tan(x) near pi/2; exp(x) over 0:10 is 11 out), and the axis then ends
# FENCE of them beyond (Tukey's far fence).
FAR_OUT, FENCE = 20, 3
# `--ylim`: a range LO:HI, or one of these.
YLIM_WORDS = ("auto", "full")


def parse_ylim(text: str) -> str | tuple[float, float]:
    """`--ylim auto` (clip poles), `full` (every finite value) or `LO:HI`, finite, LO < HI."""
    if text in YLIM_WORDS:
        return text
    usage = f"{option('ylim', text)}: give LO:HI (e.g. {option('ylim', '-10:10')}), auto or full"
    try:
        _, _ = (input_values([("ylim", end)], ()) for end in text.split(":"))
    except (InputError, ValueError):  # not a number, or not two of them
        raise InputError(usage) from None
    span = parse_range("ylim", text)  # finite, LO < HI
    return span.low, span.high


class YRange(NamedTuple):
    """A y axis from `low` to `high`, of values that lie from `lowest` to `highest`;
    `clipped` where the automatic axis leaves out values far outside it."""

    low: float
    high: float
    lowest: float
    highest: float
    clipped: bool = False


def y_range(values: np.ndarray, ylim: str | tuple[float, float] = "auto") -> YRange | None:
    """The y axis for `values` under `--ylim` (None where none is finite): `full`, every
    finite value; `LO:HI`, that; `auto`, every finite value but those far out (FAR_OUT)."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return None
    lowest, highest = float(finite.min()), float(finite.max())
    if ylim == "full":
        return YRange(lowest, highest, lowest, highest)
    if ylim != "auto":  # LO:HI, as parsed
        return YRange(*cast("tuple[float, float]", ylim), lowest, highest)
    q1, q3 = (float(q) for q in np.quantile(finite, [0.25, 0.75]))
    spread = q3 - q1
    low = q1 - FENCE * spread if lowest < q1 - FAR_OUT * spread else lowest
    high = q3 + FENCE * spread if highest > q3 + FAR_OUT * spread else highest
    return YRange(low, high, lowest, highest, (low, high) != (lowest, highest))


def clip_note(ranges: Mapping[str, YRange], axis: YRange) -> str:
    """What a plot says where its y axis (`axis`) leaves out values far outside: the
    values of each series clipped, and how to see them all."""

    def span(low: float, high: float) -> str:
        return f"[{low:.3g}, {high:.3g}]"

    spans = ", ".join(f"{name} spans {span(r.lowest, r.highest)}" for name, r in ranges.items())
    # Shown on the plot, not raised: written as the door in effect writes the option.
    full = spell(option("ylim", "full"))
    return f"y clipped to {span(axis.low, axis.high)}: {spans}; {full} shows all"


@dataclass(frozen=True)
class Look:
    """How a plot is drawn, for slides and a course: its title (by default the source and
    the fixed values), log axes, a picture's size in inches, and f's y axis (`--ylim`: auto,
    full or (LO, HI))."""

    title: str | None = None
    logx: bool = False
    logy: bool = False
    size: tuple[float, float] | None = None  # (None: the picture's own, 6.4 by 4.8 for a curve)
    ylim: str | tuple[float, float] = "auto"


@dataclass
class Curve:
    """f and df/dx at `x`, the samples of the input `name`, with the other inputs `fixed`.

    `non_finite` counts the points where f is nan or inf (nan in `value`: a gap), and
    `first_bad` says which came first and the operation that made it.
    """

    source: str
    name: str
    fixed: dict[str, float]
    x: np.ndarray
    value: np.ndarray
    gradient: np.ndarray
    non_finite: int = 0
    first_bad: str | None = field(default=None, repr=False)
    # (x, f, df/dx) where the tangent line is drawn (`tangent` of plot), if it is
    tangent: tuple[float, float, float] | None = None
    # d2f/dx2 at `x`, where plot was asked for it (`second`)
    second: np.ndarray | None = field(default=None, repr=False)
    # how it is drawn, as plot was asked
    look: Look = field(default=Look(), repr=False)


def parse_size(text: str) -> tuple[float, float]:
    """`--size W,H`: a picture's width and height in inches (13.33,7.5 fills a 16:9 slide)."""
    parts = text.replace("x", ",").split(",")
    try:
        width, height = (float(p) for p in parts)
    except ValueError:
        raise InputError(
            f"{option('size', text)}: give the width and height in inches, as 13.33,7.5"
        ) from None
    if not (0.5 <= width <= 100 and 0.5 <= height <= 100):
        raise InputError(f"{option('size', text)}: each side from 0.5 to 100 inches")
    return width, height


@dataclass
class Surface:
    """f and its gradient on the grid of `x` (the first of `names`) by `y` (the second):
    `value[i, j]` is f at (x[j], y[i]), `gradients` holds df/dx and df/dy alike."""

    source: str
    names: tuple[str, str]
    fixed: dict[str, float]
    x: np.ndarray
    y: np.ndarray
    value: np.ndarray
    gradients: tuple[np.ndarray, np.ndarray]
    non_finite: int = 0
    first_bad: str | None = field(default=None, repr=False)
    look: Look = field(default=Look(), repr=False)  # its title and size, as plot was asked


def sample_curve(
    program: Program, fixed: Mapping[str, float], name: str, span: Range, default: int
) -> Curve:
    """f and df/d`name` at `span`'s points (`default` of them unless it says), computed for
    all points at once on the vectorized tape."""
    program.check_inputs({**fixed, name: 0.0})
    x = span.samples(default)
    value, gradients = batch_gradients(program, {**fixed, name: x})
    count, first = _non_finite(program, value, fixed, {name: x})
    return Curve(program.source, name, dict(fixed), x, value, gradients[name], count, first)


def second_derivative(
    program: Program, fixed: Mapping[str, float], name: str, x: np.ndarray
) -> np.ndarray:
    """d2f/d`name`2 at the points `x`: the exact first derivative (as `diff --exact` writes
    it) differentiated again, for all points at once on the vectorized tape."""
    from ._language import parse
    from ._symbolic import derivatives_text

    first = parse(derivatives_text(program, [name], exact=True))
    if name not in first.inputs:  # f is linear in `name`
        return np.zeros_like(x)
    point = {n: v for n, v in fixed.items() if n in first.inputs}
    return batch_gradients(first, {**point, name: x})[1][name]


def sample_surface(
    program: Program,
    fixed: Mapping[str, float],
    spans: Mapping[str, Range],
    default: int = GRID_POINTS,
) -> Surface:
    """f and its gradient on the grid of the two `spans` (`default` points along each unless
    a span says), computed for all points at once on the vectorized tape."""
    (xname, xspan), (yname, yspan) = spans.items()
    program.check_inputs({**fixed, xname: 0.0, yname: 0.0})
    x, y = xspan.samples(default), yspan.samples(default)
    if x.size * y.size > MAX_POINTS:
        raise InputError(
            f"{x.size} by {y.size} points is more than {MAX_POINTS:,}: give fewer with LO:HI:N"
        )
    grid = dict(zip((xname, yname), np.meshgrid(x, y), strict=True))
    value, gradients = batch_gradients(
        program, {**fixed, **{n: g.ravel() for n, g in grid.items()}}
    )
    shape = grid[xname].shape
    count, first = _non_finite(program, value, fixed, {n: g.ravel() for n, g in grid.items()})
    return Surface(
        program.source,
        (xname, yname),
        dict(fixed),
        x,
        y,
        value.reshape(shape),
        (gradients[xname].reshape(shape), gradients[yname].reshape(shape)),
        count,
        first,
    )


def _non_finite(
    program: Program, value: np.ndarray, fixed: Mapping[str, float], swept: dict[str, np.ndarray]
) -> tuple[int, str | None]:
    """How many points have a non-finite f, and which is the first: its inputs, its value
    and the operation that made it (found again by evaluating that one point)."""
    bad = ~np.isfinite(value)
    if not bad.any():
        return 0, None
    k = int(np.argmax(bad))
    at = {n: float(a[k]) for n, a in swept.items()}
    data = program.values({**fixed, **at})
    location = program.first_non_finite(data)
    detail = (
        f" ({location.message} at line {location.line}, column {location.column})"
        if location
        else ""
    )
    point = ", ".join(f"{n} = {v!r}" for n, v in at.items())
    return int(bad.sum()), f"{point} gives {data[program.result]}{detail}"


def title(source: str, fixed: Mapping[str, float], width: int = 60) -> str:
    """The source on one line (statements joined by `; `), cut to `width` characters, and the
    values of the fixed inputs."""
    statements = [line.split("#")[0].strip() for line in source.splitlines()]
    text = "; ".join(s for s in statements if s)
    if len(text) > width:
        text = text[: width - 1] + "…"
    values = ", ".join(f"{n} = {v!r}" for n, v in fixed.items())
    return f"{text}   at {values}" if values else text


def check_ranges(program: Program, ranges: Mapping[str, Range]) -> None:
    """One or two ranges, each of an input."""
    if not program.inputs:
        raise InputError("the source has no inputs: there is nothing to plot it over")
    if not ranges:
        name = program.inputs[0]  # an element, x[0], has no option of its own: --var's
        example = option("var", f"{name}=-3:3") if "[" in name else option(name, "-3:3")
        raise InputError(f"give an input a range to plot over, e.g. {example}")
    if len(ranges) > 2:
        names = ", ".join(ranges)
        raise InputError(f"ranges for {names}: a plot sweeps one input, or two for a contour")


def gaps_warning(result: Curve | Surface) -> str | None:
    """What to warn of when f is nan or inf at some points, if it is."""
    if not result.non_finite:
        return None
    total = result.value.size
    return (
        f"warning: f is nan or inf at {result.non_finite} of {total} points, drawn as gaps; "
        f"the first: {result.first_bad}"
    )


@final  # (so `descent and descent.record` is the method or None, for mypy)
class Descent:
    """The points and losses of a descent, as `minimize(on_point=descent.record)` visits them,
    in a bounded memory however long it runs: every point up to `most` of them, then every
    second one, every fourth, and so on (the last point reached is always kept), so that a
    picture of the descent shows all of it."""

    def __init__(self, most: int = 4096) -> None:
        self.most = most
        self.every: int = 1  # the points kept are those of the steps that are multiples of this
        self.steps: list[int] = []
        self.points: list[dict[str, float]] = []
        self.losses: list[float] = []
        self.seen: int = 0
        self.last: tuple[int, dict[str, float], float] | None = None

    def record(self, point: dict[str, float], loss: float) -> None:
        """Note the next step's point and loss (kept if its step is a multiple of `every`)."""
        step, self.seen = self.seen, self.seen + 1
        self.last = step, point, loss
        if step % self.every:
            return
        if len(self.steps) == self.most:  # every other one kept, from now on too
            self.steps, self.points = self.steps[::2], self.points[::2]
            self.losses = self.losses[::2]
            self.every *= 2
            if step % self.every:
                return
        self.steps.append(step)
        self.points.append(point)
        self.losses.append(loss)

    def history(self) -> tuple[list[int], list[dict[str, float]], list[float]]:
        """The steps kept, their points and losses, the last point reached included."""
        if self.last is None or (self.steps and self.steps[-1] == self.last[0]):
            return self.steps, self.points, self.losses
        step, point, loss = self.last
        return [*self.steps, step], [*self.points, point], [*self.losses, loss]
