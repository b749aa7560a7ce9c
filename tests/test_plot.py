"""`nanograd plot` and `minimize --plot`: the pictures parsed, the terminal plot captured, the
numbers against `grad`, and the errors."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import nanograd_cli
from nanograd_cli import parse
from nanograd_cli._api import minimize
from nanograd_cli.sampling import (
    CURVE_POINTS,
    GRID_POINTS,
    Descent,
    Range,
    sample_curve,
    sample_surface,
)

from .helpers import NOT_ACTIVE, in_process, nanograd, on_terminal, pip_hint, visible

SVG = "{http://www.w3.org/2000/svg}"
# Matplotlib's first two colours: f and df/dx.
BLUE, ORANGE = (0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E)


def svg(path: Path) -> ET.Element:
    return ET.parse(path).getroot()


def texts(root: ET.Element) -> list[str]:
    return [t.text for t in root.iter(f"{SVG}text")]


def paths(root: ET.Element, gid: str) -> list[str]:
    """The `d` of every path drawn by the artist with this id."""
    groups = [g for g in root.iter(f"{SVG}g") if g.get("id") == gid]
    return [p.get("d") for g in groups for p in g.iter(f"{SVG}path")]


def runs(finite: np.ndarray) -> int:
    """How many stretches of consecutive finite points: the pieces a line with gaps has."""
    return int(finite[0]) + int(np.sum(finite[1:] & ~finite[:-1]))


@pytest.mark.slow
def test_svg_has_axis_labels_legend_title_and_one_line_per_curve(tmp_path):
    out = tmp_path / "plot.svg"
    result = in_process("plot", "x*y + tanh(x)", "--x", "-3:3", "--y", "2", "-o", str(out))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    root = svg(out)
    words = texts(root)
    # Each y label once as the label and once in its panel's legend.
    assert words.count("f(x)") == 2 and words.count("df/dx") == 2
    assert "x" in words
    assert "x*y + tanh(x)   at y = 2.0" in words
    for gid in ("f", "df"):
        (d,) = paths(root, gid)
        assert d.count("M") == 1  # no gap: one unbroken line


def test_nan_makes_gaps_with_a_warning_not_an_error(tmp_path):
    out = tmp_path / "log.svg"
    result = in_process("plot", "log(x)", "--x", "-1:3", "-o", str(out))
    assert result.returncode == 0
    # 100 of the 400 points have x < 0 (x = -1 + 4k/399 for k = 0..99).
    assert result.stderr == (
        "warning: f is nan or inf at 100 of 400 points, drawn as gaps; the first: "
        "x = -1.0 gives nan (log gave nan at line 1, column 1)\n"
    )
    (d,) = paths(svg(out), "f")
    assert d.count("M") == 1  # drawn from x > 0 only
    # df/dx = 1/x is finite for x < 0 too, but where f is not, neither is drawn.
    (d,) = paths(svg(out), "df")
    assert d.count("M") == 1


def test_every_stretch_between_gaps_is_its_own_piece_of_line(tmp_path):
    out = tmp_path / "gaps.svg"
    result = in_process("plot", "log(sin(x))", "--x", "0.1:12", "-o", str(out))
    assert result.returncode == 0 and result.stderr.startswith("warning: f is nan or inf at ")
    curve = sample_curve(parse("log(sin(x))"), {}, "x", Range(0.1, 12.0), CURVE_POINTS)
    pieces = runs(np.isfinite(curve.value))
    assert pieces == 2  # sin(x) > 0 on (0, pi) and (2 pi, 3 pi) within the range
    assert [d.count("M") for d in paths(svg(out), "f")] == [pieces]


@pytest.mark.slow
def test_png_has_its_size_and_both_curves(tmp_path):
    from matplotlib.image import imread

    out = tmp_path / "plot.png"
    result = in_process("plot", "sin(x)", "--x", "-3:3", "-o", str(out))
    assert result.returncode == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = (imread(out)[:, :, :3] * 255).round().astype(int)
    assert pixels.shape[:2] == (720, 960)  # 6.4 by 4.8 inches at 150 dpi
    white = (pixels == 255).all(axis=2)
    assert 0.02 < 1 - white.mean() < 0.5
    for colour in (BLUE, ORANGE):
        assert ((pixels == colour).all(axis=2)).sum() > 500, colour


@pytest.mark.slow
def test_pdf(tmp_path):
    out = tmp_path / "plot.pdf"
    result = in_process("plot", "sin(x)", "--x", "-3:3", "-o", str(out))
    assert result.returncode == 0
    data = out.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")


@pytest.mark.slow
def test_the_same_plot_gives_the_same_file(tmp_path):
    for fmt in ("svg", "pdf"):
        first, second = tmp_path / f"1.{fmt}", tmp_path / f"2.{fmt}"
        for out in (first, second):
            assert nanograd("plot", "sin(x)", "--x", "0:1", "-o", str(out)).returncode == 0
        assert first.read_bytes() == second.read_bytes()


@pytest.mark.slow
def test_terminal_plot_fits_80_columns_in_colour_with_a_legend():
    screen = on_terminal("plot", "sin(x)*y", "--x", "-3:3", "--y", "2")
    lines = visible(screen)
    assert "\x1b[3" in screen  # coloured series
    assert all(len(line) <= 80 for line in lines)
    assert lines[0].strip() == "sin(x)*y   at y = 2.0"
    assert re.fullmatch(r" *██ f\(x\) +██ df/dx", lines[-1])
    assert lines[1].startswith("┌") and lines[-3].startswith("└")
    assert lines[-2].split() == ["-3", "-2", "-1", "0", "1", "2", "3"]


@pytest.mark.slow
def test_terminal_plot_on_a_narrow_terminal():
    lines = visible(on_terminal("plot", "sin(x)", "--x", "-3:3", columns=50))
    assert all(len(line) <= 50 for line in lines)
    assert "f(x)" in lines[-1] and "df/dx" in lines[-1]


@pytest.mark.slow
def test_plot_in_a_pipe_is_plain_text_with_a_symbol_per_curve():
    result = nanograd("plot", "x**2", "--x", "-1:1", env={"PATH": "", "COLUMNS": "60"})
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert "\x1b" not in result.stdout
    assert all(len(line) <= 60 for line in lines)
    assert lines[-1].split() == ["**", "f(x)", "oo", "df/dx"]
    body = "".join(lines[2:-3])
    assert "*" in body and "o" in body


def test_plotted_numbers_are_grads_at_sample_points():
    """The arrays drawn are what `nanograd grad` prints at the same points, and the hand
    derivative: d/dx (x*y + tanh(x)) = y + 1 - tanh(x)**2."""
    curve = sample_curve(parse("x*y + tanh(x)"), {"y": 2.0}, "x", Range(-3.0, 3.0), 400)
    assert curve.x.size == 400 and curve.x[0] == -3.0 and curve.x[-1] == 3.0
    for k in (0, 57, 200, 399):
        x = float(curve.x[k])
        result = in_process("grad", "x*y + tanh(x)", "--x", repr(x), "--y", "2", "--format", "json")
        grad = json.loads(result.stdout)
        assert curve.value[k] == pytest.approx(grad["value"], rel=1e-14, abs=1e-15)
        assert curve.gradient[k] == pytest.approx(grad["gradients"]["x"], rel=1e-14)
        assert curve.gradient[k] == pytest.approx(2.0 + 1.0 - math.tanh(x) ** 2, rel=1e-14)


def test_surface_numbers_are_grads_at_grid_points():
    source = "sin(x)*y**2 + z"
    spans = {"x": Range(-2.0, 2.0), "y": Range(-1.0, 3.0, 31)}
    surface = sample_surface(parse(source), {"z": 0.5}, spans)
    assert surface.value.shape == (31, GRID_POINTS)
    for i, j in ((0, 0), (7, 50), (30, 100)):
        x, y = float(surface.x[j]), float(surface.y[i])
        result = in_process(
            "grad", source, "--x", repr(x), "--y", repr(y), "--z", "0.5", "--format", "json"
        )
        grad = json.loads(result.stdout)
        assert surface.value[i, j] == pytest.approx(grad["value"], rel=1e-14, abs=1e-15)
        for name, g in zip("xy", surface.gradients, strict=True):
            assert g[i, j] == pytest.approx(grad["gradients"][name], rel=1e-14, abs=1e-15)
        assert surface.gradients[0][i, j] == pytest.approx(math.cos(x) * y**2, abs=1e-14)


@pytest.mark.slow
def test_two_ranges_draw_a_contour_with_gradient_arrows(tmp_path):
    from matplotlib.image import imread

    svg_out, png_out = tmp_path / "c.svg", tmp_path / "c.png"
    source = "(1 - x)**2 + 100*(y - x**2)**2"
    for out in (svg_out, png_out):
        result = in_process("plot", source, "--x", "-2:2", "--y", "-1:3", "-o", str(out))
        assert (result.returncode, result.stderr) == (0, "")
    root = svg(svg_out)
    words = texts(root)
    # The two choices that keep it readable are stated on the picture (docs/plot.md).
    assert {
        "x",
        "y",
        "f(x, y): levels at its quantiles, bands of equal area",
        "direction of the gradient (every arrow the same length)",
        source,
    } <= set(words)
    assert paths(root, "gradient")  # the arrows
    pixels = imread(png_out)[:, :, :3]
    assert pixels.shape[:2] == (780, 960)
    assert len(np.unique((pixels * 255).astype(int).reshape(-1, 3), axis=0)) > 50  # colours


@pytest.mark.slow
def test_minimize_draws_the_path_on_the_contour(tmp_path):
    out = tmp_path / "path.svg"
    result = in_process(
        "minimize", "(1 - x)**2 + 100*(y - x**2)**2", "--x", "-1.2", "--y", "1", "--lr", "0.02",
        "--plot", str(out), "--format", "json",
    )  # fmt: skip
    assert result.returncode == 0
    steps = json.loads(result.stdout)["steps"]
    root = svg(out)
    words = texts(root)
    assert {f"adam, {steps} steps", "start", "end", "x", "y"} <= set(words)
    assert paths(root, "path") and paths(root, "start") and paths(root, "end")


@pytest.mark.slow
def test_minimize_draws_the_loss_curve_for_one_input(tmp_path):
    out = tmp_path / "loss.svg"
    result = in_process("minimize", "(x - 3)**2", "--x", "0", "--plot", str(out))
    assert result.returncode == 0
    words = texts(svg(out))
    assert {"step", "f (loss)", "(x - 3)**2"} <= set(words)
    assert any(w.startswith("adam, ") and w.endswith(" steps") for w in words)
    assert len(paths(svg(out), "loss")) == 1


def test_descent_records_every_point_from_start_to_end():
    program = parse("(x - 3)**2 + (y + 1)**2")
    descent = Descent()
    result = minimize(program, {"x": 0.0, "y": 0.0}, steps=50, lr=0.1, on_point=descent.record)
    assert len(descent.points) == len(descent.losses) == result.steps + 1
    assert descent.points[0] == {"x": 0.0, "y": 0.0}
    assert descent.points[-1] == result.inputs
    assert descent.losses[0] == 10.0 and descent.losses[-1] == result.value


USAGE = "a range is LO:HI or LO:HI:N, e.g. --x -3:3 or --x 0:1:50"


YLIM_USAGE = "give LO:HI (e.g. --ylim -10:10), auto or full"


@pytest.mark.parametrize(
    "args, message",
    [
        ("--x 3:1", "--x 3:1: a range goes from low to high (LO < HI)"),
        ("--x a:b", f"--x a:b: {USAGE}"),
        ("--x 1:2:3:4", f"--x 1:2:3:4: {USAGE}"),
        ("--x 0:inf", "--x 0:inf: the ends of a range must be finite numbers"),
        ("--x 0:1:1", "--x 0:1:1: N, the number of points, is a whole number >= 2"),
        ("--x 0:1:2.5", "--x 0:1:2.5: N, the number of points, is a whole number >= 2"),
        ("--x 0:1:2000000", "--x 0:1:2000000: at most 1,000,000 points"),
        ("--x 0:1:2e6", "--x 0:1:2e6: at most 1,000,000 points"),  # 1e3 is 1000 points
        ("--x 0:1:1e-3", "--x 0:1:1e-3: N, the number of points, is a whole number >= 2"),
        ("--x 1", "give an input a range to plot over, e.g. --x -3:3"),
        ("--x 1 --var x=0:1", "--x is given a value and a range: give one of them"),
        ("--x 0:1 --var x=0:2", "a range for x is given twice"),
        ("--x -2:2 --y -1:3", "a contour plot of two ranges is a picture: add -o plot.png"),
        (
            "--x 0:1 --y 0:1 --z 0:1 -o p.png",
            "ranges for x, y, z: a plot sweeps one input, or two for a contour",
        ),
        ("--x 0:1 --z 1", "missing value for input y: pass --y VALUE"),
        ("--x 0:1 --y 1 --ylim 3:1", "--ylim 3:1: a range goes from low to high (LO < HI)"),
        ("--x 0:1 --y 1 --ylim 0:1:5", f"--ylim 0:1:5: {YLIM_USAGE}"),
        ("--x 0:1 --y 1 --ylim big", f"--ylim big: {YLIM_USAGE}"),
        ("--x 0:1 --y 1 --ylim 0:inf", "--ylim 0:inf: the ends of a range must be finite numbers"),
        (
            "--x 0:1 --y 0:1 --ylim 0:1 -o p.png",
            "--ylim sets the y axis of a curve: a contour plot's is the range of y",
        ),
        (
            "--x 0:1 --y 1 -o plot.txt",
            "cannot tell the format of plot.txt from its extension: use .svg, .png or .pdf",
        ),
    ],
)
def test_bad_ranges_and_options_are_exit_2(args, message, tmp_path):
    source = "x*y + z" if "--z" in args else "x*y"
    result = in_process("plot", source, *args.split(), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines()[0] == f"error: {message}"
    assert list(tmp_path.iterdir()) == []


def test_nothing_to_draw_is_exit_1_and_leaves_the_old_file(tmp_path):
    out = tmp_path / "plot.png"
    out.write_bytes(b"old")
    result = in_process("plot", "log(x)", "--x", "-3:-1", "-o", str(out))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "error: nothing to draw: f is nan or inf at every point of x"
    )
    assert out.read_bytes() == b"old" and list(tmp_path.iterdir()) == [out]


def test_minimize_plot_with_an_unknown_extension_fails_before_descending(tmp_path):
    result = in_process("minimize", "x**2", "--x", "1", "--plot", str(tmp_path / "p.jpg"))
    assert (result.returncode, result.stdout) == (2, "")
    assert "cannot tell the format of" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "library, args, message, extra",
    [
        ("uniplot", [], "error: a terminal plot needs uniplot: ", "plot-terminal"),
        ("matplotlib", ["-o", "plot.png"], "error: plotting to a file needs matplotlib: ", "plot"),
    ],
)
def test_without_the_plot_extra_it_says_what_to_install(library, args, message, extra, tmp_path):
    code = (
        "import sys\n"
        f"sys.modules[{library!r}] = None  # as if not installed\n"
        "from nanograd_cli._cli import main\n"
        f"main(['plot', 'sin(x)', '--x', '0:1', *{args!r}])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=NOT_ACTIVE
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"{message}install it with: {pip_hint(extra)}\n"
    assert list(tmp_path.iterdir()) == []


def test_a_source_without_inputs_has_nothing_to_plot_over():
    result = in_process("plot", "2 + 3")
    assert (result.returncode, result.stderr) == (
        2,
        "error: the source has no inputs: there is nothing to plot it over\n",
    )


def test_grad_does_not_import_the_plotting_libraries():
    """Start-up of the other commands stays as it was: no Matplotlib, uniplot or NumPy."""
    code = (
        "import sys\n"
        "from nanograd_cli._cli import main\n"
        "try:\n"
        "    main(['grad', 'x*y', '--x', '2', '--y', '3'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = {'matplotlib', 'uniplot', 'numpy', 'PIL'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stderr == "[]\n"


WIDE = (
    "error: --x -1e308:1e308: the range is too wide: HI - LO must be a finite number "
    "(at most 1.798e+308)\n"
)


@pytest.mark.parametrize(
    "args",
    [
        ["x", "--x", "-1e308:1e308"],
        ["x", "--x", "-1e308:1e308", "-o", "big.svg"],
        ["x*y", "--x", "-1e308:1e308", "--y", "0:1", "-o", "c3.png"],
    ],
)
def test_a_range_wider_than_a_float_is_bad_input(args, tmp_path):
    """1e308 - -1e308 overflows to inf: the points between would be nan."""
    assert math.isinf(1e308 - -1e308)
    result = in_process("plot", *args, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", WIDE)
    assert list(tmp_path.iterdir()) == []


def _columns(columns: int) -> dict[str, str]:
    return {**os.environ, "COLUMNS": str(columns)}


@pytest.mark.slow
def test_numbers_too_large_for_a_terminal_plot_ask_for_a_picture(tmp_path):
    """uniplot writes axis labels in full digits: 1e308 has no room in 80 columns, nor 1e20 in
    20. A picture draws them."""
    result = in_process("plot", "x", "--x", "0:1e200:3", env=_columns(80))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "error: a terminal plot 80 columns wide cannot label numbers as large as 1e+200: "
        "write a picture instead, with -o plot.svg\n"
    )
    # a picture draws 1e308 too; past a span of 1.2e308 its axes cannot scale either: a
    # narrower range is the way
    result = in_process("plot", "x", "--x", "0:1e308:3", env=_columns(80))
    assert result.stderr.endswith("as large as 1e+308: write a picture instead, with -o plot.svg\n")
    result = in_process("plot", "x", "--x", "0:1e308:3", "-o", str(tmp_path / "huge.svg"))
    assert (result.returncode, result.stderr) == (0, "")
    result = in_process("plot", "x", "--x", "0:1.5e308:3", env=_columns(80))
    assert result.stderr.endswith("as large as 1.5e+308: plot a narrower range\n")
    result = in_process("plot", "x", "--x", "0:1e20", env=_columns(20))
    assert result.returncode == 2
    assert result.stderr.startswith("error: a terminal plot 20 columns wide cannot label ")
    result = in_process("plot", "x", "--x", "0:1e200:3", "-o", str(tmp_path / "big.svg"))
    assert (result.returncode, result.stderr) == (0, "")
    line = ET.parse(tmp_path / "big.svg").find(f".//{SVG}g[@id='f']")
    assert line is not None


@pytest.mark.slow
@pytest.mark.parametrize("output", [None, "e.svg", "e.png"])
def test_library_warnings_are_silenced_and_nanograd_s_own_stays(output, tmp_path):
    """exp overflows past log(max float) = 709.78...: nanograd's warning counts those points,
    and nothing else (no NumPy RuntimeWarning from inside the plotting libraries) shows."""
    points = 160 if output is None else CURVE_POINTS  # a terminal 80 columns wide: 2 per column
    x = np.linspace(0, 1000, points)
    over = x > math.log(sys.float_info.max)
    picture = ["-o", output] if output else []
    result = nanograd(
        "plot", "exp(x)*1e-10", "--x", "0:1000", *picture, env=_columns(80), cwd=tmp_path
    )
    assert result.returncode == 0
    assert result.stderr == (
        f"warning: f is nan or inf at {over.sum()} of {points} points, drawn as gaps; the "
        f"first: x = {float(x[over][0])!r} gives inf (exp gave inf at line 1, column 1)\n"
    )
    result = nanograd("plot", "exp(x)", "--x", "1e-310:2e-310", *picture, cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")


def clipped_to(values: np.ndarray) -> tuple[float, float]:
    """The y axis docs/plot.md says values far out leave: 3 interquartile ranges beyond the
    quartiles on a side where a value lies more than 20 beyond."""
    q1, q3 = np.quantile(values, [0.25, 0.75])
    spread = q3 - q1
    low = q1 - 3 * spread if values.min() < q1 - 20 * spread else values.min()
    high = q3 + 3 * spread if values.max() > q3 + 20 * spread else values.max()
    return low, high


def span(low: float, high: float) -> str:
    return f"[{low:.3g}, {high:.3g}]"


def tan_curve(points: int):
    return sample_curve(parse("tan(x)"), {}, "x", Range(-3.0, 3.0), points)


@pytest.mark.slow
def test_a_picture_leaves_out_poles_and_says_so(tmp_path):
    """tan(x) reaches ±1,582 and its derivative 2.5e6 at the points nearest pi/2: each panel
    spans the rest, says what it left out, and draws no line across the pole."""
    out = tmp_path / "tan.svg"
    result = in_process("plot", "tan(x)", "--x", "-3:3", "-o", str(out))
    assert (result.returncode, result.stderr) == (0, "")
    curve = tan_curve(CURVE_POINTS)
    words = texts(svg(out))
    for label, values in (("f(x)", curve.value), ("df/dx", curve.gradient)):
        low, high = clipped_to(values)
        assert high < 30 < values.max()
        note = (
            f"y clipped to {span(low, high)}: {label} spans "
            f"{span(values.min(), values.max())}; --ylim full shows all"
        )
        assert note in words, words
    (d,) = paths(svg(out), "f")
    assert d.count("M") == 3  # broken at both poles
    full = tmp_path / "full.svg"
    assert (
        in_process("plot", "tan(x)", "--x", "-3:3", "-o", str(full), "--ylim", "full").returncode
        == 0
    )
    assert not any("clipped" in w for w in texts(svg(full)))
    (d,) = paths(svg(full), "f")
    assert d.count("M") == 1


def test_ylim_sets_f_s_axis_in_a_picture(tmp_path):
    out = tmp_path / "tan.svg"
    result = in_process("plot", "tan(x)", "--x", "-3:3", "--ylim", "-2:2", "-o", str(out))
    assert (result.returncode, result.stderr) == (0, "")
    words = texts(svg(out))
    assert not any(w.startswith("y clipped") and "f(x)" in w for w in words)
    assert any(w.startswith("y clipped") and "df/dx" in w for w in words)  # its own axis
    ticks = [
        float(w.replace("\u2212", "-")) for w in words if re.fullmatch(r"\u2212?\d+(\.\d+)?", w)
    ]
    assert -2.0 in ticks and 2.0 in ticks


@pytest.mark.slow
@pytest.mark.parametrize(
    "source, span_", [("x**3 - 3*x", "-2.5:2.5"), ("exp(x)", "0:10"), ("x**10", "0:2")]
)
def test_curves_without_poles_are_not_clipped(source, span_, tmp_path):
    out = tmp_path / "p.svg"
    assert in_process("plot", source, "--x", span_, "-o", str(out)).returncode == 0
    assert not any("clipped" in w for w in texts(svg(out)))
    piped = in_process("plot", source, "--x", span_)
    assert piped.returncode == 0 and "clipped" not in piped.stdout


def y_labels(lines: list[str]) -> list[float]:
    """The numbers uniplot writes right of a plot's frame."""
    labels = [line.rsplit("│", 1)[1] for line in lines if re.search(r"│ -?[\d.,]+$", line)]
    return [float(label.replace(",", "")) for label in labels]


