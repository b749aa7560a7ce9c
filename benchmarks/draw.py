"""Drawing: `nanograd draw` of graphs of 1,000 and 10,000 nodes, against an older checkout.

Run: python benchmarks/draw.py [--before CHECKOUT] [--runs N] [--cap SECONDS]

Each workload is drawn to svg (and the biggest to png) by a whole `nanograd draw` process: this
checkout's code, and with --before that of CHECKOUT (a git worktree of an older commit, run with
PYTHONPATH=CHECKOUT), alternating. A run that passes the cap is stopped, Graphviz with it, and
reported as "> cap". The figure is the median wall-clock time of the runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import report

HERE = Path(__file__).resolve().parent
OURS = HERE.parent


def tanh_sum(terms: int) -> str:
    """A sum of tanh(x*i): every term reads x, the shape that made `dot` take minutes."""
    return "+".join(f"tanh(x*{i})" for i in range(terms))


def statements(count: int) -> str:
    """A program of `count` statements reassigning x: a deep chain, a box per statement."""
    return "\n".join("x = tanh(x*0.9 + 0.1)" for _ in range(count))


WORKED = (OURS / "tests" / "data" / "worked_example.txt").read_text()
X = ("--x", "0.1")
# (workload, nodes drawn as `nanograd draw` counts them, source, inputs, format)
WORKLOADS = [
    ("worked example", 60, WORKED, ("--x", "-4", "--y", "2"), "svg"),
    ("sum of tanh(x*i)", 1_000, tanh_sum(143), X, "svg"),
    ("sum of tanh(x*i)", 10_002, tanh_sum(1429), X, "svg"),
    ("sum of tanh(x*i)", 10_002, tanh_sum(1429), X, "png"),
    ("x = tanh(x*0.9 + 0.1) per line", 1_001, statements(125), X, "svg"),
    ("x = tanh(x*0.9 + 0.1) per line", 10_001, statements(1250), X, "svg"),
]


def draw_time(
    checkout: Path, source: Path, inputs: tuple[str, ...], fmt: str, cap: float
) -> float | None:
    """Seconds for `nanograd draw` from `checkout` to draw `source`, or None past `cap`."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    with tempfile.TemporaryDirectory() as tmp:
        output = str(Path(tmp) / f"graph.{fmt}")
        command = [sys.executable, "-m", "nanograd_cli", "draw", str(source), *inputs, "-o", output]
        t0 = time.perf_counter()
        # a session of its own, so that a run past the cap is stopped with its Graphviz
        process = subprocess.Popen(
            command, env=env, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            process.wait(timeout=cap)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return None
        if process.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed with {process.returncode}")
        return time.perf_counter() - t0


def shown(seconds: float | None, cap: float) -> str:
    return f"> {cap:.0f}" if seconds is None else f"{seconds:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an older checkout to compare with")
    parser.add_argument("--runs", type=int, default=3, help="runs of this checkout (median)")
    parser.add_argument("--cap", type=float, default=600.0, help="seconds before a run stops")
    args = parser.parse_args()
    print(f"{'workload':32} {'nodes':>7} {'format':>6} {'before s':>9} {'after s':>8} {'ratio':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (workload, nodes, text, inputs, fmt) in enumerate(WORKLOADS):
            source = Path(tmp) / f"source{i}.txt"
            source.write_text(text)
            after: list[float] = []
            before: float | None = None
            for run in range(args.runs):
                if args.before and run == 0:  # once: the old code may take many minutes
                    before = draw_time(args.before, source, inputs, fmt, args.cap)
                seconds = draw_time(OURS, source, inputs, fmt, args.cap)
                if seconds is None:
                    raise RuntimeError(f"{workload}, {nodes} nodes: past the cap of {args.cap} s")
                after.append(seconds)
            ours = statistics.median(after)
            ratio = report.speedup(before, ours, args.cap) if args.before else ""
            old = shown(before, args.cap) if args.before else "-"
            print(
                f"{workload:32} {nodes:>7,} {fmt:>6} {old:>9} {ours:>8.2f} {ratio:>8}", flush=True
            )
            if before is not None:
                label = f"{workload}, {nodes:,} nodes, {fmt}"
                report.ratio("draw, s", label, ours, "the same command before", before)


if __name__ == "__main__":
    main()
