"""Plots of f and its gradient: Matplotlib pictures (svg, png, pdf) and uniplot terminal plots.

Matplotlib and uniplot are imported inside the functions that draw, so no other command pays
for them. Figures are built with `matplotlib.figure.Figure`, not pyplot: no global state, no
GUI backend, and the format's own canvas (Agg for png) renders them.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
import warnings
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from ..errors import InputError, NanogradError, printable
from ..sampling import (
    Curve,
    Descent,
    Look,
    Range,
    Surface,
    YRange,
    clip_note,
    sample_surface,
    title,
    y_range,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .._program import Program
    from ..results import Minimum

# `--ylim`: auto, full or (LO, HI); see plot.y_range.
YLim = str | tuple[float, float]

EXTENSIONS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}

DPI = 150  # png: 960 by 720 pixels, sharp on a slide and small on disk
ARROWS = 20  # gradient arrows along each side of a contour plot
LEVELS = 20  # contour levels
LOG_SCALE = 100  # losses from the largest to the smallest: past this ratio, a log scale
TERMINAL_HEIGHT = 17  # rows of a terminal plot's drawing area, uniplot's default
RESIDUALS_HEIGHT = 5  # rows of the residuals' panel below a fit's terminal plot
# Columns a fit's terminal plot keeps for its y axis labels, so that the drawings of its two
# panels are as wide and their x axes line up.
Y_LABELS = 12
# A series' colour in a fit's terminal plot, in turn: uniplot's, but black and white, which
# one background or another hides.
TERMINAL_COLORS = ["blue", "magenta", "green", "yellow", "cyan", "red"]
# Series symbols where there is no colour to tell them apart (a pipe, NO_COLOR).
# f, df/dx, a tangent line and d2f/dx2, told apart without colour
PLAIN_SYMBOLS = ["*", "o", "+", "x"]


def format_of(output: str) -> str:
    """The picture format that the name of the output file asks for."""
    from .._output_files import a_directory, extension

    a_directory(output)  # (`sub/` has no extension to tell, and is no file)
    fmt = EXTENSIONS.get(extension(output, EXTENSIONS))
    if fmt is None:
        raise InputError(
            f"cannot tell the format of {printable(output)} from its extension: "
            "use .svg, .png or .pdf"
        )
    return fmt


@contextmanager
def _quietly():
    """No NumPy RuntimeWarnings (overflow, invalid value) from inside Matplotlib or uniplot: at
    huge or subnormal numbers their arithmetic makes inf and nan on the way, and the warnings
    would name their files. The drawing is right anyway; nanograd says where f is not finite."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _gaps(values: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """`values` with nan wherever it, or `where`, is not finite: drawn as a gap."""
    finite = np.isfinite(values) if where is None else np.isfinite(values) & np.isfinite(where)
    return np.where(finite, values, np.nan)


# Terminal plots


def _text_plotter(color: bool):
    """uniplot's `plot_to_string`, and its style: coloured Unicode blocks, or, where `color`
    is false, one ASCII symbol per series (so they differ without colour)."""
    try:
        from uniplot import plot_to_string
    except ImportError:
        from .._extras import install_command

        raise NanogradError(
            f"a terminal plot needs uniplot: install it with: {install_command('plot-terminal')}"
        ) from None

    def plotted(*args, **kwargs) -> str:
        return unsigned_zeros(plot_to_string(*args, **kwargs))

    if color:
        return plotted, {"color": True}
    plain = {"color": False, "character_set": "ascii", "force_ascii_characters": PLAIN_SYMBOLS}
    return plotted, plain


# A number that is zero in the digits shown, signed: -0, -0.0, -0.00 (an axis label a
# rounding below zero, such as -1e-17, which uniplot writes with its sign).
NEGATIVE_ZERO = re.compile(r"(?<![\w.])-(0(?:\.0+)?)(?![\w.])")


def unsigned_zeros(drawn: str) -> str:
    """uniplot's plot with the axis labels that are a signed zero written as zero (`-0.0`
    as ` 0.0`, in the same width): those right of each box and those under it; the title
    and the legend, which may quote the source, as they are."""
    lines = drawn.split("\n")
    inside = False
    for k, line in enumerate(lines):
        if "┌" in line or "└" in line:
            inside = "┌" in line
            if not inside and k + 1 < len(lines):  # the x axis' labels
                lines[k + 1] = NEGATIVE_ZERO.sub(r" \1", lines[k + 1])
        elif inside and "│" in line:
            box, border, labels = line.rpartition("│")
            lines[k] = box + border + NEGATIVE_ZERO.sub(r"\1", labels)
    return "\n".join(lines)


def curve_text(curve: Curve, columns: int, color: bool) -> str:
    """f and df/dx as a plot in text at most `columns` wide: coloured Unicode blocks, or, where
    `color` is false, one ASCII symbol per series (so they differ without colour), as the
    curve's look says. Their one y axis is `--ylim`'s: by default it spans both, but for
    values far outside, which it says it leaves out."""
    look = curve.look
    ylim = look.ylim
    f = _gaps(curve.value)
    series = [(f, f"f({curve.name})"), (_gaps(curve.gradient, f), f"df/d{curve.name}")]
    if curve.tangent is not None:
        series.append((_tangent(curve), _tangent_label(curve)))
    if curve.second is not None:
        series.append((_gaps(curve.second, f), _second_label(curve)))
    if look.logy:  # a log axis shows what is above 0
        series = [(np.where(y > 0, y, np.nan), label) for y, label in series]
    if not np.isfinite(f).any():
        raise NanogradError(f"nothing to draw: f is nan or inf at every point of {curve.name}")
    # uniplot cannot draw a series with no finite point: leave such a df/dx out.
    series = [(y, label) for y, label in series if np.isfinite(y).any()]
    # (every series has a finite value, so an axis)
    ranges = cast("dict[str, YRange]", {label: y_range(y, ylim) for y, label in series})
    clipped = {label: r for label, r in ranges.items() if r.clipped}
    axis = _one_axis(list(ranges.values()))
    try:
        try:
            text = _text_plot(curve, series, columns, color, None if ylim == "full" else axis, look)
        except (OverflowError, RuntimeError, ValueError):
            if not clipped:
                raise
            # The labels of a clipped axis that uniplot cannot write: the axis of every value.
            text, clipped = _text_plot(curve, series, columns, color, None, look), {}
    except (OverflowError, RuntimeError, ValueError) as error:
        axes = {curve.name: curve.x, **{label: y for y, label in series}}
        raise _unlabelled(error, columns, axes) from None
    if not clipped:
        return text
    return "\n".join([text, textwrap.fill(clip_note(clipped, axis), columns)])


def _text_plot(
    curve: Curve, series: list, columns: int, color: bool, axis: YRange | None, look: Look
) -> str:
    """uniplot's plot of the (values, label) `series` along `curve.x`, on `axis` where it
    is not that of every value, as `look` says (a title, log axes)."""
    plot_to_string, style = _text_plotter(color)
    style = {**style, "x_as_log": look.logx, "y_as_log": look.logy}
    if axis is not None and (axis.low, axis.high) != (axis.lowest, axis.highest):
        style = {**style, "y_min": axis.low, "y_max": axis.high}
    with _quietly():
        drawn = [_across(curve.x, y, axis) for y, _ in series]
        return plot_to_string(
            [y for _, y in drawn],
            [x for x, _ in drawn],
            legend_labels=[label for _, label in series],
            title=look.title or title(curve.source, curve.fixed, columns - 4),
            lines=True,
            width=columns,  # uniplot narrows it to fit the cap, labels included
            line_length_hard_cap=columns,
            height=TERMINAL_HEIGHT,
            **style,
        )


def _one_axis(ranges: list[YRange]) -> YRange:
    """The y axis that several series share: it spans the axis of each."""
    return YRange(
        min(r.low for r in ranges),
        max(r.high for r in ranges),
        min(r.lowest for r in ranges),
        max(r.highest for r in ranges),
        any(r.clipped for r in ranges),
    )


def _unlabelled(error: Exception, columns: int, axes: Mapping[str, np.ndarray]) -> InputError:
    """What uniplot could not draw, in words: it writes axis labels in full digits, so past
    some size they leave no room for the plot (it raises RuntimeError) or its label arithmetic
    overflows (OverflowError); and it steps through the labels of an axis that spans a few of
    the smallest floats in more steps than an array can hold (ValueError)."""
    instead = "write a picture instead, with -o plot.svg"
    if isinstance(error, ValueError):
        spans = {
            name: (float(np.nanmin(a)), float(np.nanmax(a)))
            for name, a in axes.items()
            if np.isfinite(a).any() and np.nanmax(a) > np.nanmin(a)
        }
        name, (low, high) = min(spans.items(), key=lambda item: item[1][1] - item[1][0])
        return InputError(
            f"a terminal plot cannot label an axis as narrow as {name} from {low!r} to "
            f"{high!r}: {instead}"
        )
    largest = max(float(np.nanmax(np.abs(a))) for a in axes.values())
    if _too_wide(np.concatenate([np.ravel(a) for a in axes.values()])):
        instead = "plot a narrower range"
    return InputError(
        f"a terminal plot {columns} columns wide cannot label numbers as large as "
        f"{largest:.3g}: {instead}"
    )


def fit_text(fit: FitCurve, columns: int, color: bool) -> str:
    """A fit over one predictor as a plot in text: the data and the fitted curve."""
    # the band's two sides one series, one legend entry: a nan between them
    sides = [fit.bands[side] for side in ("lower", "upper") if side in fit.bands]
    gap = [np.array([np.nan])]
    band = [np.concatenate([sides[0], *gap, sides[1]])] if sides else []
    along = [np.concatenate([fit.curve_x, *gap, fit.curve_x])] if sides else []
    ys = [*band, fit.curve, fit.observed]  # the data last, drawn over the curve
    return _fits_plot(
        ys,
        [*along, fit.curve_x, fit.x],
        [f"{fit.level:g} band" for _ in band] + ["fit", "data"],
        ["."] * len(band) + PLAIN_SYMBOLS,  # the band's sides as dots
        {fit.predictor: np.concatenate([fit.x, fit.curve_x]), "target": fit.observed},
        [(fit.x, fit.residuals, len(ys) - 1)],  # in the data's colour or symbol
        like=fit,
        title=fit.title,
        columns=columns,
        color=color,
    )


def fit_groups_text(fits: Mapping[str, FitCurve], heading: str, columns: int, color: bool) -> str:
    """Fits over one predictor as one plot in text: each one's data and curve, named in the
    legend by its key (a symbol each, without colour; the bands are for a picture)."""
    ys, xs, labels, residuals = [], [], [], []
    for name, fit in fits.items():
        ys += [fit.curve, fit.observed]  # its data after its curve, drawn over it
        xs += [fit.curve_x, fit.x]
        labels += [f"{name} fit", name]
        residuals.append((fit.x, fit.residuals, len(ys) - 1))
    symbols = [GROUP_SYMBOLS[i % len(GROUP_SYMBOLS)] for i in range(len(ys))]
    colors = [i // 2 for i in range(len(ys))]  # a group's curve and data in one colour
    first = next(iter(fits.values()))
    axes = {first.predictor: np.concatenate(xs), "target": np.concatenate(ys)}
    named = len(fits) <= LEGEND_GROUPS  # beyond, a legend of a line each floods the screen
    if not named:
        heading += f" ({len(fits)} groups, too many to name)"
    return _fits_plot(ys, xs, labels if named else None, symbols, axes, residuals, like=first,
                      title=heading, columns=columns, color=color, colors=colors)  # fmt: skip


def _fits_plot(
    ys: list[np.ndarray],
    xs: list[np.ndarray],
    labels: list[str] | None,
    symbols: list[str],
    axes: Mapping[str, np.ndarray],
    residuals: list[tuple[np.ndarray, np.ndarray, int]],
    *,
    like: FitCurve,
    title: str,
    columns: int,
    color: bool,
    colors: list[int] | None = None,
) -> str:
    """uniplot's plot of the series `ys` along `xs` for fit_text and fit_groups_text, on
    log axes where `like`'s are, `columns` wide, in colour (each series its own, or as
    `colors` numbers them in TERMINAL_COLORS), else in `symbols`, one per series;
    below it, along the same x axis, the `residuals` (x, residuals, and the series of `ys`
    whose colour or symbol they take). A plot that cannot label its numbers says so of
    `axes`."""
    plot_to_string, plain = _text_plotter(color)

    def style(series: list[int]) -> dict:
        """The colours or the symbols of `series`, numbered as in `ys`."""
        if color:
            numbers = [i if colors is None else colors[i] for i in series]
            return {**plain, "color": [TERMINAL_COLORS[k % len(TERMINAL_COLORS)] for k in numbers]}
        return {**plain, "force_ascii_characters": [symbols[i] for i in series]}

    # a title too long for a line: its first lines above the plot, the last as its title
    *above, last = textwrap.wrap(title, columns - 4) or [""]
    heading = "".join(f"{line.center(columns - 2).rstrip()}\n" for line in above)
    with _quietly():  # (nan where no residual is finite)
        largest = np.nanmax(np.abs(np.concatenate([r for _, r, _ in residuals])))
    shown = np.concatenate(xs)
    shown = shown[np.isfinite(shown) & (shown > 0 if like.logx else True)]
    both = {  # one x axis, as wide, for the two panels
        "width": max(columns - Y_LABELS, MIN_COLUMNS // 2),
        "line_length_hard_cap": columns,
        "x_as_log": like.logx,
        **({"x_min": float(shown.min()), "x_max": float(shown.max())} if shown.size else {}),
    }
    try:
        with _quietly():
            drawn = plot_to_string(ys, xs, legend_labels=labels, title=last,
                                   height=TERMINAL_HEIGHT, y_as_log=like.logy,
                                   **both, **style(list(range(len(ys)))))  # fmt: skip
            below = plot_to_string(
                [r for _, r, _ in residuals],
                [x for x, _, _ in residuals],
                title=f"residuals (the largest {largest:.3g})",
                height=RESIDUALS_HEIGHT,
                **both,
                **style([i for _, _, i in residuals]),
            )
    except (OverflowError, RuntimeError, ValueError) as error:
        raise _unlabelled(error, columns, axes) from None
    return f"{heading}{drawn}\n{below}"


# Without colour, a group's curve and data in the symbols of a pair, the pairs in turn: ten
# groups apart.
GROUP_SYMBOLS = [".", "*", ",", "o", "-", "+", "_", "x", "'", "#", ":", "@", "~", "%", "^", "=",
                 ";", "&", "`", "$"]  # fmt: skip


# The widths a terminal plot is drawn at: a terminal (or COLUMNS) narrower or wider is drawn
# at the nearest. uniplot's time and memory grow with the square of the width: 1,000,000
# columns took 24 s and 3.5 GB; 500 take 0.3 s.
MIN_COLUMNS, MAX_COLUMNS = 20, 500


def terminal_width(columns: int) -> int:
    """The width of a terminal plot on a terminal (or COLUMNS) `columns` wide."""
    return min(max(columns, MIN_COLUMNS), MAX_COLUMNS)


def terminal_points(columns: int) -> int:
    """Points along x for a terminal plot `columns` wide: one per pixel column (Unicode block
    characters are two pixels wide)."""
    return 2 * columns


# Pictures


def _figure(**kwargs) -> Figure:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        from .._extras import install_command

        raise NanogradError(
            f"plotting to a file needs matplotlib: install it with: {install_command('plot')}"
        ) from None
    return Figure(layout="constrained", **kwargs)


def _save(figure: Figure, fmt: str) -> bytes:
    """The figure's bytes; svg and pdf without a date, so the same plot gives the same file."""
    from matplotlib import rc_context

    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt)
    buffer = io.BytesIO()
    # svg.fonttype none: text stays text (searchable, selectable), not outlines.
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "nanograd"}):
        figure.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata)
    return buffer.getvalue()