@pytest.mark.slow
def test_a_terminal_plot_leaves_out_poles_and_says_so():
    result = in_process("plot", "tan(x)", "--x", "-3:3", env={**os.environ, "COLUMNS": "80"})
    assert (result.returncode, result.stderr) == (0, "")
    curve = tan_curve(160)  # two points per column
    (f_low, f_high), (d_low, d_high) = clipped_to(curve.value), clipped_to(curve.gradient)
    note = (
        f"y clipped to {span(min(f_low, d_low), max(f_high, d_high))}: f(x) spans "
        f"{span(curve.value.min(), curve.value.max())}, df/dx spans "
        f"{span(curve.gradient.min(), curve.gradient.max())}; --ylim full shows all"
    )
    lines = result.stdout.splitlines()
    assert " ".join(lines[-2:]) == note and all(len(line) <= 80 for line in lines)
    assert max(y_labels(lines)) <= max(f_high, d_high) < 30
    full = in_process("plot", "tan(x)", "--x", "-3:3", "--ylim", "full").stdout.splitlines()
    assert "clipped" not in "".join(full) and max(y_labels(full)) > 1000
    given = in_process("plot", "tan(x)", "--x", "-3:3", "--ylim", "-3:3").stdout.splitlines()
    assert "clipped" not in "".join(given) and set(y_labels(given)) <= set(range(-3, 4))


