"""Forward mode against reverse mode: time for all gradients of one result as inputs grow,
and for the Jacobian of several outputs as inputs and outputs grow (where `auto` switches).

Run: python benchmarks/modes.py [--compiled]

--compiled measures the compiled forward pass (nanograd_cli/_compiled.py's forward_source)
against forward mode's dual numbers for the same Jacobians, in CPU time, and what compiling
costs: the switch in nanograd_cli/_forward.py (COMPILE_FROM).
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nanograd_cli import parse
from nanograd_cli._compiled import Compiled
from nanograd_cli._forward import duals, forward_gradients


def main() -> None:
    if "--compiled" in sys.argv:
        compiled_forward()
        return
    one_output()
    print()
    jacobian()


def compiled_forward(rounds: int = 15) -> None:
    """Per Jacobian, dual numbers (`duals`) against the compiled pass, CPU time, medians of
    the ratios within each round; then compiling's cost in evaluations of the duals."""
    print(
        f"{'shape':>6} {'inputs':>6} {'outputs':>7} {'instr':>6} {'ms duals':>9} "
        f"{'ms compiled':>12} {'compiled/duals':>15} {'ms compile':>11} {'pays after':>11}"
    )
    for shape in ("apart", "shared"):
        for n, m in ((1, 2), (2, 4), (4, 8), (8, 16), (8, 32)):
            program = parse(_outputs_source(shape, n, m))
            values = {name: 0.1 for name in program.inputs}
            args = list(values.values())
            t0 = time.process_time()
            function = Compiled(program).forward
            function(*args)
            compile_ms = (time.process_time() - t0) * 1e3
            slow, fast = [], []
            for _ in range(rounds):
                t0 = time.process_time()
                for _ in range(10):
                    duals(program, values)
                t1 = time.process_time()
                for _ in range(10):
                    function(*args)
                t2 = time.process_time()
                slow.append((t1 - t0) / 10)
                fast.append((t2 - t1) / 10)
            d, c = statistics.median(slow) * 1e3, statistics.median(fast) * 1e3
            ratio = statistics.median(f / s for s, f in zip(slow, fast, strict=True))
            after = compile_ms / (d - c) if d > c else math.inf
            print(
                f"{shape:>6} {n:>6} {m:>7} {len(program.code):>6} {d:>9.3f} {c:>12.4f} "
                f"{ratio:>14.3f}x {compile_ms:>11.2f} {after:>11.1f}"
            )


def one_output() -> None:
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


def jacobian() -> None:
    """Two shapes: in `apart`, output j is the sum over inputs i of tanh(x_i * (j + 1)), so
    each output has a graph of its own; in `shared`, every output is a multiple of one chain of
    200 tanh steps that reads every input, so each reverse pass walks the chain again."""
    print(
        f"{'shape':>6} {'inputs':>6} {'outputs':>7} {'ms reverse':>11} {'ms forward':>11} "
        f"{'forward/reverse':>16} {'auto':>8}"
    )
    for shape in ("apart", "shared"):
        for n, m in ((2, 1), (4, 2), (1, 2), (2, 4), (4, 8), (8, 16), (8, 32), (16, 8)):
            program = parse(_outputs_source(shape, n, m))
            values = {name: 0.1 for name in program.inputs}
            rev, fwd = [], []
            for _ in range(15):
                t0 = time.perf_counter()
                program.jacobian(values, "reverse")
                t1 = time.perf_counter()
                program.jacobian(values, "forward")
                t2 = time.perf_counter()
                rev.append(t1 - t0)
                fwd.append(t2 - t1)
            r, f = statistics.median(rev) * 1e3, statistics.median(fwd) * 1e3
            auto = "forward" if m > n else "reverse"
            print(f"{shape:>6} {n:>6} {m:>7} {r:>11.3f} {f:>11.3f} {f / r:>15.2f}x {auto:>8}")


def _outputs_source(shape: str, n: int, m: int) -> str:
    if shape == "apart":
        terms = (" + ".join(f"tanh(x{i} * {j + 1})" for i in range(n)) for j in range(m))
        lines = [f"u{j} = {t}" for j, t in enumerate(terms)]
    else:
        lines = ["h = " + " + ".join(f"x{i}" for i in range(n))]
        lines += [f"h = tanh(h * 0.9 + x{k % n})" for k in range(200)]
        lines += [f"u{j} = h * {j + 1}" for j in range(m)]
    return "\n".join([*lines, ", ".join(f"u{j}" for j in range(m))])


if __name__ == "__main__":
    main()
