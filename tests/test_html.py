"""The live page (`draw -o graph.html`): its file, its JavaScript ops against _ops.py, and the
page itself driven in headless Chromium (marker `browser`; skipped where there is none)."""

from __future__ import annotations

import html
import json
import math
import random
import re
import shutil
import struct
import sys
from pathlib import Path

import pytest

from nanograd_cli._language import parse
from nanograd_cli._ops import CONST, OPS
from nanograd_cli.render._html import instruction_names, live_page
from nanograd_cli.render._ops_js import op_javascript, ops_script
from nanograd_cli.render.graph import (
    GRADIENT_COLOURS,
    draw_evaluation,
    gradient_colour,
    gradient_scale,
    human,
    renderer,
)

from .helpers import WORKED, in_process

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
try:
    renderer("svg")
    HAS_RENDERER = True
except Exception:
    HAS_RENDERER = False
needs_renderer = pytest.mark.skipif(not HAS_RENDERER, reason="no Graphviz renderer")
WORKED_POINT = {"x": -4.0, "y": 2.0}
WORKED_ARGS = ("--x", "-4", "--y", "2")


def test_every_op_has_javascript():
    missing = []
    for key, op in OPS.items():
        try:
            op_javascript(key, op)
        except KeyError as error:
            missing.append(error.args[0])
    assert missing == []


def test_an_op_without_javascript_is_named():
    with pytest.raises(KeyError, match="'nosuchop' has no JavaScript"):
        ops_script(["nosuchop"])


def page(tmp_path: Path, *args: str, name: str = "graph.html") -> Path:
    """The page the installed command writes for `args`."""
    out = tmp_path / name
    done = in_process("draw", *args, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


@needs_renderer
def test_the_page_is_one_self_contained_file(tmp_path):
    out = page(tmp_path, WORKED, *WORKED_ARGS)
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    # nothing to fetch at view time: no external scripts, styles, images or fonts
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", text)
    assert "@import" not in text and "url(" not in text
    urls = set(re.findall(r"https?://[^\s\"'<>]+", text))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    # --format html wins over the extension, and goes to standard output with -o -
    done = in_process("draw", WORKED, *WORKED_ARGS, "--format", "html")
    assert done.returncode == 0 and done.stdout == text


@needs_renderer
def test_a_failed_run_leaves_no_page(tmp_path):
    out = tmp_path / "graph.html"
    done = in_process("draw", "x*y", "--x", "1", "-o", str(out))
    assert done.returncode == 2 and "y" in done.stderr
    assert not out.exists()
    done = in_process("draw", "x*y", "--x", "1", "--y", "2", "-o", str(tmp_path / "no" / "g.html"))
    assert done.returncode == 1 and done.stderr.startswith("error:")
    assert list(tmp_path.iterdir()) == []


def page_parts(text: str) -> tuple[str, dict]:
    """A page's <svg> element and the data its script reads."""
    svg = text[text.index("<svg") : text.index("</svg>") + 6]
    start = text.index(">", text.index('id="nanograd-data"')) + 1
    return svg, json.loads(text[start : text.index("</script>", start)])


NODE = re.compile(
    r'<g class="node (\w+)" data-node="(\w+)" data-instruction="(\d+)"[^>]*>(.*?)</g>'
)


@needs_renderer
def test_every_node_and_edge_of_the_drawing_is_in_the_page_once(tmp_path):
    program = parse(Path(WORKED).read_text())
    evaluation = program.gradients(WORKED_POINT)
    drawing = draw_evaluation(evaluation, legend=False)
    text = page(tmp_path, WORKED, *WORKED_ARGS).read_text(encoding="utf-8")
    svg, data = page_parts(text)
    # what the page leaves out of Graphviz's SVG to open faster
    assert "<title>" not in svg and "<!--" not in svg and 'class="edge"' not in svg
    found = [m.groups() for tile in data["tiles"] for m in NODE.finditer(tile)]
    assert len(found) == len({name for _, name, _, _ in found})  # each node once
    nodes = {name: (kind, int(i), inner) for kind, name, i, inner in found}
    names = instruction_names(evaluation)
    for i, (name, v) in enumerate(zip(names, evaluation.nodes, strict=True)):
        if name is None:
            assert str(i) not in {n for _, n, _ in nodes.values()}
            continue
        if v.op is CONST:
            assert nodes[name][:2] == ("constant", i)
            continue
        kind, instruction, inner = nodes[name]
        assert (kind, instruction) == ("value", i)
        texts = re.findall(r"<text[^>]*>([^<]*)</text>", inner)
        assert [html.unescape(t) for t in texts[-2:]] == [
            f"data {human(v.data)}",
            f"grad {human(v.grad)}",
        ]
        if v.op is not None:
            assert nodes[f"{name}op"][:2] == ("operation", i)
    assert len(nodes) == drawing.nodes
    # every edge: a line and an arrowhead, and those of an operation listed under it
    edges = drawing.dot.source.count(" -> ")
    lines = re.search(r'class="edges"[^>]*d="([^"]*)"', svg).group(1)
    heads = re.search(r'class="arrowheads"[^>]*d="([^"]*)"', svg).group(1)
    assert lines.count("M") == heads.count("M") == heads.count("Z") == edges
    listed = sorted(k for ks in data["edges"].values() for k in ks)
    assert listed == list(range(edges))


@needs_renderer
def test_a_drawing_given_is_the_one_drawn():
    evaluation = parse(Path(WORKED).read_text()).gradients(WORKED_POINT)
    drawing = draw_evaluation(evaluation, "TB", legend=False)
    assert live_page(evaluation, drawing=drawing) == live_page(evaluation, "TB")


# --- in the browser ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.skip("no Chromium installed (Debian: apt-get install chromium)")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


@pytest.fixture
def tab(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    context.close()
    assert errors == []


def open_page(tab, path: Path) -> None:
    """Open a page and wait until every tile of its drawing is in."""
    tab.goto(path.as_uri())
    tab.evaluate("nanograd.drawn")


def to_json(x: float) -> float | str:
    return x if math.isfinite(x) else repr(x)


def from_json(x: float | str) -> float:
    return float(x)


def close(js: float, py: float) -> bool:
    """Equal to 1e-12 relative; nan to nan, inf to inf; below the normal floats (where there
    are no 12 digits to compare) to 1e-300."""
    if math.isnan(py) or math.isnan(js):
        return math.isnan(py) and math.isnan(js)
    if math.isinf(py) or math.isinf(js):
        return js == py
    return abs(js - py) <= 1e-12 * abs(py) or abs(js - py) < 1e-300


EDGES = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -3.0,
    2.5,
    -2.5,
    1.5,
    -1.5,
    0.49999999999999994,
    1e-300,
    -1e-300,
    5e-324,
    1e300,
    -1e300,
    30.0,
    27.0,
    700.0,
    710.0,
    -745.0,
    1e16,
    math.pi,
    math.nan,
    math.inf,
    -math.inf,
]


def points(op, rng: random.Random) -> list[tuple[float, ...]]:
    """Edge points and random ones, in and around the op's domain."""
    low, high = op.domain
    if op.arity == 1:
        pts = [(x,) for x in EDGES]
    else:
        small = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.0, 3.0, math.nan, math.inf, -math.inf]
        pts = [tuple(rng.choice(small) for _ in range(op.arity)) for _ in range(400)]
        pts += [(a, b) + (0.3,) * (op.arity - 2) for a in small for b in small]
    for _ in range(300):
        pts.append(tuple(rng.uniform(low, high) for _ in range(op.arity)))
        pts.append(tuple(rng.uniform(-10, 10) * 10 ** rng.randint(-3, 3) for _ in range(op.arity)))
    return pts


