"""Parse + build time per operation, ours against CPython's own `ast.parse` on the same text.

Run: python benchmarks/parse.py

The sources are valid in both languages: a random expression over x, y, z with + - * / and
function calls (tanh, exp, sin), in sizes from 1,000 to 100,000 operations.  Ours includes
building the program's instructions (what `ast.parse` does not have to do: it stops at a tree).
"""

from __future__ import annotations

import ast
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import report

from nanograd_cli._language import parse


def random_source(operations: int, seed: int = 0) -> str:
    """A random expression of exactly `operations` operations, one statement per 50."""
    rng = random.Random(seed)
    lines = []
    done = 0
    while done < operations:
        terms = [rng.choice(["x", "y", "z", "1.5", "2"])]
        for _ in range(min(50, operations - done)):
            if rng.random() < 0.2:
                terms[-1] = f"{rng.choice(['tanh', 'exp', 'sin'])}({terms[-1]})"
            else:
                terms.append(rng.choice(["+", "-", "*", "/"]))
                terms.append(rng.choice(["x", "y", "z", "0.5", "3"]))
            done += 1
        lines.append(f"v{len(lines)} = " + " ".join(terms))
    return "\n".join(lines) + "\n"


def main() -> None:
    parse("x")  # build the parser once, as a process does
    print(f"{'operations':>10} {'µs/op ours':>11} {'µs/op ast.parse':>16} {'ratio':>6}")
    for operations, runs in ((1_000, 41), (10_000, 11), (100_000, 5)):
        source = random_source(operations)
        ours, theirs = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            parse(source)
            t1 = time.perf_counter()
            ast.parse(source)
            t2 = time.perf_counter()
            ours.append(t1 - t0)
            theirs.append(t2 - t1)
        a = statistics.median(ours) / operations * 1e6
        b = statistics.median(theirs) / operations * 1e6
        print(f"{operations:>10,} {a:>11.2f} {b:>16.2f} {a / b:>5.2f}x")
        report.ratio("parse, µs per operation", f"{operations:,} operations", a, "ast.parse", b)


if __name__ == "__main__":
    main()
