"""Many small fits: `nanograd fit --by` over 1,000 groups of 50 rows of a*exp(-b*x) + c (and
noise) in a CSV file, against a script that reads the CSV with PyArrow and fits each group in
a Python loop of SciPy's curve_fit; and the CPU time of one fit of 50 rows, in process,
against curve_fit's.

Run: python benchmarks/fit_groups.py [--runs N] [--groups N] [--rows N]

Each contender is a whole process started in a temporary directory; they run in turn, N times
(default 5), and the medians of the wall-clock and CPU times are compared. Both start every
group from the same point and must agree on every group's parameters to 1e-6. The single fit
is timed over 200 fits (median of 5 rounds of CPU time per fit), nanograd's through
`nanograd_cli.fitting.fit` on parsed input, as `--by` fits each group.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report
from fit import medians, timed

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "a*exp(-b*x) + c"
GROUPS, ROWS = 1000, 50
START = {"a": 1.0, "b": 0.1, "c": 0.0}

# nanograd: the command, as a user runs it.
BY_COMMAND = ["-m", "nanograd_cli", "fit", SOURCE, "--data", "groups.csv", "--by", "g"]

CURVE_FIT_SCRIPT = """
import sys
import numpy as np
import pyarrow.csv as csv
from scipy.optimize import curve_fit

table = csv.read_csv(sys.argv[1])
g, x, y = table["g"].to_pylist(), table["x"].to_numpy(), table["y"].to_numpy()
groups = {}
for i, name in enumerate(g):
    groups.setdefault(name, []).append(i)


def model(x, a, b, c):
    return a * np.exp(-b * x) + c


print("g,a,stderr_a,b,stderr_b,c,stderr_c")
for name, rows in groups.items():
    p, covariance = curve_fit(model, x[rows], y[rows], p0=[1.0, 0.1, 0.0])
    se = np.sqrt(np.diag(covariance))
    print(",".join([name, *(f"{v!r},{s!r}" for v, s in zip(p.tolist(), se.tolist()))]))
"""


def write_groups(path: Path, groups: int, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(7)
    x = np.tile(np.linspace(0, 4, rows), groups)
    a, b = (np.repeat(rng.uniform(lo, lo + 1, groups), rows) for lo in (2, 1))
    y = a * np.exp(-b * x) + 0.5 + rng.normal(0, 0.02, x.size)
    names = np.repeat([f"s{i}" for i in range(groups)], rows)
    pcsv.write_csv(pa.table({"g": names, "x": x, "y": y}), path)


def parameters(out: str) -> dict[str, list[float]]:
    """Each group's a, b, c from the CSV either contender prints."""
    lines = out.splitlines()
    header = lines[0].split(",")
    found = {}
    for line in lines[1:]:
        cells = dict(zip(header, line.split(","), strict=False))
        found[cells["g"]] = [float(cells[k]) for k in "abc"]
    return found


def end_to_end(runs: int, groups: int, rows: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "nanograd_cli")], check=True
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_groups(tmp / "groups.csv", groups, rows)
        (tmp / "script.py").write_text(CURVE_FIT_SCRIPT)
        ours = [sys.executable, *BY_COMMAND, *(f"--{k}={v}" for k, v in START.items())]
        commands = {
            "nanograd fit --by": [*ours, "--format", "csv"],
            "curve_fit in a loop": [sys.executable, "script.py", "groups.csv"],
        }
        found = {name: parameters(timed(c, tmp, env)[3]) for name, c in commands.items()}
        reference = found["curve_fit in a loop"]
        assert list(found["nanograd fit --by"]) == list(reference)
        for name, values in found["nanograd fit --by"].items():
            assert np.allclose(values, reference[name], rtol=1e-6, atol=0), (name, values)
        wall, cpu = medians(commands, tmp, env, runs)
    print(f"{groups:,} groups of {rows} rows of {SOURCE}, CSV, seconds (median of {runs}):")
    print(f"  {'':22} {'wall':>6} {'CPU':>6}")
    for name in commands:
        print(f"  {name:22} {wall[name]:6.2f} {cpu[name]:6.2f}")
    ours_name, theirs = commands
    print(
        f"  nanograd over curve_fit: {wall[ours_name] / wall[theirs]:.2f}x wall, "
        f"{cpu[ours_name] / cpu[theirs]:.2f}x CPU"
    )
    report.ratio(
        "fit --by, s", f"{groups:,} groups of {rows} rows", cpu[ours_name], theirs, cpu[theirs]
    )


def single_fit(rows: int, fits: int = 200, rounds: int = 5) -> None:
    from scipy.optimize import curve_fit

    from nanograd_cli._language import parse
    from nanograd_cli.fitting import fit

    x = np.linspace(0, 4, rows)
    y = 2.5 * np.exp(-1.3 * x) + 0.5 + np.random.default_rng(7).normal(0, 0.02, rows)
    program, columns = parse(SOURCE), {"x": x, "y": y}

    def model(x, a, b, c):
        return a * np.exp(-b * x) + c

    contenders = {
        "nanograd_cli.fitting.fit": lambda: fit(program, columns, START),
        "curve_fit": lambda: curve_fit(model, x, y, p0=list(START.values())),
    }
    per_fit: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            t0 = time.process_time()
            for _ in range(fits):
                run()
            per_fit[name].append((time.process_time() - t0) / fits)
    cpu = {name: statistics.median(times) for name, times in per_fit.items()}
    print(f"One fit of {rows} rows, CPU per fit (median of {rounds} rounds of {fits}):")
    for name, seconds in cpu.items():
        print(f"  {name:26} {seconds * 1e3:6.2f} ms")
    ours, theirs = contenders
    print(f"  nanograd over curve_fit: {cpu[ours] / cpu[theirs]:.1f}x")
    report.ratio("fit, ms per fit", f"one fit of {rows} rows", cpu[ours] * 1e3, theirs,
                 cpu[theirs] * 1e3)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--groups", type=int, default=GROUPS)
    parser.add_argument("--rows", type=int, default=ROWS)
    args = parser.parse_args()
    end_to_end(args.runs, args.groups, args.rows)
    single_fit(args.rows)


if __name__ == "__main__":
    main()