@pytest.mark.slow
@pytest.mark.browser
def test_every_op_in_javascript_matches_python(tab):
    tab.set_content(f"<script>{ops_script(list(OPS))}</script>")
    rng = random.Random(15)
    failures = []
    for key, op in OPS.items():
        pts = points(op, rng)
        results = tab.evaluate(
            """([key, pts]) => pts.map((p) => {
                const x = p.map((v) => typeof v === "number" ? v : Number(v.replace("inf", "Inf")
                    .replace("Inf", "Infinity")));
                const y = OPS[key].f(...x);
                const d = OPS[key].d(...x, y);
                return [y, ...d].map((v) => Number.isFinite(v) ? v : String(v));
            })""",
            [key, [[to_json(v) for v in p] for p in pts]],
        )
        for p, got in zip(pts, results, strict=True):
            y = op.forward(*p)
            want = [y, *op.derivative(*p, y)]
            got = [float(str(v).replace("Infinity", "inf")) for v in got]
            if len(got) != len(want) or not all(map(close, got, want)):
                failures.append((key, p, got, want))
    assert failures == []


def random_floats(rng: random.Random, n: int) -> list[float]:
    """Floats of every size and many digits: random bits, and round and tie-making values."""
    out = []
    while len(out) < n:
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(x):
            out.append(x)
    out += [rng.uniform(-1e7, 1e7) for _ in range(n)]
    out += [k / 2**r for k in range(-300, 300, 7) for r in (1, 3, 5, 6)]  # exact ties
    out += [0.0, -0.0, 1e16, 1e-5, 1e-4, 123456.5, 1234550.0, 1234650.0, 5e-324, 1.03125]
    return out


@pytest.mark.slow
@pytest.mark.browser
def test_numbers_are_written_as_python_writes_them(tab, tmp_path):
    open_page(tab, page(tmp_path, "x*y", "--x", "2", "--y", "3"))
    xs = random_floats(random.Random(3), 3000)
    got = tab.evaluate(
        "(xs) => xs.map((x) => [nanograd.repr(x), nanograd.human(x)])", [to_json(x) for x in xs]
    )
    assert [tuple(g) for g in got] == [(repr(x), human(x)) for x in xs]
    special = tab.evaluate("[NaN, Infinity, -Infinity].map((x) => nanograd.human(x))")
    assert special == ["nan", "inf", "-inf"]


