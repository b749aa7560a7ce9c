"""`explain` against `grad`: the cost of writing the passes out, per size of program.

Both run in this process on the same parsed program, alternating, in CPU time (which a shared
machine disturbs less than wall-clock time); explain includes writing its plain-text tables.
The ratio is the median of the ratios within each of 11 rounds.

Run: python benchmarks/explain.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nanograd_cli import parse
from nanograd_cli._written_out import explain
from nanograd_cli.render._explanation import plain

ROUNDS = 11


def main() -> None:
    print(f"{'nodes':>6} {'ms grad':>9} {'ms explain':>11} {'explain/grad':>13}")
    for terms in (1, 10, 100, 200, 400, 1000):
        source = " + ".join(f"tanh(x*{k % 7 + 1} + y)" for k in range(terms))
        program = parse(source)
        point = {"x": 0.1, "y": 0.2}
        plain(explain(program, point))  # the ops' textbook formulas are parsed on first use
        grads, explains = [], []
        for _ in range(ROUNDS):
            t0 = time.process_time()
            program.grad(point)
            t1 = time.process_time()
            plain(explain(program, point))
            t2 = time.process_time()
            grads.append(t1 - t0)
            explains.append(t2 - t1)
        g, e = statistics.median(grads) * 1e3, statistics.median(explains) * 1e3
        ratio = statistics.median(b / a for a, b in zip(grads, explains, strict=True))
        print(f"{len(program.code):>6} {g:>9.3f} {e:>11.3f} {ratio:>12.1f}x")


if __name__ == "__main__":
    main()