def test_a_terminal_plot_writes_zero_unsigned(tmp_path):
    """An axis label a rounding below zero (-1e-17) was -0.0, and a tangent's slope at 0 of
    -x**2 was -0: zero is written 0.0 and 0, the labels where they were."""
    columns = {**os.environ, "COLUMNS": "60"}
    result = in_process("plot", "x**2 - 1", "--x", "-0.3:0.1", env=columns)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[-2] == "-0.3        -0.2         -0.1          0.0          0.1"
    tangent = in_process("plot", "--x", "-1:1", "--tangent", "-0", "-e", "-x**2", env=columns)
    assert tangent.stdout.splitlines()[-1].strip() == (
        "** f(x)   oo df/dx   ++ tangent at x = 0 (slope 0)"
    )
    (tmp_path / "q.csv").write_text("x,y\n-1,1\n-0.5,0.26\n0,0.01\n0.5,0.24\n1,1.01\n")
    fit = in_process("fit", "a*x**2", "--data", "q.csv", "--a", "1", "--plot", "-",
                     "--format", "csv", env=columns, cwd=tmp_path)  # fmt: skip
    residuals = fit.stderr.split("residuals (the largest")[1].splitlines()
    assert [line.rpartition("│")[2] for line in residuals if "│" in line] == [
        " 0.01", "", " 0.00", "", " -0.01"
    ]  # fmt: skip