def shown_numbers(tab, full: bool) -> dict[str, tuple[str, str]]:
    """Each value node's shown data and grad, by drawing name."""
    if tab.is_checked("#full") != full:
        tab.click("#full")
    return {
        name: (data, grad)
        for name, data, grad in tab.evaluate(
            """() => [...document.querySelectorAll("#graph g.node.value")]
                .map((g) => [g.dataset.node, ...["data ", "grad "].map((p) =>
                    ([...g.querySelectorAll("text")].find((t) => t.textContent.startsWith(p))
                     || {textContent: ""}).textContent.slice(p.length))])
                .filter(([name, data]) => data !== "")"""
        )
    }


def summary(tab) -> dict[str, float]:
    rows = tab.eval_on_selector_all(
        "#summary tr", "rs => rs.map(r => [r.cells[0].innerText, r.cells[1].innerText])"
    )
    return {label: float(value) for label, value in rows}


def check_page_against(tab, program, point: dict[str, float]):
    """Every shown number against the Value graph and the command line at `point`."""
    evaluation = program.gradients(point)
    names = instruction_names(evaluation)
    full = shown_numbers(tab, full=True)
    rounded = shown_numbers(tab, full=False)
    checked = 0
    grads = [
        v.grad for v, n in zip(evaluation.nodes, names, strict=True) if n and v.op is not CONST
    ]
    scale = gradient_scale(grads)
    fills = dict(
        tab.evaluate(
            """() => [...document.querySelectorAll("#graph g.node.value")].map((g) =>
            [g.dataset.node, ([...g.children].find((e) => e.getAttribute("fill")
              && e.getAttribute("fill") !== "none") || {getAttribute: () => null})
              .getAttribute("fill")])"""
        )
    )
    for name, v in zip(names, evaluation.nodes, strict=True):
        if name is None or v.op is CONST:
            continue
        data, grad = full[name]
        assert close(float(data), v.data) and close(float(grad), v.grad), name
        assert rounded[name] == (human(float(data)), human(float(grad)))
        assert fills[name] == gradient_colour(float(grad), scale), name
        checked += 1
    assert checked == len(full)
    args = [f"--{k}={v!r}" for k, v in point.items()]
    cli = json.loads(in_process("grad", "-e", program.source, *args, "--format", "json").stdout)
    shown = summary(tab)
    assert close(shown["value"], from_json(cli["value"]))
    for k, g in cli["gradients"].items():
        assert close(shown[f"∂/∂{k}"], from_json(g))


@pytest.mark.slow
@pytest.mark.browser
def test_worked_example_numbers_and_a_slider_move(tab, tmp_path):
    program = parse(Path(WORKED).read_text())
    open_page(tab, page(tmp_path, WORKED, *WORKED_ARGS))
    check_page_against(tab, program, WORKED_POINT)
    # move x's slider with the keyboard, then compare at the new point the page shows
    tab.focus("#slider-0")
    for _ in range(37):
        tab.keyboard.press("ArrowRight")
    x = float(tab.input_value("#value-0"))
    assert x == pytest.approx(-4.0 + 37 * 0.01) and x == float(tab.input_value("#slider-0"))
    assert (
        tab.evaluate("nanograd.steps.length") > 0
        and tab.evaluate("document.querySelector('#graph.stepping')") is None
    )
    check_page_against(tab, program, {"x": x, "y": 2.0})
    # typing a value outside the slider's range gives it the range it starts with for it
    tab.fill("#value-1", "20.5")
    assert (tab.input_value("#low-1"), tab.input_value("#high-1")) == ("-61.5", "61.5")
    assert float(tab.input_value("#slider-1")) == 20.5
    check_page_against(tab, program, {"x": x, "y": 20.5})


# A graph bigger than the window: tiles out of view go in after the first picture.
CHAIN = "\n".join(["h = x"] + [f"h = tanh(h*0.{k % 9 + 1} + y)" for k in range(40)] + ["h*h"])

MOVE_AT_ONCE = """document.addEventListener("DOMContentLoaded", () => {
    window.emptyTiles = document.querySelectorAll("#graph g.tile:empty").length;
    const slider = document.getElementById("slider-1");
    slider.value = "0.5";
    slider.dispatchEvent(new Event("input"));
});"""


@pytest.mark.slow
@pytest.mark.browser
def test_a_move_before_every_tile_is_in_reaches_them_all(tab, tmp_path):
    program = parse(CHAIN)
    tab.add_init_script(MOVE_AT_ONCE)
    open_page(tab, page(tmp_path, "-e", CHAIN, "--x", "0.3", "--y", "0.2"))
    assert tab.evaluate("window.emptyTiles") > 0
    assert tab.evaluate("document.querySelectorAll('#graph g.tile:empty').length") == 0
    y = float(tab.input_value("#value-1"))
    assert y == pytest.approx(0.5)
    check_page_against(tab, program, {"x": 0.3, "y": y})