# The widest span a picture's axis takes: Matplotlib widens an axis by its margins and to its
# next tick, and its transforms overflow past the largest float and fail (f = exp(x) from 0 to
# 709.7, 1 to 1.65e308, failed; 0 to 1.3e308 was drawn, 0 to 1.4e308 was not).
MAX_SPAN = 1.2e308


def _too_wide(values: np.ndarray) -> bool:
    finite = values[np.isfinite(values)]
    return bool(finite.size) and float(finite.max()) - float(finite.min()) > MAX_SPAN


class TooWide(InputError):
    """An axis that spans more than a picture can show."""


def _drawable(**arrays: np.ndarray) -> None:
    """Refuse, naming it, an axis that spans too much for a picture: each of `arrays` is the
    finite numbers along one."""
    for what, values in arrays.items():
        values = np.asarray(values, dtype=float)
        if _too_wide(values):
            finite = values[np.isfinite(values)]
            raise TooWide(
                f"a picture cannot show {what} from {finite.min():.3g} to {finite.max():.3g}: "
                f"an axis spans at most {MAX_SPAN:.2g}; plot a narrower range"
            )


# The largest number a log axis shows: Matplotlib's ticks overflow above about 1e270.
LOG_TOP = 1e250


def _drawable_prefix(values: Sequence[float], log: bool) -> int:
    """How many of `values`, from the first, one axis of a picture can show (at least 1):
    on a log axis, up to LOG_TOP; on a linear one, spanning up to MAX_SPAN."""
    low = high = values[0]
    for k, value in enumerate(values):
        if math.isfinite(value):
            low, high = min(low, value), max(high, value)
            if (high > LOG_TOP) if log else (high - low > MAX_SPAN):
                return max(1, k)
    return len(values)