def test_a_terminal_plot_on_a_terminal_says_what_it_clipped():
    lines = visible(on_terminal("plot", "tan(x)", "--x", "-3:3", columns=60))
    assert all(len(line) <= 60 for line in lines)
    assert lines[-3].strip().endswith("██ df/dx")
    assert " ".join(lines[-2:]).startswith("y clipped to [")
    assert " ".join(lines[-2:]).endswith("; --ylim full shows all")


def test_a_title_log_axes_a_size_and_a_tangent_for_slides(tmp_path):
    """--title replaces the title, --logx and --logy make log axes, --size sets the inches,
    --tangent draws f(A) + f'(A)(x - A) (by hand: exp at 0 is 1 + x); bad values say so."""
    out = tmp_path / "slide.svg"
    given = ["plot", "exp(x)", "--x", "0.5:2", "--logx", "--logy", "--tangent", "1"]
    done = in_process(*given, "--title", "growth", "--size", "8,4.5", "-o", str(out))
    assert (done.returncode, done.stderr) == (0, "")
    root = svg(out)
    assert "growth" in texts(root) and root.get("width") == "576pt"  # 8 in at 72 pt an inch
    assert "tangent at x = 1 (slope 2.718)" in texts(root)
    curve = nanograd_cli.plot("exp(x)", x="-2:2", tangent=0)
    assert curve.tangent == (0.0, 1.0, 1.0)
    text = in_process("plot", "x**2", "--x", "-2:2", "--tangent", "1").stdout
    assert text.splitlines()[-1].strip() == "** f(x)   oo df/dx   ++ tangent at x = 1 (slope 2)"
    for args, message in [
        (
            ["--x", "-1:2", "--logx"],
            "--logx: a log axis needs x above 0, and its range starts at -1",
        ),
        (
            ["--x", "-1:2", "--size", "4,4"],
            "--size is a picture's: write the plot to a file (--output plot.png)",
        ),
        (["--x", "-1:2", "--tangent", "inf"], "invalid value for --tangent: inf is no point"),
        (
            ["--x", "1:2", "--tangent", "5"],
            "--tangent 5: the point is outside the plotted range of x, 1 to 2",
        ),
    ]:
        done = in_process("plot", "exp(x)", *args)
        assert (done.returncode, done.stderr) == (2, f"error: {message}\n")
    nan_there = in_process("plot", "log(x)", "--x", "-1:2", "--tangent", "-0.5")
    assert (nan_there.returncode, nan_there.stderr) == (
        2,
        "error: --tangent -0.5: f is nan and df/dx -2.0 at x = -0.5: no tangent line there\n",
    )
    # a point is written as --x's value is: pi/2, the top of sin
    at, value, slope = nanograd_cli.plot("sin(x)", x="0:3", tangent="pi/2").tangent
    assert (at, value, slope) == (math.pi / 2, 1.0, math.cos(math.pi / 2))
    done = in_process("plot", "x*y", "--x", "-1:1", "--y", "0:1", "--tangent", "0", "-o", str(out))
    assert done.stderr == "error: --tangent is for a curve, a plot over one range\n"
    reply = in_process("repl", stdin=":plot exp(x) x -2:2 tangent 0 title growth\n")
    assert reply.stdout.splitlines()[0].strip() == "growth" and "tangent at x = 0" in reply.stdout


