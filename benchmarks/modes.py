"""Forward mode against reverse mode: time for all gradients of one result as inputs grow.

Run: python benchmarks/modes.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nanograd_cli import parse
from nanograd_cli.forward import forward_gradients


def main() -> None:
    print(f"{'inputs':>6} {'ms reverse':>11} {'ms forward':>11} {'forward/reverse':>16}")
    for n in (1, 2, 10, 100):
        source = " + ".join(f"tanh(x{i} * x{(i + 1) % n})" for i in range(n))
        program = parse(source)
        values = {name: 0.1 for name in program.inputs}
        rev, fwd = [], []
        for _ in range(15):
            t0 = time.perf_counter()
            program.gradients(values)
            t1 = time.perf_counter()
            forward_gradients(program, values)
            t2 = time.perf_counter()
            rev.append(t1 - t0)
            fwd.append(t2 - t1)
        r, f = statistics.median(rev) * 1e3, statistics.median(fwd) * 1e3
        print(f"{n:>6} {r:>11.3f} {f:>11.3f} {f / r:>15.2f}x")


if __name__ == "__main__":
    main()
