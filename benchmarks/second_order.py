"""`minimize` on Rosenbrock from (-1.2, 1): iterations and time of Adam against SciPy's BFGS,
L-BFGS-B and trust-region Newton on the exact gradient and Hessian (docs/commands.md).

Run: python benchmarks/second_order.py [RUNS]   (after installing the package with [fit])

For each method: the iterations to a gradient's norm of at most 1e-8, the median time of the
minimization in this process (SciPy imported and the program parsed beforehand, one
OpenBLAS thread as the command has it, RUNS runs, default 7), and the median wall-clock time
of the whole `nanograd minimize` command (RUNS runs), which includes starting Python and, for
SciPy's methods, importing SciPy.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command sets it for SciPy's methods

import scipy.optimize  # noqa: F401  (imported before timing, as a session would have it)

from nanograd_cli import _api as api
from nanograd_cli import parse

ROSENBROCK = "(1 - x)**2 + 100*(y - x**2)**2"
METHODS = ("adam", "bfgs", "lbfgs", "newton")


def in_process(method: str, runs: int) -> tuple[int, float, tuple[float, float]]:
    program = parse(ROSENBROCK)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result = api.minimize(program, {"x": -1.2, "y": 1.0}, steps=100000, method=method)
        times.append(time.perf_counter() - t0)
    assert result.converged
    return result.steps, statistics.median(times), (result.inputs["x"], result.inputs["y"])


def command(method: str, runs: int) -> float:
    entry = shutil.which("nanograd") or "nanograd"
    args = [entry, "minimize", ROSENBROCK, "--x", "-1.2", "--y", "1", "--steps", "100000"]
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([*args, "--method", method], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    print("| method | iterations | minimization | whole command | x, y reached |")
    print("| --- | ---: | ---: | ---: | --- |")
    for method in METHODS:
        steps, inside, (x, y) = in_process(method, runs)
        whole = command(method, runs)
        print(f"| {method} | {steps:,} | {inside * 1000:.1f} ms | {whole:.2f} s | {x!r}, {y!r} |")


if __name__ == "__main__":
    main()