LOOK = {"title": "growth", "logy": True, "ylim": "1:10", "tangent": "1.5", "second": True}


def test_the_look_reaches_a_picture_alike_from_the_command_line_the_repl_and_python(tmp_path):
    """Title, log axes, size, y axis, tangent and second derivative: one api call checks and
    carries them, so the three doors draw the same picture, byte for byte."""
    given = {**LOOK, "logx": True, "size": "8,4.5"}
    flags = [f"--{k}" if v is True else f"--{k}={v}" for k, v in given.items()]
    cli = tmp_path / "cli.svg"
    done = in_process("plot", "exp(x)", "--x", "0.5:2", *flags, "-o", str(cli))
    assert (done.returncode, done.stderr) == (0, "")
    repl = tmp_path / "repl.svg"
    words = " ".join(k if v is True else f"{k} {v}" for k, v in given.items())
    reply = in_process("repl", stdin=f":plot exp(x) x 0.5:2 {repl} {words}\n")
    assert reply.stdout.strip() == f"wrote {repl}", reply.stderr
    python = tmp_path / "python.svg"
    curve = nanograd_cli.plot(
        "exp(x)", x="0.5:2", output=python, **{**given, "size": (8, 4.5), "ylim": (1, 10)}
    )
    assert curve.look == nanograd_cli.sampling.Look("growth", True, True, (8.0, 4.5), (1.0, 10.0))
    root = svg(cli)
    assert root.get("width") == "576pt" and "growth" in texts(root)  # 8 in at 72 pt an inch
    assert {"d2f/dx2", "tangent at x = 1.5 (slope 4.482)"} <= set(texts(root))
    assert cli.read_bytes() == repl.read_bytes() == python.read_bytes()