def curve_figure(curve: Curve, fmt: str) -> bytes:
    """f above df/dx (and d2f/dx2 where the curve has it), over the same x axis, as svg,
    png or pdf bytes, as the curve's look says. Where f is nan or inf, none is drawn: a gap.
    f's y axis is `--ylim`'s, the derivatives' too where it is `full`; an automatic axis
    leaves out values far outside, and the panel says so."""
    look = curve.look
    ylim = look.ylim
    f = _gaps(curve.value)
    if not np.isfinite(f).any():
        raise NanogradError(f"nothing to draw: f is nan or inf at every point of {curve.name}")
    name = curve.name
    derivatives = [(_gaps(curve.gradient, f), f"df/d{name}", "C1", "df")]
    if curve.second is not None:
        derivatives.append((_gaps(curve.second, f), _second_label(curve), "C3", "d2f"))
    zero = np.zeros(1)  # each panel draws its axis at 0
    _drawable(
        **{name: curve.x, f"f({name})": np.append(f, zero)},
        **{label: np.append(values, zero) for values, label, _, _ in derivatives},
    )
    tall = 4.8 + 1.6 * (len(derivatives) - 1)
    figure = _figure(figsize=look.size or (6.4, tall))
    top, *below = figure.subplots(1 + len(derivatives), 1, sharex=True)
    bottom = below[-1]
    if look.logx:
        bottom.set_xscale("log")
    if look.logy:
        top.set_yscale("log")
    if curve.tangent is not None:
        at, value, _ = curve.tangent
        line = _tangent(curve)
        top.plot(*_across(curve.x, line, y_range(f, ylim)), "--", color="C2",
                 label=_tangent_label(curve), gid="tangent")  # fmt: skip
        top.plot([at], [value], "o", color="C2", markersize=4)
    panels = [(top, f, f"f({name})", "C0", "f", ylim)] + [
        (axes, values, label, color, gid, "full" if ylim == "full" else "auto")
        for axes, (values, label, color, gid) in zip(below, derivatives, strict=True)
    ]
    for axes, values, label, color, gid, panel_ylim in panels:
        axis = y_range(values, panel_ylim)
        axes.plot(*_across(curve.x, values, axis), color=color, label=label, gid=gid)
        axes.set_ylabel(label)
        axes.axhline(0, color="0.6", linewidth=0.8, zorder=0)
        axes.grid(alpha=0.3)
        axes.legend(loc="best")
        if not (look.logy and axes is top):  # (a log axis: matplotlib's, of what is above 0)
            _limit(axes, axis, label, panel_ylim)
    bottom.set_xlabel(name)
    figure.suptitle(look.title or title(curve.source, curve.fixed))
    return _save(figure, fmt)