def finite_or_not(rng: random.Random) -> float:
    return rng.choice(
        [0.0, -0.0, 1.0, -2.0, math.nan, math.inf, -math.inf]
        + [rng.uniform(-1, 1) * 10.0 ** rng.randint(-15, 15) for _ in range(6)]
    )


@pytest.mark.slow
@pytest.mark.browser
def test_the_pages_fill_colours_are_the_drawings(tab, tmp_path):
    open_page(tab, page(tmp_path, "x*y", "--x", "2", "--y", "3"))
    rng = random.Random(11)
    cases = [[finite_or_not(rng) for _ in range(rng.randint(1, 9))] for _ in range(2000)]
    got = tab.evaluate(
        """(cases) => cases.map((gs) => {
            gs = gs.map((g) => typeof g === "number" ? g : Number(g.replace("inf", "Infinity")));
            const scale = nanograd.gradientScale(gs);
            return [scale, gs.map((g) => nanograd.gradientColour(g, scale))];
        })""",
        [[to_json(g) for g in gs] for gs in cases],
    )
    for gs, (scale, colours) in zip(cases, got, strict=True):
        want = gradient_scale(gs)
        assert len(scale) == len(want) and all(map(close, scale, want)), gs
        assert colours == [gradient_colour(g, want) for g in gs], gs


CURRENT = "#graph g.node.value.current"


@pytest.mark.slow
@pytest.mark.browser
def test_stepping_follows_the_engine_and_explain(tab, tmp_path):
    program = parse(Path(WORKED).read_text())
    evaluation = program.evaluate(WORKED_POINT)
    names = instruction_names(evaluation)
    index = {id(v): i for i, v in enumerate(evaluation.nodes)}
    varying = program.varying()
    engine_order = [index[id(v)] for v in evaluation.result.topological_order()]
    forward = [names[i] for i, v in enumerate(evaluation.nodes) if names[i] and v.op is not CONST]
    backward = [names[i] for i in engine_order if varying[i]]
    explained = json.loads(in_process("explain", WORKED, *WORKED_ARGS, "--format", "json").stdout)

    open_page(tab, page(tmp_path, WORKED, *WORKED_ARGS))
    tab.click("#reset")  # focus on a button: arrow keys step
    seen, panels = [], []
    for _ in range(len(forward) + len(backward)):
        tab.keyboard.press("ArrowRight")
        seen.append(tab.eval_on_selector(CURRENT, "g => g.dataset.node"))
        panels.append([line for line in tab.inner_text("#panel").splitlines() if line.strip()])
    assert seen == forward + backward
    forward_text = [
        s["node"] if s["node"] == s["expression"] else f"{s['node']} = {s['expression']}"
        for s in explained["forward"]
    ]
    assert [panel[1] for panel in panels[: len(forward)]] == forward_text
    for panel, step in zip(panels[len(forward) :], explained["backward"], strict=True):
        lines = panel
        assert lines[1] == step["node"]
        assert close(
            float(lines[2].split()[-1] if "result" not in lines[2] else lines[2].split()[1]),
            from_json(step["gradient"]),
        )
        for d in step["local_derivatives"]:  # a block of labelled lines per argument
            assert f"argument\t{d['argument']}\nlocal\t{d['formula']}\nvalue\t" in "\n".join(panel)
    tab.keyboard.press("ArrowLeft")
    assert tab.eval_on_selector(CURRENT, "g => g.dataset.node") == backward[-2]
    tab.keyboard.press("Escape")
    assert tab.query_selector("#graph g.current") is None


@pytest.mark.slow
@pytest.mark.browser
def test_keyboard_reaches_the_sliders_and_the_nodes(tab, tmp_path):
    open_page(tab, page(tmp_path, "x*y + tanh(x)", "--x", "2", "--y", "3"))
    reached = []
    for _ in range(40):
        tab.keyboard.press("Tab")
        reached.append(
            tab.evaluate("document.activeElement.dataset.node || document.activeElement.id")
        )
    assert "slider-0" in reached and "slider-1" in reached and "next" in reached
    assert reached.index("slider-0") < reached.index("next")
    assert any(re.fullmatch(r"n\d+(op)?", r) for r in reached)  # nodes, for their numbers
    tab.focus("[data-node=n0]")
    assert tab.is_visible("#tip") and "x" in tab.inner_text("#tip .tip-expression")


@pytest.mark.slow
@pytest.mark.browser
def test_hover_shows_expression_numbers_and_local_derivatives(tab, tmp_path):
    program = parse("a = x*y\na + tanh(x)")
    evaluation = program.gradients({"x": 0.5, "y": 3.0})
    names = instruction_names(evaluation)
    open_page(tab, page(tmp_path, "-e", program.source, "--x", "0.5", "--y", "3"))
    tanh = next(i for i, ins in enumerate(program.code) if getattr(ins, "op", None) is OPS["tanh"])
    tab.hover(f"[data-node={names[tanh]}op]")
    tip = tab.inner_text("#tip")
    assert "tanh(x)" in tip
    assert repr(evaluation.nodes[tanh].data) in tip
    assert (
        "1/cosh(x)**2" in tip and repr(OPS["tanh"].derivative(0.5, math.tanh(0.5))[0])[:14] in tip
    )
    tab.mouse.move(1, 1)
    assert not tab.is_visible("#tip")


