"""Growth: the time and peak memory of whole `nanograd` processes as the input doubles, this
checkout against an older one.

Run: python benchmarks/growth.py [--before CHECKOUT] [--runs N] [--cap SECONDS] [--cpu]
                                 [--only NAME ...]

Eight workloads, each at four sizes that (about) double:
  draw       draw --edge-grads -o graph.svg of x + y + z + w + x + ..., n terms
  diff       diff of sin(sin(...sin(x)...)), n deep
  check      check of x0*x0 + x1*x1 + ..., n inputs given with --var
  points     grad --points of a CSV of n columns and 10 rows; the source adds up every column
  repl       a repl script of n definitions, each reading the one before, then the last
  forward    grad --mode forward of x0 + x1*x1 + x2 + ..., n inputs given with --var
  draw-size  draw -o graph.svg of x + x + ..., n terms (2n - 1 nodes)
  page       draw -o graph.html (the live page) of n lines h = tanh(h*w + y*c)

Every run is a process of its own (`python -m nanograd_cli`, PYTHONPATH set to the checkout, in
an empty directory): its wall-clock time, and the peak resident memory of the largest process it
waited for (nanograd, or Graphviz for draw); with --cpu, the CPU time (user and system) of the
process and those it waited for instead of the wall-clock time, for a machine shared with other
work. The figure is the median of --runs runs, the two
checkouts alternating; a run that passes the cap is stopped with its process group and shown as
"> cap", and a size whose first run takes more than LONG seconds is run once. The last columns
say how this checkout's time and memory grow from the size before: 2.0x is linear.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import report

HERE = Path(__file__).resolve().parent
OURS = HERE.parent
LONG = 30.0  # seconds: a size whose first run takes longer is not run again


class Workload(NamedTuple):
    name: str
    what: str  # what the size counts
    sizes: tuple[int, ...]
    command: Callable[[int, Path], list[str]]  # the arguments, after writing its files in a dir


def draw(terms: int, where: Path) -> list[str]:
    # four inputs in turn, every edge labelled with its local derivative: 70 terms were the
    # most that `dot` drew before, in about a minute
    (where / "sum.txt").write_text("+".join("xyzw"[i % 4] for i in range(terms)))
    inputs = ["--x", "1", "--y", "2", "--z", "3", "--w", "4"]
    return ["draw", "-f", "sum.txt", *inputs, "--edge-grads", "-o", "graph.svg"]


def diff(depth: int, where: Path) -> list[str]:
    (where / "deep.txt").write_text("sin(" * depth + "x" + ")" * depth)
    return ["diff", "-f", "deep.txt"]


def check(inputs: int, where: Path) -> list[str]:
    (where / "squares.txt").write_text(" + ".join(f"x{i}*x{i}" for i in range(inputs)))
    values = [f"--var=x{i}={(i % 17 - 8) / 4}" for i in range(inputs)]
    return ["check", "-f", "squares.txt", *values, "--format", "json"]


def points(columns: int, where: Path) -> list[str]:
    names = [f"c{i}" for i in range(columns)]
    (where / "sum.txt").write_text("+".join(names))
    rows = [",".join(str((r * 7 + i) % 10) for i in range(columns)) for r in range(10)]
    (where / "points.csv").write_text("\n".join([",".join(names), *rows]) + "\n")
    return ["grad", "-f", "sum.txt", "--points", "points.csv", "--format", "csv"]


def repl(definitions: int, where: Path) -> list[str]:
    lines = ["x = 0.5", "a0 = x*x + 1"]
    lines += [f"a{i} = a{i - 1}*x + {i % 7}" for i in range(1, definitions)]
    (where / "script.txt").write_text("\n".join([*lines, f"a{definitions - 1}"]) + "\n")
    return ["repl", "--script", "script.txt"]  # read from standard input: see run()


def forward(inputs: int, where: Path) -> list[str]:
    terms = [f"x{i}*x{i}" if i % 2 else f"x{i}" for i in range(inputs)]
    (where / "sum.txt").write_text("+".join(terms))
    values = [f"--var=x{i}={i % 5}" for i in range(inputs)]
    return ["grad", "-f", "sum.txt", *values, "--mode", "forward", "--format", "json"]


def draw_size(terms: int, where: Path) -> list[str]:
    (where / "sum.txt").write_text("+".join("x" * terms))
    return ["draw", "-f", "sum.txt", "--x", "1", "-o", "graph.svg"]


def page(lines: int, where: Path) -> list[str]:
    steps = [f"h = tanh(h*{0.5 + k % 5 / 10} + y*{k % 3 + 1})" for k in range(lines)]
    (where / "chain.txt").write_text("\n".join(["h = x", *steps, "h*h"]))
    return ["draw", "-f", "chain.txt", "--x", "0.3", "--y", "-0.2", "-o", "graph.html"]


WORKLOADS = [
    Workload("draw", "terms", (9, 18, 35, 70), draw),
    Workload("diff", "deep", (2000, 4000, 8000, 16000), diff),
    Workload("check", "inputs", (250, 500, 1000, 2000), check),
    Workload("points", "columns", (6250, 12500, 25000, 50000), points),
    Workload("repl", "definitions", (500, 1000, 2000, 4000), repl),
    Workload("forward", "inputs", (1250, 2500, 5000, 10000), forward),
    # past 5,000 nodes, where the layout is nanograd's own
    Workload("draw-size", "terms", (4000, 8000, 16000, 32000), draw_size),
    Workload("page", "lines", (600, 1200, 2400, 4800), page),
]


class Run(NamedTuple):
    seconds: float
    megabytes: float


CPU = False  # --cpu: measure CPU time rather than wall-clock time


def run(checkout: Path, args: list[str], where: Path, cap: float) -> Run | None:
    """One `nanograd` process from `checkout` in `where`; None if it passed `cap` seconds."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    script = None
    if args[:2] == ["repl", "--script"]:  # a repl script goes in on standard input
        script, args = open(where / args[2], "rb"), args[:1]
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        # a session of its own, so that a run past the cap is stopped with its Graphviz
        process = subprocess.Popen(
            [sys.executable, "-m", "nanograd_cli", *args],
            cwd=where,
            env=env,
            stdin=script,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
        if script:
            script.close()
        timer = threading.Timer(cap, os.killpg, (process.pid, signal.SIGKILL))
        timer.start()
        try:
            # wait4: the usage of this process and of those it waited for (Graphviz)
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode == -signal.SIGKILL and seconds >= cap:
            return None
        if process.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"nanograd {args[0]} failed: {err.read().decode()[-500:]}")
    if CPU:
        seconds = usage.ru_utime + usage.ru_stime
    return Run(seconds, usage.ru_maxrss / 1024)  # Linux gives kB


