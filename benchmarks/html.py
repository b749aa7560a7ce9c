"""The live page in headless Chromium: how long the page of a graph of about 1,000 nodes takes to
open, and to recompute and redraw after a slider move.

Opening is timed from the start of navigation to the end of the first frame after the page's
script has run (a requestAnimationFrame callback, then a task after it: the frame is painted),
when the graph in view is drawn with its numbers and the inputs, result and legend are shown;
and to the frame after the last tile of the drawing is in (the page puts the tiles out of view
in after the first picture). The reference: Graphviz's SVG of the same drawing opened alone
in the same browser, timed the same way. With --before CHECKOUT, the page that CHECKOUT's code
writes (a git worktree or `git archive` of an older commit) is timed too. Pages alternate, and
each figure is the median of the runs.

A slider move is timed from setting the slider and its input event to the end of the frame
after it (forward, backward, labels, fills, legend, painted), against the page before, or the
Python engine's forward and backward pass on the same program.

Run: python benchmarks/html.py [--before CHECKOUT] [--runs N]
     (needs Chromium and `pip install playwright`)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# the repository instead of this folder, where this file would stand in for the standard `html`
HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.append(str(HERE))

import report  # noqa: E402

from nanograd_cli import parse  # noqa: E402
from nanograd_cli.render.graph import draw_evaluation, render  # noqa: E402

MOVES = 21

# A small network unrolled: each layer adds a weighted input and squashes.
SOURCE = "\n".join(
    ["h = x"] + [f"h = tanh(h*{0.5 + k % 5 / 10} + y*{k % 3 + 1})" for k in range(100)] + ["h*h"]
)
POINT = {"x": 0.3, "y": -0.2}

# The page (whichever its version) writes itself with the code of the checkout it runs from.
WRITE_PAGE = """
import sys
from nanograd_cli import parse
from nanograd_cli.render._html import live_page
sys.stdout.buffer.write(live_page(parse(sys.argv[1]).gradients({"x": 0.3, "y": -0.2})))
"""

# Before the page's own scripts: the end of every frame (a task after the animation frame's
# callback runs once the frame is painted); the page's script says when it has run
# (`nanograd.ready`) and when the last tile is in (`nanograd.drawn`, a promise of the time).
TIMING = """
window.frameEnds = [];
const frame = () => requestAnimationFrame(() => {
    setTimeout(() => frameEnds.push(performance.now()));
    frame();
});
frame();
"""
# Run once the page has loaded: the end of the frames after those two times.
OPENED = """async () => {
    const nanograd = window.nanograd || {};
    const loaded = performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd;
    const ready = nanograd.ready ?? loaded;
    const drawn = (await nanograd.drawn) ?? ready;
    const after = (t) => new Promise((r) => {
        const check = () => {
            const end = frameEnds.find((e) => e >= t);
            end ? r(end) : setTimeout(check, 5);
        };
        check();
    });
    return [await after(ready), await after(drawn)];
}"""

MOVE = """async (k) => {
    const slider = document.getElementById("slider-0");
    const t0 = performance.now();
    slider.value = String(0.1 + 0.01 * k);
    slider.dispatchEvent(new Event("input", {bubbles: true}));
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t0;
}"""


def write_page(checkout: Path, out: Path) -> None:
    """The page of SOURCE as the code of `checkout` writes it."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    page = subprocess.run(
        [sys.executable, "-c", WRITE_PAGE, SOURCE],
        capture_output=True,
        check=True,
        env=env,
        cwd=checkout,  # `-c` puts the working directory first on the path
    )
    out.write_bytes(page.stdout)


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an older checkout to compare with")
    parser.add_argument("--runs", type=int, default=9, help="runs of each page (median)")
    args = parser.parse_args()

    program = parse(SOURCE)
    evaluation = program.gradients(POINT)
    drawing = draw_evaluation(evaluation, legend=False)
    folder = Path(tempfile.mkdtemp())
    pages = {"page": folder / "page.html"}
    write_page(HERE.parent, pages["page"])
    if args.before:
        pages["page before"] = folder / "before.html"
        write_page(args.before.resolve(), pages["page before"])
    pages["Graphviz's SVG alone"] = folder / "graph.svg"
    pages["Graphviz's SVG alone"].write_bytes(render(drawing.dot.source, "svg"))
    engine = []
    for _ in range(MOVES):
        t0 = time.perf_counter()
        program.gradients(POINT)
        engine.append((time.perf_counter() - t0) * 1e3)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    first = {name: [] for name in pages}
    whole = {name: [] for name in pages}
    moves = {name: [] for name in pages if name != "Graphviz's SVG alone"}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.add_init_script(TIMING)
        tab = context.new_page()
        for run in range(args.runs + 1):  # the first round warms the browser up
            for name, path in pages.items():
                tab.goto("about:blank")  # so that no page pays for closing a big one
                tab.goto(path.as_uri())
                picture, every = tab.evaluate(OPENED)
                if run:
                    first[name].append(picture)
                    whole[name].append(every)
        for _ in range(3):
            for name in moves:
                tab.goto(pages[name].as_uri())
                tab.evaluate(OPENED)
                moves[name] += [tab.evaluate(MOVE, k) for k in range(MOVES)]
        browser.close()
    med = statistics.median
    svg_ms = med(first["Graphviz's SVG alone"])
    print(
        f"{drawing.nodes} nodes drawn ({len(program.code)} instructions), Chromium headless, "
        f"medians of {args.runs} runs (moves: {3 * MOVES})"
    )
    print(
        f"{'':22} {'kB':>5} {'first picture ms':>17} {'every tile ms':>14} {'slider move ms':>15}"
    )
    for name, path in pages.items():
        move = f"{med(moves[name]):15.1f}" if name in moves else f"{'':15}"
        print(
            f"{name:22} {path.stat().st_size / 1e3:5.0f} {med(first[name]):17.1f} "
            f"{med(whole[name]):14.1f} {move}".rstrip()
        )
    ours, move = med(first["page"]), med(moves["page"])
    print(f"first picture over Graphviz's SVG alone: {ours / svg_ms:.2f}x")
    print(f"every tile in over Graphviz's SVG alone: {med(whole['page']) / svg_ms:.2f}x")
    workload = f"{drawing.nodes:,}-node graph"
    report.ratio(
        "live page, ms", f"{workload}, first picture", ours, "Graphviz's SVG alone", svg_ms
    )
    report.ratio(
        "live page, ms",
        f"{workload}, every tile in",
        med(whole["page"]),
        "Graphviz's SVG alone",
        svg_ms,
    )
    if args.before:
        before, move_before = med(first["page before"]), med(moves["page before"])
        print(f"first picture over the page before: {ours / before:.2f}x")
        print(f"slider move over the page before: {move / move_before:.2f}x")
        report.ratio("live page, ms", f"{workload}, first picture", ours, "the page before", before)
        report.ratio(
            "live page, ms", f"{workload}, slider move", move, "the page before", move_before
        )
    else:
        print(
            f"slider move over the Python engine's pass ({med(engine):.2f} ms): "
            f"{move / med(engine):.0f}x"
        )
        report.ratio(
            "live page, ms", f"{workload}, slider move", move, "Python engine's pass", med(engine)
        )


if __name__ == "__main__":
    main()