@pytest.mark.slow
@pytest.mark.browser
def test_nan_and_inf_are_shown_as_such(tab, tmp_path):
    open_page(tab, page(tmp_path, "log(x) * y", "--x", "0", "--y", "2"))
    shown = shown_numbers(tab, full=False)
    assert ("-inf", "0.0000") in shown.values() or any(d == "-inf" for d, _ in shown.values())
    assert summary(tab)["value"] == -math.inf
    tab.fill("#value-0", "nan")
    assert tab.get_attribute("#value-0", "aria-invalid") == "false"
    assert math.isnan(summary(tab)["value"])
    assert all(d == "nan" for d, _ in [shown_numbers(tab, full=False)["n0"]])
    tab.fill("#value-0", "1e999")  # overflows: bad input, as on the command line
    assert tab.get_attribute("#value-0", "aria-invalid") == "true"
    assert math.isnan(summary(tab)["value"])


@pytest.mark.slow
@pytest.mark.browser
def test_no_legend_leaves_the_pages_legend_out(tab, tmp_path):
    evaluation = parse("x*y + tanh(x)").gradients({"x": 2.0, "y": 3.0})
    for legend in (True, False):
        out = tmp_path / f"legend-{legend}.html"
        out.write_bytes(live_page(evaluation, legend=legend))
        open_page(tab, out)
        tab.fill("#value-0", "1")  # a move redraws everything, the legend where there is one
        assert tab.is_visible("#legend") == legend
        assert ("input (green border)" in tab.inner_text("aside")) == legend
        assert ("∂/∂x" in tab.inner_text("aside")) and tab.input_value("#high-0") == "6.0"


# Ten statements whose graph has 30 drawn nodes' worth of values, operations and constants.
TEN_LINES = """a = x*y + 1
b = a*x - y
c = sin(a) + cos(b)
d = c*c + a/2
m = tanh(d) - exp(-x)
f = m*b + c
g = log(1 + f*f)
h = g*x + sigmoid(y)
k = h/(1 + abs(a))
k*k + g*y
"""

# What the page's text and source panel measure, at the window's size.
MEASURE = """() => {
    const graph = document.getElementById("graph");
    const texts = [...graph.querySelectorAll("g.node text")];
    const pre = document.querySelector("pre.source");
    const box = pre.getBoundingClientRect();
    return {
        texts: texts.length,
        lowest: Math.min(...texts.map((t) => t.getBoundingClientRect().height)),
        fit: document.getElementById("fit").checked,
        wide: graph.scrollWidth > graph.clientWidth,
        svg: graph.querySelector("svg").getBoundingClientRect().toJSON(),
        room: [graph.clientWidth, graph.clientHeight],
        hidden: pre.scrollHeight - pre.clientHeight,
        panel: [box.top, box.bottom, innerHeight],
        scrolls: getComputedStyle(pre).overflowY,
    };
}"""


@pytest.mark.slow
@pytest.mark.browser
def test_fitting_keeps_text_readable_and_the_source_whole_at_1200_by_800(browser, tmp_path):
    """At 1200 x 800, a graph of 30 nodes fitted to the window kept its text 2 pixels high;
    now fitting stops at text of READABLE_PX (10) pixels and the graph scrolls and pans. The
    source panel showed 8 of 10 lines; now it shows all of them, and scrolls past half the
    window."""
    source = tmp_path / "ten.txt"
    source.write_text(TEN_LINES)
    out = page(tmp_path, str(source), "--x", "0.5", "--y", "1.5")
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    try:
        open_page(tab, out)
        assert tab.evaluate("nanograd.READABLE_PX") == 10
        assert 30 <= tab.evaluate("document.querySelectorAll('#graph g.node').length")
        seen = tab.evaluate(MEASURE)
        assert seen["fit"] and seen["texts"] >= 60
        assert seen["lowest"] >= 10, seen  # every label, the operations' smaller font too
        assert seen["wide"]  # the rest is there to scroll to
        assert seen["hidden"] == 0 and seen["panel"][1] <= seen["panel"][2]  # every line
        # the graph is dragged to pan it
        before = tab.evaluate("document.getElementById('graph').scrollLeft")
        tab.mouse.move(900, 400)
        tab.mouse.down()
        tab.mouse.move(600, 400, steps=5)
        tab.mouse.up()
        assert tab.evaluate("document.getElementById('graph').scrollLeft") == before + 300
        # a small graph still fills the window, larger than Graphviz drew it
        small = page(tmp_path, "x*y", "--x", "2", "--y", "3", name="small.html")
        open_page(tab, small)
        seen = tab.evaluate(MEASURE)
        width, height = seen["svg"]["width"], seen["svg"]["height"]
        room = seen["room"]
        assert not seen["wide"] and seen["lowest"] > 10
        assert max(width / (room[0] - 16), height / (room[1] - 16)) == pytest.approx(1, abs=0.01)
        # a source of 60 lines: as many as half the window holds, and a scroll bar for the rest
        long = tmp_path / "long.txt"
        long.write_text("".join(f"x{i} = x*{i + 1}\n" for i in range(59)) + "x58 + y\n")
        open_page(tab, page(tmp_path, str(long), "--x", "1", "--y", "2", name="long.html"))
        seen = tab.evaluate(MEASURE)
        assert seen["hidden"] > 0 and seen["scrolls"] == "auto"
        assert seen["panel"][1] - seen["panel"][0] <= 0.5 * 800 + 1
        tab.evaluate("document.querySelector('pre.source').scrollTop = 1e6")
        last = tab.evaluate(
            """() => { const pre = document.querySelector("pre.source");
            const range = document.createRange();
            range.selectNodeContents(pre);
            const lines = [...range.getClientRects()];
            return [lines[lines.length - 1].bottom, pre.getBoundingClientRect().bottom]; }"""
        )
        assert last[0] <= last[1]  # the last line, scrolled to, is in the panel
    finally:
        context.close()
    assert errors == []


