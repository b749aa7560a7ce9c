"""`grad --points` end to end, 1,000,000 rows of x*y + tanh(x): CSV to CSV against a PyArrow
script (pyarrow.csv.read_csv, NumPy, pyarrow.csv.write_csv) doing the same, and Parquet to
Parquet against CSV to CSV. With --before DIR (a checkout of an older nanograd), that
version's CSV to CSV runs alongside, the reference of the Parquet figure.

Run: python benchmarks/points.py [--before DIR] [--runs N]
     python benchmarks/points.py --memory [ROWS]   (100,000,000 rows by default: minutes)

Each command is a whole process; they run in turn, N times (default 5), and the medians of
the wall-clock times are compared. --memory pipes ROWS generated rows of CSV into
`nanograd grad --points -` and reports its peak resident memory (the kernel's count).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import report

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "x*y + tanh(x)"
ROWS = 1_000_000

PYARROW_SCRIPT = """
import sys
import numpy as np
import pyarrow as pa
import pyarrow.csv as csv

table = csv.read_csv(sys.argv[1])
x, y = table["x"].to_numpy(), table["y"].to_numpy()
t = np.tanh(x)
table = table.append_column("value", pa.array(x * y + t))
table = table.append_column("d_x", pa.array(y + (1.0 - t * t)))
table = table.append_column("d_y", pa.array(x))
csv.write_csv(table, sys.stdout.buffer)
"""

# Makes ROWS rows of CSV on standard output, a million at a time, for --memory.
GENERATOR = """
import sys
import numpy as np
import pyarrow as pa
import pyarrow.csv as csv

rows, block = int(sys.argv[1]), 1_000_000
rng = np.random.default_rng(0)
out = sys.stdout.buffer
out.write(b"x,y\\n")
options = csv.WriteOptions(include_header=False)
for start in range(0, rows, block):
    n = min(block, rows - start)
    table = pa.table({"x": rng.uniform(-3, 3, n), "y": rng.uniform(0.5, 3, n)})
    csv.write_csv(table, out, options)
"""


def wall_time(command: list[str], env: dict, stdout) -> float:
    return timed(command, env, stdout)[0]


def timed(command: list[str], env: dict, stdout) -> tuple[float, float]:
    """Wall-clock seconds, and CPU seconds (user and system, all threads) of one run."""
    t0 = time.perf_counter()
    process = subprocess.Popen(command, stdout=stdout, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise subprocess.CalledProcessError(os.waitstatus_to_exitcode(status), command)
    return wall, usage.ru_utime + usage.ru_stime


def end_to_end(before: str | None, runs: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall-clock and CPU seconds per contender."""
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        table = pa.table({"x": rng.uniform(-3, 3, ROWS), "y": rng.uniform(0.5, 3, ROWS)})
        # An unquoted header, which the version before could read.
        options = pcsv.WriteOptions(quoting_header="none")
        pcsv.write_csv(table, tmp / "points.csv", options)
        pq.write_table(table, tmp / "points.parquet")
        (tmp / "pyarrow_script.py").write_text(PYARROW_SCRIPT)
        nanograd = [sys.executable, "-m", "nanograd_cli", "grad", SOURCE, "--points"]
        commands = {
            "nanograd CSV to CSV": [*nanograd, str(tmp / "points.csv")],
            "PyArrow script CSV to CSV": [
                sys.executable,
                str(tmp / "pyarrow_script.py"),
                str(tmp / "points.csv"),
            ],
            "nanograd Parquet to Parquet": [
                *nanograd,
                str(tmp / "points.parquet"),
                "-o",
                str(tmp / "out.parquet"),
            ],
        }
        envs = {name: {**os.environ, "PYTHONPATH": str(ROOT)} for name in commands}
        if before:
            commands["nanograd before, CSV to CSV"] = commands["nanograd CSV to CSV"]
            envs["nanograd before, CSV to CSV"] = {**os.environ, "PYTHONPATH": before}
        check(commands, envs, tmp)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, command in commands.items():
                with open(tmp / "out.txt", "wb") as sink:
                    times[name].append(timed(command, envs[name], sink))
    wall = {name: statistics.median(w for w, _ in t) for name, t in times.items()}
    cpu = {name: statistics.median(c for _, c in t) for name, t in times.items()}
    return wall, cpu


def check(commands: dict, envs: dict, tmp: Path) -> None:
    """The contenders agree: the same rows, the same numbers to 1e-12."""
    results = {}
    for name in ("nanograd CSV to CSV", "PyArrow script CSV to CSV"):
        with open(tmp / "out.csv", "wb") as sink:
            wall_time(commands[name], envs[name], sink)
        results[name] = pcsv.read_csv(tmp / "out.csv")
    wall_time(commands["nanograd Parquet to Parquet"], envs["nanograd Parquet to Parquet"], None)
    results["parquet"] = pq.read_table(tmp / "out.parquet")
    reference = results["PyArrow script CSV to CSV"]
    for table in results.values():
        assert table.column_names == ["x", "y", "value", "d_x", "d_y"]
        for name in table.column_names:
            a, b = table[name].to_numpy(), reference[name].to_numpy()
            assert np.allclose(a, b, rtol=1e-12, atol=1e-13), name


def memory(rows: int) -> None:
    """Peak resident memory of `grad --points -` over `rows` rows piped in."""
    generator = subprocess.Popen(
        [sys.executable, "-c", GENERATOR, str(rows)], stdout=subprocess.PIPE
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "nanograd_cli", "grad", SOURCE, "--points", "-"]
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        ours = subprocess.Popen(command, stdin=generator.stdout, stdout=sink, env=env)
        generator.stdout.close()
        _, status, usage = os.wait4(ours.pid, 0)
    generator.wait()
    seconds = time.perf_counter() - t0
    assert os.waitstatus_to_exitcode(status) == 0 and generator.returncode == 0
    peak_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
    print(f"{rows:,} rows of CSV piped in, CSV out: peak resident memory {peak_mb:.0f} MB")
    print(f"{seconds:.0f} s, {rows / seconds:,.0f} rows/s (the generator shares the cores)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="DIR", help="an older checkout to compare with")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--memory", nargs="?", type=int, const=100_000_000, metavar="ROWS")
    args = parser.parse_args()
    if args.memory:
        memory(args.memory)
        return
    times, cpu = end_to_end(args.before, args.runs)
    print(f"{ROWS:,} rows of {SOURCE}, seconds (median of {args.runs}, alternating):")
    print(f"  {'':30} {'wall':>6} {'CPU':>6}")
    for name, seconds in times.items():
        print(f"  {name:30} {seconds:6.2f} {cpu[name]:6.2f}")
    ours, script = times["nanograd CSV to CSV"], times["PyArrow script CSV to CSV"]
    parquet = times["nanograd Parquet to Parquet"]
    print(f"CSV to CSV over the PyArrow script: {ours / script:.2f}x")
    workload = f"{SOURCE}, {ROWS:,} rows"
    report.ratio("--points CSV to CSV, s", workload, ours, "PyArrow script", script)
    if args.before:
        old = times["nanograd before, CSV to CSV"]
        print(f"Parquet to Parquet over the earlier CSV to CSV: {parquet / old:.3f}x")
        old_cpu = cpu["nanograd before, CSV to CSV"]
        print(f"  in CPU time: {cpu['nanograd Parquet to Parquet'] / old_cpu:.3f}x")
        report.ratio("--points Parquet to Parquet, s", workload, parquet, "earlier CSV to CSV", old)
    print(f"Parquet to Parquet over CSV to CSV now: {parquet / ours:.3f}x")


if __name__ == "__main__":
    main()
