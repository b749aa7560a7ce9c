"""`grad --points` end to end, 1,000,000 rows of x*y + tanh(x): CSV to CSV against a PyArrow
script (pyarrow.csv.read_csv, NumPy, pyarrow.csv.write_csv) doing the same, Parquet to Parquet
against CSV to CSV, and JSON Lines to CSV. With --before DIR (an older nanograd's package,
e.g. `git archive COMMIT nanograd_cli grammars | tar -x -C DIR`), that version's CSV to CSV
runs alongside, the reference of the Parquet figure, and its JSON Lines to CSV if it reads them.

Run: python benchmarks/points.py [--before DIR] [--runs N]
     python benchmarks/points.py --memory [ROWS]   (100,000,000 rows by default: minutes)

Each command is a whole process, started in a temporary directory (so that PYTHONPATH, not
the current directory, says which nanograd runs); they run in turn, N times (default 5), and
the medians of the wall-clock and CPU times are compared. --memory pipes ROWS generated rows
of CSV into `nanograd grad --points -` and reports its peak resident memory (the kernel's
count).
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


def timed(command: list[str], env: dict, stdout, cwd: Path) -> tuple[float, float]:
    """Wall-clock seconds, and CPU seconds (user and system, all threads) of one run."""
    t0 = time.perf_counter()
    process = subprocess.Popen(command, stdout=stdout, env=env, cwd=cwd)
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
        with open(tmp / "points.jsonl", "w") as f:
            for x, y in zip(table["x"].to_pylist(), table["y"].to_pylist(), strict=True):
                f.write(f'{{"x": {x!r}, "y": {y!r}}}\n')
        (tmp / "pyarrow_script.py").write_text(PYARROW_SCRIPT)
        nanograd = [sys.executable, "-m", "nanograd_cli", "grad", SOURCE, "--points"]
        now = {**os.environ, "PYTHONPATH": str(ROOT)}
        contenders = {
            "nanograd CSV to CSV": ([*nanograd, "points.csv"], now),
            "PyArrow script CSV to CSV": ([sys.executable, "pyarrow_script.py", "points.csv"], now),
            "nanograd Parquet to Parquet": (
                [*nanograd, "points.parquet", "-o", "out.parquet"],
                now,
            ),
            "nanograd JSON Lines to CSV": ([*nanograd, "points.jsonl", "--format", "csv"], now),
        }
        if before:
            old = {**os.environ, "PYTHONPATH": str(Path(before).resolve())}
            contenders["before, CSV to CSV"] = ([*nanograd, "points.csv"], old)
            if reads_json_lines(contenders["nanograd JSON Lines to CSV"][0], old, tmp):
                contenders["before, JSON Lines to CSV"] = (
                    contenders["nanograd JSON Lines to CSV"][0],
                    old,
                )
        check(contenders, tmp)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
        for _ in range(runs):
            for name, (command, env) in contenders.items():
                with open(tmp / "out.txt", "wb") as sink:
                    times[name].append(timed(command, env, sink, tmp))
    wall = {name: statistics.median(w for w, _ in t) for name, t in times.items()}
    cpu = {name: statistics.median(c for _, c in t) for name, t in times.items()}
    return wall, cpu


def reads_json_lines(command: list[str], env: dict, tmp: Path) -> bool:
    """Whether the nanograd in `env` reads JSON Lines (an older one may not)."""
    probe = [*command[: command.index("--points") + 1], "-", "--points-format", "jsonl"]
    done = subprocess.run(probe, env=env, cwd=tmp, input=b'{"x": 1, "y": 2}\n', capture_output=True)
    return done.returncode == 0


def check(contenders: dict, tmp: Path) -> None:
    """The contenders agree: the same rows, the same numbers to 1e-12."""
    results = {}
    for name, (command, env) in contenders.items():
        with open(tmp / "out.csv", "wb") as sink:
            timed(command, env, sink, tmp)
        if "Parquet" in name:
            results[name] = pq.read_table(tmp / "out.parquet")
        else:
            results[name] = pcsv.read_csv(tmp / "out.csv")
    reference = results["PyArrow script CSV to CSV"]
    for name, table in results.items():
        # The version before wrote only the results, not the columns read.
        assert table.column_names[-3:] == ["value", "d_x", "d_y"], name
        for column in table.column_names:
            a, b = table[column].to_numpy(), reference[column].to_numpy()
            assert np.allclose(a, b, rtol=1e-12, atol=1e-13), (name, column)


def memory(rows: int) -> None:
    """Peak resident memory of `grad --points -` over `rows` rows piped in."""
    generator = subprocess.Popen(
        [sys.executable, "-c", GENERATOR, str(rows)], stdout=subprocess.PIPE
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "nanograd_cli", "grad", SOURCE, "--points", "-"]
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        ours = subprocess.Popen(
            command, stdin=generator.stdout, stdout=sink, env=env, cwd=tempfile.gettempdir()
        )
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
    wall, cpu = end_to_end(args.before, args.runs)
    print(f"{ROWS:,} rows of {SOURCE}, seconds (median of {args.runs}, alternating):")
    print(f"  {'':30} {'wall':>6} {'CPU':>6}")
    for name, seconds in wall.items():
        print(f"  {name:30} {seconds:6.2f} {cpu[name]:6.2f}")
    workload = f"{SOURCE}, {ROWS:,} rows"
    pairs = [
        ("--points CSV to CSV", "nanograd CSV to CSV", "PyArrow script CSV to CSV"),
        ("--points Parquet to Parquet", "nanograd Parquet to Parquet", "before, CSV to CSV"),
        ("--points JSON Lines to CSV", "nanograd JSON Lines to CSV", "before, JSON Lines to CSV"),
        ("Parquet over CSV, now", "nanograd Parquet to Parquet", "nanograd CSV to CSV"),
        ("JSON Lines over CSV, now", "nanograd JSON Lines to CSV", "nanograd CSV to CSV"),
    ]
    for benchmark, ours, reference in pairs:
        if reference not in wall:
            continue
        print(
            f"  {ours} over {reference}: {wall[ours] / wall[reference]:.3f}x wall, "
            f"{cpu[ours] / cpu[reference]:.3f}x CPU"
        )
        if benchmark.startswith("--points"):
            report.ratio(f"{benchmark}, s", workload, wall[ours], reference, wall[reference])


if __name__ == "__main__":
    main()