def input_state(tab, k: int) -> dict:
    """An input's value box, slider (value, range, step, faded) and the value the page uses."""
    return tab.evaluate(
        """(k) => {
            const s = document.getElementById(`slider-${k}`);
            const box = (p) => document.getElementById(`${p}-${k}`).value;
            return {box: box("value"), low: box("low"), high: box("high"), thumb: s.value,
                    min: s.min, max: s.max, step: s.step, faded: s.classList.contains("off"),
                    said: s.getAttribute("aria-valuetext"), used: String(nanograd.point[k]),
                    refused: document.getElementById(`low-${k}`).ariaInvalid === "true"};
        }""",
        k,
    )


def agreed(tab, k: int) -> float:
    """The value of input k, after checking that its box, its slider (thumb within a step,
    range boxes as the slider's unless marked refused, finite) and the page's point agree."""
    s = input_state(tab, k)
    x = float(s["box"])
    low, high, step = float(s["min"]), float(s["max"]), float(s["step"])
    assert s["refused"] or (float(s["low"]), float(s["high"])) == (low, high), s
    assert math.isfinite(low) and math.isfinite(high) and low < high and step > 0, s
    assert float(s["used"].replace("Infinity", "inf")) == x or math.isnan(x), s
    assert float(s["said"]) == x or math.isnan(x), s
    assert s["faded"] == (not math.isfinite(x)), s
    if math.isfinite(x):
        assert low <= x <= high and abs(float(s["thumb"]) - x) <= step, s
    return x


@pytest.mark.slow
@pytest.mark.browser
def test_sliders_stay_finite_and_step_near_the_value_at_the_float_limits(tab, tmp_path):
    program = parse("x/1e300 + y")
    open_page(tab, page(tmp_path, "x/1e300 + y", "--x", "1e308", "--y", "0.3"))
    assert agreed(tab, 0) == 1e308  # its range: as far as the floats go, not -inf to inf
    tab.focus("#slider-0")
    tab.keyboard.press("ArrowLeft")
    x = agreed(tab, 0)
    assert 1e308 * (1 - 1e-3) <= x < 1e308
    check_page_against(tab, program, {"x": x, "y": 0.3})
    # the smallest float: the thumb where it is, and steps of the smallest float
    open_page(tab, page(tmp_path, "x*y + tanh(x)", "--x", "5e-324", "--y", "3"))
    assert agreed(tab, 0) == 5e-324 and float(input_state(tab, 0)["thumb"]) == 5e-324
    tab.focus("#slider-0")
    tab.keyboard.press("ArrowLeft")
    assert agreed(tab, 0) == 0.0
    tab.keyboard.press("ArrowLeft")
    assert agreed(tab, 0) == -5e-324
    check_page_against(tab, parse("x*y + tanh(x)"), {"x": -5e-324, "y": 3.0})


@pytest.mark.slow
@pytest.mark.browser
def test_a_slider_starts_on_round_values(tab, tmp_path):
    # -3|x| to 3|x| out to a whole number of steps: its values are multiples of its step
    open_page(tab, page(tmp_path, "x*y", "--x", "2.3456", "--y", "3"))
    state = input_state(tab, 0)
    assert (state["min"], state["max"], state["step"]) == ("-7.04", "7.04", "0.01")
    assert (state["low"], state["high"]) == ("-7.04", "7.04")
    assert agreed(tab, 0) == 2.3456  # the value as given, until the slider moves
    tab.focus("#slider-0")
    tab.keyboard.press("ArrowRight")
    assert agreed(tab, 0) == 2.36
    check_page_against(tab, parse("x*y"), {"x": 2.36, "y": 3.0})