def test_the_look_reaches_the_terminal_plot_alike_from_the_command_line_and_the_repl():
    flags = [f"--{k}" if v is True else f"--{k}={v}" for k, v in LOOK.items()]
    text = in_process("plot", "exp(x)", "--x", "0.5:2", *flags).stdout
    words = " ".join(k if v is True else f"{k} {v}" for k, v in LOOK.items())
    reply = in_process("repl", stdin=f":plot exp(x) x 0.5:2 {words}\n").stdout
    assert text.splitlines()[0].strip() == "growth"
    assert text.splitlines()[-1].strip() == (
        "** f(x)   oo df/dx   ++ tangent at x = 1.5 (slope 4.482)   xx d2f/dx2"
    )
    assert reply.rstrip("\n") == text.rstrip("\n")


@pytest.mark.parametrize(
    ("cli", "repl", "python", "message"),
    [
        (
            ["--x", "-1:2", "--size", "4,4"],
            "x -1:2 size 4,4",
            {"x": "-1:2", "size": (4, 4)},
            "{size} is a picture's: write the plot to a file ({output} plot.png)",
        ),
        (
            ["--x", "-1:2", "--logx"],
            "x -1:2 logx",
            {"x": "-1:2", "logx": True},
            "{logx}: a log axis needs x above 0, and its range starts at -1",
        ),
        (
            ["--x", "1:2", "--y", "1:2", "--logy", "-o", "contour.svg"],
            "x 1:2 y 1:2 logy contour.svg",
            {"x": "1:2", "y": "1:2", "logy": True},
            "{logy} is for a curve, a plot over one range",
        ),
    ],
)
def test_a_look_that_cannot_be_drawn_is_refused_alike_by_every_door(
    cli, repl, python, message, tmp_path
):
    """Python's plot() refuses what the command line and the repl refuse (it took a size
    without a picture, and log axes it would never draw, without a word)."""
    source = "exp(x)" if "y" not in python else "x*y"
    done = in_process("plot", source, *cli, cwd=tmp_path)
    words = {"size": "--size", "logx": "--logx", "logy": "--logy", "output": "--output"}
    assert (done.returncode, done.stderr) == (2, f"error: {message.format(**words)}\n")
    reply = in_process("repl", stdin=f":plot {source} {repl}\n", cwd=tmp_path)
    words = {"size": "size", "logx": "logx", "logy": "logy", "output": ""}
    assert reply.stderr == f"error: line 1: {message.format(**words).replace('( ', '(')}\n"
    with pytest.raises(nanograd_cli.errors.InputError) as raised:
        nanograd_cli.plot(source, **python)
    words = {"size": "size", "logx": "logx", "logy": "logy", "output": "output="}
    shown = message.format(**words).replace("= plot.png", "='plot.png'")
    assert str(raised.value) == shown
    assert not list(tmp_path.iterdir())