def median(runs: list[Run | None]) -> Run | None:
    if not runs or None in runs:
        return None
    return Run(*(statistics.median(values) for values in zip(*runs, strict=True)))


def shown(result: Run | None, cap: float) -> tuple[str, str]:
    if result is None:
        return f"> {cap:.0f}", "-"
    return f"{result.seconds:.2f}", f"{result.megabytes:.0f}"


def measure(
    checkouts: list[Path], args: list[str], where: Path, cap: float, runs: int
) -> list[Run | None]:
    """The median run of each checkout, their runs alternating; a checkout whose first run
    took more than LONG seconds, or passed the cap, is run once."""
    results: list[list[Run | None]] = [[] for _ in checkouts]
    for k in range(runs):
        for checkout, done in zip(checkouts, results, strict=True):
            if k and (done[0] is None or done[0].seconds > LONG):
                continue
            done.append(run(checkout, args, where, cap))
    return [median(done) for done in results]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an older checkout to compare with")
    parser.add_argument("--runs", type=int, default=3, help="runs of each size (median)")
    parser.add_argument("--cap", type=float, default=300.0, help="seconds before a run stops")
    parser.add_argument("--cpu", action="store_true", help="CPU time instead of wall-clock time")
    parser.add_argument("--only", nargs="+", choices=[w.name for w in WORKLOADS])
    args = parser.parse_args()
    global CPU
    CPU = args.cpu
    print(
        f"{'workload':8} {'size':>16} {'before s':>9} {'MB':>6} {'after s':>8} {'MB':>6}"
        f" {'before/after':>12} {'growth: time':>13} {'memory':>7}"
    )
    for workload in WORKLOADS:
        if args.only and workload.name not in args.only:
            continue
        previous: Run | None = None
        for size in workload.sizes:
            with tempfile.TemporaryDirectory() as tmp:
                where = Path(tmp)
                command = workload.command(size, where)
                checkouts = [args.before, OURS] if args.before else [OURS]
                *before, after = measure(checkouts, command, where, args.cap, args.runs)
                before = before[0] if before else None
            if after is None:
                raise RuntimeError(f"{workload.name} at {size}: past the cap of {args.cap} s")
            old = before.seconds if before else None
            ratio = report.speedup(old, after.seconds, args.cap) if args.before else ""
            growth = ("", "")
            if previous is not None:
                growth = (
                    f"{after.seconds / previous.seconds:.1f}x",
                    f"{after.megabytes / previous.megabytes:.1f}x",
                )
            old_s, old_mb = shown(before, args.cap) if args.before else ("-", "-")
            new_s, new_mb = shown(after, args.cap)
            print(
                f"{workload.name:8} {f'{size:,} {workload.what}':>16} {old_s:>9} {old_mb:>6}"
                f" {new_s:>8} {new_mb:>6} {ratio:>12} {growth[0]:>13} {growth[1]:>7}".rstrip(),
                flush=True,
            )
            if before is not None and size == workload.sizes[-1]:
                label = f"{workload.name}, {size:,} {workload.what}"
                report.ratio(
                    "growth, s", label, after.seconds, "the same command before", before.seconds
                )
            previous = after


if __name__ == "__main__":
    main()