def commit(tab, selector: str, text: str) -> None:
    """Type into a box and leave it, as a user does."""
    tab.fill(selector, text)
    tab.press(selector, "Tab")


@pytest.mark.slow
@pytest.mark.browser
def test_the_slider_value_box_graph_and_result_always_agree(tab, tmp_path):
    program = parse("x*y + tanh(x)")
    open_page(tab, page(tmp_path, "x*y + tanh(x)", "--x", "2", "--y", "3"))
    commit(tab, "#low-0", "10")  # from 10 to 6: not a range, refused
    assert tab.get_attribute("#low-0", "aria-invalid") == "true"
    assert agreed(tab, 0) == 2.0 and input_state(tab, 0)["min"] == "-6"
    # a range without the value: the value moves into it, and everything is recomputed
    commit(tab, "#high-0", "20")
    assert agreed(tab, 0) == 10.0 and input_state(tab, 0)["low"] == "10.0"
    check_page_against(tab, program, {"x": 10.0, "y": 3.0})
    tab.focus("#slider-0")
    tab.keyboard.press("ArrowRight")
    assert agreed(tab, 0) == pytest.approx(10.01)
    # a far range end, then an ordinary value: the range is made for that value again
    commit(tab, "#high-0", "1e308")
    assert agreed(tab, 0) == pytest.approx(10.01)
    tab.fill("#value-0", "2")
    assert agreed(tab, 0) == 2.0
    state = input_state(tab, 0)
    assert (state["low"], state["high"], state["step"], state["thumb"]) == (
        "-6.0",
        "6.0",
        "0.01",
        "2",
    )
    tab.fill("#value-0", "-7.5")  # outside: the range it starts with
    assert agreed(tab, 0) == -7.5 and input_state(tab, 0)["high"] == "22.5"
    tab.fill("#value-0", "0.001")  # smaller than a step: the slider could not tell it from 0
    assert agreed(tab, 0) == 0.001 and input_state(tab, 0)["high"] == "0.003"
    check_page_against(tab, program, {"x": 0.001, "y": 3.0})
    # bad text is marked, leaves the value as it was, and goes when the box is left
    tab.fill("#value-0", "2x")
    assert tab.get_attribute("#value-0", "aria-invalid") == "true"
    tab.press("#value-0", "Tab")
    assert tab.input_value("#value-0") == "0.001" and agreed(tab, 0) == 0.001
    # nan and inf are not on the slider: it is faded, at the middle or an end, range kept
    for text, thumb in (("nan", "0"), ("inf", "0.003"), ("-inf", "-0.003")):
        commit(tab, "#value-0", text)
        assert tab.input_value("#value-0") == text and agreed(tab, 0) != 0.001
        assert input_state(tab, 0)["thumb"] == thumb and input_state(tab, 0)["high"] == "0.003"
    tab.focus("#slider-0")
    tab.keyboard.press("ArrowRight")  # back on the slider
    x = agreed(tab, 0)
    assert x == pytest.approx(-0.003 + 1e-6)  # a step: a thousandth of the range, or less
    check_page_against(tab, program, {"x": x, "y": 3.0})


@pytest.mark.slow
@pytest.mark.browser
def test_escape_goes_back_anywhere_and_arrows_step_but_on_sliders_and_boxes(tab, tmp_path):
    open_page(tab, page(tmp_path, "x*y + tanh(x)", "--x", "2", "--y", "3"))

    def step() -> str:
        return tab.inner_text("#panel").splitlines()[0]

    tab.click("#next")
    tab.click("#next")
    assert step() == "forward pass, step 2 of 5"
    tab.focus("#full")  # a checkbox leaves the arrows to the steps
    tab.keyboard.press("ArrowRight")
    assert step() == "forward pass, step 3 of 5" and not tab.is_checked("#full")
    tab.keyboard.press("ArrowLeft")
    assert step() == "forward pass, step 2 of 5"
    tab.keyboard.press("Escape")
    assert step() == "10 steps: 5 forward, 5 backward."
    for box in ("#slider-0", "#value-0", "#low-1"):
        tab.click("#next")
        tab.focus(box)
        tab.keyboard.press("ArrowRight")  # the slider's or the box's, not a step
        assert step() == "forward pass, step 1 of 5"
        assert tab.query_selector("#graph g.current") is not None
        tab.keyboard.press("Escape")  # back to the start from anywhere
        assert step() == "10 steps: 5 forward, 5 backward."
        assert tab.query_selector("#graph g.current") is None
    assert agreed(tab, 0) == 2.01 and agreed(tab, 1) == 3.0


def legend_steps(tab) -> list[tuple[str, str]]:
    """The page legend's fill steps: colour and text, darkest first."""
    steps = tab.evaluate(
        """() => [...document.querySelectorAll("#legend div")]
            .filter((d) => d.querySelector(".swatch[style^=background]"))
            .map((d) => [d.querySelector(".swatch").style.background, d.innerText])"""
    )
    return [tuple(step) for step in steps]