def _tangent(curve: Curve) -> np.ndarray:
    """The tangent line of f at the curve's `tangent` point, along its x."""
    at, value, slope = cast("tuple[float, float, float]", curve.tangent)
    with np.errstate(all="ignore"):
        return value + slope * (curve.x - at)


def _second_label(curve: Curve) -> str:
    return f"d2f/d{curve.name}2"


def _tangent_label(curve: Curve) -> str:
    at, _, slope = cast("tuple[float, float, float]", curve.tangent)
    return f"tangent at {curve.name} = {at + 0.0:g} (slope {slope + 0.0:.4g})"  # 0, not -0


def _across(x: np.ndarray, y: np.ndarray, axis: YRange | None) -> tuple[np.ndarray, np.ndarray]:
    """x and y with a gap between neighbours beyond opposite ends of the y axis: where y
    jumps across it at a pole, no line is drawn from top to bottom."""
    if axis is None:
        return x, y
    above, below = y > axis.high, y < axis.low
    jumps = np.flatnonzero((above[:-1] & below[1:]) | (below[:-1] & above[1:])) + 1
    return np.insert(x, jumps, np.nan), np.insert(y, jumps, np.nan)


def _limit(axes: Axes, axis: YRange | None, label: str, ylim: YLim) -> None:
    """Set a panel's y axis: `--ylim LO:HI` as given; an automatic one that leaves out
    values far outside, with a margin and a line that says so."""
    if axis is None or ylim == "full":
        return
    if isinstance(ylim, tuple):
        axes.set_ylim(*ylim)
        return
    if not axis.clipped:
        return
    margin = 0.05 * (axis.high - axis.low)
    axes.set_ylim(axis.low - margin, axis.high + margin)
    note = clip_note({label: axis}, axis)
    axes.set_title(note, loc="left", fontsize=7, color="0.3")


