"""`explain` against `grad`: the cost of writing the passes out, per size of program.

Both are timed on the same parsed program, alternating, median of several runs; explain
includes writing its plain-text tables.

Run: python benchmarks/explain.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nanograd_cli import parse
from nanograd_cli.explain import explain
from nanograd_cli.render.explain import plain


def main() -> None:
    print(f"{'nodes':>6} {'ms grad':>9} {'ms explain':>11} {'explain/grad':>13}")
    for terms in (1, 10, 100, 1000):
        source = " + ".join(f"tanh(x*{k % 7 + 1} + y)" for k in range(terms))
        program = parse(source)
        point = {"x": 0.1, "y": 0.2}
        grads, explains = [], []
        for _ in range(7):
            t0 = time.perf_counter()
            program.grad(point)
            t1 = time.perf_counter()
            plain(explain(program, point))
            t2 = time.perf_counter()
            grads.append(t1 - t0)
            explains.append(t2 - t1)
        g, e = statistics.median(grads) * 1e3, statistics.median(explains) * 1e3
        print(f"{len(program.code):>6} {g:>9.3f} {e:>11.3f} {e / g:>12.0f}x")


if __name__ == "__main__":
    main()