def dot_legend_steps(*args: str) -> list[tuple[str, str]]:
    """The picture legend's fill steps: colour and text, darkest first."""
    dot = in_process("draw", *args).stdout
    return re.findall(r'<TD BGCOLOR="([^"]+)"></TD><TD ALIGN="LEFT">([^<]*)</TD>', dot)


def rgb(colour: str) -> str:
    r, g, b = (int(colour[k : k + 2], 16) for k in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


@pytest.mark.slow
@pytest.mark.browser
def test_legends_of_equal_and_nearly_equal_gradients_say_something(tab, tmp_path):
    # every |grad| 1: one step, the darkest, in the page and in the picture
    open_page(tab, page(tmp_path, "2*3 + sin(1)"))
    assert legend_steps(tab) == [(rgb(GRADIENT_COLOURS[-1]), "|grad| = 1")]
    assert dot_legend_steps("2*3 + sin(1)") == [(GRADIENT_COLOURS[-1], "|grad| = 1")]
    # |grad| 1 and 1.0000001: six steps, their bounds written with the digits it takes
    source = ("x + y*1.0000001", "--x", "1", "--y", "1")
    open_page(tab, page(tmp_path, *source))
    shown = legend_steps(tab)
    texts = [text for _, text in shown]
    assert (
        texts[0] == "1.00000008 to 1.0000001"
        and texts[-1] == "1 to 1.00000002"
        and len(set(texts)) == 6
    )
    assert [(rgb(c), t) for c, t in dot_legend_steps(*source)] == shown
    assert [c for c, _ in shown] == [rgb(c) for c in reversed(GRADIENT_COLOURS)]


@pytest.mark.slow
@pytest.mark.browser
def test_a_source_without_inputs_says_so(tab, tmp_path):
    open_page(tab, page(tmp_path, "2*3 + sin(1)"))
    assert tab.query_selector("#inputs input") is None
    assert tab.inner_text("#inputs").startswith("none: the source reads no input")
    assert tab.inner_text("#panel") == "3 steps: 3 forward, 0 backward."
    open_page(tab, page(tmp_path, "pi*e"))
    assert tab.inner_text("#panel") == "1 step: 1 forward, 0 backward."
    tab.click("#next")
    assert tab.inner_text("#panel").splitlines()[0] == "forward pass, step 1 of 1"


# Per number written in an element's text, whether it is split across lines.
BROKEN_NUMBERS = r"""(root) => {
    const broken = [];
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        for (const m of n.data.matchAll(/(?<![\w.])-?\d+(?:\.\d*)?(?:e[+-]?\d+)?/gi)) {
            const r = document.createRange();
            r.setStart(n, m.index);
            r.setEnd(n, m.index + m[0].length);
            if (new Set([...r.getClientRects()].map((q) => Math.round(q.top))).size > 1) {
                broken.push(m[0]);
            }
        }
    }
    return broken;
}"""


@pytest.mark.slow
@pytest.mark.browser
def test_numbers_are_never_split_across_lines(tab, tmp_path):
    open_page(tab, page(tmp_path, WORKED, *WORKED_ARGS))
    operations = tab.query_selector_all("#graph g.node.operation")
    for g in operations:
        g.hover()
        assert tab.eval_on_selector("#tip", BROKEN_NUMBERS) == [], tab.inner_text("#tip")
    assert len(operations) > 20
    tab.click("#reset")
    for _ in tab.evaluate("nanograd.steps"):
        tab.keyboard.press("ArrowRight")
        assert tab.eval_on_selector("#panel", BROKEN_NUMBERS) == [], tab.inner_text("#panel")
    assert tab.eval_on_selector("aside", BROKEN_NUMBERS) == []


@pytest.mark.slow
@pytest.mark.browser
def test_screenshot(tab, tmp_path):
    open_page(tab, page(tmp_path, WORKED, *WORKED_ARGS, "--rankdir", "TB"))
    shot = tab.screenshot(path=str(tmp_path / "page.png"))
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000


def test_the_live_page_drawn_by_graphviz_pure_writes_xml_space_as_markup(tmp_path, monkeypatch):
    """Without Graphviz's dot, graphviz-pure lays the page out: its `xml:space` attributes
    stay `xml:space`, not ElementTree's `{http://www.w3.org/XML/1998/namespace}space`."""
    import nanograd_cli.render.graph as graph

    pure = shutil.which("graphviz-pure", path=str(Path(sys.executable).parent))
    if pure is None:
        pytest.skip("graphviz-pure is not installed")
    monkeypatch.setattr(graph, "renderer", lambda fmt, search=None: pure)
    page = tmp_path / "graph.html"
    done = in_process("draw", "x*y + tanh(x)", "--x", "2", "--y", "3", "-o", str(page))
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert "XML/1998/namespace" not in text
    assert "<text xml:space=" in text.replace("\\", "")  # (in the page's JSON, quotes escaped)
