"""A fit end to end: 200,000 rows of a*exp(-b*x) + c (and noise) in a CSV file, fitted by
nanograd against a script that reads the CSV with PyArrow and calls SciPy's least_squares
with a hand-written NumPy Jacobian, and against the same script with finite differences.

Run: python benchmarks/fit.py [--runs N] [--rows N]
     python benchmarks/fit.py --memory [ROWS]   (peak resident memory of nanograd's fit of
                                                 ROWS rows, 1,000,000 by default)

Each contender is a whole process started in a temporary directory; they run in turn, N times
(default 5), and the medians of the wall-clock and CPU times are compared. nanograd's
contender is the command `nanograd fit model.txt --data points.csv --a 1 --b 0.1 --c 0`.
All contenders start from the same point and must agree on the parameters to 1e-6.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "a*exp(-b*x) + c"
ROWS = 200_000
TRUE = {"a": 2.5, "b": 1.3, "c": 0.5}
START = {"a": 1.0, "b": 0.1, "c": 0.0}

# nanograd: the command, as a user runs it.
FIT_COMMAND = ["-m", "nanograd_cli", "fit", "model.txt", "--data", "points.csv"]

SCIPY_SCRIPT = """
import json, sys
import numpy as np
import pyarrow.csv as csv
from scipy.optimize import least_squares

table = csv.read_csv(sys.argv[1])
x, y = table["x"].to_numpy(), table["y"].to_numpy()
start = json.loads(sys.argv[2])
exact = sys.argv[3] == "exact"


def residuals(p):
    a, b, c = p
    return y - (a * np.exp(-b * x) + c)


def jacobian(p):
    a, b, c = p
    e = np.exp(-b * x)
    return np.column_stack([-e, a * x * e, -np.ones_like(x)])


result = least_squares(
    residuals, [start["a"], start["b"], start["c"]], jac=jacobian if exact else "2-point"
)
print(json.dumps(dict(zip("abc", result.x.tolist()))))
"""


def timed(command: list[str], cwd: Path, env: dict) -> tuple[float, float, int, str]:
    """Wall-clock and CPU seconds, peak resident kilobytes and standard output of one run."""
    t0 = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE)
    out = process.stdout.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise subprocess.CalledProcessError(os.waitstatus_to_exitcode(status), command)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out


def medians(
    commands: dict[str, list[str]], cwd: Path, env: dict, runs: int
) -> tuple[dict[str, float], dict[str, float]]:
    """The median wall-clock and CPU seconds of each command, run in turn `runs` times."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            wall, cpu, _, _ = timed(command, cwd, env)
            times[name].append((wall, cpu))
    wall = {n: statistics.median(w for w, _ in t) for n, t in times.items()}
    cpu = {n: statistics.median(c for _, c in t) for n, t in times.items()}
    return wall, cpu


def write_points(path: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(7)
    x = rng.uniform(0, 5, rows)
    y = TRUE["a"] * np.exp(-TRUE["b"] * x) + TRUE["c"] + rng.normal(0, 0.05, rows)
    pcsv.write_csv(pa.table({"x": x, "y": y}), path)


def contenders(tmp: Path) -> dict[str, list[str]]:
    (tmp / "script.py").write_text(SCIPY_SCRIPT)
    (tmp / "model.txt").write_text(SOURCE + "\n")
    start = json.dumps(START)
    ours = [sys.executable, *FIT_COMMAND, *(f"--{k}={v}" for k, v in START.items())]
    ours += ["--format", "json"]
    return {
        "nanograd fit": ours,
        "least_squares, NumPy Jacobian": [
            sys.executable,
            "script.py",
            "points.csv",
            start,
            "exact",
        ],
        "least_squares, finite differences": [
            sys.executable,
            "script.py",
            "points.csv",
            start,
            "2-point",
        ],
    }


def parameters(name: str, out: str) -> dict[str, float]:
    found = json.loads(out)
    return found["parameters"] if name == "nanograd fit" else found


def end_to_end(runs: int, rows: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # compiled once, as an installed wheel is: where PYTHONDONTWRITEBYTECODE is set, every run
    # would compile nanograd's modules again (0.1 s and more)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "nanograd_cli")], check=True
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_points(tmp / "points.csv", rows)
        commands = contenders(tmp)
        reference = None
        for name, command in commands.items():  # a first run of each: they agree
            found = parameters(name, timed(command, tmp, env)[3])
            reference = reference or found
            for k in TRUE:
                assert abs(found[k] - reference[k]) <= 1e-6 * abs(reference[k]), (name, found)
        wall, cpu = medians(commands, tmp, env, runs)
    print(f"{rows:,} rows of {SOURCE}, CSV, seconds (median of {runs}, alternating):")
    print(f"  {'':34} {'wall':>6} {'CPU':>6}")
    for name in commands:
        print(f"  {name:34} {wall[name]:6.2f} {cpu[name]:6.2f}")
    ours = "nanograd fit"
    for name in commands:
        if name == ours:
            continue
        print(
            f"  nanograd over {name}: {wall[ours] / wall[name]:.2f}x wall, "
            f"{cpu[ours] / cpu[name]:.2f}x CPU"
        )
        report.ratio("fit, s", f"{SOURCE}, {rows:,} rows", wall[ours], name, wall[name])


def memory(rows: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_points(tmp / "points.csv", rows)
        commands = contenders(tmp)
        for name, command in commands.items():
            wall, _, peak_kb, _ = timed(command, tmp, env)
            print(
                f"{name:34} {rows:,} rows x 3 parameters: peak resident memory "
                f"{peak_kb / 1024:.0f} MB, {wall:.1f} s"
            )
    print(
        f"(the data alone: {rows * 2 * 8 / 1e6:.0f} MB as float64; the Jacobian "
        f"{rows * 3 * 8 / 1e6:.0f} MB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--memory", nargs="?", type=int, const=1_000_000, metavar="ROWS")
    args = parser.parse_args()
    if args.memory:
        memory(args.memory)
    else:
        end_to_end(args.runs, args.rows)


if __name__ == "__main__":
    main()