def test_the_second_derivative_on_request(tmp_path):
    """--second: d2f/dx2 (by hand: 6x for x**3 - 3x, -sin(x) for sin(x), 2*sign(x) for
    x*abs(x) but 0 at its kink), a third panel in a picture, a third line in the terminal's
    plot, in the repl and in Python; refused for a contour plot."""
    curve = nanograd_cli.plot("x**3 - 3*x", x="-2:2", second=True)
    assert curve.second is not None
    assert np.allclose(curve.second, 6 * curve.x, rtol=1e-14, atol=1e-14)
    curve = nanograd_cli.plot("sin(x)*y", x="0:3", y=2, second=True)
    assert np.allclose(curve.second, -2 * np.sin(curve.x), rtol=1e-14, atol=1e-15)
    curve = nanograd_cli.plot("x*abs(x)", x="-1:1:5", second=True)
    assert curve.second.tolist() == [-2.0, -2.0, 0.0, 2.0, 2.0]
    assert nanograd_cli.plot("5*x + y", x="0:1", y=1, second=True).second.tolist() == [0.0] * 400
    assert nanograd_cli.plot("x**2", x="0:1").second is None
    out = tmp_path / "inflection.svg"
    done = in_process("plot", "x**3 - 3*x", "--x", "-2:2", "--second", "-o", str(out))
    assert (done.returncode, done.stderr) == (0, "")
    assert {"f(x)", "df/dx", "d2f/dx2"} <= set(texts(svg(out)))
    text = in_process("plot", "x**3 - 3*x", "--x", "-2:2", "--second", "--tangent", "1").stdout
    assert text.splitlines()[-1].strip() == (
        "** f(x)   oo df/dx   ++ tangent at x = 1 (slope 0)   xx d2f/dx2"
    )
    done = in_process("plot", "x*y", "--x", "-1:1", "--y", "0:1", "--second", "-o", str(out))
    assert (done.returncode, done.stderr) == (
        2,
        "error: --second is for a curve, a plot over one range\n",
    )
    reply = in_process("repl", stdin=":plot x**3 - 3*x x -2:2 second\n")
    assert reply.stdout.rstrip().splitlines()[-1].strip() == "** f(x)   oo df/dx   ++ d2f/dx2"
