"""The live page in headless Chromium: how long a graph of about 1,000 nodes takes to load, and
to recompute and redraw after a slider move.

Load is from navigation start to the page's script having computed and drawn every label
(and the load event), against the same drawing as a plain SVG file opened in the same browser,
alternating, median of several runs. A slider move is from the input event to the frame after
it (forward, backward, labels, fills, legend, painted), against the Python engine's forward
and backward pass on the same program.

Run: python benchmarks/html.py   (needs Chromium and `pip install playwright`)
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

# the repository instead of this folder, where this file would stand in for the standard `html`
sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nanograd_cli import parse
from nanograd_cli.render.graph import draw_evaluation, render
from nanograd_cli.render.html import live_page

RUNS = 9
MOVES = 21

# A small network unrolled: each layer adds a weighted input and squashes.
SOURCE = "\n".join(
    ["h = x"] + [f"h = tanh(h*{0.5 + k % 5 / 10} + y*{k % 3 + 1})" for k in range(100)] + ["h*h"]
)

MOVE = """async (k) => {
    const slider = document.getElementById("slider-0");
    const t0 = performance.now();
    slider.value = String(0.1 + 0.01 * k);
    slider.dispatchEvent(new Event("input", {bubbles: true}));
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t0;
}"""

LOADED = """() => [nanograd.ready,
    performance.getEntriesByType("navigation")[0].loadEventEnd]"""


def main() -> None:
    from playwright.sync_api import sync_playwright

    program = parse(SOURCE)
    point = {"x": 0.3, "y": -0.2}
    evaluation = program.gradients(point)
    drawing = draw_evaluation(evaluation, legend=False)
    folder = Path(tempfile.mkdtemp())
    page_file, svg_file = folder / "graph.html", folder / "graph.svg"
    page_file.write_bytes(live_page(evaluation))
    svg_file.write_bytes(render(drawing.dot.source, "svg"))
    engine = []
    for _ in range(MOVES):
        t0 = time.perf_counter()
        program.gradients(point)
        engine.append((time.perf_counter() - t0) * 1e3)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium)
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        ready, loaded, svg_loaded, moves = [], [], [], []
        for _ in range(RUNS):
            tab.goto(page_file.as_uri())
            r, event = tab.evaluate(LOADED)
            ready.append(r)
            loaded.append(event)
            tab.goto(svg_file.as_uri())
            svg_loaded.append(
                tab.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
            )
        tab.goto(page_file.as_uri())
        moves = [tab.evaluate(MOVE, k) for k in range(MOVES)]
        browser.close()
    med = statistics.median
    print(
        f"{drawing.nodes} nodes drawn ({len(program.code)} instructions), "
        f"page {page_file.stat().st_size / 1e3:.0f} kB, Chromium headless"
    )
    print(f"load, page script done:   {med(ready):7.1f} ms")
    print(
        f"load, page load event:    {med(loaded):7.1f} ms  "
        f"({med(loaded) / med(svg_loaded):.1f}x the plain SVG's {med(svg_loaded):.1f} ms)"
    )
    print(
        f"slider move to next frame: {med(moves):6.1f} ms  "
        f"({med(moves) / med(engine):.0f}x the Python engine's pass, {med(engine):.2f} ms)"
    )


if __name__ == "__main__":
    main()
