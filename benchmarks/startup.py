"""Start-up: a whole `nanograd grad` process against `python3 -c "import click"`.

Run: python benchmarks/startup.py [RUNS] [--cpu]   (after installing the package)

Each command runs RUNS times (default 20), alternating, and the medians of the wall-clock times
are compared: the ratio is what a user running nanograd in a shell loop pays over the bare
minimum for a click program. --cpu compares the processes' CPU time (user and system) instead,
which a machine loaded by other work disturbs less. The commands run with Python writing its
bytecode caches (PYTHONDONTWRITEBYTECODE unset), as an installed package has them: without,
every module changed since its cache was written is compiled again at each start.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

import report

GRAD = ["grad", "x*y+tanh(x)", "--x", "2", "--y", "3", "--format", "json"]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall_time(command: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - t0


def cpu_time(command: list[str]) -> float:
    """The CPU time, user and system, of the process running `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    cpu = "--cpu" in sys.argv
    numbers = [a for a in sys.argv[1:] if a != "--cpu"]
    runs = int(numbers[0]) if numbers else 20
    measure = cpu_time if cpu else wall_time
    entry = shutil.which("nanograd")
    ours = [entry, *GRAD] if entry else [sys.executable, "-m", "nanograd_cli", *GRAD]
    reference = [sys.executable, "-c", "import click"]
    wall_time(ours), wall_time(reference)  # warm the file cache, write the bytecode caches
    a, b = [], []
    for _ in range(runs):
        a.append(measure(ours))
        b.append(measure(reference))
    ma, mb = statistics.median(a), statistics.median(b)
    click_only = 'python3 -c "import click"'
    print(f"{'command':44} {'median CPU ms' if cpu else 'median ms':>9}")
    print(f"{'nanograd ' + ' '.join(GRAD):44} {ma * 1e3:>9.1f}")
    print(f"{click_only:44} {mb * 1e3:>9.1f}")
    print(f"ratio {ma / mb:.2f}x over {runs} runs each, alternating")
    if not cpu:
        report.ratio("start-up, ms", "grad x*y+tanh(x), JSON", ma * 1e3, click_only, mb * 1e3)


if __name__ == "__main__":
    main()