@_quietly()
def figure(result: Curve | Surface, fmt: str) -> bytes:
    """The picture of a curve or a surface, as svg, png or pdf, as its look says (title,
    log axes and y axis of a curve, size)."""
    if isinstance(result, Curve):
        return curve_figure(result, fmt)
    return surface_figure(result, fmt)


def _contour(figure: Figure, surface: Surface) -> tuple[Axes, Artist]:
    """The contour plot of f with the gradient's direction as arrows, on a new axes; and the
    arrows' legend entry."""
    from matplotlib.colors import BoundaryNorm
    from matplotlib.lines import Line2D

    axes = figure.subplots()
    f = np.ma.masked_invalid(surface.value)
    if f.count() == 0:
        raise NanogradError("nothing to draw: f is nan or inf at every point of the grid")
    x, y = surface.names
    _drawable(**{x: surface.x, y: surface.y, f"f({x}, {y})": surface.value})
    # Levels at quantiles of f: every region shows its shape, even where f is nearly flat
    # beside a steep wall (Rosenbrock's valley); the colour bar gives their values.
    levels = np.unique(np.quantile(f.compressed(), np.linspace(0, 1, LEVELS + 1)))
    if levels.size < 2:  # f is the same everywhere
        levels = levels[0] + np.array([-0.5, 0.5])
    # One colour per band, evenly through the colour map, whatever the levels' spacing.
    norm = BoundaryNorm(levels, ncolors=256)
    filled = axes.contourf(surface.x, surface.y, f, levels=levels, cmap="viridis", norm=norm)
    axes.contour(surface.x, surface.y, f, levels=levels, colors="white", linewidths=0.3)
    label = f"f({', '.join(surface.names)}): levels at its quantiles, bands of equal area"
    figure.colorbar(filled, ax=axes, label=label)
    step = max(1, surface.x.size // ARROWS), max(1, surface.y.size // ARROWS)
    rows, cols = slice(step[1] // 2, None, step[1]), slice(step[0] // 2, None, step[0])
    u, v = (_gaps(g[rows, cols], surface.value[rows, cols]) for g in surface.gradients)
    length = np.hypot(u, v)
    length[length == 0] = np.nan  # no direction where the gradient is zero
    # Every arrow has one length: its direction is the gradient's, the contours show its size.
    if np.isfinite(length).any():  # else f is flat: no arrow to draw
        axes.quiver(
            surface.x[cols],
            surface.y[rows],
            u / length,
            v / length,
            color="black",
            angles="xy",
            pivot="mid",
            width=0.003,
            gid="gradient",
        )
    axes.set_xlabel(surface.names[0])
    axes.set_ylabel(surface.names[1])
    axes.set_xlim(surface.x[0], surface.x[-1])
    axes.set_ylim(surface.y[0], surface.y[-1])
    arrow = Line2D(
        [],
        [],
        color="black",
        marker=r"$\rightarrow$",
        markersize=12,
        linestyle="",
        label="direction of the gradient (every arrow the same length)",
    )
    return axes, arrow


def surface_figure(surface: Surface, fmt: str) -> bytes:
    """The contour plot of f with its gradient field, as svg, png or pdf bytes (its look
    gives its title and size)."""
    look = surface.look
    figure = _figure(figsize=look.size or (6.4, 5.2))
    _, arrow = _contour(figure, surface)
    figure.legend(handles=[arrow], loc="outside lower center")
    figure.suptitle(look.title or title(surface.source, surface.fixed))
    return _save(figure, fmt)


@_quietly()
class FitCurve(NamedTuple):
    """What a picture of a fit over one predictor shows: the data (`x`, `observed`) of the
    `target`, the residuals, and the model at the fitted parameters along `curve_x`; with
    `level`, its confidence band (`lower`, `upper`) and the band of a new observation
    (`pred_lower`, `pred_upper`, where there is one) at that level; `logx`, `logy`: which
    axes are logarithmic."""

    predictor: str
    x: np.ndarray
    observed: np.ndarray
    residuals: np.ndarray
    curve_x: np.ndarray
    curve: np.ndarray
    title: str
    target: str = "y"
    level: float | None = None
    bands: Mapping[str, np.ndarray] = {}
    logx: bool = False
    logy: bool = False
    hidden: int = 0  # rows a log axis cannot show
    errors: np.ndarray | None = None  # sigma at each row of `x`, drawn as error bars

    @property
    def hidden_note(self) -> str:
        """What a log axis left out."""
        rows = "1 row is" if self.hidden == 1 else f"{self.hidden} rows are"
        return f"{rows} not drawn: a log axis cannot show 0 or below"


def fit_figure(fit: FitCurve, fmt: str) -> bytes:
    """The data and the fitted curve above, the residuals below, over the predictor."""
    return fit_groups_figure({"": fit}, fit.title, fmt)


def fit_groups_figure(fits: Mapping[str, FitCurve], heading: str, fmt: str) -> bytes:
    """Fits over one predictor in one figure, each with its data, its curve (and bands) and,
    below, its residuals in a colour of its own, named in the legend by its key (the one fit
    of an empty key: the data and the curve in their own colours)."""
    every = list(fits.values())
    _drawable(
        **{every[0].predictor: np.concatenate([a for f in every for a in (f.x, f.curve_x)])},
        target=np.concatenate([a for f in every for a in (f.observed, f.curve)]),
        residual=np.concatenate([*(f.residuals for f in every), [0.0]]),
    )
    figure = _figure(figsize=(6.4, 4.8))
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[2, 1])
    named = len(fits) <= LEGEND_GROUPS  # beyond, a legend would hide the plot
    if not named:
        heading += f" ({len(fits)} groups, too many to name: colours repeat)"
    for number, (name, fit) in enumerate(fits.items()):
        alone = name == ""
        dots, line = ("C0", "C1") if alone else (f"C{number % 10}",) * 2
        gid = "" if alone else f"_{number}"
        label = "data" if alone else name if named else None
        if fit.errors is None:
            top.plot(fit.x, fit.observed, "o", color=dots, markersize=3, label=label,
                     gid=f"data{gid}")  # fmt: skip
        else:  # ± sigma
            points, _, bars = top.errorbar(fit.x, fit.observed, yerr=fit.errors, fmt="o",
                                           color=dots, markersize=3, elinewidth=0.8,
                                           label=label)  # fmt: skip
            points.set_gid(f"data{gid}")
            bars[0].set_gid(f"sigma{gid}")
        top.plot(fit.curve_x, fit.curve, color=line, label="fit" if alone else None,
                 gid=f"fit{gid}")  # fmt: skip
        first = number == 0  # the bands named once
        if "lower" in fit.bands:
            top.fill_between(
                fit.curve_x,
                fit.bands["lower"],
                fit.bands["upper"],
                color=line,
                alpha=0.25,
                linewidth=0,
                label=f"{fit.level:g} confidence band" if first else None,
                gid=f"band{gid}",
            )
        if "pred_lower" in fit.bands:
            for side in ("pred_lower", "pred_upper"):
                top.plot(fit.curve_x, fit.bands[side], "--", color=line, linewidth=0.8,
                         gid=f"{side}{gid}")  # fmt: skip
            if first:
                top.lines[-1].set_label(f"{fit.level:g} prediction band")
        bottom.plot(fit.x, fit.residuals, "o", color="C2" if alone else dots, markersize=3,
                    gid=f"residuals{gid}")  # fmt: skip
    fit = every[0]
    bottom.axhline(0, color="0.6", linewidth=0.8, zorder=0)
    if fit.logx:
        top.set_xscale("log")  # (the residuals share it)
    if fit.logy:
        top.set_yscale("log")
    top.set_ylabel(fit.target)
    bottom.set_ylabel("residual")
    bottom.set_xlabel(fit.predictor)
    for axes in (top, bottom):
        axes.grid(alpha=0.3)
    if top.get_legend_handles_labels()[0]:
        top.legend(loc="best", fontsize="small", ncols=1 + (len(fits) - 1) // 12 if named else 1)
    figure.suptitle(textwrap.fill(heading, TITLE_WIDTH), fontsize="medium")
    return _save(figure, fmt)


# The characters of a fit's title a line, at the figure's width: a longer one is wrapped.
TITLE_WIDTH = 70

# Characters of labels that fit across a path figure's legend (measured: 77 did not)
LEGEND_CHARACTERS = 72

# Groups named in a figure's legend at most (two columns of 12).
LEGEND_GROUPS = 24


def descent_figure(
    program: Program, descent: Descent, method: str, result: Minimum, fmt: str
) -> bytes:
    """How gradient descent went: for two inputs, its path on the contour plot of f; else the
    loss at every step (on a log scale when every loss is positive and they span more than
    two orders of magnitude). Of a descent that went beyond what a picture's axes can show (a
    diverged one), the steps up to there, and the picture says that later ones are left out.
    The legend names the method, the steps taken and how the descent stopped (`result`)."""
    how = ", interrupted" if result.interrupted else ", diverged" if result.diverged else ""
    label = f"{method}, {result.steps} steps{how}"
    steps, points, losses = descent.history()
    with _quietly():  # a diverged descent's numbers near the largest float
        if len(program.inputs) == 2:
            return _path_figure(program, steps, points, label, fmt)
        return _losses_figure(program, steps, losses, label, fmt)


def _losses_figure(
    program: Program, steps: list[int], losses: list[float], label: str, fmt: str
) -> bytes:
    """The loss at each step kept: on a log axis where they are positive and span more than
    LOG_SCALE, unless that shows less than half the steps a linear one does (losses past
    LOG_TOP from the first steps on); a lone point as a dot."""
    kept = _drawable_prefix(losses, False)
    on_log = _drawable_prefix(losses, True)
    log = 0 < min(losses) and LOG_SCALE * min(losses) < max(losses) and on_log >= max(2, kept // 2)
    if log:
        kept = on_log
    figure = _figure(figsize=(6.4, 4.8))
    axes = figure.subplots()
    label += _left_out(steps, kept)
    marker = "o" if kept == 1 else None
    axes.plot(steps[:kept], losses[:kept], color="C0", marker=marker, label=label, gid="loss")
    if log:
        axes.set_yscale("log")
    axes.set_xlabel("step")
    axes.set_ylabel("f (loss)")
    axes.grid(alpha=0.3)
    axes.legend(loc="best")
    figure.suptitle(title(program.source, {}))
    return _save(figure, fmt)


def _left_out(steps: list[int], kept: int) -> str:
    """A legend's note that the steps after the `kept` first are not drawn, if any are."""
    return "" if kept == len(steps) else f", drawn up to step {steps[kept - 1]}"


def _path_figure(
    program: Program,
    steps: list[int],
    points: Sequence[Mapping[str, float]],
    label: str,
    fmt: str,
) -> bytes:
    """The optimizer's path drawn on the contour plot of f over a box around it; where that
    box spans more than the axes can show, around the path's first part, a quarter shorter at
    each try."""
    kept = len(points)
    while True:
        try:
            end = "end" if kept == len(points) else f"step {steps[kept - 1]}, the last drawn"
            return _path_picture(program, points[:kept], label, end, fmt)
        except TooWide:
            if kept == 1:
                raise
            kept -= max(1, kept // 4)


def _path_picture(
    program: Program, points: Sequence[Mapping[str, float]], label: str, end: str, fmt: str
) -> bytes:
    """The path on the contour plot of f, its last point marked `end`."""
    names = program.inputs
    path = {n: np.array([p[n] for p in points]) for n in names}
    spans = {}
    for n, values in path.items():
        low, high = float(values.min()), float(values.max())
        margin = 0.15 * (high - low) or max(1.0, abs(low))  # a path that stayed put: its point
        spans[n] = Range(low - margin, high + margin)
    surface = sample_surface(program, {}, spans)
    figure = _figure(figsize=(6.4, 5.2))
    axes, arrow = _contour(figure, surface)
    x, y = path[names[0]], path[names[1]]
    axes.plot(x, y, color="C3", linewidth=1.5, marker=".", markersize=3, label=label, gid="path")
    axes.plot(x[:1], y[:1], "o", color="C3", markersize=8, label="start", gid="start")
    axes.plot(
        x[-1:],
        y[-1:],
        "*",
        color="white",
        markeredgecolor="C3",
        markersize=14,
        label=end,
        gid="end",
    )
    handles = axes.get_legend_handles_labels()[0]
    # two columns (the path and start, the end and the arrows) where their labels fit across
    wide = max(len(label), 5) + max(len(end), len(str(arrow.get_label()))) > LEGEND_CHARACTERS
    figure.legend(handles=[*handles, arrow], loc="outside lower center", ncols=1 if wide else 2)
    figure.suptitle(title(program.source, {}))
    return _save(figure, fmt)
