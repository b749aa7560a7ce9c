"""Start-up: a whole `nanograd grad` process against `python3 -c "import click"`.

Run: python benchmarks/startup.py [RUNS]   (after installing the package)

Each command runs RUNS times (default 20), alternating, and the medians of the wall-clock times
are compared: the ratio is what a user running nanograd in a shell loop pays over the bare
minimum for a click program.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time

import report

GRAD = ["grad", "x*y+tanh(x)", "--x", "2", "--y", "3", "--format", "json"]


def wall_time(command: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    entry = shutil.which("nanograd")
    ours = [entry, *GRAD] if entry else [sys.executable, "-m", "nanograd_cli", *GRAD]
    reference = [sys.executable, "-c", "import click"]
    wall_time(ours), wall_time(reference)  # warm the file cache
    a, b = [], []
    for _ in range(runs):
        a.append(wall_time(ours))
        b.append(wall_time(reference))
    ma, mb = statistics.median(a), statistics.median(b)
    click_only = 'python3 -c "import click"'
    print(f"{'command':44} {'median ms':>9}")
    print(f"{'nanograd ' + ' '.join(GRAD):44} {ma * 1e3:>9.1f}")
    print(f"{click_only:44} {mb * 1e3:>9.1f}")
    print(f"ratio {ma / mb:.2f}x over {runs} runs each, alternating")
    report.ratio("start-up, ms", "grad x*y+tanh(x), JSON", ma * 1e3, click_only, mb * 1e3)


if __name__ == "__main__":
    main()
